package loopguard

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/internal/testfs"
)

// managedMachine is a machine of its own for the managed install, made
// inside this one without touching it: a private mount namespace (kept in
// a file, entered with nsenter) where /etc and /usr/local are overlays, so
// /etc/claude-code, the ordinary user created for the test and the binaries
// installed in /usr/local/bin exist there only.
type managedMachine struct {
	t        *testing.T
	base     string // everything of the test, removed at the end
	ns       string // the namespace file
	uid, gid int
	home     string // the user's HOME
	repo     string
}

const managedUser = "lg-managed"

// run runs argv and returns its output; a failure is an error with it.
func (m *managedMachine) run(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}

func (m *managedMachine) must(argv ...string) string {
	m.t.Helper()
	out, err := m.run(argv...)
	if err != nil {
		m.t.Fatal(err)
	}
	return out
}

// inNS is argv run as root inside the machine.
func (m *managedMachine) inNS(argv ...string) []string {
	return append([]string{"nsenter", "--mount=" + m.ns, "--"}, argv...)
}

// asUser is argv run as the ordinary user inside the machine, with env
// and nothing else of this process's environment.
func (m *managedMachine) asUser(env []string, argv ...string) []string {
	return append(append(m.setUser("env", "-i"), env...), argv...)
}

// wrapUser is argv run as the user inside the machine with the caller's
// environment (the harness sets it whole) and env on top.
func (m *managedMachine) wrapUser(env []string, argv ...string) []string {
	return append(append(m.setUser("env"), env...), argv...)
}

func (m *managedMachine) setUser(argv ...string) []string {
	return m.inNS(append([]string{"setpriv", "--reuid", strconv.Itoa(m.uid), "--regid", strconv.Itoa(m.gid), "--clear-groups", "--"}, argv...)...)
}

