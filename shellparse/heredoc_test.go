package shellparse

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestHeredocBackslashNewlineWithBash: real bash is the oracle for where a
// here-document ends. Each script has a line `echo RAN >ran` that is
// either a command or a line of the document; bash running the script
// makes the file or not, and mvdan.cc/sh's parse has the call or not.
// Where they differ (the attack run 96 shape: EO\<newline>F, which bash
// joins to EOF before it compares the line with the delimiter) the
// analysis must refuse it as unparseable, and the controls (an ordinary
// document, lines ending in an escaped backslash, a quoted delimiter with a
// line ending in a backslash) must be read alike and stay parseable.
func TestHeredocBackslashNewlineWithBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	const reason = "a here-document line ends in a backslash"
	const mark = "echo RAN >ran"
	for _, c := range []struct {
		src     string
		refused bool // the analysis refuses it for its here-document
		differs bool // bash and the parser disagree on whether mark runs
	}{
		{"cat <<EOF\nEO\\\nF\n" + mark + "\nEOF\n", true, true},
		{"git push <<EOF\nEO\\\nF\n" + mark + "\nEOF\n", true, true},
		{"cat <<-EOF\nEO\\\nF\n" + mark + "\nEOF\n", true, true},
		{"cat <<-EOF\n\tEO\\\nF\n" + mark + "\nEOF\n", true, true},
		{"cat <<EOF\nEOF\\\n\n" + mark + "\nEOF\n", true, true},
		{"cat <<A <<B\nx\nA\nB\\\n\n" + mark + "\nB\n", true, true},
		{"echo `cat <<EOF\nEO\\\\\nF\n" + mark + "\nEOF\n`", true, true},
		{"echo `cat <<'EOF'\nEO\\\nF\n" + mark + "\nEOF\n`", true, true},
		// Joined by both (the parser never ends a document on a line
		// after an escaped newline): refused all the same, since the
		// delimiter a line's join hides is the same trick.
		{"cat <<EOF\nx\\\nEOF\n" + mark + "\nEOF\n", true, false},
		// Controls.
		{"cat <<EOF\nhi\nEOF\n" + mark + "\n", false, false},
		{"cat <<EOF\nEO\\\\\nF\n" + mark + "\nEOF\n", false, false},
		{"cat <<EOF\nab\\\\\nEOF\n" + mark + "\n", false, false},
		{"cat <<'EOF'\nEO\\\nF\n" + mark + "\nEOF\n", false, false},
		{"cat <<\"EOF\"\nEO\\\nF\n" + mark + "\nEOF\n", false, false},
		{"cat <<\\EOF\nEO\\\nF\n" + mark + "\nEOF\n", false, false},
		{"cat <<-'EOF'\n\tEO\\\n\tF\n" + mark + "\n\tEOF\n", false, false},
		{"cat <<'EOF'\nab\\\nEOF\n" + mark + "\n", false, false},
		{"echo $(cat <<EOF\nEO\\\\\nF\n" + mark + "\nEOF\n)", false, false},
	} {
		dir := t.TempDir()
		cmd := exec.Command(bash, "-c", c.src)
		cmd.Dir = dir
		_ = cmd.Run()
		_, statErr := os.Stat(filepath.Join(dir, "ran"))
		bashRan := statErr == nil

		f, err := parseBash(c.src)
		if err != nil {
			t.Errorf("%q: the parser refuses it: %v", c.src, err)
			continue
		}
		parserRan := false
		walk(f, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) == 2 && ce.Args[0].Lit() == "echo" && ce.Args[1].Lit() == "RAN" {
				parserRan = true
			}
			return true
		})
		if differs := bashRan != parserRan; differs != c.differs {
			t.Errorf("%q: bash ran the line %v, the parser reads it as a command %v: want them to differ %v", c.src, bashRan, parserRan, c.differs)
		}
		res := Analyze(c.src, Env{Cwd: dir, Path: "/usr/bin:/bin", Home: dir})
		refused := res.Verdict == Unparseable && strings.Contains(res.Reason, reason)
		if refused != c.refused {
			t.Errorf("%q: %s (%s): want refused for its here-document %v", c.src, res.Verdict, res.Reason, c.refused)
		}
		if bashRan != parserRan && !refused {
			t.Errorf("%q: bash and the parser end the document in different places, and the analysis says %s", c.src, res.Verdict)
		}
		// Every view reads the one parse: none reads a refused command.
		if _, ok := SketchOf(c.src); ok == c.refused {
			t.Errorf("%q: sketch ok %v, refused %v", c.src, ok, c.refused)
		}
	}
}

// TestSubshellHoldsHeredocJoin: Gemini CLI's wrapper puts the command in a
// subshell; the attack run 96 body closes it early in bash's reading only.
func TestSubshellHoldsHeredocJoin(t *testing.T) {
	before, after := "x=1\n(\n  trap 'echo' EXIT\n", "\n)\n__code=$?\nexit $__code"
	if SubshellHolds(before, "cat <<EOF\nEO\\\nF\n) ; id > pwned.txt ; (\nEOF", after) {
		t.Error("a here-document joined at EO\\<newline>F holds the subshell")
	}
	if !SubshellHolds(before, "cat <<EOF\nEO\\\\\nF\n) ; id > pwned.txt ; (\nEOF", after) {
		t.Error("control: an escaped backslash at a line's end does not hold the subshell")
	}
}
