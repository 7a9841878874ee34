package shellparse

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCorpus(t *testing.T) {
	fx := newFixture(t)
	rows := loadCorpus(t)

	inputs := 0
	perVerdict := map[Verdict]int{}
	everydayRows, everydaySimple := 0, 0
	attacks, controls := 0, 0
	var dangerousSimple []string
	for _, r := range rows {
		if r.tags["attack"] {
			attacks++
		}
		if r.tags["control"] {
			controls++
		}
		var first *Result
		for k, in := range r.inputs {
			inputs++
			perVerdict[r.verdict]++
			cmd := fx.repl.Replace(in)
			res := Analyze(cmd, fx.env)
			where := fmt.Sprintf("%s:%d %q", r.file, r.line, in)
			if r.tags["everyday"] && k == 0 {
				everydayRows++
				if res.Verdict == Simple {
					everydaySimple++
				}
			}
			if (r.verdict == Chained || r.verdict == Indirect || r.verdict == PathShadowed) && res.Verdict == Simple {
				dangerousSimple = append(dangerousSimple, where)
			}
			if res.Verdict != r.verdict {
				t.Errorf("%s: verdict %s (%s at %s), want %s", where, res.Verdict, res.Reason, res.Pos, r.verdict)
				continue
			}
			checkRow(t, fx, r, where, res)
			// Every spelling in a row has one result.
			if first == nil {
				first = &res
			} else if res.Verdict == Simple && !sameCommand(*first, res) {
				t.Errorf("%s: result differs from the row's first spelling:\n got %s\nwant %s", where, jsonOf(res), jsonOf(*first))
			}
		}
	}
	for _, d := range dangerousSimple {
		t.Errorf("chained/indirect/shadowed row came out simple: %s", d)
	}
	t.Logf("corpus: %d rows, %d inputs; per class %v; %d attack rows, %d control rows", len(rows), inputs, perVerdict, attacks, controls)
	t.Logf("everyday: %d of %d rows simple (%.1f%%)", everydaySimple, everydayRows, 100*float64(everydaySimple)/float64(max(everydayRows, 1)))
	t.Logf("chained/indirect/shadowed inputs that came out simple: %d", len(dangerousSimple))
	if inputs < 500 {
		t.Errorf("corpus has %d inputs, want at least 500", inputs)
	}
	for _, v := range []Verdict{Simple, Chained, Indirect, PathShadowed, Unparseable} {
		if perVerdict[v] < 20 {
			t.Errorf("corpus has %d %s inputs, want at least 20", perVerdict[v], v)
		}
	}
	if everydayRows < 50 {
		t.Errorf("corpus has %d everyday rows, want at least 50", everydayRows)
	}
	if everydaySimple*10 < everydayRows*9 {
		t.Errorf("everyday: %d of %d simple, under 90%%", everydaySimple, everydayRows)
	}
	if attacks == 0 || controls == 0 {
		t.Errorf("corpus needs attack and control rows (have %d, %d)", attacks, controls)
	}
}

// checkRow compares res with the row's expectations.
func checkRow(t *testing.T, fx *fixture, r row, where string, res Result) {
	t.Helper()
	if r.argv != nil {
		var got []string
		for _, w := range res.Argv {
			got = append(got, w.Value)
		}
		want := make([]string, len(r.argv))
		for i, a := range r.argv {
			want[i] = fx.repl.Replace(a)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: argv %q, want %q", where, got, want)
		}
	}
	if r.glob != nil {
		var got []int
		for i, w := range res.Argv {
			if w.Glob {
				got = append(got, i)
			}
		}
		if len(got) != len(r.glob) || (len(got) > 0 && !reflect.DeepEqual(got, r.glob)) {
			t.Errorf("%s: glob words %v, want %v", where, got, r.glob)
		}
	}
	if r.exe != "" && res.Executable != filepath.Join(fx.root, r.exe) {
		t.Errorf("%s: executable %q, want %q", where, res.Executable, filepath.Join(fx.root, r.exe))
	}
	if r.redir != nil {
		want := make([]Redirect, len(r.redir))
		for i, rd := range r.redir {
			rd.Target = fx.repl.Replace(rd.Target)
			want[i] = rd
		}
		if !reflect.DeepEqual(res.Redirects, want) {
			t.Errorf("%s: redirects %s, want %s", where, jsonOf(res.Redirects), jsonOf(want))
		}
	} else if res.Verdict == Simple && len(res.Redirects) > 0 && r.file != "everyday.txt" {
		t.Errorf("%s: unexpected redirects %s", where, jsonOf(res.Redirects))
	}
	if r.assigns != nil || len(res.Assigns) > 0 {
		if !reflect.DeepEqual(res.Assigns, r.assigns) {
			t.Errorf("%s: assigns %s, want %s", where, jsonOf(res.Assigns), jsonOf(r.assigns))
		}
	}
	if r.warn >= 0 && len(res.Warnings) != r.warn {
		t.Errorf("%s: %d warnings %q, want %d", where, len(res.Warnings), res.Warnings, r.warn)
	}
	if r.reason != "" && !strings.Contains(res.Reason, fx.repl.Replace(r.reason)) {
		t.Errorf("%s: reason %q does not contain %q", where, res.Reason, r.reason)
	}
	switch res.Verdict {
	case Simple:
		if res.Reason != "" || res.Pos != "" {
			t.Errorf("%s: simple with reason %q pos %q", where, res.Reason, res.Pos)
		}
		if res.Executable == "" && !res.Builtin {
			t.Errorf("%s: simple without an executable", where)
		}
		if name := res.Argv[0].Value; res.Executables[name] != res.Executable {
			t.Errorf("%s: executables[%q] = %q, want %q", where, name, res.Executables[name], res.Executable)
		}
	default:
		if res.Reason == "" {
			t.Errorf("%s: %s without a reason", where, res.Verdict)
		}
		if res.Pos == "" && res.Verdict != Unparseable {
			t.Errorf("%s: %s without a position", where, res.Verdict)
		}
	}
}

