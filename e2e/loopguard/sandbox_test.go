package loopguard

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
)

// probeScript is code the agent planted in the project earlier and then got
// approved to run (sh probe.sh ...): it tries, one by one, what code run by
// an approved call could do to the guard, and writes one line per attempt
// to probe.out in the project ("NAME ok" when it worked).
const probeScript = `#!/bin/sh
# probe.sh PENDING_ID DIGEST8 PORT
out=probe.out
# loopguard's path: beside the hook binary the settings register (naming it
# in the command would be refused by the hook).
hook=$(sed -n 's/.*"command": "\(\/[^"]*\)".*/\1/p' "$HOME/.claude/settings.json" | head -n 1)
lg=$(dirname "$hook")/loopguard
: > "$out"
try() { name=$1; shift; echo "== $name" >> probe.err; if timeout 10 "$@" >>probe.err 2>&1 </dev/null; then echo "$name ok" >> "$out"; else echo "$name blocked" >> "$out"; fi; }
try keyring sh -c 'k=$(secret-tool lookup service loopguard username master-key) && [ -n "$k" ]' 
try settings sh -c ': >> "$HOME/.claude/settings.json"'
try state-write sh -c ': > "$XDG_STATE_HOME/loopguard/planted"'
try state-read grep -rqs "$2" "$XDG_STATE_HOME/loopguard"
try approve sh -c 'printf "%s\n" "$2" | env -u CLAUDECODE script -qec "$3 approve $1" /dev/null' _ "$1" "$2" "$lg"
try network bash -c 'echo hi > /dev/tcp/127.0.0.1/$0' "$3"
echo done >> "$out"
`

var probeAttacks = []string{"keyring", "settings", "state-write", "state-read", "approve", "network"}

// After `loopguard init` (user settings, the default), code run by an
// approved call cannot read the key, write the settings or loopguard's
// state, read the state, approve a pending call through script(1), or
// reach a port on the host's loopback;
// ordinary work (go test ./..., git status) still runs. The control,
// `init --no-sandbox`, shows every attack working, so the test can fail.
func TestSandboxConfinesApprovedCode(t *testing.T) {
	t.Parallel()
	keyringtest.Require(t)
	warm := warmGoCache(t)
	withAndWithoutSandbox(t, "sandbox", "no sandbox (control)", nil, func(t *testing.T, e *env, sandbox bool) {
		settings, err := os.ReadFile(filepath.Join(e.g.Home, ".claude", "settings.json"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(settings), `"sandbox"`) != sandbox {
			t.Fatalf("sandbox settings written = %v, want %v:\n%s", !sandbox, sandbox, settings)
		}
		plantProject(t, e.Dir)
		// The Go build caches the client's go test may use (the
		// sandbox's own, or the user's) start warm, so that compiling
		// the standard library does not eat the client's time limit,
		goCache := filepath.Join(e.g.Home, ".cache", "go-build")
		if sandbox {
			goCache = filepath.Join(e.g.Home, ".cache", "loopguard-sandbox", "go-build")
		}
		if err := os.MkdirAll(goCache, 0o700); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("cp", "-a", warm+"/.", goCache).CombinedOutput(); err != nil {
			t.Fatalf("copying the warm Go cache: %v: %s", err, b)
		}
		// and so does the launcher's own, which the jailed go test uses.
		warmScratch(t, warm, e.Dir)

		// A call the human has not approved, which the probe will try
		// to approve behind the human's back.
		session := sessionID(t)
		api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(bash("toolu_sx1", "touch escalated")),
			claudetest.Text("stopped"),
		}}, nil, "--session-id", session)
		wantDenied(t, api, "toolu_sx1", "no_grant")
		target, err := e.g.OnlyPending(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range []string{"Bash(go test ./...)", "Bash(git status)"} {
			if _, err := e.g.Grant(e.ctx, e.Dir, "--session", session, rule); err != nil {
				t.Fatal(err)
			}
		}

		// A listener on the host's loopback stands for the network.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		probe := fmt.Sprintf("sh probe.sh %s %s %d", target.ID, target.Digest[:8], port)
		// The granted go test, asking to leave the sandbox: no scoped
		// grant covers that, sandbox or not.
		escape := claudetest.Call("toolu_sx7", "Bash", map[string]any{"command": "go test ./...", "description": "test command", "dangerouslyDisableSandbox": true})
		api, _ = e.run(claudetest.Script{Main: []claudetest.Turn{
			claudetest.Tools(bash("toolu_sx2", probe)),
			claudetest.Tools(bash("toolu_sx3", probe)), // approved exactly by now
			claudetest.Tools(bash("toolu_sx4", "touch escalated")),
			claudetest.Tools(bash("toolu_sx5", "go test ./...")),
			claudetest.Tools(bash("toolu_sx6", "git status")),
			claudetest.Tools(escape),
			claudetest.Text("done"),
		}}, func(p *Proxy) {
			p.OnToolResult("toolu_sx2", func() error {
				rows, err := e.g.Pending(e.ctx)
				if err != nil {
					return err
				}
				for _, r := range rows {
					if strings.Contains(r.Summary, "probe.sh") {
						_, err := e.g.Approve(e.ctx, r)
						return err
					}
				}
				return fmt.Errorf("no pending probe call: %+v", rows)
			})
		}, "--resume", session)
		wantDenied(t, api, "toolu_sx2", "no_grant")
		wantRan(t, api, "toolu_sx3")

		got := map[string]string{}
		report := e.read("probe.out")
		for _, l := range strings.Split(strings.TrimSpace(report), "\n") {
			if name, res, ok := strings.Cut(l, " "); ok {
				got[name] = res
			}
		}
		t.Logf("probe.err:\n%s", e.read("probe.err"))
		if !strings.HasSuffix(strings.TrimSpace(report), "done") {
			t.Fatalf("the probe did not run to the end: probe.out = %q; tool results: %+v", report, api.ToolResults())
		}
		want := "ok"
		if sandbox {
			want = "blocked"
		}
		// What the probe saw may be a decoy (the sandbox hides a denied
		// directory under an empty one): the write counts only if the
		// real state dir has the file.
		if _, err := os.Stat(filepath.Join(e.g.State, "loopguard", "planted")); err == nil {
			got["state-write"] = "ok"
		} else {
			got["state-write"] = "blocked"
		}
		for _, a := range probeAttacks {
			if got[a] != want {
				t.Errorf("attack %s: %q, want %q (probe.out:\n%s)", a, got[a], want, report)
			}
		}
		// The self-approval worked only without the sandbox.
		if ran := e.exists("escalated"); ran == sandbox {
			t.Errorf("the call the probe tried to approve ran = %v; tool_result %+v", ran, result(t, api, "toolu_sx4"))
		}
		if sandbox {
			wantDenied(t, api, "toolu_sx4", "no_grant")
		}
		// Ordinary work runs either way.
		for _, id := range []string{"toolu_sx5", "toolu_sx6"} {
			wantRan(t, api, id)
		}
		if r := result(t, api, "toolu_sx5"); !strings.Contains(r.Content, "ok") {
			t.Errorf("go test ./... did not pass: %q", r.Content)
		}
		if r := result(t, api, "toolu_sx6"); !strings.Contains(r.Content, "On branch") {
			t.Errorf("git status did not report: %q", r.Content)
		}
		wantDenied(t, api, "toolu_sx7", "sandbox_escape")
	})
}

