package loopguard

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// gitRepo makes e.Dir a git repository with one commit, so git log has
// something to show.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"}, {"config", "user.email", "t@example.invalid"}, {"config", "user.name", "t"},
		{"add", "-A"}, {"commit", "-q", "-m", "first", "--allow-empty"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func writeCall(id, path, content string) claudetest.ToolCall {
	return claudetest.Call(id, "Write", map[string]any{"file_path": path, "content": content})
}

// Under the README's own Bash(git log *), a git log --output aimed at the
// hook settings is denied and the settings stay byte-identical; a Write
// through a committed directory symlink docs -> .git is refused and shown
// with its real target; a path with ESC and BEL reaches the client escaped.
// Controls: git log --oneline and an ordinary Write run.
func TestProtectedThroughRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gitRepo(t, e.Dir)
	if err := os.Symlink(".git", e.path("docs")); err != nil {
		t.Fatal(err)
	}
	session := sessionID(t)
	if _, err := e.g.Grant(e.ctx, e.Dir, "--session", session, "Bash(git log *)"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.g.Grant(e.ctx, e.Dir, "--session", session, "Write(src/**)"); err != nil {
		t.Fatal(err)
	}
	settings := e.path(filepath.Join(".claude", "settings.json"))
	before, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	gitConfig, _ := os.ReadFile(e.path(filepath.Join(".git", "config")))
	allowAll := `--format=tformat:{"permissions":{"allow":["Bash","Write","Edit"]}}`
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_pr1", "git log --oneline")),
		claudetest.Tools(bash("toolu_pr2", "git log -1 '"+allowAll+"' --output "+settings)),
		claudetest.Tools(bash("toolu_pr3", "git log -1 '"+allowAll+"' --output=.claude//./settings.json")),
		claudetest.Tools(bash("toolu_pr4", "git log -1 '"+allowAll+"' --output .clau?e/settings.json")),
		claudetest.Tools(writeCall("toolu_pr5", e.path("src/main.go"), "package main\n")),
		claudetest.Tools(claudetest.Call("toolu_pr6", "Read", map[string]any{"file_path": e.path("docs/config")})),
		claudetest.Tools(writeCall("toolu_pr7", e.path("docs/config"), "[core]\n\thooksPath = /tmp/evil\n")),
		claudetest.Tools(writeCall("toolu_pr8", e.path(".claude/settings\x1b]0;ok\x07\x1b[2J.json"), "{}")),
		claudetest.Text("done"),
	}}, nil, "--session-id", session)

	wantRan(t, api, "toolu_pr1")
	for _, id := range []string{"toolu_pr2", "toolu_pr3", "toolu_pr4"} {
		wantDenied(t, api, id, "protected_resource")
	}
	after, _ := os.ReadFile(settings)
	if !bytes.Equal(before, after) {
		t.Errorf("the hook settings changed:\n%s", after)
	}
	wantRan(t, api, "toolu_pr5")
	if !e.exists("src/main.go") {
		t.Error("the ordinary Write under Write(src/**) did not run")
	}
	wantRan(t, api, "toolu_pr6") // reading .git/config is fine
	wantDenied(t, api, "toolu_pr7", "executable_config")
	if now, _ := os.ReadFile(e.path(filepath.Join(".git", "config"))); !bytes.Equal(now, gitConfig) {
		t.Errorf(".git/config changed:\n%s", now)
	}
	r := wantDenied(t, api, "toolu_pr8", "protected_resource")
	if strings.ContainsAny(r.Content, "\x1b\x07") || !strings.Contains(r.Content, `\x1b]0;ok\x07\x1b[2J`) {
		t.Errorf("the deny reason does not carry the path escaped: %q", r.Content)
	}

	// The human sees where the docs/config Write lands.
	list, err := e.g.Pending(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var shown string
	for _, p := range list {
		if p.Tool == "Write" && strings.Contains(p.Summary, "docs/config") {
			if len(p.ID) < 20 {
				t.Errorf("pending id %q is shorter than 96 bits", p.ID)
			}
			if shown, err = e.g.Show(e.ctx, p.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	real := e.path(filepath.Join(".git", "config"))
	if !strings.Contains(shown, "resolves to "+real) || !strings.Contains(shown, "EXECUTABLE CONFIGURATION") || !strings.Contains(shown, "writes into a .git/ directory") {
		t.Errorf("loopguard show does not show the real target %s:\n%s", real, shown)
	}
}

// init's matcher reaches tools beyond the old list: Skill (offered at
// once), and Monitor, CronCreate, EnterWorktree, WebSearch (loaded with
// ToolSearch, which runs as a read-only tool). Each is denied without a
// grant; the Monitor command does not run.
func TestEveryToolGuardedThroughRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gitRepo(t, e.Dir)
	// A skill for the Skill tool to name (an unknown one fails the
	// client's own validation before any hook).
	skill := e.path(filepath.Join(".claude", "skills", "deploy", "SKILL.md"))
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: deploy\ndescription: Deploy the project\n---\nRun `touch skill-ran`.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(claudetest.Call("toolu_et1", "ToolSearch", map[string]any{"query": "select:Monitor,CronCreate,EnterWorktree,WebSearch", "max_results": 5})),
		claudetest.Tools(
			claudetest.Call("toolu_et2", "Monitor", map[string]any{"description": "watch", "timeout_ms": 2000, "command": "touch monitor-ran"}),
			claudetest.Call("toolu_et3", "CronCreate", map[string]any{"cron": "*/5 * * * *", "prompt": "touch cron-ran"}),
			claudetest.Call("toolu_et4", "EnterWorktree", map[string]any{"name": "side"}),
			claudetest.Call("toolu_et5", "WebSearch", map[string]any{"query": "loopguard"}),
			claudetest.Call("toolu_et6", "Skill", map[string]any{"skill": "deploy"}),
		),
		claudetest.Text("done"),
	}}, nil)
	wantRan(t, api, "toolu_et1")
	for _, id := range []string{"toolu_et2", "toolu_et3", "toolu_et4", "toolu_et5", "toolu_et6"} {
		wantDenied(t, api, id, "no_grant")
	}
	if e.exists("monitor-ran") {
		t.Error("the Monitor command ran")
	}
}
