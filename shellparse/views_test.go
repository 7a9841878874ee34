package shellparse

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// agentCommands are the commands of the agent-command corpus.
func agentCommands(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "agentcmds", "corpus.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Command string `json:"cmd"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Command != "" {
			cmds = append(cmds, rec.Command)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cmds
}

// TestViewsReadTheAnalysisWords: over the shell corpus and the agent
// commands, every view of a command that the analysis reads as simple
// commands (one, or a chain judged part by part) has, for each of them,
// the words of the analysis's argv: the sketch (SketchOf's, and
// Result.Sketch, what the danger lines read), the outline's source
// pieces, SplitShape's printed parts and their cd directory, List, a
// rule's words, and Shape's cd. Commands whose words brace, tilde or
// filename expansion changes are left out (the views show those as
// written; the analysis expands them), and from List and rules, what they
// refuse (a redirection, an assignment, an unquoted ] or }).
func TestViewsReadTheAnalysisWords(t *testing.T) {
	fx := newFixture(t)
	var cmds []string
	for _, r := range loadCorpus(t) {
		for _, in := range r.inputs {
			cmds = append(cmds, fx.repl.Replace(in))
		}
	}
	cmds = append(cmds, agentCommands(t)...)
	compared, quoted := 0, 0
	for _, cmd := range cmds {
		res := Analyze(cmd, fx.env)
		parts := res.Parts
		if res.Verdict == Simple {
			parts = []Result{res}
		}
		if len(parts) == 0 {
			continue
		}
		tr, err := newTree(cmd)
		if err != nil {
			t.Errorf("%q: analysed, but does not parse: %v", cmd, err)
			continue
		}
		expands, special := false, false
		for _, c := range tr.calls {
			for _, w := range c.Args {
				expands = expands || unquotedAny(w.Parts, "{~*?[")
				special = special || unquotedAny(w.Parts, "]}") // a rule's error
				if slices.ContainsFunc(w.Parts, quotes) {
					quoted++
				}
			}
		}
		if expands {
			continue
		}
		compared++
		var argv [][]string
		cds := false
		for _, p := range parts {
			var ws []string
			for _, w := range p.Argv {
				ws = append(ws, w.Value)
			}
			argv = append(argv, ws)
			cds = cds || ws[0] == "cd" || ws[0] == "pushd" || ws[0] == "popd"
		}
		same := func(view string, got [][]string) {
			t.Helper()
			if !reflect.DeepEqual(got, argv) {
				t.Errorf("%q: %s reads %q, the analysis %q", cmd, view, got, argv)
			}
		}
		words := func(text string) []string {
			sk, ok := SketchOf(text)
			if !ok || len(sk.Calls) != 1 {
				t.Errorf("%q: the view's text %q is not one command", cmd, text)
				return nil
			}
			return sk.Calls[0]
		}

		sk, ok := SketchOf(cmd)
		if !ok {
			t.Errorf("%q: not sketched", cmd)
			continue
		}
		same("SketchOf", sk.Calls)
		same("Result.Sketch", res.Sketch.Calls)

		lines, ok := Outline(cmd)
		if !ok {
			t.Errorf("%q: not outlined", cmd)
			continue
		}
		var outlined [][]string
		i := 0
		for _, l := range lines {
			if l.Label != "command:" {
				continue
			}
			if i < len(parts) {
				outlined = append(outlined, words(strings.Join(l.Source[len(parts[i].Assigns):], " ")))
			}
			i++
		}
		if i != len(parts) {
			outlined = append(outlined, []string{"(more commands than the analysis)"})
		}
		same("Outline", outlined)

		split, ok, why := SplitShape(cmd)
		if !ok {
			t.Errorf("%q: SplitShape refuses it (%s)", cmd, why)
			continue
		}
		var printed [][]string
		for k, p := range split {
			printed = append(printed, words(p.Cmd))
			if a := argv[min(k, len(argv)-1)]; a[0] == "cd" {
				if dir := slices.DeleteFunc(slices.Clone(a[1:]), func(s string) bool { return s == "--" }); len(dir) == 1 && dir[0] != "-" && p.Cd != dir[0] {
					t.Errorf("%q: SplitShape's cd goes to %q, the analysis's to %q", cmd, p.Cd, dir[0])
				}
			}
		}
		same("SplitShape", printed)

		if got := slices.Contains(Shape(cmd), ShapeCd); got != cds {
			t.Errorf("%q: Shape says cd %v, the analysis %v", cmd, got, cds)
		}

		plainParts := !special
		for _, p := range parts {
			plainParts = plainParts && len(p.Assigns) == 0 && len(p.Redirects) == 0
		}
		if list, _, ok := List(cmd); plainParts && len(parts) <= maxListCommands && !strings.Contains(cmd, "#") {
			if !ok {
				t.Errorf("%q: List refuses it", cmd)
			} else {
				same("List", list)
			}
		}

		if len(parts) == 1 && len(parts[0].Redirects) == 0 && !special {
			rc, re := ParseRuleCommand(cmd)
			if re != nil {
				t.Errorf("%q: as a rule: %v", cmd, re)
				continue
			}
			var ruled []string
			for _, w := range rc.Words {
				ruled = append(ruled, strings.Join(w.Lits, "*"))
			}
			same("ParseRuleCommand", [][]string{ruled})
		}
	}
	t.Logf("%d of %d commands compared view by view; %d words quoted or escaped", compared, len(cmds), quoted)
	if compared < 500 || quoted < 200 {
		t.Errorf("compared %d commands and %d quoted words: the corpus reader or the filter is broken", compared, quoted)
	}
}

// quotes reports a quoted part, or a literal with a backslash.
func quotes(p syntax.WordPart) bool {
	lit, ok := p.(*syntax.Lit)
	return !ok || strings.Contains(lit.Value, `\`)
}
