//go:build linux

package loopguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/internal/keyringtest"
	"github.com/loopguard/loopguard/internal/testfs"
)

// The attack run of issue 35, replayed through the real client as an
// unprivileged user, with Claude Code's sandbox on and off. Project code
// that a Bash(make test) grant runs (the Makefile and the scripts the agent
// wrote) tries to leave something behind that an unconfined process of the
// user follows later: links in the shared temp directories where Claude
// Code's own Bash wrapper, unconfined, ends every call with `pwd -P >|
// $TMPDIR/claude-XXXX-cwd` (with the sandbox on, `pwd -P >|
// $SANDBOXTMP/cwd-XXXX`, SANDBOXTMP being $TMPDIR/claude-UID), and a
// `chmod 000` of the hook settings, which Landlock does not cover.

// escapeUID is the user the client, its HOME, the project and loopguard's
// state belong to when the tests run as root (root ignores file modes).
const escapeUID = 65534

// escapeBinsEnv names a directory holding loopguard, loopguard-hook,
// loopguard-exec (and loopguard-confine, where the build has it) to use instead of the package's build. It exists only to
// show that these tests fail against a launcher from before the fix
// (commit ad5e0f6); never set it otherwise.
const escapeBinsEnv = "LOOPGUARD_E2E_ESCAPE_BINS"

// escapeEnv is an env whose client, hook, CLI, HOME, project, state and
// keyring session are the unprivileged user's.
type escapeEnv struct {
	*env
	root    string
	tmp     string // the client's TMPDIR: shared, like /tmp (root's, 1777)
	sandbox bool
}

// sandboxTmp is where Claude Code's sandbox puts the Bash calls' TMPDIR
// (and its cwd files): TMPDIR/claude-UID.
func (x *escapeEnv) sandboxTmp() string {
	return filepath.Join(x.tmp, fmt.Sprintf("claude-%d", escapeUser()))
}

// escapeUser is the uid the env runs as: escapeUID under root, or the
// caller, who is unprivileged already.
func escapeUser() int {
	if os.Geteuid() == 0 {
		return escapeUID
	}
	return os.Geteuid()
}

// asUser prefixes argv so that it runs as escapeUser, keeping the
// environment.
func asUser(argv ...string) []string {
	if os.Geteuid() != 0 {
		return argv
	}
	id := strconv.Itoa(escapeUID)
	return append([]string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", "--"}, argv...)
}

// reachable is path if the escape's user can run it there, else a hard
// link to it (a copy where that fails) in dir, which it can.
func reachable(t *testing.T, path, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 || exec.Command("setpriv", "--reuid="+strconv.Itoa(escapeUID), "--regid="+strconv.Itoa(escapeUID), "--clear-groups", "--", "test", "-x", path).Run() == nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // npm's .bin/claude is a link to the client
	}
	to := filepath.Join(dir, filepath.Base(path))
	if err := os.Link(path, to); err != nil {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		testfs.Write(t, to, body, 0o755)
	}
	return to
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// withEscapeEnv runs f in two parallel subtests, "sandbox" (init's
// default, Claude Code's sandbox on) and "no sandbox" (init --no-sandbox),
// each on a new escapeEnv with project files planted, registered in the
// user's settings, with the read-only preset and Bash(make test) granted.
func withEscapeEnv(t *testing.T, files map[string]string, f func(t *testing.T, x *escapeEnv)) {
	t.Parallel()
	keyringtest.Require(t)
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (confinement needs %d)", confine.ABI(), confine.MinABI)
	}
	claude := installClient(t)
	for _, tt := range []struct {
		name    string
		sandbox bool
	}{{"sandbox", true}, {"no sandbox", false}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			x := newEscapeEnv(t, claude, tt.sandbox, files)
			f(t, x)
		})
	}
}

