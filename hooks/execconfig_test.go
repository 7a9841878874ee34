package hooks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHooksPathIsExecConfig: the directory core.hooksPath names in the
// project's git configuration (src/hooks here, a name no list holds) is
// executable configuration: Write(src/**) does not cover a hook there,
// and the same scope covers a file beside it (control).
func TestHooksPathIsExecConfig(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(filepath.Join(h.Project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Project, ".git", "config"), []byte("[core]\n\thooksPath = src/hooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.Project, "src", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.grantScope("Write(src/**)", "*", "main")
	expect(t, "control: Write src/a.go", h.decide(h.writeCall(filepath.Join(h.Project, "src", "a.go"))), Allow, ReasonScopedGrant)
	expect(t, "Write src/hooks/pre-commit", h.decide(h.writeCall(filepath.Join(h.Project, "src", "hooks", "pre-commit"))), Deny, ReasonExecConfig)
	// A read-only tool may read it: it is judged by the secrets alone,
	// without reading git's configuration (protected: places(nil)).
	read := with(h.fixture("pretooluse-read.json"), func(m map[string]any) {
		m["tool_input"] = map[string]any{"file_path": filepath.Join(h.Project, "src", "hooks", "pre-commit")}
	})
	expect(t, "Read src/hooks/pre-commit", h.decide(read), Abstain, ReasonReadOnly)
}

// TestGitDirUnderAnyNameIsExecConfig: a git directory under an ordinary
// name (git tells one by HEAD, objects/ and refs/) is executable
// configuration for the file tools too, as the sweep treats it after a
// confined call: Write(src/**) covers neither the piece that completes
// one (src/e/refs/heads/main, src/e/HEAD) nor a file in one that is
// there (testdata/fix.git/config). Controls: the same scope covers a
// file in a directory with two of the three, and beside the git
// directory.
func TestGitDirUnderAnyNameIsExecConfig(t *testing.T) {
	h := newHarness(t)
	mk := func(rel string, dir bool) {
		p := filepath.Join(h.Project, rel)
		if dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("src/e/HEAD", false)
	mk("src/e/objects", true)
	mk("src/f/objects", true)
	mk("src/f/refs", true)
	mk("src/s/o", true)
	mk("src/s/refs", true)
	if err := os.Symlink("o", filepath.Join(h.Project, "src/s/objects")); err != nil {
		t.Fatal(err)
	}
	mk("src/g/HEAD", false)
	mk("src/g/objects", false) // files: git asks only access(X_OK), which a later chmod +x passes
	mk("testdata/fix.git/HEAD", false)
	mk("testdata/fix.git/objects", true)
	mk("testdata/fix.git/refs", true)
	mk("testdata/fix.git/config", false)
	h.grantScope("Write(src/**)", "*", "main")
	h.grantScope("Write(testdata/**)", "*", "main")
	w := func(rel string) map[string]any { return h.writeCall(filepath.Join(h.Project, rel)) }
	expect(t, "Write src/e/refs/heads/main (completes src/e)", h.decide(w("src/e/refs/heads/main")), Deny, ReasonExecConfig)
	expect(t, "Write src/f/HEAD (completes src/f)", h.decide(w("src/f/HEAD")), Deny, ReasonExecConfig)
	expect(t, "Write testdata/fix.git/config", h.decide(w("testdata/fix.git/config")), Deny, ReasonExecConfig)
	expect(t, "Write src/e/commondir (HEAD and a commondir: a worktree's git directory)", h.decide(w("src/e/commondir")), Deny, ReasonExecConfig)
	expect(t, "Write src/s/HEAD (objects a link: git follows it)", h.decide(w("src/s/HEAD")), Deny, ReasonExecConfig)
	expect(t, "Write src/g/refs, a file (HEAD and objects a file: git's access(X_OK) passes once it is executable)", h.decide(w("src/g/refs")), Deny, ReasonExecConfig)
	expect(t, "control: Write src/e/notes.txt (HEAD and objects/ alone)", h.decide(w("src/e/notes.txt")), Allow, ReasonScopedGrant)
	expect(t, "control: Write src/f/objects.txt (a file, not objects/)", h.decide(w("src/f/objects.txt")), Allow, ReasonScopedGrant)
	expect(t, "control: Write testdata/other.txt", h.decide(w("testdata/other.txt")), Allow, ReasonScopedGrant)
}

// TestNestedImportIsInstruction: a file an instruction file in a
// directory above it imports (src/CLAUDE.md's @notes.md) is that file's
// instructions, which the agent loads when it reads in src/:
// Write(src/**) does not cover it; it covers the file beside it
// (control).
func TestNestedImportIsInstruction(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(filepath.Join(h.Project, "src", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Project, "src", "CLAUDE.md"), []byte("See @notes.md and @deep/more.md.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.grantScope("Write(src/**)", "*", "main")
	expect(t, "control: Write src/other.md", h.decide(h.writeCall(filepath.Join(h.Project, "src", "other.md"))), Allow, ReasonScopedGrant)
	expect(t, "Write src/notes.md", h.decide(h.writeCall(filepath.Join(h.Project, "src", "notes.md"))), Deny, ReasonExecConfig)
	expect(t, "Write src/deep/more.md", h.decide(h.writeCall(filepath.Join(h.Project, "src", "deep", "more.md"))), Deny, ReasonExecConfig)
}

// TestEnvrcExportedLoad: a file the project's .envrc exports as BASH_ENV,
// in a function it calls (the sixty-fifth attack run's), is executable
// configuration: Write(tools/**) does not cover it, and covers the file
// beside it (control).
func TestEnvrcExportedLoad(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(filepath.Join(h.Project, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Project, ".envrc"), []byte("setup() { export BASH_ENV=$PWD/tools/env.sh; }\nsetup\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.grantScope("Write(tools/**)", "*", "main")
	expect(t, "control: Write tools/other.sh", h.decide(h.writeCall(filepath.Join(h.Project, "tools", "other.sh"))), Allow, ReasonScopedGrant)
	expect(t, "Write tools/env.sh", h.decide(h.writeCall(filepath.Join(h.Project, "tools", "env.sh"))), Deny, ReasonExecConfig)
}
