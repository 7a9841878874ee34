package shellparse

import (
	"reflect"
	"strings"
	"testing"
)

func TestShape(t *testing.T) {
	for cmd, want := range map[string]string{
		"ls -la":                          "",
		"git status && git diff":          "and compound",
		"ls | head -5":                    "compound pipe",
		"cd src && make":                  "and cd compound",
		"make 2>&1":                       "redirect",
		"echo $(date)":                    "compound subst",
		"a; b":                            "compound list",
		"a\nb":                            "compound list multiline",
		"npm start &":                     "background compound",
		"cat <<EOF\nx\nEOF":               "heredoc multiline",
		"for f in *; do echo $f; done":    "compound control",
		"FOO=1 make":                      "assign",
		"echo 'unterminated":              "unparseable",
		"( cd x && ls )":                  "and cd compound subshell",
		"test -f x || touch x":            "compound or",
		"git commit -m \"$(cat <<'EOF'\n": "multiline unparseable",
	} {
		if got := strings.Join(Shape(cmd), " "); got != want {
			t.Errorf("Shape(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestSplitShape(t *testing.T) {
	type part struct{ cmd, cd string }
	for _, c := range []struct {
		cmd   string
		parts []part
		why   string
	}{
		{"ls -la", []part{{"ls -la", ""}}, ""},
		{"git status && git diff", []part{{"git status", ""}, {"git diff", ""}}, ""},
		{"cd src && ls | head -5", []part{{"cd src", "src"}, {"ls", ""}, {"head -5", ""}}, ""},
		{"go build ./... 2>&1 | tail -20", []part{{"go build ./...", ""}, {"tail -20", ""}}, ""},
		{"ls >/dev/null 2>&1; echo ok", []part{{"ls", ""}, {"echo ok", ""}}, ""},
		{"ls > out.txt", []part{{"ls >out.txt", ""}}, ""},
		{"cd \"my dir\" || exit 1", []part{{"cd \"my dir\"", "my dir"}, {"exit 1", ""}}, ""},
		{"echo $(whoami)", nil, ShapeSubst},
		{"npm start &", nil, ShapeBackground},
		{"(cd x && ls)", nil, ShapeSubshell},
		{"if true; then ls; fi", nil, ShapeControl},
		{"! grep x y", nil, "negated"},
		{"echo 'a", nil, ShapeUnparseable},
	} {
		parts, ok, why := SplitShape(c.cmd)
		if why != c.why || ok != (c.why == "") {
			t.Errorf("SplitShape(%q): ok %v why %q, want why %q", c.cmd, ok, why, c.why)
			continue
		}
		var got []part
		for _, p := range parts {
			got = append(got, part{p.Cmd, p.Cd})
		}
		if !reflect.DeepEqual(got, c.parts) {
			t.Errorf("SplitShape(%q) = %q, want %q", c.cmd, got, c.parts)
		}
	}
	parts, _, _ := SplitShape("cd $HOME && cd - && cd")
	for _, p := range parts {
		if !p.CdBare || p.Cd != "" {
			t.Errorf("%q: want a cd without a literal dir, got %+v", p.Cmd, p)
		}
	}
}