func newEscapeEnv(t *testing.T, claude string, sandbox bool, files map[string]string) *escapeEnv {
	t.Helper()
	repo, err := claudetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parent is root's alone (0700).
	root, err := os.MkdirTemp("", "lg-escape-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	x := &escapeEnv{root: root, tmp: filepath.Join(root, "tmp"), sandbox: sandbox}
	bin, home, state, proj, kr := filepath.Join(root, "bin"), filepath.Join(root, "home"), filepath.Join(root, "state"), filepath.Join(root, "project"), filepath.Join(root, "keyring")
	for _, d := range []string{bin, x.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(x.tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	// The binaries: root's, readable by all, as an installed copy is.
	src := filepath.Dir(lgBin)
	if d := os.Getenv(escapeBinsEnv); d != "" {
		src = d
		t.Logf("%s=%s: running the binaries there, not this build", escapeBinsEnv, d)
	}
	for _, b := range []string{"loopguard", "loopguard-hook", "loopguard-exec", "loopguard-confine"} {
		body, err := os.ReadFile(filepath.Join(src, b))
		if errors.Is(err, fs.ErrNotExist) && src != filepath.Dir(lgBin) && b == "loopguard-confine" {
			continue // a build from before it: its hook names loopguard-exec
		}
		if err != nil {
			t.Fatal(err)
		}
		testfs.Write(t, filepath.Join(bin, b), body, 0o755)
	}
	testfs.Write(t, filepath.Join(home, ".bashrc"), []byte("# the user's own start-up file\nexport LG_USER_BASHRC=1\n"), 0o644)
	for name, body := range files {
		testfs.Write(t, filepath.Join(proj, name), []byte(body), 0o644)
	}
	for _, d := range []string{home, state, kr, filepath.Join(proj, "out")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		for _, d := range []string{home, state, proj, kr} {
			testfs.Chown(t, d, escapeUID, escapeUID)
		}
	}
	// The client and the keyring script, where the user can run them: a
	// clone under a directory only root may enter (CI's may be) is out of
	// its reach, so they are linked (or copied) into bin.
	claude = reachable(t, claude, bin)
	bus := startUserKeyring(t, reachable(t, filepath.Join(repo, "scripts", "with-keyring"), bin), kr)
	wrap := func(name, prog string) string {
		argv := asUser(append(append([]string{"env", "PATH=/usr/local/bin:/usr/bin:/bin"}, bus...), prog)...)
		var b strings.Builder
		b.WriteString("#!/bin/sh\nexec")
		for _, a := range argv {
			b.WriteString(" " + shQuote(a))
		}
		b.WriteString(" \"$@\"\n")
		p := filepath.Join(bin, name)
		testfs.Write(t, p, []byte(b.String()), 0o755)
		return p
	}
	x.env = &env{t: t, ctx: context.Background(), claude: wrap("claude-as-user", claude), Dir: proj,
		g:         &Guard{Bin: wrap("loopguard-as-user", filepath.Join(bin, "loopguard")), Home: home, State: state},
		clientEnv: []string{"TMPDIR=" + x.tmp, "PATH=/usr/local/bin:/usr/bin:/bin"}}
	args := []string{"init", "--user", "--wait", "0", "--no-preset", "--no-jail"}
	if !sandbox {
		args = append(args, "--no-sandbox")
	}
	if _, err := x.g.Run(x.ctx, proj, args...); err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, filepath.Join(home, ".claude", "settings.json")); strings.Contains(string(b), `"sandbox"`) != sandbox {
		t.Fatalf("sandbox settings written = %v, want %v:\n%s", !sandbox, sandbox, b)
	}
	if _, err := x.g.Grant(x.ctx, proj, "--preset", "readonly"); err != nil {
		t.Fatal(err)
	}
	if _, err := x.g.Grant(x.ctx, proj, "Bash(make test)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := x.g.Run(context.Background(), home, "grants")
			t.Logf("loopguard grants:\n%s", out)
		}
	})
	return x
}

// startUserKeyring starts a Secret Service session of the user's own
// (scripts/with-keyring run as the user, in dir) and returns the variables
// that reach it; it is stopped, by its pid, when the test ends.
func startUserKeyring(t *testing.T, withKeyring, dir string) []string {
	t.Helper()
	busFile := filepath.Join(dir, "bus")
	argv := asUser("env", "-i", "HOME="+dir, "TMPDIR="+dir, "PATH=/usr/bin:/bin", withKeyring, "sh", "-c",
		`printf '%s\n%s\n%s\n' "$$" "$DBUS_SESSION_BUS_ADDRESS" "$XDG_RUNTIME_DIR" > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 900`, busFile)
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(busFile)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if err != nil || len(lines) != 3 {
			continue
		}
		pid, err := strconv.Atoi(lines[0])
		if err != nil {
			t.Fatal(err)
		}
		// The sleep ends, with-keyring stops its daemon and the bus.
		t.Cleanup(func() {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
			}
		})
		return []string{"DBUS_SESSION_BUS_ADDRESS=" + lines[1], "XDG_RUNTIME_DIR=" + lines[2]}
	}
	_ = cmd.Process.Kill()
	t.Fatalf("the user's keyring session did not start:\n%s", stderr.String())
	return nil
}

