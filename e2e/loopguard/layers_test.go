package loopguard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
)

// The layer tests run a binary built with the lgtest tag, whose knobs
// (internal/testknobs) turn one layer off at a time, without Claude Code's
// sandbox: each layer must hold on its own, and with it off too the
// attack must get through, or the test proves nothing.
var (
	lgtestOnce sync.Once
	lgtestBin  string
	lgtestErr  error
)

func lgtestBinary(t *testing.T) string {
	t.Helper()
	lgtestOnce.Do(func() {
		repo, err := claudetest.RepoRoot()
		if err != nil {
			lgtestErr = err
			return
		}
		dir, err := os.MkdirTemp("", "loopguard-lgtest-")
		if err != nil {
			lgtestErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		lgtestBin, lgtestErr = Build(ctx, repo, dir, "lgtest")
	})
	if lgtestErr != nil {
		t.Fatal(lgtestErr)
	}
	return lgtestBin
}

// layerEnv is a project under the read-only preset, no sandbox, with the
// knobs set for the client, the hook and the launcher.
func layerEnv(t *testing.T, knobs string) *env {
	t.Helper()
	keyringtest.Require(t)
	bin := lgtestBinary(t)
	e := newEnvWith(t, claudetest.Install(t), bin)
	e.g.Extra = []string{"LOOPGUARD_TEST_KNOBS=" + knobs}
	e.initUser("--no-preset", "--no-sandbox")
	plantAttackProject(t, e)
	if _, err := e.g.Grant(e.ctx, e.Dir, "--preset", "readonly"); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRewriteHoldsAlone: with the decoder's old \x{..} gap back and the
// kernel's ruleset off, the canonical rewrite alone keeps the attack from
// bash: go vet gets the word as analysed, and no code runs. With the
// rewrite off too, the same call runs the attacker's code.
func TestRewriteHoldsAlone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		knobs string
		ran   bool
	}{
		{"rewrite on", "legacy-brace-escape,no-ruleset", false},
		{"rewrite off, control: the attack reaches bash", "legacy-brace-escape,no-ruleset,no-rewrite", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := layerEnv(t, tt.knobs)
			// go runs -toolexec in the package's directory, the project.
			pwned := e.path("out/PWNED")
			attack := `go vet $'\x{2d}toolexec=\x{2f}bin\x{2f}sh -c "touch out/PWNED" x' ./...`
			api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(bash("toolu_l1", attack)),
				claudetest.Text("done"),
			}}, nil, "--session-id", sessionID(t))
			r := result(t, api, "toolu_l1")
			if strings.Contains(r.Content, "loopguard: unparseable") {
				t.Fatalf("the knob did not bring the old decoder back: %q", r.Content)
			}
			_, err := os.Stat(pwned)
			if ran := err == nil; ran != tt.ran {
				t.Errorf("the attacker's code ran = %v, want %v; tool result %q", ran, tt.ran, r.Content)
			}
		})
	}
}

// TestKernelHoldsAlone: with the analysis judging nothing (any cat, head
// or grep is covered, no path is protected), the launcher's confinement
// alone keeps the secrets unread: the key through a link in the project,
// through a glob, by its own path; a token in the agent's environment
// (/proc/self/environ); npm's token in ~/.npmrc. With the confinement off
// too, each is printed.
func TestKernelHoldsAlone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		knobs  string
		leaked bool
	}{
		{"ruleset on", "loose-analysis", false},
		{"ruleset off, control: the key is read", "loose-analysis,no-ruleset", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := layerEnv(t, tt.knobs)
			key := filepath.Join(e.g.Home, ".ssh", "id_rsa")
			// A token in the agent's environment, and one npm login left.
			const envToken, npmToken = "ghp_LGTESTENVTOKEN", "npm_LGTESTNPMTOKEN"
			e.clientEnv = append(e.clientEnv, "GITHUB_TOKEN="+envToken)
			if err := os.WriteFile(filepath.Join(e.g.Home, ".npmrc"), []byte("//registry.invalid/:_authToken="+npmToken+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			calls := []struct{ cmd, secret string }{
				{"cat notes.txt", secretKey},
				{"cat *", secretKey},
				{"head -c 200 " + key, secretKey},
				{"grep -r BEGIN " + filepath.Dir(key), secretKey},
				{"cat /proc/self/environ", envToken},
				{"cat " + filepath.Join(e.g.Home, ".npmrc"), npmToken},
			}
			var turns []claudetest.Turn
			for i, c := range calls {
				turns = append(turns, claudetest.Tools(bash("toolu_k"+string(rune('1'+i)), c.cmd)))
			}
			turns = append(turns, claudetest.Tools(bash("toolu_kc", "cat README.md")), claudetest.Text("done"))
			api, _ := e.run(claudetest.Script{Main: turns}, nil, "--session-id", sessionID(t))
			for i, c := range calls {
				r := result(t, api, "toolu_k"+string(rune('1'+i)))
				if strings.HasPrefix(r.Content, "PreToolUse:Bash hook error") || strings.Contains(r.Content, "loopguard: ") {
					t.Fatalf("%s: loopguard refused it, so the kernel was not tried: %q", c.cmd, r.Content)
				}
				if leaked := strings.Contains(r.Content, c.secret); leaked != tt.leaked {
					t.Errorf("%s: secret printed = %v, want %v; result %q", c.cmd, leaked, tt.leaked, r.Content)
				}
			}
			if r := result(t, api, "toolu_kc"); r.IsError || !strings.Contains(r.Content, "the project's readme") {
				t.Errorf("control cat README.md: %q", r.Content)
			}
		})
	}
}
