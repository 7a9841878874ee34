//go:build linux

package loopguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/ticket"
	"github.com/loopguard/loopguard/undo"
)

// The real-client must-show of issue 36: a session of ordinary work on a
// small Go project, through the real Claude Code, with nothing but `loopguard
// init`'s defaults (the jail grant Bash(*)), with
// Claude Code's sandbox on (init's default) and off (--no-sandbox).
//
// Inside Claude Code's sandbox user namespaces are refused, so the jail runs
// in filter-only mode: a jailed call can change the project's files but
// create nothing at the project's top level. The session's writes (the
// Write, the scratch file, the script's own output, the download) are in
// subdirectories (notes/, dl/) for that reason; both modes run the same
// session.

// jailToken is a secret in the client's environment that no jailed call
// may print.
const jailToken = "ghp_test0123456789abcdefJAILSESSION"

// jailSessionTimeout bounds one client run of the session: a dozen calls,
// three of them Go builds, on a loaded machine.
const jailSessionTimeout = 8 * time.Minute

// jailProject is the small Go module the session works on.
var jailProject = map[string]string{
	"go.mod":            "module example.com/jail\n\ngo 1.21\n",
	"add.go":            "package jail\n\nfunc Add(a, b int) int { return a + b }\n",
	"add_test.go":       "package jail\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
	"sub/sub.go":        "package sub\n\nfunc Twice(a int) int { return 2 * a }\n",
	"sub/sub_test.go":   "package sub\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n\tif Twice(4) != 8 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n",
	"README.md":         "jail session\n",
	"notes/scratch.tmp": "scratch\n",
	"dl/.keep":          "",
	// Project code the agent wrote earlier: it tries to append to the
	// user's ~/.bashrc (the analysis cannot see that the script does, so
	// the call runs in the jail, whose kernel rules refuse it), then
	// writes in the project.
	"tools/dotfile.sh": "if echo 'export LG_JAILED=1' >> \"$HOME/.bashrc\" 2>/dev/null; then echo bashrc-written; else echo bashrc-refused; fi\n" +
		"echo written > notes/written.txt && echo project-written\n",
}