// run runs the client once in the project as the user, like env.run, with
// its debug log where the user can write it.
func (x *escapeEnv) run(turns ...claudetest.Turn) *claudetest.FakeAPI {
	t := x.t
	t.Helper()
	api := claudetest.NewFakeAPI(t, claudetest.Script{Main: append(turns, claudetest.Text("done"))})
	p, err := StartProxy(api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	debug := filepath.Join(x.g.Home, fmt.Sprintf("client-debug-%d.txt", time.Now().UnixNano()))
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(debug)
			t.Logf("client debug log (tail):\n%s", claudetest.Tail(string(b), 40))
		}
	})
	res := claudetest.Run(t, claudetest.Options{
		Claude: x.claude, API: api, Dir: x.Dir, Home: x.g.Home, Args: []string{"--session-id", sessionID(t), "--debug-file", debug},
		Env: append(append(x.g.ClientEnv(), x.clientEnv...), "ANTHROPIC_BASE_URL="+p.URL()),
	})
	if res.ExitCode != 0 {
		t.Fatalf("claude exit %d\nstderr: %s", res.ExitCode, res.Stderr)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("%v\ntool results: %+v", err, p.Results())
	}
	// The client ran as the user: its debug log is the user's.
	var st syscall.Stat_t
	if err := syscall.Stat(debug, &st); err != nil || int(st.Uid) != escapeUser() {
		t.Fatalf("the client's debug log %s: owner %d (%v), want %d", debug, st.Uid, err, escapeUser())
	}
	return api
}

// plantScript is the project code that plants the links: for each DIR
// FORM pair it tries every one of the 65,536 names FORM makes (the wrapper
// picks one at random), each a link to TARGET, and prints how many it
// created and the first error.
const plantScript = `# plant.pl TARGET DIR FORM [DIR FORM]...
my ($target, @pairs) = @ARGV;
while (my ($dir, $form) = splice(@pairs, 0, 2)) {
	mkdir $dir;
	my ($n, $err) = (0, "");
	for my $i (0 .. 65535) {
		if (symlink($target, sprintf("%s/$form", $dir, $i))) { $n++ } elsif (!$err) { $err = "$!" }
	}
	print "planted $n of 65536 links in $dir ($err)\n";
}
`

// checkScript is the project's ordinary test: its output is the control.
const checkScript = "echo \"make-test-ran: $(ls tools | wc -l) tools checked\"\n"

// plantFiles is a project whose make test runs tools/plant.pl against
// target (a path under HOME) in both of the client's temp directories,
// then its ordinary check.
func plantFiles(x *escapeEnv, target string) string {
	return fmt.Sprintf("test:\n\t@perl tools/plant.pl \"$$HOME/%s\" %s 'claude-%%04x-cwd' %s 'cwd-%%04x'\n\t@sh tools/check.sh\n",
		target, shQuote(x.tmp), shQuote(x.sandboxTmp()))
}

// noLinks fails the test for every symbolic link under dirs (the shared
// temp directory and the sandbox's).
func noLinks(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		n, first := 0, ""
		_ = filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err == nil && de.Type()&fs.ModeSymlink != 0 {
				if n++; first == "" {
					first = p
				}
			}
			return nil
		})
		if n > 0 {
			t.Errorf("%d links in %s (the first: %s)", n, d, first)
		}
	}
}

// plantedNothing checks that make test's plant printed, for each of the
// client's temp directories, that not one of the 65,536 links could be
// made: the real names are random, so the property is that none can.
func plantedNothing(t *testing.T, out string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if !strings.Contains(out, "planted 0 of 65536 links in "+d+" (") {
			t.Errorf("make test could plant links in %s (or said nothing of it): %q", d, out)
		}
	}
}

// mustRead is testfs.Read.
func mustRead(t *testing.T, p string) []byte { return testfs.Read(t, p) }

var escapeProject = map[string]string{
	"README.md":      "read me\n",
	"tools/plant.pl": plantScript,
	"tools/check.sh": checkScript,
}

// TestEscapeSettingsOverwrite: make test plants all 65,536 cwd-file names
// in the shared temp directory and in the sandbox's, each a link to
// ~/.claude/settings.json; the next call is a plain ls. Not one link is
// made, none is there afterwards, and the settings are byte for byte what
// they were. Controls: make test prints its ordinary output, ls the
// listing.
func TestEscapeSettingsOverwrite(t *testing.T) {
	withEscapeEnv(t, escapeProject, func(t *testing.T, x *escapeEnv) {
		testfs.Write(t, x.path("Makefile"), []byte(plantFiles(x, ".claude/settings.json")), 0o644)
		settings := filepath.Join(x.g.Home, ".claude", "settings.json")
		before := mustRead(t, settings)
		start := time.Now()
		api := x.run(claudetest.Tools(bash("toolu_e1", "make test")), claudetest.Tools(bash("toolu_e2", "ls")))
		t.Logf("the session took %v", time.Since(start).Round(time.Millisecond))
		mk, ls := result(t, api, "toolu_e1"), result(t, api, "toolu_e2")
		t.Logf("make test: %q", mk.Content)
		if !strings.Contains(mk.Content, "make-test-ran: 2 tools checked") {
			t.Errorf("control: make test did not print its ordinary output: %+v", mk)
		}
		if ls.IsError || !strings.Contains(ls.Content, "Makefile") || !strings.Contains(ls.Content, "README.md") {
			t.Errorf("control: ls did not print the listing: %+v", ls)
		}
		plantedNothing(t, mk.Content, x.tmp, x.sandboxTmp())
		noLinks(t, x.tmp)
		if after := mustRead(t, settings); !bytes.Equal(after, before) {
			t.Errorf("~/.claude/settings.json changed:\n%s\n->\n%s", before, after)
		}
	})
}

