package shellparse

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// globTree is a directory tree with what bash's filename expansion treats
// specially: dot files, directories and links to them, a dangling link,
// names with spaces, brackets, stars and non-ASCII letters.
func globTree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"a.go", "b.go", "B.txt", "c d.txt", ".hidden", ".hid.go", "x[1].txt", "star*.txt",
		"q?.md", "é.go", "docs/one.md", "docs/two.txt", "docs/sub/deep.md", "docs/.dot/in.md", "src/main.go",
		"src/.git/config", "-rf", "back\\slash.go", "dir.with.dots/f.go"}
	testfs.Tree(t, root, []byte("x"), 0o644, files...)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"notes.txt":     filepath.Join(outside, "secret"),
		"docs/ext":      outside,
		"dangling.go":   filepath.Join(outside, "nothing"),
		"src/linkdir":   "../docs",
		"empty-dir-ref": "docs/sub",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// globPatterns are matched by the analysis and by real bash.
var globPatterns = []string{
	"*", "*.go", "*.txt", ".*", ".h*", "*/", "*/*", "docs/*", "docs/*/*", "docs/*.md", "*/*.md",
	"?.go", "??.go", "[ab].go", "[!a].go", "[^a].go", "[a-c].go", "[B].txt", "x\\[1\\].txt", "x[[]1[]].txt",
	"'star*'.txt", "\"q?\".md", "star\\*.txt", "*\\*.txt", "c\\ d.txt", "c*", "src/*", "src/.*", "src/l*/*",
	"*/sub", "docs/*/deep.md", "*.none", "nothing*/x", "[z-a].go", "[]].go", "a[", "[.]hidden",
	"é*", "?.go", "*[.]go", "**", "**/*.md", "dir.*/*", "-*", "back*", "docs//*.md", "./*.go",
	"empty*/*", "*-ref", "notes*", "dangl*", "docs/ext/*",
}

// TestGlobMatchesBash: for every pattern, the words the analysis expands
// a glob to are the words real bash (5.2, default options) passes.
func TestGlobMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	root := globTree(t)
	fx := newFixture(t)
	env := fx.env
	env.Cwd = root
	for _, pat := range globPatterns {
		res := Analyze("ls "+pat, env)
		if res.Verdict != Simple {
			t.Errorf("%s: %s (%s)", pat, res.Verdict, res.Reason)
			continue
		}
		var got []string
		for _, w := range res.Argv[1:] {
			got = append(got, w.Value)
		}
		c := exec.Command(bash, "-c", `for w in `+pat+`; do printf '%s\0' "$w"; done`)
		c.Dir = root
		c.Env = []string{"LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin"}
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s: bash: %v", pat, err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: analysis %q, bash %q", pat, got, want)
		}
	}
}

// TestGlobRefusesWhatItCannotReproduce: bracket classes are refused,
// never guessed; a control with a plain bracket expression is simple.
func TestGlobRefusesWhatItCannotReproduce(t *testing.T) {
	root := globTree(t)
	fx := newFixture(t)
	env := fx.env
	env.Cwd = root
	for _, cmd := range []string{"ls [[:alpha:]].go", "ls [[=a=]].go", "ls [[.a.]].go"} {
		if res := Analyze(cmd, env); res.Verdict != Unparseable {
			t.Errorf("%s: %s, want unparseable", cmd, res.Verdict)
		}
	}
	if res := Analyze("ls [a-z].go", env); res.Verdict != Simple || len(res.Argv) != 3 {
		t.Errorf("control: %s %v", res.Verdict, res.Argv)
	}
}

// TestGlobMatchesAreMarked: a word that came from a glob carries the
// pattern; one that matched nothing stays a glob word.
func TestGlobMatchesAreMarked(t *testing.T) {
	root := globTree(t)
	fx := newFixture(t)
	env := fx.env
	env.Cwd = root
	res := Analyze("ls docs/*.md *.none", env)
	want := []Word{{Value: "ls"}, {Value: "docs/one.md", Pattern: "docs/*.md"}, {Value: "*.none", Glob: true, Pattern: "*.none"}}
	if !reflect.DeepEqual(res.Argv, want) {
		t.Errorf("argv %+v, want %+v", res.Argv, want)
	}
	if res.Plain {
		t.Error("a command with a glob is not plain")
	}
}