// sameCommand compares what a scope would match.
func sameCommand(a, b Result) bool {
	return a.Verdict == b.Verdict && reflect.DeepEqual(a.Argv, b.Argv) && a.Executable == b.Executable &&
		reflect.DeepEqual(a.Redirects, b.Redirects) && reflect.DeepEqual(a.Assigns, b.Assigns)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestExecutablesEverywhere: command names inside chains, subshells and
// substitutions are all listed with their resolution.
func TestExecutablesEverywhere(t *testing.T) {
	fx := newFixture(t)
	res := Analyze(`git status; (ls | grep x) && echo "$(cat go.mod)" <(shadowtool) || ./rel; {go,vet}; no-such`, fx.env)
	if res.Verdict != Chained {
		t.Fatalf("verdict %s", res.Verdict)
	}
	want := map[string]string{
		"git":        filepath.Join(fx.root, "trusted/git"),
		"ls":         filepath.Join(fx.root, "trusted/ls"),
		"grep":       filepath.Join(fx.root, "trusted/grep"),
		"echo":       "",
		"cat":        filepath.Join(fx.root, "trusted/cat"),
		"shadowtool": filepath.Join(fx.root, "untrusted/shadowtool"),
		"./rel":      "",
		"go":         filepath.Join(fx.root, "trusted/go"),
		"no-such":    "",
	}
	if !reflect.DeepEqual(res.Executables, want) {
		t.Errorf("executables\n got %v\nwant %v", res.Executables, want)
	}
}

func TestMaxCommandLen(t *testing.T) {
	fx := newFixture(t)
	long := "echo " + strings.Repeat("a", MaxCommandLen-5)
	if res := Analyze(long, fx.env); res.Verdict != Simple {
		t.Errorf("command of exactly MaxCommandLen bytes: %s (%s)", res.Verdict, res.Reason)
	}
	if res := Analyze(long+"a", fx.env); res.Verdict != Unparseable {
		t.Errorf("command over MaxCommandLen: %s, want unparseable", res.Verdict)
	}
}

func TestTildeNeedsHome(t *testing.T) {
	fx := newFixture(t)
	env := fx.env
	env.Home = ""
	if res := Analyze("echo ~/x", env); res.Verdict != Indirect {
		t.Errorf("tilde without Home: %s, want indirect", res.Verdict)
	}
	if res := Analyze("echo '~/x'", env); res.Verdict != Simple {
		t.Errorf("quoted tilde without Home: %s, want simple", res.Verdict)
	}
}

func TestWarningFormat(t *testing.T) {
	res := Analyze("echo ok\necho a\u200bb", Env{})
	want := []string{"2:7: U+200B invisible character"}
	if !reflect.DeepEqual(res.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Warnings, want)
	}
	many := strings.Repeat("\u200b", 100)
	if w := Analyze("echo "+many, Env{}).Warnings; len(w) != maxWarnings+1 || !strings.HasPrefix(w[maxWarnings], "36 more") {
		t.Errorf("warnings are not bounded: %d, last %q", len(w), w[len(w)-1])
	}
}

// TestPositions: the position is that of the first offending node.
func TestPositions(t *testing.T) {
	fx := newFixture(t)
	for _, c := range []struct{ cmd, pos string }{
		{"git status; curl x", "1:13"},
		{"git status && curl x", "1:12"},
		{"git status $(id)", "1:12"},
		{"{git,status}", "1:1"},
		{"echo ok; {git,status}", "1:10"},
		{"git status {a,b} $x", "1:18"},
		{"PATH=/x git status", "1:1"},
		{"LANG=C FOO=1 git", "1:8"},
		{"git status > {a,b}", "1:12"},
		{"\n  ./git", "2:3"},
		{"./git", "1:1"},
		{"sudo -u x git", "1:1"},
		{"bash -x -c id", "1:9"},
		{"find . -exec rm {} +", "1:8"},
		{"echo 'x", "1:6"},
	} {
		if res := Analyze(c.cmd, fx.env); res.Pos != c.pos {
			t.Errorf("%q: pos %q (%s: %s), want %q", c.cmd, res.Pos, res.Verdict, res.Reason, c.pos)
		}
	}
}