// plantJailProject writes jailProject into dir as a git repository with
// one commit.
func plantJailProject(t *testing.T, dir string) {
	t.Helper()
	for name, body := range jailProject {
		testfs.Write(t, filepath.Join(dir, name), []byte(body), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.name", "t"}, {"config", "user.email", "t@example.com"},
		{"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, b)
		}
	}
}

// jailCall is one call of the session and what its result must show.
type jailCall struct {
	call   claudetest.ToolCall
	held   string // "" for an ordinary call; else the reason it is held with
	prints []string
	// notPrints must not be in the result.
	notPrints []string
}

// TestJailSession: read, ls, git status, an Edit, git diff, go test ./...,
// cd sub && go test ./..., a pipe into tail, a Write, rm of a scratch file,
// env, project code that tries ~/.bashrc, a commit and one download. Every
// ordinary call runs with no decision and prints what it should; the commit
// and the download are each held once (leaves_jail, the download naming
// the network), approved exactly at a terminal, and run when retried. At
// most 2 decisions per 10 calls. The jailed env shows no token of the
// client's environment; the jailed write of ~/.bashrc is refused while the
// same call's project write succeeds.
func TestJailSession(t *testing.T) {
	t.Parallel()
	keyringtest.Require(t)
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (the jail needs %d)", confine.ABI(), confine.MinABI)
	}
	warm := warmGoCache(t)
	withJailDefaults(t, func(t *testing.T, e *env, sandbox bool) {
		warmScratch(t, warm, e.Dir)
		plantJailProject(t, e.Dir)
		bashrc := filepath.Join(e.g.Home, ".bashrc")
		testfs.Write(t, bashrc, []byte("# the user's own start-up file\n"), 0o644)
		e.clientEnv = append(e.clientEnv, "GITHUB_TOKEN="+jailToken, "BASH_DEFAULT_TIMEOUT_MS=480000", "BASH_MAX_TIMEOUT_MS=480000")

		// The package index the download fetches from, on loopback.
		pkg := []byte("a package tarball\n")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/pkg.tgz" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(pkg)
		}))
		t.Cleanup(srv.Close)
		download := "curl -sS -o dl/pkg.tgz " + srv.URL + "/pkg.tgz && echo downloaded"
		commit := "git add -A && git commit -m x"

		calls := []jailCall{
			{call: claudetest.Call("toolu_js01", "Read", map[string]any{"file_path": e.path("add.go")}), prints: []string{"func Add"}},
			{call: bash("toolu_js02", "ls"), prints: []string{"add.go", "go.mod", "sub"}},
			// Inside Claude Code's sandbox git status also lists the files the
			// sandbox mounts over the project's missing dotfiles (.bashrc,
			// .claude/, .mcp.json...) as untracked.
			{call: bash("toolu_js03", "git status"), prints: []string{"On branch master"}},
			{call: claudetest.Call("toolu_js04", "Edit", map[string]any{"file_path": e.path("add.go"),
				"old_string": "func Add(", "new_string": "// Add adds.\nfunc Add("})},
			{call: bash("toolu_js05", "git diff"), prints: []string{"+// Add adds."}},
			{call: bash("toolu_js06", "go test ./..."), prints: []string{"ok  \texample.com/jail\t", "example.com/jail/sub"}},
			{call: bash("toolu_js07", "cd sub && go test ./..."), prints: []string{"ok  \texample.com/jail/sub\t"}, notPrints: []string{"example.com/jail\t"}},
			{call: bash("toolu_js08", "go vet ./... 2>&1 | tail -5; echo \"vet-exit=${PIPESTATUS[0]}\""), prints: []string{"vet-exit=0"}},
			{call: claudetest.Call("toolu_js09", "Write", map[string]any{"file_path": e.path("notes/todo.md"), "content": "- ship it\n"})},
			{call: bash("toolu_js10", "rm notes/scratch.tmp && ls notes"), prints: []string{"todo.md"}, notPrints: []string{"scratch.tmp"}},
			{call: bash("toolu_js11", "env"), prints: []string{"PATH="}, notPrints: []string{jailToken, "GITHUB_TOKEN"}},
			{call: bash("toolu_js12", "sh tools/dotfile.sh"), prints: []string{"bashrc-refused", "project-written"}},
			// The approved commit runs in both modes: inside Claude Code's
			// sandbox git add -A failed on its mounts over the project's
			// missing dotfiles ("error: .bash_profile: can only add regular
			// files..."), so the approval runs it in the jail with git's own
			// directory, which init's third excludedCommands entry takes out
			// of that sandbox (confine.GitCommand), on the hook's ticket.
			// The approved download runs in both modes: inside the sandbox
			// init's defaults (two-phase enforcement and the one
			// sandbox.excludedCommands entry) take it out of Claude Code's
			// sandbox into the launcher's own jail with the network to the
			// server's port, on the hook's ticket.
			{call: bash("toolu_js13", commit), held: "leaves_jail", prints: []string{"git's own directory"}},
			{call: bash("toolu_js14", commit), prints: []string{"] x"}},
			{call: bash("toolu_js15", download), held: "leaves_jail", prints: []string{"it needs the network"}},
			{call: bash("toolu_js16", download), prints: []string{"downloaded"}},
			{call: bash("toolu_js17", "git log --oneline -2"), prints: []string{" x\n", " init"}},
		}
		var turns []claudetest.Turn
		for _, c := range calls {
			turns = append(turns, claudetest.Tools(c.call))
		}
		// The human approves each held call, once, at a terminal.
		approve := func(what string) func() error {
			return func() error {
				rows, err := e.g.Pending(e.ctx)
				if err != nil {
					return err
				}
				for _, p := range rows {
					if strings.Contains(p.Summary, what) {
						if p.Reason != "leaves_jail" {
							return fmt.Errorf("the %s is held, but not to leave the jail: %+v", what, p)
						}
						_, err = e.g.Approve(e.ctx, p)
						return err
					}
				}
				return fmt.Errorf("no pending %s: %+v", what, rows)
			}
		}
		start := time.Now()
		sid := sessionID(t)
		api := e.runFor(jailSessionTimeout, claudetest.Script{Main: append(turns, claudetest.Text("done"))}, func(p *Proxy) {
			p.OnToolResult("toolu_js13", approve("git commit"))
			p.OnToolResult("toolu_js15", approve("curl"))
		}, "--session-id", sid)
		t.Logf("the session (%d calls) took %v", len(calls), time.Since(start).Round(time.Millisecond))

		held := 0
		for _, c := range calls {
			r := result(t, api, c.call.ID)
			t.Logf("%s %s: error=%v %q", c.call.ID, c.call.Name, r.IsError, claudetest.Tail(r.Content, 6))
			if c.held != "" {
				held++
				wantDenied(t, api, c.call.ID, c.held)
			} else if strings.Contains(r.Content, "loopguard: ") || r.IsError {
				t.Errorf("%s (%s) did not run without a decision: %+v", c.call.ID, c.call.Input, r)
			}
			for _, w := range c.prints {
				if !strings.Contains(r.Content, w) {
					t.Errorf("%s (%s): the result does not hold %q: %q", c.call.ID, c.call.Input, w, r.Content)
				}
			}
			for _, w := range c.notPrints {
				if strings.Contains(r.Content, w) {
					t.Errorf("%s (%s): the result holds %q: %q", c.call.ID, c.call.Input, w, r.Content)
				}
			}
		}

		// The decisions, as loopguard recorded them: the held calls are
		// the only ones that were not allowed.
		entries, err := e.g.Audit(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		decided, jailed := 0, 0
		for _, en := range entries {
			if en.Event != "PreToolUse" && en.Event != "PermissionRequest" {
				continue
			}
			t.Logf("audit: %s %s %s %s", en.Event, en.Tool, en.Decision, en.Reason)
			if en.Decision != "allow" {
				decided++
			}
			if en.Reason == "jailed" {
				jailed++
			}
		}
		t.Logf("decisions: %d of %d calls (%.1f per 10); %d calls ran in the jail", decided, len(calls), 10*float64(decided)/float64(len(calls)), jailed)
		if decided != held || 10*decided > 2*len(calls) {
			t.Errorf("%d decisions in %d calls (%d held by the script): want the held calls only, at most 2 per 10", decided, len(calls), held)
		}
		if jailed == 0 {
			t.Error("no call ran in the jail (reason jailed)")
		}
		// Through the launcher alone; the escalations through the wrapper
		// binary, which the sandbox's exclusions name. With the sandbox
		// each call's ticket says what it ran (init's defaults issue none
		// without it).
		if sandbox {
			launchersOf(t, e, sid)
		}

		top, _ := os.ReadDir(e.Dir)
		var names []string
		for _, de := range top {
			names = append(names, de.Name())
		}
		t.Logf("the project's top level after the session: %v", names)

		// What the calls did to the files.
		if got := e.read("add.go"); !strings.Contains(got, "// Add adds.") {
			t.Errorf("the Edit did not land: %q", got)
		}
		if got := e.read("notes/todo.md"); got != "- ship it\n" {
			t.Errorf("the Write did not land: %q", got)
		}
		if e.exists("notes/scratch.tmp") {
			t.Error("rm did not remove notes/scratch.tmp")
		}
		if got := e.read("notes/written.txt"); got != "written\n" {
			t.Errorf("control: the jailed script's project write: %q", got)
		}
		if got := string(mustRead(t, bashrc)); got != "# the user's own start-up file\n" {
			t.Errorf("~/.bashrc changed: %q", got)
		}
		// Every jailed call that could write was recorded for undo, with
		// Claude Code's sandbox on too (init lets the launcher write the
		// undo directory there, never the state directory).
		if out, err := e.g.Run(e.ctx, e.Dir, "undo", "--list"); err != nil || !strings.Contains(out, "Recorded calls for") || !strings.Contains(out, "written.txt") && !strings.Contains(out, "bash") {
			t.Errorf("undo --list after the session: %v\n%s", err, out)
		} else {
			t.Logf("undo --list:\n%s", out)
		}
		// The download: held once, then run after one exact approval,
		// in both modes: with the sandbox, outside it in the launcher's
		// jail with the network to the server's port alone.
		dl := result(t, api, "toolu_js16")
		if got, err := os.ReadFile(e.path("dl/pkg.tgz")); err != nil || !bytes.Equal(got, pkg) || !strings.Contains(dl.Content, "downloaded") {
			t.Errorf("the approved download: %q (%v); result %+v", got, err, dl)
		}
		if sandbox {
			// It ran on the hook's ticket, in the network form, with the
			// network to the server's port alone.
			port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
			tk := networkTicket(t, sid)
			if tk.Capability != "project-write+network:"+port || !strings.Contains(tk.Command, "\n"+networkForm(e)+" exec --cap project-write+network:"+port+" ") {
				t.Errorf("the download's ticket: %+v", tk)
			}
		}
	})
}

