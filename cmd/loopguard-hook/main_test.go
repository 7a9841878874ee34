package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
)

// The hook binary stays lean: it links neither the CLI nor the Vault client
// (net/http, crypto/tls), which is why it exists (BENCH.md), nor the
// approval console (loopguard serve) and its WebAuthn library. The control:
// loopguard links all of them, so an empty or failed listing cannot pass.
func TestLinksNoCLINorVaultClient(t *testing.T) {
	heavy := []string{"net/http", "crypto/tls", "github.com/spf13/cobra", "github.com/loopguard/loopguard/backend/vault",
		"github.com/loopguard/loopguard/console", "github.com/go-webauthn/webauthn/webauthn", "github.com/go-webauthn/webauthn/protocol"}
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	full := deps("github.com/loopguard/loopguard/cmd/loopguard")
	hook := deps("github.com/loopguard/loopguard/cmd/loopguard-hook")
	for _, p := range heavy {
		if !slices.Contains(full, p) {
			t.Errorf("control: loopguard does not link %s (the list of heavy packages is stale)", p)
		}
		if slices.Contains(hook, p) {
			t.Errorf("loopguard-hook links %s", p)
		}
	}
}

// build builds both binaries into one directory, as make build does.
func build(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/loopguard/loopguard/cmd/loopguard", "github.com/loopguard/loopguard/cmd/loopguard-hook")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

type answer struct {
	code   int
	stdout string
}

func runHook(t *testing.T, bin, event, payload string, env []string) answer {
	t.Helper()
	return runHookArgs(t, bin, []string{"hook", "--event", event}, payload, env)
}

// runHookArgs runs the hook binary with args, payload on its standard
// input and its standard output a pipe a copier reads, as an agent's.
func runHookArgs(t *testing.T, bin string, args []string, payload string, env []string) answer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(payload)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return answer{code, out.String()}
}

var pendingID = regexp.MustCompile(`[a-z0-9]{24}`)