func newManagedMachine(t *testing.T) *managedMachine {
	t.Helper()
	repo, err := claudetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp("", "loopguard-managed-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &managedMachine{t: t, base: base, repo: repo, ns: filepath.Join(base, "ns", "mnt")}
	dirs := []string{"ns", "etc-up", "etc-work", "local-up", "local-work", "home"}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	nsDir := filepath.Dir(m.ns)
	// A bind mount of its own, private, is where a namespace file can be
	// bound.
	m.must("mount", "--bind", nsDir, nsDir)
	t.Cleanup(func() {
		_, _ = m.run("umount", "--lazy", m.ns)
		_, _ = m.run("umount", "--lazy", nsDir)
		os.RemoveAll(base)
	})
	m.must("mount", "--make-private", nsDir)
	if err := os.WriteFile(m.ns, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m.must("unshare", "--mount="+m.ns, "--propagation", "private", "true")
	for _, o := range []struct{ dir, up, work string }{{"/etc", "etc-up", "etc-work"}, {"/usr/local", "local-up", "local-work"}} {
		m.must(m.inNS("mount", "-t", "overlay", "overlay", "-o",
			"lowerdir="+o.dir+",upperdir="+filepath.Join(base, o.up)+",workdir="+filepath.Join(base, o.work), o.dir)...)
	}
	m.home = filepath.Join(base, "home", managedUser)
	m.must(m.inNS("useradd", "--no-create-home", "--home-dir", m.home, "--shell", "/bin/sh", managedUser)...)
	for _, f := range []struct {
		flag string
		to   *int
	}{{"-u", &m.uid}, {"-g", &m.gid}} {
		out := m.must(m.inNS("id", f.flag, managedUser)...)
		if *f.to, err = strconv.Atoi(strings.TrimSpace(out)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{m.home, filepath.Join(m.home, ".claude"), filepath.Join(m.home, "project"), filepath.Join(m.home, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, m.uid, m.gid); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// script writes an executable wrapper (root's, 0755) that runs argv (from
// wrapUser) with the wrapper's own arguments appended, in the directory it
// was started in (entering a mount namespace moves a process to its root).
func (m *managedMachine) script(name string, argv []string) string {
	m.t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\nexec")
	for i, a := range argv {
		b.WriteString(" '" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		if i == 1 { // after nsenter --mount=...
			b.WriteString(` --wd="$PWD"`)
		}
	}
	b.WriteString(` "$@"` + "\n")
	p := filepath.Join(m.base, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		m.t.Fatal(err)
	}
	return p
}

// keyringSession starts the user's own Secret Service (scripts/with-keyring
// run as the user) and returns the variables that reach it.
func (m *managedMachine) keyringSession() []string {
	t := m.t
	t.Helper()
	busFile := filepath.Join(m.home, "tmp", "bus")
	argv := m.asUser([]string{"HOME=" + m.home, "TMPDIR=" + filepath.Join(m.home, "tmp"), "PATH=/usr/bin:/bin"},
		filepath.Join(m.repo, "scripts", "with-keyring"), "sh", "-c",
		`printf '%s\n%s\n' "$DBUS_SESSION_BUS_ADDRESS" "$XDG_RUNTIME_DIR" > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 600`, busFile)
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// with-keyring stops its daemon when its command ends.
		_, _ = m.run(m.asUser(nil, "pkill", "-u", strconv.Itoa(m.uid), "-x", "sleep")...)
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(busFile)
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); err == nil && len(lines) == 2 {
			return []string{"DBUS_SESSION_BUS_ADDRESS=" + lines[0], "XDG_RUNTIME_DIR=" + lines[1]}
		}
	}
	t.Fatalf("the user's keyring session did not start:\n%s", stderr.String())
	return nil
}

// The managed install, as an organisation sets it up: root installs the
// binaries in /usr/local/bin and runs `loopguard init --managed`; an
// ordinary user runs `loopguard init` for their key and state, and then the
// real client. The user's attempts to take the guard off (uninstall, init
// --managed, writing the managed settings, disableAllHooks in user, project
// and local settings, replacing or removing the binaries, bypass mode) all
// fail, and the user's calls stay guarded: a call is denied until the user
// approves it at their terminal, and the retry runs once.
func TestManagedInstall(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a managed install is root's (make test runs as root in CI)")
	}
	claude := installClient(t)
	m := newManagedMachine(t)
	rootEnv := []string{"HOME=" + filepath.Join(m.base, "root"), "PATH=/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1"}
	rootLG := func(args ...string) (string, error) {
		return m.run(m.inNS(append(append([]string{"env"}, rootEnv...), append([]string{"/usr/local/bin/loopguard"}, args...)...)...)...)
	}

	// Attack control: binaries that a user could replace are refused.
	if out, err := m.run(m.inNS(append(append([]string{"env"}, rootEnv...), lgBin, "init", "--managed")...)...); err == nil ||
		!strings.Contains(out, "can be changed by someone other than root") {
		t.Fatalf("init --managed from %s (not root's alone): err %v\n%s", lgBin, err, out)
	}
	for _, b := range []string{"loopguard", "loopguard-hook", "loopguard-exec", "loopguard-confine"} {
		m.must(m.inNS("install", "-o", "root", "-g", "root", "-m", "0755", filepath.Join(filepath.Dir(lgBin), b), "/usr/local/bin/"+b)...)
	}
	out, err := rootLG("init", "--managed", "--wait", "0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Managed: /etc/claude-code/managed-settings.json") {
		t.Fatalf("init --managed:\n%s", out)
	}
	managed := m.must(m.inNS("cat", "/etc/claude-code/managed-settings.json")...)
	for _, want := range []string{`"command": "/usr/local/bin/loopguard-hook"`, `"onFailure": "block"`, `"allowManagedHooksOnly": true`,
		`"disableBypassPermissionsMode": "disable"`, `"sandbox": {`, `"failIfUnavailable": true`} {
		if !strings.Contains(managed, want) {
			t.Errorf("managed settings lack %s:\n%s", want, managed)
		}
	}
	if st := m.must(m.inNS("stat", "-c", "%U %a", "/etc/claude-code/managed-settings.json")...); strings.TrimSpace(st) != "root 644" {
		t.Errorf("managed settings: owner and mode %q; want root 644", st)
	}

	// The user: a keyring of their own, then init (key, state, sandbox).
	bus := m.keyringSession()
	userEnv := append([]string{"HOME=" + m.home, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + filepath.Join(m.home, "tmp"), "NO_COLOR=1", "TERM=dumb"}, bus...)
	proj := filepath.Join(m.home, "project")
	userLG := func(args ...string) (string, error) {
		argv := m.asUser(userEnv, append([]string{"sh", "-c", `cd "$0" && exec /usr/local/bin/loopguard "$@"`, proj}, args...)...)
		return m.run(argv...)
	}
	out, err = userLG("init", "--no-preset", "--no-jail", "--toolchains", "none")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "the managed settings /etc/claude-code/managed-settings.json runs loopguard for every tool call; init registers no hook of its own") {
		t.Errorf("the user's init did not see the managed registration:\n%s", out)
	}
	doc, _ := userLG("doctor")
	for _, want := range []string{"ok    managed /etc/claude-code/managed-settings.json: root's alone", "hooks PreToolUse: registered (1)"} {
		if !strings.Contains(doc, want) {
			t.Errorf("doctor does not say %q:\n%s", want, doc)
		}
	}

	// The user tries to take the guard off.
	for _, b := range []string{"loopguard", "loopguard-hook", "loopguard-exec", "loopguard-confine"} {
		if !strings.Contains(managed, install.SandboxPath("/usr/local/bin/"+b)) {
			t.Errorf("the managed sandbox does not deny writes to /usr/local/bin/%s:\n%s", b, managed)
		}
	}
	if out, err := userLG("init", "--managed"); err == nil || !strings.Contains(out, "only root may write") {
		t.Errorf("init --managed as the user: err %v\n%s", err, out)
	}
	_, _ = userLG("uninstall")
	for _, argv := range [][]string{
		{"sh", "-c", "echo '{}' > /etc/claude-code/managed-settings.json"},
		{"rm", "-f", "/etc/claude-code/managed-settings.json"},
		{"cp", "/bin/true", "/usr/local/bin/loopguard-hook"},
		{"rm", "-f", "/usr/local/bin/loopguard-hook"},
		{"mv", "/usr/local/bin/loopguard", filepath.Join(m.home, "tmp", "lg")},
		{"cp", "/bin/true", "/usr/local/bin/loopguard-exec"},
		{"cp", "/bin/true", "/usr/local/bin/loopguard-confine"},
	} {
		if out, err := m.run(m.asUser(userEnv, argv...)...); err == nil {
			t.Errorf("the user could run %v:\n%s", argv, out)
		}
	}
	if now := m.must(m.inNS("cat", "/etc/claude-code/managed-settings.json")...); now != managed {
		t.Errorf("the managed settings changed:\n%s", now)
	}
	off := `{"disableAllHooks": true, "hooks": {}, "sandbox": {"enabled": false}}` + "\n"
	for _, p := range []string{filepath.Join(m.home, ".claude", "settings.json"), filepath.Join(proj, ".claude", "settings.json"), filepath.Join(proj, ".claude", "settings.local.json")} {
		testfs.Write(t, p, []byte(off), 0o644)
		for _, q := range []string{p, filepath.Dir(p)} {
			if err := os.Chown(q, m.uid, m.gid); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The real client, as the user: still guarded.
	lgWrap := m.script("loopguard-as-user", m.wrapUser(userEnv, "/usr/local/bin/loopguard"))
	claudeWrap := m.script("claude-as-user", m.wrapUser(append([]string{"TMPDIR=" + filepath.Join(m.home, "tmp")}, bus...), claude))
	e := &env{t: t, ctx: context.Background(), claude: claudeWrap, Dir: proj,
		g:         &Guard{Bin: lgWrap, Home: m.home, State: filepath.Join(m.home, ".local", "state")},
		clientEnv: append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, bus...)}
	e.heldApprovedRunsOnce("toolu_mg", "managed")

	// Bypass mode is refused, or guarded all the same.
	bapi := claudetest.NewFakeAPI(t, claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_mg3", "echo bypass >> bypass.txt")), claudetest.Text("done")}})
	res := claudetest.Run(t, claudetest.Options{Claude: claudeWrap, API: bapi, Dir: proj, Home: m.home,
		Args: []string{"--dangerously-skip-permissions"}, Env: e.clientEnv})
	if e.exists("bypass.txt") {
		t.Errorf("in bypass mode the call ran without an approval (exit %d)", res.ExitCode)
	}
	t.Logf("--dangerously-skip-permissions: exit %d; the call was not run", res.ExitCode)

	// Root takes it off again: init --managed had created the file.
	if out, err := rootLG("uninstall", "--managed"); err != nil || !strings.Contains(out, "removed (init --managed had created it)") {
		t.Errorf("uninstall --managed: %v\n%s", err, out)
	}
	if out, err := m.run(m.inNS("test", "-e", "/etc/claude-code/managed-settings.json")...); err == nil {
		t.Errorf("the managed settings are still there after uninstall --managed\n%s", out)
	}
}