// escapedDir is the directory make test makes in TestEscapeBashrcLine: the
// second line of its name is a command that needs no slash (cd to HOME,
// then make the marker there).
const escapedDir = "out/x\ncd;touch lg-escaped"

// TestEscapeBashrcLine: make test plants the cwd-file names as links to
// ~/.bashrc and makes a directory whose name holds a second line; the
// agent then cds into it (cd DIR && ls), so that the wrapper's pwd -P
// would write that line into ~/.bashrc, and a next session (whose shell
// snapshot sources ~/.bashrc) runs ls. ~/.bashrc stays as it was and the
// line's command never runs (no marker). Controls: make test's ordinary
// output, the listing of the odd directory, and the next session's ls.
func TestEscapeBashrcLine(t *testing.T) {
	files := map[string]string{"tools/mkdir.sh": "d=$(printf 'out/x\\ncd;touch lg-escaped')\nmkdir -p \"$d\" && echo note > \"$d/notes.txt\"\n"}
	for k, v := range escapeProject {
		files[k] = v
	}
	withEscapeEnv(t, files, func(t *testing.T, x *escapeEnv) {
		mk := plantFiles(x, ".bashrc") + "\t@sh tools/mkdir.sh\n"
		testfs.Write(t, x.path("Makefile"), []byte(mk), 0o644)
		bashrc := filepath.Join(x.g.Home, ".bashrc")
		before := mustRead(t, bashrc)
		api := x.run(claudetest.Tools(bash("toolu_b1", "make test")), claudetest.Tools(bash("toolu_b2", "cd '"+escapedDir+"' && ls")))
		mkr, cd := result(t, api, "toolu_b1"), result(t, api, "toolu_b2")
		t.Logf("make test: %q", mkr.Content)
		if !strings.Contains(mkr.Content, "make-test-ran: 3 tools checked") {
			t.Errorf("control: make test did not print its ordinary output: %+v", mkr)
		}
		if _, err := os.Stat(x.path(escapedDir)); err != nil {
			t.Errorf("control: make test did not make the directory: %v", err)
		}
		if cd.IsError || !strings.Contains(cd.Content, "notes.txt") {
			t.Errorf("control: cd into the directory and ls did not list it: %+v", cd)
		}
		plantedNothing(t, mkr.Content, x.tmp, x.sandboxTmp())
		noLinks(t, x.tmp)
		// The next session: its shell snapshot sources ~/.bashrc.
		api = x.run(claudetest.Tools(bash("toolu_b3", "ls")))
		if r := result(t, api, "toolu_b3"); r.IsError || !strings.Contains(r.Content, "Makefile") {
			t.Errorf("control: the next session's ls: %+v", r)
		}
		if after := mustRead(t, bashrc); !bytes.Equal(after, before) {
			t.Errorf("~/.bashrc changed:\n%s\n->\n%q", before, after)
		}
		for _, m := range []string{filepath.Join(x.g.Home, "lg-escaped"), x.path("lg-escaped")} {
			if _, err := os.Lstat(m); err == nil {
				t.Errorf("%s exists: the line in the directory's name ran unconfined", m)
			}
		}
	})
}