// TestGlobBounds: a glob that would read too much is refused.
func TestGlobBounds(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < maxGlobDirs+2; i++ {
		if err := os.MkdirAll(filepath.Join(root, "d", "d"+strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fx := newFixture(t)
	env := fx.env
	env.Cwd = root
	if res := Analyze("ls d/*/*", env); res.Verdict != Unparseable || !strings.Contains(res.Reason, "directories") {
		t.Errorf("d/*/*: %s %q", res.Verdict, res.Reason)
	}
	if res := Analyze("ls d/*", env); res.Verdict != Simple {
		t.Errorf("control d/*: %s %q", res.Verdict, res.Reason)
	}
}

// TestANSICBraceEscape: bash 5.2 decodes $'\x{HH}' (any number of hex
// digits, the low byte kept, \x{} a NUL that ends the word); the analysis
// refuses it rather than guess, so no spelling of it is simple. Control:
// \xHH is decoded as bash does.
func TestANSICBraceEscape(t *testing.T) {
	fx := newFixture(t)
	for _, cmd := range []string{
		`go vet $'\x{2d}toolexec=\x{2f}bin\x{2f}sh' ./...`,
		`cat $'\x{7e}\x{2f}.ssh\x{2f}id_rsa'`,
		`git log $'\x{2d}\x{2d}output=x'`,
		`make test $'X\x{3a}\x{3d}$(shell id)'`,
		`cat $'\x{}'`, `cat $'a\x{12f}'`, `cat $'\x{2d'`,
	} {
		if res := Analyze(cmd, fx.env); res.Verdict == Simple {
			t.Errorf("%s: simple, argv %v", cmd, res.Argv)
		}
	}
	res := Analyze(`cat $'\x2dn' $'\x7e'`, fx.env)
	if res.Verdict != Simple || res.Argv[1].Value != "-n" || res.Argv[2].Value != "~" {
		t.Errorf("control: %s %v", res.Verdict, res.Argv)
	}
}

// TestCompilePatternUnclosedBrackets: what one pattern's brackets read is
// bounded (the seventy-fifth attack run's "[a" 16,000 times took 3.5 s of
// a hook call, each [ read to the end): past it the pattern is refused,
// never read otherwise. The oracle is the compilation without the bound,
// over named shapes and 20,000 random strings of the characters a bracket
// reads (an exact shortcut is not simple: a range's end is read as no
// bracket's start); and 64 KB of "[a" allocate at most eight times 16 KB,
// and are refused.
func TestCompilePatternUnclosedBrackets(t *testing.T) {
	slow := func(s string) (globPattern, error) { return compileWithin(s, math.MaxInt) }
	in := []string{"[a", "[a[b]", "[a\\]", "[\\]]", "[]]", "[!]a]", "[a-]", "[a-\\]", "x[y[z", "[[:alpha:]]", "[a[", "\\[a]", "[a]b[c"}
	in = append(in, randomStrings(75, "[]\\a-!^:.*?", 20000, 14)...)
	unclosed := 0
	for _, s := range in {
		got, gerr := compilePattern(s)
		want, werr := slow(s)
		if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("compilePattern(%q) = %+v, %v; each [ read to its end: %+v, %v", s, got, gerr, want, werr)
		}
		if strings.Count(s, "[") > 1 && werr == nil {
			unclosed++
		}
	}
	if unclosed < 1000 {
		t.Fatalf("only %d inputs with two brackets or more: the comparison proves little", unclosed)
	}
	allocated := func(n int) uint64 {
		s := strings.Repeat("[a", n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = compilePattern(s)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	if small, large := allocated(8000), allocated(32000); large > 8*small {
		t.Errorf("64 KB of [a allocate %d bytes, 16 KB %d: not linear", large, small)
	}
	if _, err := compilePattern(strings.Repeat("[a", 32000)); err == nil {
		t.Error("64 KB of [a, past the bound, is compiled")
	}
}