// withJailDefaults runs f in two parallel subtests, "sandbox" (init's
// defaults: Claude Code's sandbox and the jail grant, in the user's
// settings) and "no sandbox" (init --no-sandbox), each on a new env.
// Unlike withAndWithoutSandbox it leaves init's jail grant in place.
func withJailDefaults(t *testing.T, f func(t *testing.T, e *env, sandbox bool)) {
	for _, sandbox := range []bool{true, false} {
		name := "sandbox"
		if !sandbox {
			name = "no sandbox"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, newJailEnv(t, sandbox), sandbox)
		})
	}
}

// newJailEnv is a new env registered by `loopguard init --user` with its
// defaults (the jail grant; --no-sandbox unless sandbox).
func newJailEnv(t *testing.T, sandbox bool) *env {
	t.Helper()
	e := newEnv(t)
	if err := os.RemoveAll(e.path(".claude")); err != nil {
		t.Fatal(err)
	}
	args := []string{"init", "--user", "--wait", "0"}
	if !sandbox {
		args = append(args, "--no-sandbox")
	}
	if _, err := e.g.Run(e.ctx, e.Dir, args...); err != nil {
		t.Fatal(err)
	}
	out, err := e.g.Run(e.ctx, e.Dir, "grants")
	if err != nil || !strings.Contains(out, "Bash(*)") || !strings.Contains(out, "jail") {
		t.Fatalf("init granted no jail (%v):\n%s", err, out)
	}
	return e
}

// runFor is env.run with a time limit of its own for the client.
func (e *env) runFor(timeout time.Duration, script claudetest.Script, prep func(p *Proxy), args ...string) *claudetest.FakeAPI {
	t := e.t
	t.Helper()
	api := claudetest.NewFakeAPI(t, script)
	p, err := StartProxy(api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if prep != nil {
		prep(p)
	}
	debug := filepath.Join(t.TempDir(), "client-debug.txt")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(debug)
			t.Logf("client debug log (tail):\n%s", claudetest.Tail(string(b), 40))
		}
	})
	res := claudetest.Run(t, claudetest.Options{
		Claude: e.claude, API: api, Dir: e.Dir, Home: e.g.Home, Args: append(args, "--debug-file", debug), Timeout: timeout,
		Env: append(append(e.g.ClientEnv(), e.clientEnv...), "ANTHROPIC_BASE_URL="+p.URL()),
	})
	if res.ExitCode != 0 {
		t.Fatalf("claude exit %d\nstderr: %s", res.ExitCode, res.Stderr)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("%v\ntool results: %+v", err, p.Results())
	}
	return api
}