// TestEscapeChmodSettings: make test runs `chmod 000
// ~/.claude/settings.json` (and of ~/.claude); the modes stay, and the
// next session still loads the hooks: a call no grant covers is denied by
// loopguard (no_grant, in the audit log), and ls runs under the preset.
// Control: make test's own `chmod +x` of a script inside the project
// works, sandbox on and off: where the launch has a mount namespace of its
// own the kernel makes it, and with the filter alone (inside Claude Code's
// sandbox, which refuses user namespaces, or where the user may not make
// them) the launcher's first stage makes it for a file in the write set
// and refuses the rest (confine/brokermode_linux.go). Until that, the
// filter alone refused every mode change, the project's own chmod too.
func TestEscapeChmodSettings(t *testing.T) {
	files := map[string]string{
		"Makefile": "test:\n" +
			"\t@chmod 000 \"$$HOME/.claude/settings.json\" && echo chmod-settings-done || echo chmod-settings-refused\n" +
			"\t@chmod 000 \"$$HOME/.claude\" && echo chmod-claude-dir-done || echo chmod-claude-dir-refused\n" +
			"\t@chmod +x tools/run.sh && echo chmod-own-done || echo chmod-own-refused\n" +
			"\t@sh tools/check.sh\n",
		"tools/run.sh": "echo run\n",
	}
	for k, v := range escapeProject {
		files[k] = v
	}
	withEscapeEnv(t, files, func(t *testing.T, x *escapeEnv) {
		settings := filepath.Join(x.g.Home, ".claude", "settings.json")
		modes := map[string]os.FileMode{}
		for _, p := range []string{settings, filepath.Dir(settings)} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			modes[p] = fi.Mode()
		}
		api := x.run(claudetest.Tools(bash("toolu_m1", "make test")))
		mk := result(t, api, "toolu_m1")
		t.Logf("make test: %q", mk.Content)
		if !strings.Contains(mk.Content, "make-test-ran: 3 tools checked") {
			t.Errorf("control: make test did not print its ordinary output: %+v", mk)
		}
		for _, w := range []string{"chmod-settings-refused", "chmod-claude-dir-refused"} {
			if !strings.Contains(mk.Content, w) {
				t.Errorf("make test's chmod was not refused (%s): %q", w, mk.Content)
			}
		}
		for p, m := range modes {
			if fi, err := os.Stat(p); err != nil || fi.Mode() != m {
				t.Errorf("%s: mode %v (%v), was %v", p, fi.Mode(), err, m)
			}
		}
		const own = true
		fi, err := os.Stat(x.path("tools/run.sh"))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode()&0o111 != 0; got != own || strings.Contains(mk.Content, "chmod-own-done") != own {
			t.Errorf("chmod +x inside the project worked = %v (mode %v), want %v (sandbox %v): %q", got, fi.Mode(), own, x.sandbox, mk.Content)
		}
		// The next session still loads the hooks.
		api = x.run(claudetest.Tools(bash("toolu_m2", "touch escalated")), claudetest.Tools(bash("toolu_m3", "ls")))
		wantDenied(t, api, "toolu_m2", "no_grant")
		if r := result(t, api, "toolu_m3"); r.IsError || !strings.Contains(r.Content, "Makefile") {
			t.Errorf("control: the next session's ls: %+v", r)
		}
		if x.exists("escalated") {
			t.Error("the call no grant covers ran")
		}
		entries, err := x.g.Audit(x.ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, en := range entries {
			seen = seen || en.Event == "PreToolUse" && en.Reason == "no_grant"
		}
		if !seen {
			t.Errorf("no PreToolUse no_grant decision in the audit log: %+v", entries)
		}
	})
}

// TestGrantedLinksAtTheTop: through the real client, a granted make test
// (project-write) that makes a Python venv and npm-style bin links at the
// project's top, as a test suite's set-up does: with Claude Code's sandbox
// on (the launch has the filter alone) its lib64 link and the bin link
// were refused until 2026-12-04 ("Permission denied"), where they ran
// with --no-sandbox. The attack beside it: a link named .envrc at the top
// is not made.
func TestGrantedLinksAtTheTop(t *testing.T) {
	files := map[string]string{
		"Makefile": "test:\n" +
			"\t@python3 -m venv --without-pip .venv && .venv/bin/python -c 'print(\"venv-\" + \"ran\")'\n" +
			"\t@mkdir -p node_modules/.bin node_modules/x && printf '#!/bin/sh\\necho bin-link-ran\\n' > node_modules/x/cli.js && chmod +x node_modules/x/cli.js && ln -s ../x/cli.js node_modules/.bin/x && node_modules/.bin/x\n" +
			"\t@ln -s Makefile .envrc 2>/dev/null && echo envrc-made || echo envrc-refused\n",
	}
	withEscapeEnv(t, files, func(t *testing.T, x *escapeEnv) {
		api := x.run(claudetest.Tools(bash("toolu_v1", "make test")))
		mk := result(t, api, "toolu_v1")
		for _, w := range []string{"venv-ran", "bin-link-ran", "envrc-refused"} {
			if !strings.Contains(mk.Content, w) {
				t.Errorf("sandbox %v: make test did not print %s: %q", x.sandbox, w, mk.Content)
			}
		}
		if x.exists(".envrc") {
			t.Errorf("sandbox %v: .envrc is in the project", x.sandbox)
		}
	})
}

// slowGitDirProject is a project whose make test makes a git directory
// under an ordinary name (out/g, whose config names an fsmonitor command
// that git runs), says so, and sleeps: a call to be killed before its
// sweep.
var slowGitDirProject = map[string]string{
	"Makefile": "test:\n\t@sh tools/slow.sh\n",
	"tools/slow.sh": "mkdir -p out/g/objects out/g/refs && echo 'ref: refs/heads/main' > out/g/HEAD && " +
		"printf '[core]\\n\\tbare = true\\n\\tfsmonitor = touch lg-fsmonitor-ran\\n' > out/g/config\necho made\nexec sleep 120\n",
}

