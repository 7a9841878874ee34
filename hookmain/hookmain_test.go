package hookmain

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
)

// scratch gives the hook a private state and config directory, a project,
// and (when vault) a config with backend vault whose server is never
// reached in these tests.
func scratch(t *testing.T, vault bool) (project string) {
	t.Helper()
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("HOME", filepath.Join(root, "home"))
	project = filepath.Join(root, "project")
	for _, d := range []string{project, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CLAUDE_PROJECT_DIR", project)
	if vault {
		if err := vaulttest.WriteConfig(filepath.Join(root, "config", "loopguard"), "http://127.0.0.1:1", "t"); err != nil {
			t.Fatal(err)
		}
	}
	return project
}

func bashPayload(project, command string) string {
	return `{"session_id":"s1","transcript_path":"/x","cwd":"` + project + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + command + `"},"tool_use_id":"t1"}`
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Under the Vault backend a binary without the Vault client hands the call
// to the full binary beside it, before reading the payload, with its own
// arguments after "hook"; when that fails the call is denied, never let
// through. The controls: the local backend decides here (no exec), and a
// binary with the Vault client does not exec.
func TestVaultRunsFullBinary(t *testing.T) {
	project := scratch(t, true)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	wantPath, _ := policy.Binaries(self)

	in := &countingReader{r: strings.NewReader(bashPayload(project, "echo hi"))}
	var gotPath string
	var gotArgv []string
	readBefore := -1
	exec := func(path string, argv, env []string) error {
		gotPath, gotArgv, readBefore = path, argv, in.n
		return errors.New("exec refused by the test")
	}
	var out, errOut bytes.Buffer
	args := []string{"--event", "PreToolUse", "--mode", "enforce"}
	code := Run(args, in, &out, &errOut, Options{Exec: exec})
	if gotPath != wantPath {
		t.Fatalf("exec path %q, want the full binary beside this one %q", gotPath, wantPath)
	}
	if want := append([]string{wantPath, "hook"}, args...); strings.Join(gotArgv, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("exec argv %q, want %q", gotArgv, want)
	}
	if readBefore != 0 {
		t.Fatalf("%d bytes of the payload were read before the exec: the full binary would get a cut payload", readBefore)
	}
	if code != 2 || !strings.Contains(out.String(), `"permissionDecision":"deny"`) || !strings.Contains(out.String(), hooks.ReasonInternal) ||
		!strings.Contains(out.String(), "could not be run") {
		t.Fatalf("exec failed: want a deny naming the failure, got exit %d, stdout %s", code, out.String())
	}

	// A binary with the Vault client decides itself (here: the custody
	// cannot be built, so a deny, but no exec).
	gotPath = ""
	vaultCalled := false
	out.Reset()
	code = Run(args, strings.NewReader(bashPayload(project, "echo hi")), &out, &errOut, Options{Exec: exec,
		Vault: func(config.Config) (hooks.Custody, error) {
			vaultCalled = true
			return nil, errors.New("no vault in this test")
		}})
	if gotPath != "" || !vaultCalled || code != 2 {
		t.Fatalf("with the Vault client: exec %q, Vault called %v, exit %d; want no exec, Vault called, a deny", gotPath, vaultCalled, code)
	}
}

func TestLocalBackendDecidesHere(t *testing.T) {
	project := scratch(t, false)
	exec := func(path string, argv, env []string) error {
		t.Fatalf("exec %s under the local backend", path)
		return nil
	}
	var out, errOut bytes.Buffer
	code := Run([]string{"--event", "PreToolUse"}, strings.NewReader(bashPayload(project, "echo hi > f")), &out, &errOut, Options{Exec: exec})
	if code != 2 || !strings.Contains(out.String(), hooks.ReasonNoGrant) {
		t.Fatalf("want a no_grant deny, got exit %d: %s", code, out.String())
	}
	// The control for the deny: a read in the project is let through.
	out.Reset()
	read := `{"session_id":"s1","transcript_path":"/x","cwd":"` + project + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + project + `/main.go"},"tool_use_id":"t2"}`
	code = Run([]string{"--event", "PreToolUse"}, strings.NewReader(read), &out, &errOut, Options{Exec: exec})
	if code != 0 || strings.Contains(out.String(), "deny") {
		t.Fatalf("a read in the project: exit %d, %s", code, out.String())
	}
}

// Main takes the arguments as registered ("hook" first) or none at all.
func TestMainArgs(t *testing.T) {
	for _, args := range [][]string{{"hook", "--event", "Bogus"}, {"--event", "Bogus"}} {
		if got := argsAfterHook(args); len(got) != 2 || got[0] != "--event" {
			t.Errorf("argsAfterHook(%q) = %q", args, got)
		}
	}
	if got := argsAfterHook(nil); len(got) != 0 {
		t.Errorf("argsAfterHook(nil) = %q", got)
	}
}

// The configuration is read before agents.Run's deadline and recovery
// start; a read that hangs or panics still ends in a deny, within the
// hook's deadline. The control: the same call with the real read is an
// ordinary no_grant deny (TestLocalBackendDecidesHere).
func TestSetupHangOrPanicDenies(t *testing.T) {
	project := scratch(t, false)
	real := readSetup
	t.Cleanup(func() { readSetup = real })
	for what, read := range map[string]func() setup{
		"hang":  func() setup { time.Sleep(time.Minute); return setup{} },
		"panic": func() setup { panic("boom") },
	} {
		readSetup = read
		var out, errOut bytes.Buffer
		start := time.Now()
		code := Run([]string{"--event", "PreToolUse", "--deadline", "300ms"}, strings.NewReader(bashPayload(project, "echo hi")), &out, &errOut, Options{})
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: the hook took %s", what, took)
		}
		if code != 2 || !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
			t.Errorf("%s: want a deny, got exit %d: %s", what, code, out.String())
		}
	}
	readSetup = real
	var out, errOut bytes.Buffer
	if code := Run([]string{"--event", "PreToolUse", "--deadline", "300ms"}, strings.NewReader(bashPayload(project, "echo hi > f")), &out, &errOut, Options{}); code != 2 || !strings.Contains(out.String(), hooks.ReasonNoGrant) {
		t.Errorf("control: want no_grant, got exit %d: %s", code, out.String())
	}
}

