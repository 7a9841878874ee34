package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/token"
)

// mintPreset mints the read-only preset as `loopguard grant --preset
// readonly` does: every rule that pins (the harness has stubs for some of
// the programs), bound to any session.
func (h *harness) mintPreset() int {
	h.t.Helper()
	rules, err := scope.Preset(scope.PresetReadOnly, h.eng().Env.Home)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, r := range rules {
		r, err := r.Pin(shellparse.Env{Cwd: h.Project, Path: h.eng().Env.Path, ProjectDir: h.Project, Trusted: h.eng().Env.Trusted, Home: h.eng().Env.Home})
		if errors.Is(err, scope.ErrNotPinnable) {
			continue
		}
		if err != nil {
			h.t.Fatal(err)
		}
		h.PutScoped(h.t, r, "alice", token.MainAgent, token.Any, h.now)
		n++
	}
	return n
}

// TestReadOnlyPreset: the preset's commands run without a decision; what it
// must never cover does not run (each row with its control).
func TestReadOnlyPreset(t *testing.T) {
	h := newHarness(t)
	h.stubs("less", "head", "wc", "grep", "du", "find", "sleep", "date", "sed", "nl", "sort", "uniq", "cut", "tr")
	base := filepath.Dir(h.Project)
	cfgDir := filepath.Join(base, "config", "loopguard")
	home := h.eng().Env.Home
	eng := h.eng
	h.eng = func() *Engine {
		e := eng()
		e.Env.ConfigDir = cfgDir
		e.Env.ProjectDir = h.Project
		return e
	}
	if n := h.mintPreset(); n < 8 {
		t.Fatalf("only %d preset rules pinned", n)
	}
	for _, d := range []string{filepath.Join(h.Project, ".git"), filepath.Join(h.Project, ".claude"), cfgDir, filepath.Join(h.Project, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bash := h.fixture("pretooluse-bash.json")
	run := func(cwd, cmd string) Decision {
		return h.decide(with(bash, func(m map[string]any) {
			input(m)["command"] = cmd
			if cwd != "" {
				m["cwd"] = cwd
			}
		}))
	}
	allowed := []string{
		"ls", "ls -la", "ls -la src", "cat README.md", "head -n 5 go.mod", "wc -l main.go", "grep -rn TODO .",
		"git status", "git status -sb", "git log --oneline -5", "git diff", "git diff --stat HEAD~1", "git show HEAD",
		"go vet ./...", "go list -m all", "git log --format=%h/%s -3", "cat src/../README.md", "ls -la " + h.Project,
		"cat inside-link/x", "grep -rn x *.go",
		"find . -name '*.go'", "find src -maxdepth 2 -type f", "find . -newer go.mod -print", "cd src", "echo done", "sleep 1", "date +%s",
		"sed -n '1,20p' main.go", "nl -ba main.go", "sort go.mod", "uniq -c go.mod", "cut -d: -f1 go.mod",
		"sed -n 5p main.go | nl", "grep -n func main.go | sort | uniq -c",
		// The read-only git calls agents send, and the front options a
		// rule over the subcommand covers (-C inside the project).
		"git -C sub status", "git -C . status --short", "git -C " + h.Project + " status", "git --no-pager log -1",
		"git -P -C sub log --oneline", "git ls-tree -r --name-only HEAD", "git rev-list --left-right --count origin/main...main",
		"git stash list", "git stash show -p", "git remote", "git tag", "git tag --list", "git tag -l 'v*'",
		"git show-ref --tags v0.1.1", "git branch -vv", "git branch --list 'feat/*'", "git worktree list",
		"git cat-file -p HEAD:go.mod", "git merge-base HEAD main", "git --version", "git status && git -C sub log -1",
	}
	// A symlink inside the project to a dir inside it (control) and to one
	// outside it (attack, below).
	_ = os.MkdirAll(filepath.Join(h.Project, "src"), 0o755)
	_ = os.Symlink(filepath.Join(h.Project, "src"), filepath.Join(h.Project, "inside-link"))
	_ = os.Symlink(home, filepath.Join(h.Project, "home-link"))
	for _, c := range allowed {
		expect(t, c, run("", c), Allow, ReasonScopedGrant)
	}
	denied := []struct{ cmd, reason string }{
		{"ls " + h.Store.Dir, ReasonProtected},
		{"cat " + filepath.Join(h.Store.Dir, "audit"), ReasonProtected},
		{"cat " + filepath.Join(cfgDir, "config.json"), ReasonProtected},
		{"cat .claude/settings.json", ReasonProtected},
		{"cat " + filepath.Join(home, ".claude", "settings.json"), ReasonProtected},
		{"git diff --output=x.patch", ReasonNoGrant},
		{"git log --output=/tmp/x", ReasonNoGrant},
		{"git diff --ext-diff", ReasonNoGrant},
		{"git log --textconv -p", ReasonNoGrant},
		{"git -c core.fsmonitor=id status", ReasonIndirect},
		{"git -c diff.external=id diff", ReasonIndirect},
		{"git --git-dir=sub status", ReasonNoGrant},
		{"git -C .. status", ReasonNoGrant},
		{"git -C home-link status", ReasonNoGrant},
		{"git -C .git status", ReasonExecConfig},
		{"git -C sub -c core.fsmonitor=id status", ReasonIndirect},
		{"git -C sub diff -- ../../x", ReasonNoGrant},
		{"git stash", ReasonNoGrant},
		{"git stash drop", ReasonNoGrant},
		{"git stash pop", ReasonNoGrant},
		{"git stash show --ext-diff", ReasonNoGrant},
		{"git tag v1", ReasonNoGrant},
		{"git tag -d v1", ReasonNoGrant},
		{"git tag -l -d v1", ReasonNoGrant},
		{"git tag -v v1", ReasonNoGrant},
		{"git branch -v newbranch", ReasonNoGrant},
		{"git branch --list -d main", ReasonNoGrant},
		{"git branch -l -m a b", ReasonNoGrant},
		{"git branch -l newbranch", ReasonNoGrant}, // before git 2.19, -l was --create-reflog
		{"git remote show origin", ReasonNoGrant},
		{"git remote -v update", ReasonNoGrant},
		{"git remote -v", ReasonNoGrant}, // a remote's URL may hold a token (git remote lists the names: above)
		{"git remote add x ../x", ReasonNoGrant},
		{"git worktree add ../x", ReasonNoGrant},
		{"git ls-tree -x HEAD", ReasonNoGrant},
		{"git cat-file --textconv HEAD:go.mod", ReasonNoGrant},
		{"git cat-file --filters HEAD:go.mod", ReasonNoGrant},
		{"git rev-list --count HEAD --output=x", ReasonNoGrant},
		{"GIT_DIR=sub git status", ReasonShadowed},
		{"less README.md", ReasonNoGrant},
		{"ls > listing.txt", ReasonNoGrant},
		{"cat a; rm -rf b", ReasonChained},
		{"go vet -vettool=./evil ./...", ReasonIndirect},
		{"go list -toolexec=./evil ./...", ReasonIndirect},
		// Reading outside the project needs a decision, as in Claude Code.
		{"cat ../elsewhere.txt", ReasonNoGrant},
		// A secret in the home is denied whatever grants exist (policy.HomeSecrets).
		{"cat ~/.aws/credentials", ReasonProtected},
		{"cat " + filepath.Join(home, ".netrc"), ReasonProtected},
		{"cat ~/.npmrc", ReasonProtected},
		{"ls ~", ReasonNoGrant},           // listing the home: outside the project, not protected
		{"ls -la ~/.kube", ReasonNoGrant}, // nor a directory that holds a secret
		{"ls /", ReasonNoGrant},
		{"ls -la ..", ReasonNoGrant},
		{"grep -rn password ..", ReasonNoGrant},
		{"grep -f/etc/passwd x", ReasonNoGrant},
		{"grep --file=/etc/passwd x", ReasonNoGrant},
		{"cat /proc/self/environ", ReasonNoGrant},
		{"cat home-link/notes.txt", ReasonNoGrant},
		{"cat home-link/.ssh/id_ed25519", ReasonProtected}, // ~/.ssh is a secret
		{"du -sh ~", ReasonNoGrant},
		{"find . -delete", ReasonNoGrant},
		{"find . -name x -fprint out.txt", ReasonNoGrant},
		{"find -L . -name x", ReasonNoGrant},
		{"find . -follow", ReasonNoGrant},
		{"find / -name id_rsa", ReasonNoGrant},
		{"find .. -name x", ReasonNoGrant},
		{"find . -exec id ;", ReasonIndirect},
		{"find . -files0-from list", ReasonNoGrant},
		{"cd ..", ReasonNoGrant},
		{"cd .git", ReasonExecConfig},
		{"date -s 2020-01-01", ReasonNoGrant},
		{"echo x > out.txt", ReasonNoGrant},
		{"sed -n 'r /etc/passwd' main.go", ReasonIndirect},
		{"sed -n '1r ../x' main.go", ReasonIndirect},
		{"sed -n 'w out.txt' main.go", ReasonIndirect},
		{"sed -n 's/a/b/e' main.go", ReasonIndirect},
		{"sed -n -f script.sed main.go", ReasonIndirect},
		{"sed -i 's/a/b/' main.go", ReasonNoGrant},
		{"sed 's/a/b/' main.go", ReasonNoGrant},
		{"sed -n 1,5p ../x", ReasonNoGrant},
		{"sort -o out.txt go.mod", ReasonNoGrant},
		{"uniq go.mod out.txt", ReasonNoGrant},
		{"sed -n 5p main.go | sh", ReasonChained},
	}
	for _, c := range denied {
		d := run("", c.cmd)
		if d.Behavior == Allow || d.Reason != c.reason {
			t.Errorf("%s: got %s/%s (%s), want deny %s", c.cmd, d.Behavior, d.Reason, d.Message, c.reason)
		}
	}

	// A near miss says which word the nearest rule does not cover, and
	// why, with the reason code unchanged.
	for cmd, want := range map[string]string{
		"git ls-tree -x HEAD":        "; Bash(git ls-tree *) does not cover -x: not in the read-only option table",
		"git tag -l -d v1":           "; Bash(git tag -l *) does not cover -d: not in the read-only option table",
		"git branch -v newbranch":    "; Bash(git branch -v) does not cover newbranch: the rule ends before it",
		"git log --output=x":         "; Bash(git log *) does not cover --output=x: this option writes a named file",
		"git -C .. status":           "; Bash(git status *) does not cover -C ..: a preset rule covers reading in the project only",
		"cat ../elsewhere.txt":       "; Bash(cat *) does not cover ../elsewhere.txt: it names ",
		"git status && git tag -d x": "the part `git tag -d x` of this chain is covered by no grant (Bash(git tag) does not cover -d: the rule ends before it)",
	} {
		d := run("", cmd)
		if d.Behavior == Allow || !strings.Contains(d.Message, want) {
			t.Errorf("%s: %s/%s %q, want it to say %q", cmd, d.Behavior, d.Reason, d.Message, want)
		}
	}
	if d := run("", "git push"); d.Reason != ReasonNoGrant || strings.Contains(d.Message, "does not cover") {
		t.Errorf("git push: a near miss where no rule names push: %s %q", d.Reason, d.Message)
	}

	// A repository the agent could have made inside the project: a nested
	// .git (made by approved, sandboxed code) or a bare repository written
	// with the file tools. Its config runs core.fsmonitor in git status.
	sub := filepath.Join(h.Project, "sub")
	expect(t, "git status in sub, no repository there (control)", run(sub, "git status"), Allow, ReasonScopedGrant)
	for _, f := range []string{"HEAD", "config"} {
		_ = os.WriteFile(filepath.Join(sub, f), []byte("x\n"), 0o644)
	}
	_ = os.MkdirAll(filepath.Join(sub, "objects"), 0o755)
	expect(t, "git status in a bare repository", run(sub, "git status"), Deny, ReasonRepositoryNotCovered)
	expect(t, "git log in a bare repository", run(sub, "git log -p"), Deny, ReasonRepositoryNotCovered)
	nested := filepath.Join(h.Project, "vendor", "lib")
	_ = os.MkdirAll(filepath.Join(nested, ".git"), 0o755)
	expect(t, "git diff in a nested repository", run(nested, "git diff"), Deny, ReasonRepositoryNotCovered)
	expect(t, "ls in the nested repository (control)", run(nested, "ls"), Allow, ReasonScopedGrant)
	elsewhere := filepath.Join(base, "elsewhere")
	_ = os.MkdirAll(elsewhere, 0o755)
	expect(t, "git status outside the project", run(elsewhere, "git status"), Deny, ReasonNoGrant)
	expect(t, "ls outside the project", run(elsewhere, "ls"), Deny, ReasonNoGrant)
	expect(t, "git status at the project's root (control)", run(h.Project, "git status"), Allow, ReasonScopedGrant)

	// An agent's host that names no project (no CLAUDE_PROJECT_DIR): the
	// project would be the call's cwd, which the agent may choose (Gemini's
	// dir_path), and the home or / would make every file "in the project".
	h.eng = func() *Engine {
		e := eng()
		e.Env.ConfigDir = cfgDir
		e.Env.ProjectDir = ""
		return e
	}
	expect(t, "cat with the cwd at home, no project named", run(home, "cat .netrc"), Deny, ReasonProtected) // a secret
	expect(t, "cat with the cwd at home, no project named (control)", run(home, "cat notes.txt"), Deny, ReasonNoGrant)
	expect(t, "ls with the cwd at the project, no project named", run(h.Project, "ls"), Deny, ReasonNoGrant)
}