// heldConfigs are the files under root, but config itself, that hold
// slowGitDirProject's out/g/config, found by their content under whatever
// name a sweep gave them (the state directory's held/, or beside itself).
func heldConfigs(root, config string) []string {
	var found []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && p != config {
			if b, _ := os.ReadFile(p); strings.HasPrefix(string(b), "[core]") && strings.Contains(string(b), "fsmonitor = touch lg-fsmonitor-ran") {
				found = append(found, p)
			}
		}
		return nil
	})
	return found
}

// TestKilledCallSweptAfterIt: make test, run in the background, makes a
// git directory under an ordinary name (out/g, whose config names an
// fsmonitor command that git runs) and sleeps; the agent then stops it
// (TaskStop), and the client kills its tree with SIGKILL, launcher and
// all, before the launcher's sweep. No launch runs in the project after
// it (whose recovery would sweep): the hook after TaskStop does, so out/g
// is gone from the project when the session ends. Controls: out/g/config
// was there before the stop, the stop ran, and what the call made is
// found where the sweep puts it (the state directory's held/, or beside
// itself under a name of the sweep's).
func TestKilledCallSweptAfterIt(t *testing.T) {
	withEscapeEnv(t, slowGitDirProject, func(t *testing.T, x *escapeEnv) {
		config := x.path("out/g/config")
		made := false
		var taskStop map[string]any
		taskID := regexp.MustCompile(`ID: ([A-Za-z0-9_-]+)`)
		stop := func(results []claudetest.ToolResult) claudetest.Turn {
			for end := time.Now().Add(60 * time.Second); time.Now().Before(end) && !made; time.Sleep(100 * time.Millisecond) {
				_, err := os.Lstat(config)
				made = err == nil
			}
			id := ""
			for _, r := range results {
				if m := taskID.FindStringSubmatch(r.Content); r.ToolUseID == "toolu_k1" && m != nil {
					id = m[1]
				}
			}
			taskStop = map[string]any{"task_id": id}
			return claudetest.Tools(claudetest.Call("toolu_k2", "TaskStop", taskStop))
		}
		// TaskStop needs the human's approval (it ends what another call
		// started): the first is held, the human approves it, the
		// identical second runs.
		var approveErr error
		again := func([]claudetest.ToolResult) claudetest.Turn {
			approveErr = x.g.ApproveOnly(x.ctx)
			return claudetest.Tools(claudetest.Call("toolu_k3", "TaskStop", taskStop))
		}
		api := x.run(claudetest.Tools(claudetest.Call("toolu_k1", "Bash", map[string]any{
			"command": "make test", "description": "test command", "run_in_background": true})), claudetest.Turn{Then: stop}, claudetest.Turn{Then: again})
		bg, st := result(t, api, "toolu_k1"), result(t, api, "toolu_k3")
		t.Logf("make test: %+v\nTaskStop: %+v", bg, st)
		if approveErr != nil {
			t.Fatalf("approving TaskStop: %v", approveErr)
		}
		if !made {
			t.Fatalf("control: make test did not make out/g/config within a minute")
		}
		if st.IsError {
			t.Fatalf("control: TaskStop failed: %+v", st)
		}
		if _, err := os.Lstat(config); err == nil {
			t.Errorf("out/g/config is still in the project after the killed call: an unconfined git there runs its fsmonitor")
		}
		x.wantHeld(t, config)
	})
}

