package shellparse

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"
)

// diffPunct is the punctuation the differential inputs are built from: the
// characters where bash and a parser are most likely to disagree.
var diffPunct = []string{"#", `\`, "\n", "\r", "'", `"`, ";", "|", "&", "(", ")", "{", "}", "$", "<", ">", "`"}

// diffAttacks are the known differentials (each was simple once) and
// shapes around them.
var diffAttacks = []string{
	"ls #\\\nbash -c 'id'",
	"git status #\\\nid",
	"git status\r#; id",
	"git status\r; id",
	"git status \\\r\nid",
	"git status\\\r\nid",
	"echo a\\\nb",
	"echo 'a\\\nb'",
	"echo \"a\\\nb\"",
	"echo $'a\\\nb'",
	"echo a#b",
	"echo a\\ #b",
	"echo {a,#b}",
	"echo x#\\\ny",
	"echo $'\\''",
	"echo \"\\$x\" '$x' \\$x",
	"echo a\\\r\nb",
	"echo \\#x",
	"echo ''#x",
	"echo $'#' x",
	"echo x >out.txt",
	"echo x 2>&1 >out.txt",
	"cat <input.txt",
	"echo \\;id",
	"echo ';'id",
	"echo !x",
	"echo {a,b}c",
	"echo a{,}b",
	"echo ~+ ~/x",
	// Every ANSI-C escape form bash 5.2 knows ($'\x{2d}' was simple once
	// and bash decoded it to -).
	"echo $'\\x{2d}x'", "echo $'\\x{}x'", "echo $'\\x{12f}'", "echo $'\\x2d3'", "echo $'\\x{2d'",
	"echo $'\\cA' $'\\c?' $'\\c\\\\'", "echo $'\\e' $'\\E'", "echo $'\\0101' $'\\101' $'\\400'",
	"echo $'\\u00e9' $'\\u{2d}'", "echo $'\\U0001F600' $'\\U{2d}'", "echo $'\\z' $'\\\"' $'\\?'",
	"cat $'\\x{7e}\\x{2f}.ssh'",
}

// fuzzing reports whether the test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// FuzzBashDifferential: for every input the analysis calls simple, real
// bash runs exactly the analysed command, argv and redirects (bashOracle).
// Under plain go test it runs its seeds: the known attack shapes and the
// punctuation around a command; when fuzzing, the corpus is added too
// (TestConfirmWithBash runs it under plain go test).
func FuzzBashDifferential(f *testing.F) {
	fx := newFixture(f)
	o := newBashOracle(f, fx)
	seeds := 0
	add := func(s string) { f.Add(s); seeds++ }
	for _, s := range diffAttacks {
		add(s)
	}
	for _, p := range diffPunct {
		add("echo a" + p + "b")
		add("echo a " + p + " b")
		add("git status" + p)
		add("echo '" + p + "' \"" + p + "\" $'" + p + "' \\" + p)
	}
	if fuzzing() {
		for _, r := range loadCorpus(f) {
			for _, in := range r.inputs {
				add(fx.repl.Replace(in))
			}
		}
	}
	if seeds < 50 {
		f.Fatalf("only %d seeds", seeds)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if _, _, problem := o.check(t, cmd); problem != "" {
			t.Errorf("%q: %s", cmd, problem)
		}
	})
}

// TestBashDifferentialRandom generates inputs from a fixed seed (a command
// name, then words built of letters, quotes, escapes and the punctuation
// above) and runs the simple ones through bash. Bounded: at most
// maxRuns bash runs.
func TestBashDifferentialRandom(t *testing.T) {
	fx := newFixture(t)
	o := newBashOracle(t, fx)
	const inputs, maxRuns = 4000, 600
	rng := rand.New(rand.NewPCG(11, 2026))
	pieces := append([]string{"a", "x", "-c", "id", " ", " ", " ", "\t", "=", "*", "?", "~", "!", ",", ".", "/", "-", "%", "@", "^", "[", "]",
		"\\\n", "$'", "\\'", "\\\"", "\\\\", "$\"", "2>&1", ">o", ">>o", "<in", "&>o", "1>&2", "{a,b}", "$x", "${x}", "$$", "$?", "\u00a0", "é",
		"$'\\x{2d}'", "$'\\x2d'", "$'\\cA'", "$'\\e'", "$'\\E'", "$'\\101'", "$'\\0'", "$'\\u00e9'", "$'\\U{2d}'", "$'\\x{'"}, diffPunct...)
	names := []string{"echo", "git", "ls", "cat", "printf", "grep", "test", "cd", "true"}
	simple := 0
	for i := 0; i < inputs && o.runs < maxRuns; i++ {
		var b strings.Builder
		b.WriteString(names[rng.IntN(len(names))])
		for w := rng.IntN(5); w >= 0; w-- {
			b.WriteByte(' ')
			for p := 1 + rng.IntN(4); p > 0; p-- {
				piece := pieces[rng.IntN(len(pieces))]
				switch rng.IntN(4) {
				case 0:
					piece = "'" + piece + "'"
				case 1:
					piece = `"` + piece + `"`
				}
				b.WriteString(piece)
			}
		}
		cmd := b.String()
		res, _, problem := o.check(t, cmd)
		if res.Verdict == Simple {
			simple++
		}
		if problem != "" {
			t.Errorf("%q: %s", cmd, problem)
		}
	}
	t.Logf("%d bash runs, %d simple inputs", o.runs, simple)
	if o.runs < 100 {
		t.Errorf("only %d bash runs: the generator no longer makes simple commands", o.runs)
	}
}

// TestOracleCatchesDifferentials: the oracle is not blind. Each known
// differential is given the analysis mvdan.cc/sh alone produced for it
// (before the analysis refused comments, raw control characters, a final
// backslash and quoted >& words), and the oracle must report it.
func TestOracleCatchesDifferentials(t *testing.T) {
	fx := newFixture(t)
	o := newBashOracle(t, fx)
	quotedDup := Analyze("echo hi >&x", fx.env)
	quotedDup.Redirects[0].Target = "2$'" // what the parser made of >&2"$'"
	for _, c := range []struct {
		cmd string
		old Result
	}{
		{"ls #\\\nbash -c 'id'", Analyze("ls bash -c id", fx.env)},
		{"git status\r#; id", Analyze("git status", fx.env)},
		{"git status \\\r\nid", Analyze("git status id", fx.env)},
		{"echo '\n' a\\", Analyze("echo '\n' 'a\\'", fx.env)},
		{"echo hi >&2\"$'\"", quotedDup},
		// The decoder once kept \x{2d} as written; bash decodes it to -.
		{`echo $'\x{2d}n'`, Analyze(`echo '\x{2d}n'`, fx.env)},
	} {
		o.analyze = func(string, Env) Result { return c.old }
		if res, ran, problem := o.check(t, c.cmd); !ran || problem == "" {
			t.Errorf("%q analysed as %s (%s): the oracle saw no difference", c.cmd, jsonOf(c.old.Argv), res.Verdict)
		} else {
			t.Logf("%q: %s", c.cmd, problem)
		}
	}
	// Control: the true analysis of a plain command passes.
	o.analyze = Analyze
	if _, ran, problem := o.check(t, "git status"); !ran || problem != "" {
		t.Errorf("git status: ran %v, problem %q", ran, problem)
	}
}
