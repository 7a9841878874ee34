package qwen

import (
	"strings"
	"testing"

	"github.com/loopguard/loopguard/hooks"
)

// TestSubagents: a subagent of Qwen Code's own is a subagent launch (its
// calls are hooked one by one); one that runs another agent's CLI (codex,
// claude-code) or that loopguard does not know keeps its name, and needs an
// exact approval.
func TestSubagents(t *testing.T) {
	for typ, want := range map[string]string{"general-purpose": "Task", "Explore": "Task", "codex": "agent", "claude-code": "agent", "mine": "agent"} {
		c := &hooks.Call{ToolName: "agent", Cwd: "/p", ToolInput: map[string]any{"subagent_type": typ, "prompt": "x", "description": "y"}}
		if err := mapTool(c); err != nil || c.ToolName != want {
			t.Errorf("subagent %s: %s (%v), want %s", typ, c.ToolName, err, want)
		}
	}
}

// TestMonitorRunsInItsDirectory: monitor is Bash run in its directory
// (relative to the cwd, as run_shell_command's), its input kept whole for
// the digest; no directory keeps the cwd.
func TestMonitorRunsInItsDirectory(t *testing.T) {
	for dir, want := range map[any]string{nil: "/p", "": "/p", "sub": "/p/sub", "/srv/app": "/srv/app"} {
		in := map[string]any{"command": "tail -f log", "description": "d", "directory": dir}
		c := &hooks.Call{ToolName: "monitor", Cwd: "/p", ToolInput: in}
		if err := mapTool(c); err != nil || c.ToolName != "Bash" || c.Cwd != want || c.ToolInput["directory"] != dir || len(c.ToolInput) != 3 {
			t.Errorf("directory %v: %s in %s %v (%v), want Bash in %s", dir, c.ToolName, c.Cwd, c.ToolInput, err, want)
		}
	}
}

// TestCoAuthorRewriteStaysQuoted: Qwen Code inserts its Co-authored-by
// trailer (and a gh pr create's attribution) before the closing quote of
// the message its expressions find, after the hook. A command in which
// that quote is not one bash reads as a quote is refused (the
// ninety-second attack run's, which emptied src/main.go); an ordinary
// commit, whose message the trailer only extends, is decided as before.
func TestCoAuthorRewriteStaysQuoted(t *testing.T) {
	run := func(cmd string) error {
		c := &hooks.Call{ToolName: "run_shell_command", Cwd: "/p", ToolInput: map[string]any{"command": cmd, "description": "d"}}
		err := mapTool(c)
		if err == nil && c.ToolName != "Bash" {
			t.Errorf("%q: %s, want Bash", cmd, c.ToolName)
		}
		return err
	}
	for _, cmd := range []string{
		`git commit '-m "fix: print' "src/main.go"`,
		`git commit --allow-empty '-m "x' "$HOME/.bashrc"`,
		`git commit -m "x" '--message="y' "z"`,
		`echo '-m "' ; git commit -m x "y"`,
		`git commit -m "a ${x:-"b"} c"`,
		"git commit -m \"a `echo \"b\"` c\"",
		`git commit -m "x" # -m "y"`,
		`gh pr create --title t '--body "x' "y"`,
	} {
		if err := run(cmd); err == nil || !strings.Contains(err.Error(), "Co-authored-by") {
			t.Errorf("%q: %v, want it refused", cmd, err)
		}
	}
	for _, cmd := range []string{
		`git commit -m "fix: print" src/main.go`,
		`git commit -am 'fix: print'`,
		`git commit -m 'it'\''s done'`,
		`git commit -m "say \"hi\"" && git push`,
		`git commit --message="x y"`,
		`git commit -m "$(cat msg.txt)"`,
		`gh pr create --title "t" --body "b"`,
		`git commit -m "a" -m "b"`,
		`ls -la`,
		`grep -m 1 x f`,
		// Qwen Code's expressions find no message in these.
		`git commit -m "x`,
		`git commit -m $"x"`,
	} {
		if err := run(cmd); err != nil {
			t.Errorf("%q: %v, want it decided as before", cmd, err)
		}
	}
}

// TestCoAuthorSettings: Qwen Code's co-author rewrite is on by default,
// and each of its settings files (system defaults, user, workspace,
// system) overrides the ones before it, field by field, in the forms
// normalizeGitCoAuthor reads.
func TestCoAuthorSettings(t *testing.T) {
	off := []byte(`{"general":{"gitCoAuthor":{"commit":false,"pr":false}}}`)
	for _, c := range []struct {
		layers     [][]byte
		commit, pr bool
	}{
		{nil, true, true},
		{[][]byte{nil, []byte(`{"general":{}}`)}, true, true},
		{[][]byte{nil, off}, false, false},
		{[][]byte{nil, []byte(`{"general":{"gitCoAuthor":false}}`)}, false, false},
		{[][]byte{nil, []byte(`{"general":{"gitCoAuthor":"no"}}`)}, false, false},
		{[][]byte{nil, []byte(`{"general":{"gitCoAuthor":{"commit":"yes","pr":0}}}`)}, true, false},
		{[][]byte{nil, off, []byte(`{"general":{"gitCoAuthor":{"commit":true}}}`)}, true, false},
		{[][]byte{nil, off, []byte(`not json`)}, false, false},
		{[][]byte{off, nil, nil, []byte(`{"general":{"gitCoAuthor":true}}`)}, true, true},
	} {
		if commit, pr := CoAuthor(c.layers...); commit != c.commit || pr != c.pr {
			t.Errorf("%q: commit %v pr %v, want %v %v", c.layers, commit, pr, c.commit, c.pr)
		}
	}
}
