//go:build unix

// Command hookbench measures loopguard's hook as Claude Code runs it (the
// hook binary loopguard-hook, as init registers it, and beside it the full
// binary's `loopguard hook`): a fresh
// process per tool call, fed a recorded payload on stdin, inside a real Secret
// Service session. Beside it, interleaved call by call so the machine's drift
// cancels, it runs the floors (/bin/true; a minimal Go hook; the same with
// one keyring read) and the published peer cc-safety-net, and writes a
// Markdown table of median, p90 and p99 wall time and peak RSS per path and
// state size, with ratios and the budget of issue 8.
//
// Run it through `make bench`, which builds the binaries and starts it under
// scripts/with-keyring. See BENCH.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loopguard/loopguard/bench/budget"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

type options struct {
	repo      string
	loopguard string // the hook binary, as registered
	full      string // the full binary (its version; the default alt)
	binDir    string
	out       string
	work      string
	keep      bool
	rounds    int
	warmup    int
	peerEvery int
	grants    []int
	lines     int
	peerDir   string
	peerVer   string
	skipPeer  bool
	onlyPaths string
	// alt is a second loopguard binary, run in the empty state beside the
	// first (`alt hook`), to measure a change to the hook path in the same
	// run; by default the full binary.
	alt string
	// altName names the alt binary as the previous release (its commit):
	// set, the report holds it to "not slower" (issue 35).
	altName string
	// budgets, when set, gets the figures of issues 39 and 35 appended as
	// JSON lines (bench/budget), for bench/cmd/budgets.
	budgets string
	// vault measures the Vault backend's rows too (vault.go).
	vault bool
	// copied measures copies of the binaries written with write(2)
	// (copyBinaries), not the files as the linker wrote them.
	copied bool
}

func main() {
	var o options
	var grants string
	flag.StringVar(&o.repo, "repo", ".", "the loopguard repository (for testdata/payloads)")
	flag.StringVar(&o.loopguard, "loopguard", "bin/loopguard-hook", "the hook binary to measure (as init registers it)")
	flag.StringVar(&o.full, "full", "bin/loopguard", "the full loopguard binary (its version; and the alt unless -alt says otherwise)")
	flag.StringVar(&o.binDir, "bin", "bin/bench", "directory holding spawn, floorgo, floorkeyring and floorlinked")
	flag.StringVar(&o.out, "out", ".cache/bench/results.md", "write the Markdown report here too")
	flag.StringVar(&o.work, "work", ".cache/bench", "parent of the temporary state directories")
	flag.BoolVar(&o.keep, "keep", false, "keep the state directories afterwards")
	flag.IntVar(&o.rounds, "rounds", 200, "measured calls per program and path")
	flag.IntVar(&o.warmup, "warmup", 5, "unmeasured rounds per path before measuring")
	flag.IntVar(&o.peerEvery, "peer-every", 4, "run the peer in one round of this many (it is ~50x slower)")
	flag.StringVar(&grants, "grants", "10000,100000", "grant counts to compare with 0, comma-separated")
	flag.IntVar(&o.lines, "lines", 1_000_000, "audit log lines in the states with grants")
	flag.StringVar(&o.peerDir, "peer-dir", ".cache/bench/peer", "npm prefix for the peer")
	flag.StringVar(&o.peerVer, "peer-version", "2.4.5", "cc-safety-net version (pinned)")
	flag.BoolVar(&o.skipPeer, "no-peer", false, "do not install or run the peer")
	flag.StringVar(&o.onlyPaths, "paths", "", "comma-separated path names to run (default: all); the states hold every path's grants all the same")
	flag.StringVar(&o.alt, "alt", "full", "a second loopguard binary to run in the empty state, for an A/B comparison (full: the -full binary; none: no second binary)")
	flag.StringVar(&o.altName, "alt-name", "", "the -alt binary is the previous release, built from this commit: hold today's hook to not slower than it")
	flag.StringVar(&o.budgets, "budgets", "", "append the budget figures of issues 39 and 35 here (JSON lines, for bench/cmd/budgets)")
	flag.BoolVar(&o.vault, "vault", true, "measure the Vault backend too, against the pinned dev server on loopback")
	flag.BoolVar(&o.copied, "copy", false, "measure copies of every binary written with write(2), as an archive unpacks them, not the files the linker wrote")
	flag.Parse()
	o.grants = []int{0}
	for _, g := range strings.Split(grants, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		n, err := strconv.Atoi(g)
		if err != nil || n < perSession || n%perSession != 0 {
			fatalf("-grants: %q is not a multiple of %d", g, perSession)
		}
		o.grants = append(o.grants, n)
	}
	if err := run(o); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hookbench: error: "+format+"\n", args...)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hookbench: "+time.Now().UTC().Format("15:04:05")+" "+format+"\n", args...)
}