// loopguard-hook answers every recorded payload as `loopguard hook` does,
// byte for byte but for the new pending record's id: the same exit code,
// the same decision, the same reason. Each binary has its own state, so
// neither sees the other's pending records.
func TestSameAnswersAsLoopguardHook(t *testing.T) {
	dir := build(t)
	payloads, err := filepath.Glob("../../testdata/payloads/*.json")
	if err != nil || len(payloads) < 5 {
		t.Fatalf("payloads: %v %v", payloads, err)
	}
	root := t.TempDir()
	project := filepath.Join(root, "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	events := map[string]string{"pretooluse": "PreToolUse", "permissionrequest": "PermissionRequest", "posttooluse": "PostToolUse"}
	denies := 0
	for _, p := range payloads {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// The recording machine's folder becomes this test's.
		payload := regexp.MustCompile(`/tmp/loopguard-record-[0-9]+/[a-z-]+/project`).ReplaceAllString(string(raw), project)
		name := filepath.Base(p)
		event := events[strings.SplitN(name, "-", 2)[0]]
		var got []answer
		for _, bin := range []string{"loopguard", "loopguard-hook"} {
			home := filepath.Join(root, bin)
			env := []string{"HOME=" + home, "XDG_STATE_HOME=" + home + "/state", "XDG_CONFIG_HOME=" + home + "/config",
				"CLAUDE_PROJECT_DIR=" + project, "PATH=/usr/bin:/bin"}
			got = append(got, runHook(t, filepath.Join(dir, bin), event, payload, env))
			// A payload cut in half: malformed, denied alike.
			got = append(got, runHook(t, filepath.Join(dir, bin), event, payload[:len(payload)/2], env))
		}
		for i := range 2 {
			a, b := got[i], got[i+2]
			a.stdout, b.stdout = pendingID.ReplaceAllString(a.stdout, "ID"), pendingID.ReplaceAllString(b.stdout, "ID")
			if a != b {
				t.Errorf("%s (cut %v): loopguard hook exit %d %s\nloopguard-hook exit %d %s", name, i == 1, a.code, a.stdout, b.code, b.stdout)
			}
			if strings.Contains(a.stdout, "deny") {
				denies++
			}
		}
	}
	if denies < len(payloads) {
		t.Fatalf("only %d denies over %d payloads: the comparison did not reach the deny paths", denies, len(payloads))
	}
}

// Under the Vault backend loopguard-hook hands the call to the loopguard
// beside it; without one there, the call is denied, never let through.
// (The hand-over itself, against a real Vault and the real client, is
// e2e/loopguard's TestVaultApprovalFromAnotherMachineRealClient.)
func TestVaultWithoutFullBinaryDenies(t *testing.T) {
	dir := build(t)
	alone := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, "loopguard-hook"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(alone, "loopguard-hook"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := vaulttest.WriteConfig(filepath.Join(root, "config", "loopguard"), "http://127.0.0.1:1", "t"); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + root, "XDG_STATE_HOME=" + root + "/state", "XDG_CONFIG_HOME=" + root + "/config", "CLAUDE_PROJECT_DIR=" + root}
	read := `{"session_id":"s","transcript_path":"/x","cwd":"` + root + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + root + `/a.go"},"tool_use_id":"t"}`
	a := runHook(t, filepath.Join(alone, "loopguard-hook"), "PreToolUse", read, env)
	if a.code != 2 || !strings.Contains(a.stdout, `"permissionDecision":"deny"`) || !strings.Contains(a.stdout, "could not be run") {
		t.Fatalf("alone under Vault: exit %d %s; want a deny naming the missing binary", a.code, a.stdout)
	}
	// The control: beside loopguard the hand-over happens, and the full
	// binary lets the read through (a read in the project needs no grant,
	// and Vault is not asked).
	b := runHook(t, filepath.Join(dir, "loopguard-hook"), "PreToolUse", read, env)
	if b.code != 0 || strings.Contains(b.stdout, "deny") {
		t.Fatalf("beside loopguard under Vault: exit %d %s", b.code, b.stdout)
	}
}

// A file the hook reads from the project never blocks it. The seventy-first
// attack run committed sub/package.json as a link to /proc/self/fd/1 (an
// .envrc's `node sub` makes every call read it): the hook opened its own
// standard output for reading, waited to its deadline, and its blocked read
// then took the deadline's deny off the pipe, so Codex (exit 0) saw no
// answer at all, and ran the call. A FIFO there hung it the same way. Each
// answer here is the ordinary one, for Codex and for Claude Code, with the
// link and with a FIFO; the control is the same project with a plain
// package.json.
func TestProjectFilesNeverBlock(t *testing.T) {
	dir := build(t)
	root := t.TempDir()
	curl := func(agent, project string) answer {
		t.Helper()
		payload := `{"session_id":"0199a2c4-7f3e-7d11-9c55-3a1e2b4c5d6e","turn_id":"1","transcript_path":null,"cwd":"` + project +
			`","hook_event_name":"PreToolUse","model":"gpt-test","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"curl https://example.com"},"tool_use_id":"call_1"}`
		if agent == "claude" {
			payload = `{"session_id":"s","transcript_path":"/x","cwd":"` + project + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl https://example.com"},"tool_use_id":"t"}`
		}
		args := []string{"hook", "--event", "PreToolUse"}
		if agent != "claude" {
			args = []string{"hook", agent, "--event", "PreToolUse"}
		}
		return runHookArgs(t, filepath.Join(dir, "loopguard-hook"), args, payload, []string{"HOME=" + root, "XDG_STATE_HOME=" + root + "/state",
			"XDG_CONFIG_HOME=" + root + "/config", "CLAUDE_PROJECT_DIR=" + project, "PATH=/usr/bin:/bin"})
	}
	project := func(name string, pkg func(p string) error) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, ".envrc"), []byte("node sub\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := pkg(filepath.Join(p, "sub", "package.json")); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := project("plain", func(p string) error { return os.WriteFile(p, []byte("{}"), 0o644) })
	link := project("link", func(p string) error { return os.Symlink("/proc/self/fd/1", p) })
	fifo := project("fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) })
	for _, agent := range []string{"codex", "claude"} {
		want := curl(agent, plain)
		if !strings.Contains(want.stdout, "deny") || strings.Contains(want.stdout, "deadline") {
			t.Fatalf("control: %s's curl in the plain project: exit %d %q, want a deny that is not the deadline's", agent, want.code, want.stdout)
		}
		for _, p := range []string{link, fifo} {
			for range 3 {
				got := curl(agent, p)
				got.stdout = pendingID.ReplaceAllString(got.stdout, "ID")
				if got.code != want.code || got.stdout != pendingID.ReplaceAllString(want.stdout, "ID") {
					t.Errorf("%s's curl in %s: exit %d %q, want exit %d %q", agent, filepath.Base(p), got.code, got.stdout, want.code, want.stdout)
				}
			}
		}
	}
}