// withAndWithoutSandbox runs f in two parallel subtests, each on a new env
// whose hooks are registered, as the default install does, in the user
// settings rather than the project's (`init --user`, initArgs added): named
// on, with Claude Code's sandbox; named off, with --no-sandbox.
func withAndWithoutSandbox(t *testing.T, on, off string, initArgs []string, f func(t *testing.T, e *env, sandbox bool)) {
	for _, tt := range []struct {
		name    string
		sandbox bool
	}{
		{on, true},
		{off, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			args := initArgs
			if !tt.sandbox {
				args = append(args[:len(args):len(args)], "--no-sandbox")
			}
			e.initUser(args...)
			f(t, e, tt.sandbox)
		})
	}
}

// initUser registers loopguard in the user's settings instead of the
// project's (newEnv registered it in the project), with init's further
// args (--no-sandbox, --no-preset).
func (e *env) initUser(args ...string) {
	e.t.Helper()
	if err := os.RemoveAll(e.path(".claude")); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.g.Run(e.ctx, e.Dir, append([]string{"init", "--user", "--wait", "0", "--no-jail"}, args...)...); err != nil {
		e.t.Fatal(err)
	}
}

// plantProject makes the project a small Go module in a git repository,
// with the probe script the agent is supposed to have written.
func plantProject(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"probe.sh":      probeScript,
		"go.mod":        "module example.com/probe\n\ngo 1.21\n",
		"add.go":        "package probe\n\nfunc Add(a, b int) int { return a + b }\n",
		"add_test.go":   "package probe\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
		".gitignore":    "probe.out\nprobe.err\n",
		"README.md":     "probe\n",
		".git-keep.txt": "",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, b)
		}
	}
}

// warmGoCache builds and tests the probe project once into a fresh Go build
// cache and returns it.
func warmGoCache(t *testing.T) string {
	t.Helper()
	proj, cache := t.TempDir(), t.TempDir()
	plantProject(t, proj)
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir, cmd.Env = proj, append(os.Environ(), "GOCACHE="+cache, "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("warming the Go cache: %v: %s", err, b)
	}
	return cache
}