// TestLauncherBeside: the hook confines through loopguard-exec beside it
// when it is there and executable, else through itself; without Landlock,
// through nothing. A loopguard-launch an earlier release left beside it
// (the retired small launcher) is never the launcher.
func TestLauncherBeside(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		if launcher("/x/loopguard-hook") != "" {
			t.Fatal("a launcher without Landlock")
		}
		t.Skip("no Landlock here")
	}
	dir := t.TempDir()
	self := filepath.Join(dir, "loopguard-hook")
	if got := launcher(self); got != self {
		t.Errorf("without loopguard-exec: %q", got)
	}
	exe := filepath.Join(dir, "loopguard-exec")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := launcher(self); got != self {
		t.Errorf("with a loopguard-exec that is not executable: %q", got)
	}
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := launcher(self); got != exe {
		t.Errorf("with loopguard-exec: %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "loopguard-launch"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := launcher(self); got != exe {
		t.Errorf("with a stale loopguard-launch beside it: %q", got)
	}
}

// TestConfinerBeside: the launches that stay where the call runs name
// loopguard-confine beside the hook when it is there and executable, and
// nothing (the launcher's then) otherwise; the launcher stays
// loopguard-exec, which the escalation forms name.
func TestConfinerBeside(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		if confiner("/x/loopguard-hook") != "" {
			t.Fatal("a confiner without Landlock")
		}
		t.Skip("no Landlock here")
	}
	dir := t.TempDir()
	self := filepath.Join(dir, "loopguard-hook")
	exe := filepath.Join(dir, "loopguard-exec")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := confiner(self); got != "" {
		t.Errorf("without loopguard-confine: %q", got)
	}
	c := filepath.Join(dir, "loopguard-confine")
	if err := os.WriteFile(c, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := confiner(self); got != "" {
		t.Errorf("with a loopguard-confine that is not executable: %q", got)
	}
	if err := os.Chmod(c, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := confiner(self); got != c {
		t.Errorf("with loopguard-confine: %q", got)
	}
	if got := launcher(self); got != exe {
		t.Errorf("the launcher beside loopguard-confine: %q; want loopguard-exec", got)
	}
}

// The hook's protected set includes the Vault token file the config names
// (or ~/.vault-token by default) under the Vault backend, and nothing more
// under the keyring.
func TestSecretsOfTheConfig(t *testing.T) {
	v := &config.Vault{Address: "http://127.0.0.1:8200"}
	if got := secrets(config.Config{Backend: config.BackendVault, Vault: v}, "/home/u"); len(got) != 1 || got[0] != "/home/u/.vault-token" {
		t.Errorf("default token file: %v", got)
	}
	v.TokenFile = "/etc/lg/agent.token"
	if got := secrets(config.Config{Backend: config.BackendVault, Vault: v}, "/home/u"); len(got) != 1 || got[0] != v.TokenFile {
		t.Errorf("token_file: %v", got)
	}
	if got := secrets(config.Config{}, "/home/u"); got != nil {
		t.Errorf("keyring: %v", got)
	}
}

// TestBadArgsDeny: a registration whose arguments the hook refuses
// (register.ParseArgs) denies every call, in the registered agent's own
// format, with the reason; it never exits 1 and never lets the call
// through. The control: the same calls with good arguments reach the
// engine (no_grant).
func TestBadArgsDeny(t *testing.T) {
	project := scratch(t, false)
	codexPayload := `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"` + project + `","hook_event_name":"PreToolUse","model":"m","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"echo hi > f"},"tool_use_id":"c1"}`
	for _, c := range []struct {
		args    []string
		payload string
		exit    int // the agent's deny: Claude Code's exit 2, Codex's JSON with exit 0
	}{
		{[]string{"--event", "PreToolUse", "--mode", "yolo"}, bashPayload(project, "echo hi > f"), agents.ExitDeny},
		{[]string{"--event", "PreToolUse", "--bogus"}, bashPayload(project, "echo hi > f"), agents.ExitDeny},
		{[]string{"--event", "PreToolUse", "extra"}, bashPayload(project, "echo hi > f"), agents.ExitDeny},
		{[]string{"--event", "PreToolUse", "--wait", "soon"}, bashPayload(project, "echo hi > f"), agents.ExitDeny},
		{[]string{"codex", "--event", "PreToolUse", "--mode", "yolo"}, codexPayload, 0},
		{[]string{"codex", "--event", "PreToolUse", "--deadline"}, codexPayload, 0},
	} {
		var out, errOut bytes.Buffer
		code := Run(c.args, strings.NewReader(c.payload), &out, &errOut, Options{})
		if code != c.exit || !strings.Contains(out.String(), `"permissionDecision":"deny"`) || !strings.Contains(out.String(), "bad hook arguments") {
			t.Errorf("%q: want the agent's deny naming the bad arguments, got exit %d: %s", c.args, code, out.String())
		}
	}
	for _, c := range []struct {
		args    []string
		payload string
	}{
		{[]string{"--event", "PreToolUse", "--mode", "enforce"}, bashPayload(project, "echo hi > f")},
		{[]string{"codex", "--event", "PreToolUse", "--mode", "enforce"}, codexPayload},
	} {
		var out, errOut bytes.Buffer
		Run(c.args, strings.NewReader(c.payload), &out, &errOut, Options{})
		if !strings.Contains(out.String(), hooks.ReasonNoGrant) || strings.Contains(out.String(), "bad hook arguments") {
			t.Errorf("control %q: want no_grant, got %s", c.args, out.String())
		}
	}
}

// TestInWrapper: the wrapper answers loopguard's own hook in its process
// (the same answer as the hook binary's: a no_grant deny here), except
// under the Vault backend, whose answer is the full binary's, and when the
// setup is not read within setupWait; then it declines having read
// nothing from stdin, and the wrapper runs the hook as a child.
func TestInWrapper(t *testing.T) {
	argv := []string{"/x/loopguard-hook", "hook", "--event", "PreToolUse", "--deadline", "2s"}
	project := scratch(t, false)
	in := &countingReader{r: strings.NewReader(bashPayload(project, "echo hi > f"))}
	var out bytes.Buffer
	code, ran := inWrapper(argv, in, &out, io.Discard)
	if !ran || code != 2 || !strings.Contains(out.String(), hooks.ReasonNoGrant) {
		t.Fatalf("control: ran %v, exit %d: %s", ran, code, out.String())
	}

	scratch(t, true)
	in = &countingReader{r: strings.NewReader(bashPayload(project, "echo hi > f"))}
	out.Reset()
	if _, ran := inWrapper(argv, in, &out, io.Discard); ran || in.n != 0 || out.Len() != 0 {
		t.Fatalf("Vault backend: ran %v, read %d bytes, wrote %q", ran, in.n, out.String())
	}

	scratch(t, false)
	real := readSetup
	t.Cleanup(func() { readSetup = real })
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	readSetup = func() setup { <-hang; return setup{} }
	in = &countingReader{r: strings.NewReader(bashPayload(project, "echo hi > f"))}
	start := time.Now()
	if _, ran := inWrapper(argv, in, &out, io.Discard); ran || in.n != 0 || out.Len() != 0 || time.Since(start) > 10*setupWait {
		t.Fatalf("hung setup: ran %v, read %d bytes, wrote %q, after %s", ran, in.n, out.String(), time.Since(start))
	}
}
