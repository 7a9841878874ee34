package scope

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/shellparse"
)

// The rule review offers to "approve and grant": the narrowest that covers
// the call, and never one Dangerous refuses. Each refused row has a control
// row that is offered.
func TestNarrowest(t *testing.T) {
	root := realDir(t, t.TempDir())
	sys := filepath.Join(root, "usr", "bin")
	home := filepath.Join(root, "home")
	proj := filepath.Join(home, "proj")
	for _, d := range []string{sys, proj, filepath.Join(proj, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"go", "git", "bash", "python3", "env", "xargs", "ls", "loopguard"} {
		fakeExe(t, sys, n)
	}
	env := shellparse.Env{Cwd: proj, ProjectDir: proj, Path: sys, Trusted: []string{sys}, Home: home}
	bash := func(cmd string) Call {
		res := shellparse.Analyze(cmd, env)
		return Call{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: proj, ProjectDir: proj, Home: home, Shell: &res}
	}
	file := func(tool, key, path string) Call {
		return Call{Tool: tool, Input: map[string]any{key: path}, Cwd: proj, ProjectDir: proj, Home: home}
	}
	for _, row := range []struct {
		name string
		call Call
		want string // "" when none may be offered
	}{
		{"simple command", bash("go test ./..."), "Bash(go test ./...)@" + filepath.Join(sys, "go")},
		{"quoted word stays literal", bash("git log '--format=%h *'"), "Bash(git log '--format=%h *')@" + filepath.Join(sys, "git")},
		{"shell with inline code", bash("bash -c 'id'"), ""},
		{"shell script", bash("bash x.sh"), ""},
		{"interpreter", bash("python3 x.py"), ""},
		{"wrapper", bash("env go test"), ""},
		{"xargs", bash("xargs rm"), ""},
		{"loopguard itself", bash("loopguard approve abc"), ""},
		{"chained", bash("go test ./... && id"), ""},
		{"redirect", bash("go test ./... > out.txt"), ""},
		{"glob word", bash("ls *.go"), ""},
		{"git code-running option", bash("git -c core.pager=id log"), ""},
		{"control: git log", bash("git log --oneline"), "Bash(git log --oneline)@" + filepath.Join(sys, "git")},
		{"edit in project", file("Edit", "file_path", filepath.Join(proj, "src", "a.go")), "Edit(src/a.go)"},
		{"write in project", file("Write", "file_path", filepath.Join(proj, "notes.md")), "Write(notes.md)"},
		{"edit outside project", file("Edit", "file_path", "/tmp/x.txt"), "Edit(//tmp/x.txt)"},
		{"settings file", file("Edit", "file_path", filepath.Join(proj, ".claude", "settings.json")), ""},
		{"skill", file("Write", "file_path", filepath.Join(proj, ".claude", "skills", "x", "SKILL.md")), ""},
		{"git hook", file("Write", "file_path", filepath.Join(proj, ".git", "hooks", "pre-commit")), ""},
		{"bashrc", file("Edit", "file_path", filepath.Join(home, ".bashrc")), ""},
		{"glob in path", file("Edit", "file_path", filepath.Join(proj, "src", "*.go")), ""},
		{"relative path", file("Edit", "file_path", "src/a.go"), ""},
		{"webfetch", Call{Tool: "WebFetch", Input: map[string]any{"url": "https://pkg.go.dev/x?y"}}, "WebFetch(domain:pkg.go.dev)"},
		{"webfetch userinfo", Call{Tool: "WebFetch", Input: map[string]any{"url": "https://pkg.go.dev@evil.example/x"}}, ""},
		{"mcp tool", Call{Tool: "mcp__github__get_issue", Input: map[string]any{}}, "mcp__github__get_issue"},
		{"unknown tool", Call{Tool: "Agent", Input: map[string]any{}}, ""},
	} {
		r, err := Narrowest(row.call, env)
		switch {
		case row.want == "" && err == nil:
			t.Errorf("%s: offered %s", row.name, r)
		case row.want == "" && !errors.Is(err, ErrNoNarrowRule):
			t.Errorf("%s: %v", row.name, err)
		case row.want != "" && (err != nil || withoutContent(r).String() != row.want):
			t.Errorf("%s: got %v %v, want %s", row.name, r, err, row.want)
		}
		if err == nil {
			if Dangerous(r, home) != nil || Match(r, row.call) != nil {
				t.Errorf("%s: offered %s, which is refused or does not cover the call", row.name, r)
			}
		}
	}
}

// withoutContent drops a rule's content pin (temp dirs are user-writable,
// so their executables are content-pinned; content_test.go tests that).
func withoutContent(r Rule) Rule {
	r.digest = ""
	return r
}
