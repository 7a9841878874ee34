package shellparse

import (
	"bytes"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyze is seeded from the corpus. Analyze must not panic, and a
// command classified Simple must stay the same single literal command when
// printed by the parser's printer and re-parsed, and when its argv is
// quoted back into a command line.
func FuzzAnalyze(f *testing.F) {
	fx := newFixture(f)
	seeds := 0
	for _, r := range loadCorpus(f) {
		for _, in := range r.inputs {
			f.Add(fx.repl.Replace(in))
			seeds++
		}
	}
	if seeds == 0 {
		f.Fatal("no fuzz seeds from the corpus")
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		res := Analyze(cmd, fx.env)
		if res.Verdict != Simple {
			return
		}
		file, err := parse(cmd)
		if err != nil {
			t.Fatalf("simple but the parser rejects it: %v", err)
		}
		if len(file.Stmts) != 1 {
			t.Fatalf("simple with %d statements", len(file.Stmts))
		}
		if _, ok := file.Stmts[0].Cmd.(*syntax.CallExpr); !ok {
			t.Fatalf("simple but not a call: %T", file.Stmts[0].Cmd)
		}
		var buf bytes.Buffer
		if err := syntax.NewPrinter().Print(&buf, file); err != nil {
			t.Fatal(err)
		}
		// mvdan's printer rewrites some control characters (\v, \f) that
		// bash keeps as word characters (the confirm test checks the argv
		// with bash); the printed form is only compared without them.
		printed := Analyze(buf.String(), fx.env)
		if !hasControl(cmd) && !sameCommand(res, printed) {
			t.Fatalf("printed form %q differs:\n got %s\nwant %s", buf.String(), jsonOf(printed), jsonOf(res))
		}
		requoted, ok := quoteBack(res)
		if !ok {
			return
		}
		again := Analyze(requoted, fx.env)
		if again.Verdict != Simple || again.Executable != res.Executable || len(again.Argv) != len(res.Argv) {
			t.Fatalf("requoted %q: %s", requoted, jsonOf(again))
		}
		for i, w := range again.Argv {
			if w.Value != res.Argv[i].Value || w.Glob {
				t.Fatalf("requoted %q: word %d is %+v, want %q literal", requoted, i, w, res.Argv[i].Value)
			}
		}
	})
}

func hasControl(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return true
		}
	}
	return false
}

// quoteBack writes a simple result as a command line with every word quoted.
func quoteBack(res Result) (string, bool) {
	var parts []string
	for _, a := range res.Assigns {
		q, err := syntax.Quote(a.Value, syntax.LangBash)
		if err != nil {
			return "", false
		}
		parts = append(parts, a.Name+"="+q)
	}
	for i, w := range res.Argv {
		q, err := syntax.Quote(w.Value, syntax.LangBash)
		if err != nil {
			return "", false
		}
		if i == 0 && q != w.Value {
			return "", false // a quoted command name can look like a keyword to nobody, but keep it exact
		}
		parts = append(parts, q)
	}
	for _, rd := range res.Redirects {
		if (rd.Op == ">&" || rd.Op == "<&") && !rd.Writes {
			parts = append(parts, rd.Fd+rd.Op+rd.Target)
			continue
		}
		q, err := syntax.Quote(rd.Target, syntax.LangBash)
		if err != nil {
			return "", false
		}
		parts = append(parts, rd.Fd+rd.Op+q)
	}
	return strings.Join(parts, " "), true
}

func BenchmarkAnalyze2KB(b *testing.B) {
	fx := newFixture(b)
	var sb strings.Builder
	sb.WriteString("go test -race -count=1 -run 'TestA|TestB' -coverprofile=cover.out")
	for i := 0; sb.Len() < 2000; i++ {
		sb.WriteString(" ./internal/pkg")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString("/... \"--tag=a b\" $'\\t'")
	}
	cmd := sb.String()
	if res := Analyze(cmd, fx.env); res.Verdict != Simple {
		b.Fatalf("benchmark command is %s: %s", res.Verdict, res.Reason)
	}
	b.SetBytes(int64(len(cmd)))
	b.ResetTimer()
	for b.Loop() {
		Analyze(cmd, fx.env)
	}
}