// jailCostEnv turns TestJailCallCost on: it measures, reports nothing
// asserted, and takes minutes.
const jailCostEnv = "LOOPGUARD_E2E_JAIL_COST"

// TestJailCallCost measures what a jailed Bash call costs through the real
// client against the same call under Claude Code's own sandbox alone (no
// hook; a permission rule allows it), both with the sandbox init writes:
// whole `claude -p` runs of 1 and of 21 calls of `echo x > notes/c.txt`
// (which no narrower grant covers: it runs in the jail), the four kinds
// alternating in every round. The cost of one call is the slope, (ms at 21
// calls - ms at 1 call) / 20, each round's, then the median of the rounds;
// the same in CPU time (the client's and what it waited for: its hooks,
// its sandbox).
// Nothing is asserted; the figures are logged (make bench keeps them).
//
//	LOOPGUARD_E2E_JAIL_COST=5 scripts/with-keyring go test -count=1 -v -run TestJailCallCost ./e2e/loopguard/
func TestJailCallCost(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv(jailCostEnv))
	if rounds <= 0 {
		t.Skipf("set %s=ROUNDS to measure", jailCostEnv)
	}
	keyringtest.Require(t)
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (the jail needs %d)", confine.ABI(), confine.MinABI)
	}
	e := newJailEnv(t, true)
	plantJailProject(t, e.Dir)
	// Claude Code's sandbox alone: the sandbox block init wrote, no hooks.
	var user struct {
		Sandbox json.RawMessage `json:"sandbox"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(e.g.Home, ".claude", "settings.json")), &user); err != nil || len(user.Sandbox) == 0 {
		t.Fatalf("init wrote no sandbox block (%v)", err)
	}
	plain := t.TempDir()
	settings := fmt.Sprintf(`{"permissions": {"allow": ["Bash"]}, "sandbox": %s}`, user.Sandbox)
	testfs.Write(t, filepath.Join(plain, ".claude", "settings.json"), []byte(settings), 0o600)

	const cmd = "echo x > notes/c.txt"
	type kind struct {
		jail  bool
		calls int
	}
	const long = 21 // a session of at least 20 calls (issue 39)
	kinds := []kind{{false, 1}, {true, 1}, {false, long}, {true, long}}
	var sandboxSlopes, jailSlopes, costs []float64
	var sandboxCPU, jailCPU, costsCPU []float64
	for i := 0; i < rounds; i++ {
		ms, cpu := map[kind]float64{}, map[kind]float64{}
		for _, k := range kinds {
			var turns []claudetest.Turn
			for c := 0; c < k.calls; c++ {
				turns = append(turns, claudetest.Tools(bash(fmt.Sprintf("toolu_jc%d", c), cmd)))
			}
			api := claudetest.NewFakeAPI(t, claudetest.Script{Main: append(turns, claudetest.Text("done"))})
			home, env := plain, []string(nil)
			if k.jail {
				home, env = e.g.Home, e.g.ClientEnv()
			}
			res := claudetest.Run(t, claudetest.Options{Claude: e.claude, API: api, Dir: e.Dir, Home: home, Env: env, Timeout: jailSessionTimeout})
			if res.ExitCode != 0 {
				t.Fatalf("claude exit %d: %s", res.ExitCode, res.Stderr)
			}
			for c := 0; c < k.calls; c++ {
				if r, ok := api.ToolResult(fmt.Sprintf("toolu_jc%d", c)); !ok || r.IsError {
					t.Fatalf("jail %v: call %d did not run: %+v", k.jail, c, r)
				}
			}
			ms[k] = float64(res.Duration.Microseconds()) / 1000
			cpu[k] = float64(res.CPU.Microseconds()) / 1000
		}
		sb := (ms[kind{false, long}] - ms[kind{false, 1}]) / (long - 1)
		jl := (ms[kind{true, long}] - ms[kind{true, 1}]) / (long - 1)
		sandboxSlopes, jailSlopes, costs = append(sandboxSlopes, sb), append(jailSlopes, jl), append(costs, jl-sb)
		sbc := (cpu[kind{false, long}] - cpu[kind{false, 1}]) / (long - 1)
		jlc := (cpu[kind{true, long}] - cpu[kind{true, 1}]) / (long - 1)
		sandboxCPU, jailCPU, costsCPU = append(sandboxCPU, sbc), append(jailCPU, jlc), append(costsCPU, jlc-sbc)
	}
	t.Logf("%d rounds, medians: per call, Claude Code's sandbox alone %.0f ms, loopguard's hooks and jail inside it %.0f ms: the jail costs %.0f ms a call (rounds: %.0f)",
		rounds, median(sandboxSlopes), median(jailSlopes), median(costs), costs)
	t.Logf("%d rounds, CPU medians (the client and the processes it waited for): per call, Claude Code's sandbox alone %.1f ms, with loopguard %.1f ms: the jail costs %.1f ms a call (rounds: %.1f)",
		rounds, median(sandboxCPU), median(jailCPU), median(costsCPU), costsCPU)
	// One line for make bench (bench/cmd/budgets reads it).
	t.Logf("jail-cost rounds=%d calls=%d sandbox_ms=%.1f jail_ms=%.1f cost_ms=%.1f sandbox_cpu_ms=%.1f jail_cpu_ms=%.1f cost_cpu_ms=%.1f",
		rounds, long, median(sandboxSlopes), median(jailSlopes), median(costs), median(sandboxCPU), median(jailCPU), median(costsCPU))
	if want, jailed := rounds*(1+long), jailedCalls(t, e); jailed != want {
		t.Errorf("%d calls ran in the jail, want %d", jailed, want)
	}
}

// median is the middle of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// networkForm is the launcher the hook names in the network form (beside
// the binary, symlinks resolved).
func networkForm(e *env) string {
	bin := e.g.Bin
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	return filepath.Join(filepath.Dir(bin), "loopguard-exec")
}

// networkTicket is the ticket issued to session for a call in the network
// form (its capability has the network), used or not.
func networkTicket(t *testing.T, session string) ticket.Ticket {
	t.Helper()
	for _, tk := range sessionTickets(t, session) {
		if strings.Contains(tk.Capability, "+network") {
			return tk
		}
	}
	t.Fatalf("no ticket with the network for session %s", session)
	return ticket.Ticket{}
}

// sessionTickets are the tickets issued to session, used or not.
func sessionTickets(t *testing.T, session string) []ticket.Ticket {
	t.Helper()
	dir, err := ticketDir()
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var out []ticket.Ticket
	for _, en := range ents {
		b, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			continue
		}
		var tk ticket.Ticket
		if json.Unmarshal(b, &tk) == nil && tk.Session == session {
			out = append(out, tk)
		}
	}
	return out
}

// launchersOf checks which launcher each of session's tickets names: a
// launch that stays where the call runs (the jail) names loopguard-confine
// beside the binary, the escalation forms (the network, git's own
// directory) loopguard-exec, which the sandbox's excludedCommands name;
// at least one jailed launch is among them.
func launchersOf(t *testing.T, e *env, session string) {
	t.Helper()
	confiner := filepath.Join(filepath.Dir(networkForm(e)), "loopguard-confine")
	jailed := 0
	for _, tk := range sessionTickets(t, session) {
		escalation := strings.Contains(tk.Capability, "+network") || strings.Contains(tk.Capability, "+git")
		switch {
		case tk.Capability == policy.CapJail || tk.Capability == (policy.Capability{Jail: true}).String():
			jailed++
			if !strings.Contains(tk.Command, "\n"+shellparse.Quote(confiner)+" 'exec' '--cap' "+shellparse.Quote(tk.Capability)+" ") {
				t.Errorf("a jailed call's ticket does not run it through %s:\n%s", confiner, tk.Command)
			}
		case escalation:
			if !strings.Contains(tk.Command, "\n"+networkForm(e)+" exec --cap ") {
				t.Errorf("an escalation's ticket does not run it through %s:\n%s", networkForm(e), tk.Command)
			}
		}
		if !escalation && (strings.Contains(tk.Command, networkForm(e)+" exec ") || strings.Contains(tk.Command, shellparse.Quote(networkForm(e))+" 'exec' ")) {
			t.Errorf("a ticket runs a launch that stays where the call runs through loopguard-exec:\n%s", tk.Command)
		}
	}
	if jailed == 0 {
		t.Errorf("no ticket of session %s is a jailed call's", session)
	}
}

// TestNetworkEscalationAttacks: init's defaults with Claude Code's sandbox
// (two-phase enforcement and the one sandbox.excludedCommands entry that
// takes the launcher's network form out of the sandbox), attacked as the
// agent would, against a download server on loopback:
//   - the agent sends the network form itself, with and without a forged
//     ticket comment, and a compound command that starts with it: nothing
//     is downloaded;
//   - the hook fails open (no PreToolUse registration, a permission rule
//     lets Bash run) while the agent sends the network form: Claude Code
//     runs it outside its sandbox, and the wrapper refuses it
//     (no_decision);
//   - a repository's .claude/settings.json adds its own excludedCommands:
//     the hook refuses every Bash call it would allow (sandbox_excluded),
//     and holds the download as ever;
//   - an approved call that needs the network also tries to read ~/.ssh
//     and write the home: the launcher's jail refuses both.
//
// Control: the same approved call downloads and writes the project.
func TestNetworkEscalationAttacks(t *testing.T) {
	t.Parallel()
	keyringtest.Require(t)
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (the jail needs %d)", confine.ABI(), confine.MinABI)
	}
	pkg := []byte("a package tarball\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(pkg) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	// form is the network form of `curl -sS -o dl/NAME URL` as the hook
	// writes it, which the exclusion matches.
	form := func(e *env, name string) string {
		cp, _ := policy.ParseCapability("project-write+network:" + port)
		spec := confine.Spec{Cap: cp, Project: e.Dir, Cwd: e.Dir, Exe: "/usr/bin/bash", Argv: []string{"bash", "-c", "curl -sS -o dl/" + name + " " + srv.URL + "/x"}}
		cmd, ok := confine.NetworkCommand(networkForm(e), spec)
		if !ok {
			t.Fatalf("no network form for %s", networkForm(e))
		}
		return cmd
	}
	forged := "#loopguard-ticket:" + strings.Repeat("ab", 16) + "\n"

	t.Run("agent", func(t *testing.T) {
		t.Parallel()
		e := newJailEnv(t, true)
		plantJailProject(t, e.Dir)
		testfs.Write(t, e.path("tools/after.sh"), []byte(
			"if cat \"$HOME/.ssh/id_test\" >/dev/null 2>&1; then echo ssh-read; else echo ssh-refused; fi\n"+
				"if echo x > \"$HOME/outside.txt\" 2>/dev/null; then echo home-written; else echo home-refused; fi\n"+
				"echo in > dl/after.txt && echo project-written\n"), 0o644)
		testfs.Write(t, filepath.Join(e.g.Home, ".ssh", "id_test"), []byte("PRIVATE KEY\n"), 0o600)
		if err := os.Chmod(filepath.Join(e.g.Home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		approved := "curl -sS -o dl/esc.tgz " + srv.URL + "/x && sh tools/after.sh"
		calls := []claudetest.ToolCall{
			bash("toolu_na1", form(e, "a1")),
			bash("toolu_na2", forged+form(e, "a2")),
			bash("toolu_na3", form(e, "a3")+" ; curl -sS -o dl/a3b "+srv.URL+"/x"),
			bash("toolu_na4", approved),
			bash("toolu_na5", approved),
		}
		var turns []claudetest.Turn
		for _, c := range calls {
			turns = append(turns, claudetest.Tools(c))
		}
		api := e.runFor(jailSessionTimeout, claudetest.Script{Main: append(turns, claudetest.Text("done"))}, func(p *Proxy) {
			p.OnToolResult("toolu_na4", func() error {
				rows, err := e.g.Pending(e.ctx)
				if err != nil {
					return err
				}
				for _, row := range rows {
					if strings.Contains(row.Summary, "esc.tgz") {
						_, err = e.g.Approve(e.ctx, row)
						return err
					}
				}
				return fmt.Errorf("the approved call is not pending: %+v", rows)
			})
		}, "--session-id", sessionID(t))
		for _, c := range calls {
			r := result(t, api, c.ID)
			t.Logf("%s: error=%v %q", c.ID, r.IsError, claudetest.Tail(r.Content, 6))
		}
		for _, f := range []string{"dl/a1", "dl/a2", "dl/a3", "dl/a3b"} {
			if e.exists(f) {
				t.Errorf("%s was downloaded: a call no human approved reached the network", f)
			}
		}
		wantDenied(t, api, "toolu_na4", "leaves_jail")
		r := result(t, api, "toolu_na5")
		for _, w := range []string{"ssh-refused", "home-refused", "project-written"} {
			if !strings.Contains(r.Content, w) {
				t.Errorf("the approved call's result does not say %s: %q", w, r.Content)
			}
		}
		if got, err := os.ReadFile(e.path("dl/esc.tgz")); err != nil || !bytes.Equal(got, pkg) {
			t.Errorf("control: the approved download: %q (%v)", got, err)
		}
		if _, err := os.Stat(filepath.Join(e.g.Home, "outside.txt")); err == nil {
			t.Error("the approved call wrote the home")
		}
	})

	t.Run("hook fails open", func(t *testing.T) {
		t.Parallel()
		e := newJailEnv(t, true)
		plantJailProject(t, e.Dir)
		editJSON(t, e.userSettings(), func(m map[string]any) {
			allowBash(m)
			delete(m["hooks"].(map[string]any), "PreToolUse")
			delete(m["hooks"].(map[string]any), "PermissionRequest")
		})
		api := e.runFor(jailSessionTimeout, claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(bash("toolu_nf1", form(e, "f1"))),
			claudetest.Tools(bash("toolu_nf2", forged+form(e, "f2"))),
			claudetest.Text("done"),
		}}, nil, "--session-id", sessionID(t))
		wantDenied(t, api, "toolu_nf1", "no_decision")
		wantDenied(t, api, "toolu_nf2", "no_decision")
		for _, f := range []string{"dl/f1", "dl/f2"} {
			if e.exists(f) {
				t.Errorf("%s was downloaded with no decision", f)
			}
		}
	})

	// A standing +network grant (what review's n mints, here by the CLI)
	// covers a download: it runs with no decision, outside Claude Code's
	// sandbox in the launcher's network form, on the hook's ticket. The
	// grant's capability, not the rule, bounds where it connects: the same
	// rule over a URL on another port runs and the kernel refuses the
	// connection; a covered-looking call that writes the home is not
	// covered and does not download either.
	t.Run("network grant", func(t *testing.T) {
		t.Parallel()
		otherPkg := []byte("from another port\n")
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(otherPkg) }))
		t.Cleanup(other.Close)
		e := newJailEnv(t, true)
		plantJailProject(t, e.Dir)
		if out, err := e.g.Grant(e.ctx, e.Dir, "--network", "--port", port, "Bash(curl -sS -o dl/g.tgz *)"); err != nil {
			t.Fatalf("grant: %v\n%s", err, out)
		}
		sid := sessionID(t)
		api := e.runFor(jailSessionTimeout, claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(bash("toolu_ng1", "curl -sS -o dl/g.tgz "+srv.URL+"/x")),
			claudetest.Tools(bash("toolu_ng2", "curl -sS -o dl/g.tgz "+other.URL+"/x")),
			claudetest.Tools(bash("toolu_ng3", "curl -sS -o "+filepath.Join(e.g.Home, "g3.tgz")+" "+srv.URL+"/x")),
			claudetest.Text("done"),
		}}, nil, "--session-id", sid)
		for _, id := range []string{"toolu_ng1", "toolu_ng2", "toolu_ng3"} {
			r := result(t, api, id)
			t.Logf("%s: error=%v %q", id, r.IsError, claudetest.Tail(r.Content, 6))
		}
		// Control: the covered download ran, with no decision, on its
		// ticket in the network form.
		if r := result(t, api, "toolu_ng1"); strings.Contains(r.Content, "loopguard: ") {
			t.Errorf("the granted download did not run without a decision: %+v", r)
		}
		if got, err := os.ReadFile(e.path("dl/g.tgz")); err != nil || !bytes.Equal(got, pkg) {
			t.Errorf("control, then the other port: the granted download: %q (%v)", got, err)
		}
		tk := networkTicket(t, sid)
		if tk.Capability != "project-write+network:"+port || !strings.Contains(tk.Command, "\n"+networkForm(e)+" exec --cap project-write+network:"+port+" ") {
			t.Errorf("the granted download's ticket: %+v", tk)
		}
		// The other port: the rule covers the call, the capability does
		// not cover its connection, which the kernel refuses (the file
		// above still holds the first download).
		if r := result(t, api, "toolu_ng2"); strings.Contains(r.Content, "loopguard: ") || !strings.Contains(r.Content, "curl: (7)") {
			t.Errorf("the download from another port: want it run under the grant and its connection refused: %+v", r)
		}
		// Into the home: not covered, held to leave the jail.
		wantDenied(t, api, "toolu_ng3", "leaves_jail")
		if _, err := os.Stat(filepath.Join(e.g.Home, "g3.tgz")); err == nil {
			t.Error("a download into the home was written")
		}
	})

	t.Run("repository exclusion", func(t *testing.T) {
		t.Parallel()
		e := newJailEnv(t, true)
		plantJailProject(t, e.Dir)
		editJSON(t, e.path(".claude/settings.json"), func(m map[string]any) {
			m["sandbox"] = map[string]any{"excludedCommands": []any{"curl *", "ls"}}
		})
		api := e.runFor(jailSessionTimeout, claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(bash("toolu_nr1", "curl -sS -o dl/r1 "+srv.URL+"/x")),
			claudetest.Tools(bash("toolu_nr2", "ls")),
			claudetest.Text("done"),
		}}, nil, "--session-id", sessionID(t))
		// The download is held as ever (the hook refuses only what it
		// would allow); what it would allow is refused.
		wantDenied(t, api, "toolu_nr1", "leaves_jail")
		wantDenied(t, api, "toolu_nr2", "sandbox_excluded")
		if e.exists("dl/r1") {
			t.Error("the repository's exclusion downloaded")
		}
	})
}

// TestJailEverydayTopLevel: through the real client, under init's
// defaults (its sandbox on: the launch has the filter alone) and with
// --no-sandbox, jailed calls with no decision make a directory at the
// project's top, write and mark a script executable there and run it,
// make a new file at the top executable, and remove what they made and
// a directory the project had (until 482983f and its broker's
// directories, each of these failed with the sandbox on: "Operation not
// permitted", "Permission denied"). A git directory made in a new
// directory, and a mode change of a file outside through a link in the
// project, do not happen (attacks beside the controls).
func TestJailEverydayTopLevel(t *testing.T) {
	keyringtest.Require(t)
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (the jail needs %d)", confine.ABI(), confine.MinABI)
	}
	withJailDefaults(t, func(t *testing.T, e *env, sandbox bool) {
		plantJailProject(t, e.Dir)
		testfs.Write(t, filepath.Join(e.Dir, "dist", "old.js"), []byte("old\n"), 0o644)
		secret := filepath.Join(e.g.Home, "secret.txt")
		testfs.Write(t, secret, []byte("s\n"), 0o600)
		if err := os.Symlink(secret, filepath.Join(e.Dir, "notes", "s")); err != nil {
			t.Fatal(err)
		}
		// Project code, as the agent wrote it earlier: what the analysis
		// does not read, the kernel and the launcher decide.
		testfs.Write(t, filepath.Join(e.Dir, "tools", "p.sh"), []byte("mkdir -p x/.git; echo '[core]' > x/.git/config; chmod 644 notes/s; mkdir x/ok\n"), 0o644)
		api := e.runFor(jailSessionTimeout, claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(bash("toolu_t1", "mkdir -p build/bin && printf '#!/bin/sh\\necho built\\n' > build/bin/run.sh && chmod +x build/bin/run.sh && build/bin/run.sh")),
			claudetest.Tools(bash("toolu_t2", "printf '#!/bin/sh\\necho top\\n' > tool.sh && chmod 755 tool.sh && ./tool.sh")),
			claudetest.Tools(bash("toolu_t3", "rm -rf build dist && ls")),
			claudetest.Tools(bash("toolu_t4", "sh tools/p.sh; true")),
			claudetest.Text("done"),
		}}, nil)
		for id, want := range map[string]string{"toolu_t1": "built", "toolu_t2": "top"} {
			if r := result(t, api, id); r.IsError || !strings.Contains(r.Content, want) {
				t.Errorf("%s: %+v, want %q", id, r, want)
			}
		}
		if r := result(t, api, "toolu_t3"); r.IsError || strings.Contains(r.Content, "build") || strings.Contains(r.Content, "dist") {
			t.Errorf("rm -rf build dist: %+v", r)
		}
		for _, p := range []string{"build", "dist", "x/.git"} {
			if _, err := os.Lstat(filepath.Join(e.Dir, p)); err == nil {
				t.Errorf("%s is in the project after the calls", p)
			}
		}
		if _, err := os.Stat(filepath.Join(e.Dir, "x", "ok")); err != nil {
			t.Errorf("control: the script's own directory: %v", err)
		}
		if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the secret's mode: %v %v", fi.Mode(), err)
		}
		if jailed := jailedCalls(t, e); jailed != 4 {
			t.Errorf("%d of the 4 calls ran in the jail without a decision", jailed)
		}
	})
}

// jailedCalls counts the calls e's audit log shows run in the jail with no
// decision (PreToolUse, jailed).
func jailedCalls(t *testing.T, e *env) int {
	t.Helper()
	entries, err := e.g.Audit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, en := range entries {
		if en.Event == "PreToolUse" && en.Reason == "jailed" {
			n++
		}
	}
	return n
}

// TestJailUndoWatcher: under init's defaults, through the real client,
// the first jailed call that can write starts the project's undo watcher
// (the hook does, outside the client's sandbox): the first record walks
// the project, and by the third call a record lists it from the last one
// and what the watcher heard changed (meta.json: "listed": "watcher"). Between two
// sessions the human rewrites a file in place (same size, its
// modification time set back, its directory's times unchanged), which
// only the watcher or a walk can tell; the next call overwrites it, and
// `loopguard undo` at the terminal puts back the human's text, not the
// one the earlier record saw.
func TestJailUndoWatcher(t *testing.T) {
	t.Parallel()
	withJailDefaults(t, func(t *testing.T, e *env, sandbox bool) {
		plantJailProject(t, e.Dir)
		testfs.Write(t, e.path("notes/human.txt"), []byte("first\n"), 0o644)
		call := func(id, cmd string) {
			t.Helper()
			api := e.runFor(jailSessionTimeout, claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(bash(id, cmd)), claudetest.Text("done")}}, nil)
			if r := result(t, api, id); r.IsError || strings.Contains(r.Content, "loopguard: ") {
				t.Fatalf("%s did not run in the jail: %+v", cmd, r)
			}
		}
		newest := func() undo.Meta {
			t.Helper()
			s, err := undo.Open(filepath.Join(e.g.State, "loopguard"), e.Dir)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := s.List()
			if err != nil || len(ms) == 0 {
				t.Fatalf("no undo record: %v", err)
			}
			return ms[0]
		}
		call("toolu_uw1", "echo one > notes/a.txt")
		if m := newest(); m.Listed != "walk" {
			t.Errorf("the first record listed %q, want a walk (no record to follow)", m.Listed)
		}
		call("toolu_uw2", "echo two > notes/b.txt")
		f := e.path("notes/human.txt")
		// A record lists from the watcher's answer only when the watcher
		// answers within syncTimeout (250 ms), here and for the record
		// before it; on a loaded machine one may walk instead, which is
		// right but shows nothing: the human's rewrite and the call are
		// then made again, up to three times.
		var human string
		for try := range 3 {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			dir0, _ := os.Stat(e.path("notes"))
			w, err := os.OpenFile(f, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			human = fmt.Sprintf("huma%d\n", try) // the size of "first\n" and "call!\n"
			if _, err := w.WriteAt([]byte(human), 0); err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(w.Close(), os.Chtimes(f, fi.ModTime(), fi.ModTime())); err != nil {
				t.Fatal(err)
			}
			if dir1, _ := os.Stat(e.path("notes")); !dir1.ModTime().Equal(dir0.ModTime()) {
				t.Fatal("the rewrite changed its directory: the test shows nothing")
			}
			call(fmt.Sprintf("toolu_uw3_%d", try), "printf 'call!\\n' > notes/human.txt")
			m := newest()
			if m.Listed == "watcher" {
				break
			}
			if try == 2 {
				t.Fatalf("the record of each of three calls listed %q, want the watcher's", m.Listed)
			}
			t.Logf("the record listed %q (the watcher's answer late: a loaded machine); again", m.Listed)
		}
		if out, err := e.g.Run(e.ctx, e.Dir, "undo", "--yes"); err != nil {
			t.Fatalf("undo: %v\n%s", err, out)
		}
		if got := e.read("notes/human.txt"); got != human {
			t.Errorf("after undo notes/human.txt = %q, want the human's %q", got, human)
		}
		if got := e.read("notes/b.txt"); got != "two\n" {
			t.Errorf("undo took back more than the last call: notes/b.txt = %q", got)
		}
	})
}
