package scope

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitProject makes a project that is a git repository, with a directory
// sub, a nested repository, a bare-looking directory, a symlink out of the
// project and a directory beside it; it returns the project and the
// directory beside.
func gitProject(t *testing.T) (proj, other string) {
	t.Helper()
	root := t.TempDir()
	proj, other = filepath.Join(root, "proj"), filepath.Join(root, "other")
	for _, d := range []string{filepath.Join(proj, "sub", "deep"), filepath.Join(proj, "vendor", "lib", ".git"), filepath.Join(proj, "bare", "objects"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for _, f := range []string{"HEAD", "config"} {
		if err := os.WriteFile(filepath.Join(proj, "bare", f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(other, filepath.Join(proj, "out")); err != nil {
		t.Fatal(err)
	}
	return proj, other
}

// TestGitFront: a git rule that names its subcommand covers the subcommand
// after -C DIR and --no-pager, judged where git -C goes: the project bound,
// the repository bound and the words' paths from DIR (each attack with its
// control).
func TestGitFront(t *testing.T) {
	proj, other := gitProject(t)
	call := func(cwd string, words ...string) Call {
		return Call{Tool: "Bash", Cwd: cwd, ProjectDir: proj, ProjectNamed: true, Shell: simple("/usr/bin/git", words...)}
	}
	g := func(words ...string) []string { return append([]string{"git"}, words...) }
	for _, c := range []struct {
		rule string
		cwd  string
		argv []string
		want string // "" covered, else the reason
		word string // the word a near miss names
	}{
		{"Bash(git status *)", proj, g("-C", "sub", "status"), "", ""},
		{"Bash(git status *)", proj, g("-C", ".", "status", "--short"), "", ""},
		{"Bash(git status *)", proj, g("-C", proj, "status"), "", ""},
		{"Bash(git status *)", filepath.Join(proj, "sub"), g("-C", "..", "status"), "", ""},
		{"Bash(git status *)", proj, g("-C", "sub", "-C", "deep", "status"), "", ""},
		{"Bash(git log *)", proj, g("--no-pager", "log", "-1"), "", ""},
		{"Bash(git log *)", proj, g("-P", "-C", "sub", "log", "--oneline"), "", ""},
		// Out of the project, or into another repository.
		{"Bash(git status *)", proj, g("-C", "..", "status"), ReasonPathEscapes, "-C .."},
		{"Bash(git status *)", proj, g("-C", other, "status"), ReasonPathEscapes, "-C " + other},
		{"Bash(git status *)", proj, g("-C", "out", "status"), ReasonPathEscapes, "-C out"},
		{"Bash(git status *)", proj, g("-C", "sub", "-C", "../..", "status"), ReasonPathEscapes, "-C ../.."},
		{"Bash(git status *)", proj, g("-C", ".git", "status"), ReasonRepositoryNotCovered, "-C .git"},
		{"Bash(git status *)", proj, g("-C", ".git/refs", "status"), ReasonRepositoryNotCovered, "-C .git/refs"},
		{"Bash(git status *)", proj, g("-C", "vendor/lib", "status"), ReasonRepositoryNotCovered, "-C vendor/lib"},
		{"Bash(git status *)", proj, g("-C", "bare", "status"), ReasonRepositoryNotCovered, "-C bare"},
		{"Bash(git status *)", proj, g("-C", "nosuch", "status"), ReasonArgvMismatch, "-C nosuch"},
		{"Bash(git status *)", proj, g("-C", "", "status"), ReasonArgvMismatch, `-C ""`},
		// The words are read from DIR: ../README from sub is the project's.
		{"Bash(git diff *)", proj, g("-C", "sub", "diff", "--", "../README"), "", ""},
		{"Bash(git diff *)", proj, g("diff", "--", "../README"), ReasonPathEscapes, "../README"},
		{"Bash(git diff *)", proj, g("-C", "sub", "diff", "--", "../../x"), ReasonPathEscapes, "../../x"},
		// Only -C and --no-pager: the other front options keep their meaning.
		{"Bash(git status *)", proj, g("-c", "core.fsmonitor=id", "status"), ReasonArgvMismatch, ""},
		{"Bash(git status *)", proj, g("-C", "sub", "-c", "core.fsmonitor=id", "status"), ReasonArgvMismatch, ""},
		{"Bash(git status *)", proj, g("--git-dir=bare", "status"), ReasonArgvMismatch, ""},
		{"Bash(git status *)", proj, g("-p", "status"), ReasonArgvMismatch, ""},
		{"Bash(git status *)", proj, g("-Csub", "status"), ReasonArgvMismatch, ""},
		{"Bash(git status *)", proj, g("-C", "sub", "log"), ReasonArgvMismatch, ""},
		{"Bash(git status *)", proj, g("-C", "sub"), ReasonArgvMismatch, ""},
		// Any git rule, not only the preset's, is bound to the project's
		// repository from DIR.
		{"Bash(git commit *)", proj, g("-C", "sub", "commit", "-m", "x"), "", ""},
		{"Bash(git commit *)", proj, g("-C", other, "commit", "-m", "x"), ReasonRepositoryNotCovered, "-C " + other},
		{"Bash(git commit *)", proj, g("-C", "vendor/lib", "commit", "-m", "x"), ReasonRepositoryNotCovered, "-C vendor/lib"},
	} {
		r, err := Parse(c.rule + "@/usr/bin/git")
		if err != nil {
			t.Fatal(err)
		}
		err = Match(r, call(c.cwd, c.argv...))
		if got := ReasonOf(err); got != c.want {
			t.Errorf("%s %q in %s: %v, want %q", c.rule, c.argv, c.cwd, err, c.want)
			continue
		}
		var word string
		if me, ok := err.(*MatchError); ok {
			word = me.Word
		}
		if word != c.word {
			t.Errorf("%s %q: near miss names %q, want %q (%v)", c.rule, c.argv, word, c.word, err)
		}
	}
	// A glob DIR could expand to anything.
	res := simple("/usr/bin/git", "git", "-C", "su*", "status")
	res.Argv[2].Glob = true
	r, _ := Parse("Bash(git status *)@/usr/bin/git")
	if err := Match(r, Call{Tool: "Bash", Cwd: proj, ProjectDir: proj, ProjectNamed: true, Shell: res}); err == nil {
		t.Error("git -C with a glob directory was covered")
	}
}

// TestNearMiss: the message names the word the nearest rule does not
// cover, and says why; a rule for another subcommand says nothing.
func TestNearMiss(t *testing.T) {
	proj, _ := gitProject(t)
	for _, c := range []struct {
		rule string
		argv []string
		want string
	}{
		{"Bash(git ls-tree *)", []string{"git", "ls-tree", "-x", "HEAD"}, "Bash(git ls-tree *) does not cover -x: not in the read-only option table"},
		{"Bash(git commit *)", []string{"git", "commit", "--frobnicate"}, "Bash(git commit *) does not cover --frobnicate: not in loopguard's option table"},
		{"Bash(git log *)", []string{"git", "log", "--output=x"}, "Bash(git log *) does not cover --output=x: this option writes a named file: git --output writes to the named file"},
		{"Bash(git tag -l *)", []string{"git", "tag", "-l", "-d", "v1"}, "Bash(git tag -l *) does not cover -d: not in the read-only option table"},
		{"Bash(git branch -v)", []string{"git", "branch", "-v", "new"}, "Bash(git branch -v) does not cover new: the rule ends before it"},
		{"Bash(cat *)", []string{"cat", "/etc/hostname"}, "Bash(cat *) does not cover /etc/hostname: it names /etc/hostname, outside the project"},
		{"Bash(grep *)", []string{"grep", "-R", "x", "."}, "Bash(grep *) does not cover -R: it follows symbolic links or reads names from a file, which may lead outside the project"},
		{"Bash(cat *)", []string{"cat", "a b/../../../x"}, `Bash(cat *) does not cover "a b/../../../x": it names`},
		// Nothing near: another subcommand, another program.
		{"Bash(git log *)", []string{"git", "push"}, ""},
		{"Bash(git stash list *)", []string{"git", "stash", "drop"}, ""},
		{"Bash(cat *)", []string{"tac", "x"}, ""},
	} {
		r, err := Parse(c.rule + "@/usr/bin/" + c.argv[0])
		if err != nil {
			t.Fatal(err)
		}
		err = Match(r, Call{Tool: "Bash", Cwd: proj, ProjectDir: proj, ProjectNamed: true, Shell: simple("/usr/bin/"+c.argv[0], c.argv...)})
		got := NearMiss(r, err)
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %q, want %q (%v)", c.argv, got, c.want, err)
		}
	}
	r, _ := Parse("Bash(git log > out.txt)@/usr/bin/git")
	res := withRedir(simple("/usr/bin/git", "git", "log"), ">", "", "other.txt")
	err := Match(r, Call{Tool: "Bash", Cwd: proj, ProjectDir: proj, ProjectNamed: true, Shell: res})
	if got := NearMiss(r, err); got != "Bash(git log >out.txt) does not cover >other.txt: the rule names no such redirection" {
		t.Errorf("redirect: %q (%v)", got, err)
	}
}