// TestExitSweepsKilledCall: the user's exit is the kill of
// TestKilledCallSweptAfterIt with no call after it. The interactive client
// (on a terminal) runs make test in the background, which makes out/g (a
// git directory whose config names an fsmonitor) and sleeps; the user
// types /exit and picks "Exit and stop tasks". Claude Code stops the call
// (under its sandbox the launcher dies before its sweep) and then runs the
// SessionEnd hooks: loopguard's sweeps for the killed launch, so out/g is
// gone from the project once the client has exited, and (where the
// launcher could not sweep itself) the audit log says killed_call_swept.
// Controls: out/g/config was made, the client asked about the running
// call and exited, and what the call made is found where a sweep puts it.
func TestExitSweepsKilledCall(t *testing.T) {
	withEscapeEnv(t, slowGitDirProject, func(t *testing.T, x *escapeEnv) {
		config := x.path("out/g/config")
		api := claudetest.NewFakeAPI(t, claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(claudetest.Call("toolu_x1", "Bash", map[string]any{
				"command": "make test", "description": "test command", "run_in_background": true})),
			claudetest.Text("the tests run in the background"),
		}})
		p, err := StartProxy(api)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		x.trustInteractive(t)
		debug := filepath.Join(x.g.Home, "client-debug-exit.txt")
		cmd := exec.Command(x.claude, "--permission-mode", "default", "--session-id", sessionID(t), "--debug-file", debug)
		cmd.Dir = x.Dir
		cmd.Env = append(append(append([]string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + x.g.Home, "CLAUDE_CONFIG_DIR=" + filepath.Join(x.g.Home, ".claude"),
			"TMPDIR=" + os.TempDir(), "TERM=xterm-256color", "ANTHROPIC_API_KEY=" + interactiveKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		}, x.g.ClientEnv()...), x.clientEnv...), "ANTHROPIC_BASE_URL="+p.URL())
		tm, err := startOnPTY(cmd)
		if err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			tm.close()
			if t.Failed() {
				b, _ := os.ReadFile(debug)
				t.Logf("client debug log (tail):\n%s", claudetest.Tail(string(b), 40))
			}
		})
		_ = tm.resize(50, 160)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		step := func(what string, wait string) {
			t.Helper()
			if sc, err := tm.waitForText(ctx, wait); err != nil {
				t.Fatalf("%s: waiting for %q: %v\nscreen (tail, escapes left out):\n%s", what, wait, err, claudetest.Tail(escapes.ReplaceAllString(sc, " "), 40))
			}
		}
		step("the client's prompt", "for shortcuts")
		if err := tm.write("go"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		_ = tm.write("\r")
		step("the model's answer after the background call", "the tests run in the background")
		made := false
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end) && !made; time.Sleep(100 * time.Millisecond) {
			_, err := os.Lstat(config)
			made = err == nil
		}
		if !made {
			t.Fatalf("control: make test did not make out/g/config within a minute; tool result: %+v", api.ToolResults())
		}
		_ = tm.write("/exit")
		time.Sleep(300 * time.Millisecond)
		_ = tm.write("\r")
		step("the client's question about the running call", "Exit and stop tasks")
		_ = tm.write("\r")
		select {
		case err := <-exited:
			t.Logf("the client exited: %v", err)
		case <-time.After(90 * time.Second):
			t.Fatalf("the client did not exit within 90 s of \"Exit and stop tasks\"\nscreen (tail, escapes left out):\n%s", claudetest.Tail(escapes.ReplaceAllString(tm.screen(), " "), 30))
		}
		// The hook at SessionEnd sweeps, or, where the launcher was
		// still exiting then, the project's guard within a second.
		if gone, _ := goneWithin(config, 5*time.Second); !gone {
			t.Errorf("out/g/config is still in the project 5 s after the session ended: an unconfined git there runs its fsmonitor")
		}
		x.wantHeld(t, config)
		if x.sandbox && len(x.sweptEntries(t, hooks.ReasonKilledSwept)) == 0 {
			// Under the sandbox the launcher dies outright: only the hook
			// at SessionEnd or the project's guard can have swept.
			t.Errorf("the audit log has no %s entry: the launcher died under the sandbox, so the sweep was not the hook's at SessionEnd nor the guard's", hooks.ReasonKilledSwept)
		}
	})
}

// TestClientKilledSweptByGuard: the client killed outright while a call
// runs (its process group sent SIGKILL: a crash, the out-of-memory
// killer, a terminal's session torn down) runs no hook after it, neither
// PostToolUse nor SessionEnd, and the call's launcher dies with it before
// its sweep. make test, run in the background, makes out/g (a git
// directory whose config names an fsmonitor) and sleeps; the test kills
// the client's group. The guard in the project's watcher, which the hook
// started outside the client with the call, finds the launch's directory
// unlocked and sweeps for it: out/g is gone from the project within
// seconds, and the audit log says killed_call_swept (event guard).
// Controls: out/g/config was made, the client was killed (no clean exit),
// and what the call made is found where a sweep puts it.
func TestClientKilledSweptByGuard(t *testing.T) {
	withEscapeEnv(t, slowGitDirProject, func(t *testing.T, x *escapeEnv) {
		config := x.path("out/g/config")
		ctx, kill := context.WithCancel(context.Background())
		defer kill()
		made := false
		killClient := func([]claudetest.ToolResult) claudetest.Turn {
			for end := time.Now().Add(60 * time.Second); time.Now().Before(end) && !made; time.Sleep(100 * time.Millisecond) {
				_, err := os.Lstat(config)
				made = err == nil
			}
			kill()
			return claudetest.Text("not read: the client is gone")
		}
		api := claudetest.NewFakeAPI(t, claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(claudetest.Call("toolu_g1", "Bash", map[string]any{
				"command": "make test", "description": "test command", "run_in_background": true})),
			{Then: killClient},
		}})
		p, err := StartProxy(api)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		res, err := claudetest.RunClient(ctx, claudetest.Options{
			Claude: x.claude, API: api, Dir: x.Dir, Home: x.g.Home, Args: []string{"--session-id", sessionID(t)},
			Env: append(append(x.g.ClientEnv(), x.clientEnv...), "ANTHROPIC_BASE_URL="+p.URL()),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the client: exit %d, killed %v; tool results: %+v", res.ExitCode, res.TimedOut, api.ToolResults())
		if !made {
			t.Fatalf("control: make test did not make out/g/config within a minute")
		}
		if !res.TimedOut {
			t.Fatalf("control: the client exited before it was killed (exit %d)", res.ExitCode)
		}
		roots := confine.ScratchRoots(x.tmp, escapeUser())
		if !x.sandbox {
			// Without the sandbox the kill of the client's group does
			// not reach a background call (the client starts it in a
			// group of its own): it runs on, and its launcher would sweep
			// at its end. The guard leaves a live launch alone; then the
			// launcher is killed outright, as the user's session's end
			// kills what is left (systemd-logind's KillUserProcesses).
			time.Sleep(2 * time.Second)
			if _, err := os.Lstat(config); err != nil || !confine.LiveLaunch(roots, escapeUser(), x.Dir) {
				t.Fatalf("control: out/g/config (%v) or the live launch gone 2 s after the client's kill, without the sandbox", err)
			}
			if n := killLaunchers(t, x.root); n == 0 {
				t.Fatalf("control: no launcher of the call to kill")
			}
		}
		gone, took := goneWithin(config, 20*time.Second)
		if !gone {
			t.Fatalf("out/g/config is still in the project 20 s after the client was killed: an unconfined git there runs its fsmonitor")
		}
		t.Logf("out/g/config gone from the project %v after the kill", took.Round(10*time.Millisecond))
		x.wantHeld(t, config)
		// Held in the state directory, not renamed beside itself in the
		// project: the eighty-fifth attack run's guard had no HOME, so
		// its recovery had no state directory to move it into.
		for _, f := range heldConfigs(x.root, config) {
			if fsx.Within(f, x.Dir) {
				t.Errorf("held back inside the project, at %s: the guard's recovery had no state directory", f)
			}
		}
		if swept := x.sweptEntries(t, hooks.ReasonKilledSwept, `"event":"guard"`); len(swept) == 0 {
			t.Errorf("the audit log has no %s entry of the guard", hooks.ReasonKilledSwept)
		}
	})
}