// benchPath is one decision path of the hook.
type benchPath struct {
	name, what string
	payload    string // file
	event      string
	project    string
	floor      string // "floor-go" or "floor-keyring"
	allow      bool
	want       check
	// before runs before each measured call of the hook in cfg (untimed).
	before func(cfg *config) error
}

func run(o options) error {
	start := time.Now()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return errors.New("no D-Bus session bus: run under scripts/with-keyring (make bench does)")
	}
	switch o.alt {
	case "full":
		o.alt = o.full
	case "none":
		o.alt = ""
	}
	for _, p := range []*string{&o.repo, &o.loopguard, &o.full, &o.binDir, &o.out, &o.work, &o.peerDir, &o.alt, &o.budgets} {
		if *p == "" {
			continue
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	if err := os.MkdirAll(o.work, 0o700); err != nil {
		return err
	}
	removeStaleRuns(o.work)
	work, err := os.MkdirTemp(o.work, "run-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	}
	logf("work dir %s", work)
	if o.copied {
		if err := copyBinaries(&o, filepath.Join(work, "bin")); err != nil {
			return fmt.Errorf("copy the binaries: %w", err)
		}
	}

	// The peer installs while the state is built.
	peerc := make(chan peerResult, 1)
	if o.skipPeer {
		peerc <- peerResult{err: errors.New("skipped (-no-peer)")}
	} else {
		go func() { peerc <- installPeer(o.peerDir, o.peerVer) }()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := keyring.Create(ctx); err != nil {
		return fmt.Errorf("create the key: %w", err)
	}
	master, err := keyring.Load(ctx)
	if err != nil {
		return fmt.Errorf("load the key: %w", err)
	}
	keys, seal, err := token.DeriveKeys(master)
	if err != nil {
		return err
	}
	clear(master)

	paths, sessions, err := makePaths(o, work)
	if err != nil {
		return err
	}

	now := time.Now()
	var cfgs []*config
	for _, g := range o.grants {
		lines := o.lines
		if g == 0 {
			lines = 0
		}
		c := &config{name: stateName(g, lines), grants: g, lines: lines, xdg: filepath.Join(work, fmt.Sprintf("state-%d", g))}
		logf("state %s: filling", c.name)
		c.st, err = state.Open(filepath.Join(c.xdg, "loopguard"))
		if err != nil {
			return err
		}
		if err := fillAudit(filepath.Join(c.st.Dir, "audit"), lines, seal, now); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		if g > 0 {
			if err := fillGrants(c.st, keys, g, now); err != nil {
				return fmt.Errorf("grants: %w", err)
			}
			for s, env := range sessions {
				if err := sessionExtras(c.st, keys, s, env, now); err != nil {
					return err
				}
			}
		}
		want := g
		for _, p := range paths {
			if rule, ok := scopedRules[p.name]; ok {
				if err := scopedGrant(c.st, keys, sessionOf(p), rule, envOf(p), now); err != nil {
					return err
				}
				want++
			}
		}
		n, err := countGrants(c.st, keys, now)
		if err != nil {
			return err
		}
		if g > 0 {
			want += len(sessions) * (extraScoped + extraExact)
		}
		if n != want {
			return fmt.Errorf("state %s holds %d grants, want %d", c.name, n, want)
		}
		logf("state %s: %d grants, %d audit lines", c.name, n, lines)
		cfgs = append(cfgs, c)
	}
	// Write everything out now, or the first fsync of a measured call pays
	// for the writeback of the generated state.
	syscall.Sync()
	// -paths picks the paths measured, in states made for every path: the
	// scoped paths' grants stay in the session no-grant and chained share
	// with them, as in a whole run.
	paths = pick(paths, o.onlyPaths)

	r, err := newRunner(filepath.Join(o.binDir, "spawn"), work)
	if err != nil {
		return err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	peer := <-peerc
	if peer.err != nil {
		logf("peer cc-safety-net unavailable: %v", peer.err)
	}
	// The exact path needs its pending record in each state: the first
	// (unmeasured) call of the hook makes it.
	for _, p := range paths {
		if p.name != "exact" {
			continue
		}
		ids := map[*config]string{}
		for _, c := range cfgs {
			s, err := r.run(hookProc(o, p, c))
			if err != nil {
				return err
			}
			m := pendingRE.FindSubmatch(s.stdout)
			if m == nil {
				return fmt.Errorf("exact path: the first call made no pending record: %s", s.stdout)
			}
			ids[c] = string(m[1])
		}
		p.before = func(c *config) error {
			pend, err := c.st.GetPending(ids[c])
			if err != nil {
				return err
			}
			_, err = hooks.Approve(c.st, keys, pend, "bench", 10*time.Minute, time.Now())
			return err
		}
	}

	var vb *vaultBench
	if o.vault {
		logf("vault: starting the dev server")
		if vb, err = startVault(o, work, paths, now); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		defer vb.srv.Stop()
		for _, p := range paths {
			if p.name == "exact" {
				if err := vb.prepareExact(o, r, p); err != nil {
					return err
				}
			}
		}
	}
	res := &results{o: o, cfgs: cfgs, peer: peer, start: start, loadStart: loadavg(), vault: vb != nil}
	for _, p := range paths {
		logf("path %s", p.name)
		pr, err := measure(o, r, p, cfgs, truePath, peer, vb)
		if err != nil {
			return fmt.Errorf("path %s: %w", p.name, err)
		}
		res.paths = append(res.paths, pr)
	}
	res.end, res.loadEnd = time.Now(), loadavg()
	report := res.markdown()
	fmt.Print(report)
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, []byte(report), 0o644); err != nil {
		return err
	}
	if o.budgets != "" {
		return budget.Append(o.budgets, res.figures()...)
	}
	return nil
}

var pendingRE = regexp.MustCompile(fmt.Sprintf(`loopguard approve ([a-z2-7]{%d})\b`, state.PendingIDLen))

// scopedRule is the scoped grant of the scoped path, as a user would grant
// it: `loopguard grant 'Bash(go test ./...)'` (project-write: the launch
// is loopguard-exec's).
const scopedRule = "Bash(go test ./...)"

// readOnlyRule is the scoped-read-only path's grant: a read-only launch.
const readOnlyRule = "Bash(ls *)"

// scopedRules are the grants of the paths that run under one.
var scopedRules = map[string]string{"scoped": scopedRule, "scoped-read-only": readOnlyRule}

func stateName(grants, lines int) string {
	return fmt.Sprintf("%s grants, %s audit lines", count(grants), count(lines))
}

func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

func sessionOf(p *benchPath) string { return p.want.session }
func envOf(p *benchPath) shellparse.Env {
	return shellparse.Env{Cwd: p.project, Path: os.Getenv("PATH"), ProjectDir: p.project}
}

func hookProc(o options, p *benchPath, c *config) proc {
	env := append(os.Environ(), "XDG_STATE_HOME="+c.xdg, "CLAUDE_PROJECT_DIR="+p.project, "CLAUDECODE=1")
	return proc{path: o.loopguard, args: []string{"hook", "--event", p.event}, env: env, stdin: p.payload, dir: p.project}
}

// makePaths writes the payload of each path and says what the hook must
// answer. It returns the sessions the payloads use, with the environment a
// grant for them is pinned in.
func makePaths(o options, work string) ([]*benchPath, map[string]shellparse.Env, error) {
	dir := filepath.Join(work, "payloads")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	sessions := map[string]shellparse.Env{}
	var paths []*benchPath
	add := func(name, what, recorded string, edit func(p *payload), bad bool, event string, allow bool, want check) error {
		pl, err := loadPayload(o.repo, recorded, filepath.Join(work, "cases", name))
		if err != nil {
			return err
		}
		if edit != nil {
			edit(pl)
		}
		data, err := pl.encode()
		if err != nil {
			return err
		}
		if bad {
			data = data[:len(data)/2]
		}
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return err
		}
		floor := "floor-go"
		if allow {
			floor = "floor-keyring"
		}
		want.session = pl.session()
		bp := &benchPath{name: name, what: what, payload: file, event: event, project: pl.project, floor: floor, allow: allow, want: want}
		paths = append(paths, bp)
		if !bad {
			sessions[pl.session()] = envOf(bp)
		}
		return nil
	}
	setCmd := func(cmd string) func(p *payload) { return func(p *payload) { p.input()["command"] = cmd } }
	type row struct {
		name, what, recorded string
		edit                 func(p *payload)
		bad                  bool
		event                string
		allow                bool
		want                 check
	}
	rows := []row{
		{"read-only", "Read of a project file: abstain on the fast path (no state, no keyring)", "pretooluse-read", nil, false, "PreToolUse", false,
			check{code: 0, empty: true}},
		{"malformed", "malformed input (a Bash payload cut in half): deny", "pretooluse-bash", nil, true, "PreToolUse", false,
			check{code: 2, contains: []string{`"permissionDecision":"deny"`, "malformed_input"}}},
		{"no-grant", "Bash `echo hello > greeting.txt`, no grant: deny + pending record", "pretooluse-bash", nil, false, "PreToolUse", false,
			check{code: 2, contains: []string{`"permissionDecision":"deny"`, "no_grant"}}},
		{"chained", "Bash `git status && rm -rf build`: deny", "pretooluse-bash", setCmd("git status && rm -rf build"), false, "PreToolUse", false,
			check{code: 2, contains: []string{`"permissionDecision":"deny"`, "chained_command"}}},
		{"exact", "Bash `ls -la > listing.txt` from a subagent, exact approval: verify + consume (keyring read)", "pretooluse-subagent-bash", nil, false, "PreToolUse", true,
			check{code: 0, contains: []string{`"permissionDecision":"allow"`, "for this exact call"}}},
		{"scoped", "Bash `go test ./...` under a scoped grant `" + scopedRule + "`: verify (keyring read)", "pretooluse-bash", setCmd("go test ./..."), false, "PreToolUse", true,
			check{code: 0, contains: []string{`"permissionDecision":"allow"`, "granted by"}}},
		{"scoped-read-only", "Bash `ls -la` under a scoped grant `" + readOnlyRule + "` (read-only): verify (keyring read)", "pretooluse-bash", setCmd("ls -la"), false, "PreToolUse", true,
			check{code: 0, contains: []string{`"permissionDecision":"allow"`, "granted by"}}},
		{"write-1mb", "Write of 1 MiB of content, no grant: deny + pending record", "pretooluse-write", func(p *payload) { p.input()["content"] = megabyte() }, false, "PreToolUse", false,
			check{code: 2, contains: []string{`"permissionDecision":"deny"`, "no_grant"}}},
		{"permission-request", "PermissionRequest for Bash `rm -rf build`, no grant: deny", "permissionrequest-bash", nil, false, "PermissionRequest", false,
			check{code: 0, contains: []string{`"behavior":"deny"`, "no_grant"}}},
	}
	for _, r := range rows {
		if err := add(r.name, r.what, r.recorded, r.edit, r.bad, r.event, r.allow, r.want); err != nil {
			return nil, nil, err
		}
	}
	return paths, sessions, nil
}

// pick keeps the paths named in only (comma-separated; "" keeps all).
func pick(paths []*benchPath, only string) []*benchPath {
	if only == "" {
		return paths
	}
	named := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		named[strings.TrimSpace(n)] = true
	}
	var out []*benchPath
	for _, p := range paths {
		if named[p.name] {
			out = append(out, p)
		}
	}
	return out
}

// copyBinaries points o at copies of every binary it runs, written with
// write(2) into dir. The page cache holds a file the linker wrote through
// mmap differently from one written with write(2) (as tar, cp or an
// installer copying a release writes it), and the same bytes start slower
// from the first on this machine's kernel: at 2026-12-03, loopguard-hook
// 1.30x the CPU time of its copy, floorgo 1.11x. -copy measures the second
// state; the default, the binaries as make build leaves them.
func copyBinaries(o *options, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cp := func(src, dst string) error {
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	floors := filepath.Join(dir, "floors")
	if err := os.MkdirAll(floors, 0o700); err != nil {
		return err
	}
	for _, name := range []string{"spawn", "floorgo", "floorkeyring", "floorlinked"} {
		if err := cp(filepath.Join(o.binDir, name), filepath.Join(floors, name)); err != nil {
			return err
		}
	}
	o.binDir = floors
	// The hook and the full binary keep their names, side by side (the
	// hook runs the full binary beside it under the Vault backend); a
	// separate alt goes into a folder of its own.
	altIsFull := o.alt == o.full
	for _, p := range []*string{&o.loopguard, &o.full} {
		dst := filepath.Join(dir, filepath.Base(*p))
		if err := cp(*p, dst); err != nil {
			return err
		}
		*p = dst
	}
	switch {
	case altIsFull:
		o.alt = o.full
	case o.alt != "":
		alt := filepath.Join(dir, "alt")
		if err := os.MkdirAll(alt, 0o700); err != nil {
			return err
		}
		dst := filepath.Join(alt, filepath.Base(o.alt))
		if err := cp(o.alt, dst); err != nil {
			return err
		}
		o.alt = dst
	}
	return nil
}

// staleRun is how old a work directory of an earlier run must be before a
// run removes it: one killed before its own cleanup left one behind, and
// .cache/bench is inside the repository launchbench walks (a run left on
// 2026-12-04 made its project-write rows walk 20,503 entries, not 9,403).
const staleRun = time.Hour

// removeStaleRuns removes the run-* directories in work older than
// staleRun, saying so.
func removeStaleRuns(work string) {
	ents, err := os.ReadDir(work)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleRun {
			logf("removing %s, left by an earlier run", filepath.Join(work, e.Name()))
			_ = os.RemoveAll(filepath.Join(work, e.Name()))
		}
	}
}