// goneWithin waits up to within for path to be gone, and says how long
// it took.
func goneWithin(path string, within time.Duration) (bool, time.Duration) {
	start := time.Now()
	for end := start.Add(within); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Lstat(path); err != nil {
			return true, time.Since(start)
		}
		if time.Now().After(end) {
			return false, time.Since(start)
		}
	}
}

// wantHeld fails the test when slowGitDirProject's out/g/config (config)
// is nowhere a sweep puts what it holds back.
func (x *escapeEnv) wantHeld(t *testing.T, config string) {
	t.Helper()
	found := heldConfigs(x.root, config)
	t.Logf("held back: %v", found)
	if len(found) == 0 {
		t.Errorf("control: the call's out/g/config is nowhere under %s", x.root)
	}
}

// sweptEntries are the audit log's entries that hold every one of want,
// waited for up to 5 s: the guard records its sweep once the recovery has
// exited, after what the recovery moved is gone from the project.
func (x *escapeEnv) sweptEntries(t *testing.T, want ...string) []string {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, err := x.g.Run(context.Background(), x.g.Home, "audit", "--json", "-n", "0")
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, line := range strings.Split(out, "\n") {
			if line != "" && !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
				found = append(found, line)
				t.Logf("the audit log: %s", line)
			}
		}
		if len(found) > 0 || time.Now().After(end) {
			return found
		}
	}
}

// killLaunchers sends SIGKILL to the launchers (`exec --cap ...`) of the
// binaries under root and returns how many it killed.
func killLaunchers(t *testing.T, root string) int {
	t.Helper()
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(argv) > 2 && strings.HasPrefix(argv[0], root+"/") && argv[1] == "exec" && argv[2] == "--cap" {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				t.Logf("killed the launcher %d: %q", pid, argv)
				n++
			}
		}
	}
	return n
}

// interactiveKey is the API key the interactive client is given (the fake
// API takes any), approved in its configuration so that it does not ask.
const interactiveKey = "sk-ant-loopguard-e2e-interactive-key"

// trustInteractive writes the client's configuration (its .claude.json) so
// that the interactive client starts at its prompt: onboarding done, the
// project trusted, the API key approved.
func (x *escapeEnv) trustInteractive(t *testing.T) {
	t.Helper()
	cfg := map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 3,
		"customApiKeyResponses": map[string]any{"approved": []string{interactiveKey[len(interactiveKey)-20:]}, "rejected": []string{}},
		"projects":              map[string]any{x.Dir: map[string]any{"hasTrustDialogAccepted": true}},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(x.g.Home, ".claude", ".claude.json"), filepath.Join(x.g.Home, ".claude.json")} {
		testfs.Write(t, p, b, 0o600)
		if os.Geteuid() == 0 {
			testfs.Chown(t, p, escapeUID, escapeUID)
		}
	}
}
