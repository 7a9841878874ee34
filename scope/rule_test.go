package scope

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// Each row lists equivalent spellings of one rule and its canonical form.
var parseOK = []struct {
	in    []string
	canon string
	tool  string
}{
	{[]string{"Bash(go test ./...)", `Bash(go test './...')`, `Bash("go" test ./...)`}, "Bash(go test ./...)", "Bash"},
	{[]string{"Bash(npm run test:*)", "Bash(npm run test *)", "Bash(npm  run   test *)"}, "Bash(npm run test *)", "Bash"},
	{[]string{"Bash(git log *)", "Bash(git log:*)"}, "Bash(git log *)", "Bash"},
	{[]string{"Bash(git status)"}, "Bash(git status)", "Bash"},
	{[]string{"Bash(LANG=C CGO_ENABLED=0 go build)", "Bash(CGO_ENABLED='0' LANG=C go build)"}, "Bash(CGO_ENABLED=0 LANG=C go build)", "Bash"},
	{[]string{"Bash(TZ= date)", "Bash(TZ='' date)"}, "Bash(TZ='' date)", "Bash"},
	{[]string{"Bash(echo hi)@builtin"}, "Bash(echo hi)@builtin", "Bash"},
	{[]string{"Bash(npm run test*)"}, "Bash(npm run test*)", "Bash"},
	{[]string{"Bash(git * main)"}, "Bash(git * main)", "Bash"},
	{[]string{"Bash(echo 'a b')", `Bash(echo "a b")`, `Bash(echo a\ b)`, `Bash(echo $'a\x20b')`}, "Bash(echo 'a b')", "Bash"},
	{[]string{"Bash(echo '*')", `Bash(echo \*)`, `Bash(echo "*")`}, "Bash(echo '*')", "Bash"},
	{[]string{`Bash(echo 'a:'*)`}, `Bash(echo 'a:'*)`, "Bash"},
	{[]string{`Bash(echo it\'s)`, `Bash(echo "it's")`}, `Bash(echo 'it'\''s')`, "Bash"},
	{[]string{"Bash(go test ./... > out.txt)", "Bash(go test ./... 1>out.txt)", "Bash(go test >out.txt ./...)"}, "Bash(go test ./... >out.txt)", "Bash"},
	{[]string{"Bash(make 2>>'build log')"}, "Bash(make 2>>'build log')", "Bash"},
	{[]string{"Bash(/usr/bin/git status)"}, "Bash(/usr/bin/git status)", "Bash"},
	{[]string{"Bash(git status)@/usr/bin/git"}, "Bash(git status)@/usr/bin/git", "Bash"},
	{[]string{"Bash(echo ')')@/usr/bin/echo"}, "Bash(echo ')')@/usr/bin/echo", "Bash"},
	{[]string{`Bash(git status)@"/usr/bin/git"`}, "Bash(git status)@/usr/bin/git", "Bash"},
	{[]string{`Bash(x y)@"/opt/my tools (x86)/x"`}, `Bash(x y)@"/opt/my tools (x86)/x"`, "Bash"},
	{[]string{`Bash(echo ')@"')@"/opt/a\"b/echo"`}, `Bash(echo ')@"')@"/opt/a\"b/echo"`, "Bash"},
	// Content pins.
	{[]string{"Bash(cargo build *)@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:/home/u/.cargo/bin/cargo"}, "Bash(cargo build *)@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:/home/u/.cargo/bin/cargo", "Bash"},
	{[]string{`Bash(x y)@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:"/opt/my tools (x86)/x"`}, `Bash(x y)@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:"/opt/my tools (x86)/x"`, "Bash"},
	{[]string{`Bash(echo ')@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:"')@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:"/opt/a\"b)@sha256:x/echo"`}, `Bash(echo ')@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:"')@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:"/opt/a\"b)@sha256:x/echo"`, "Bash"},
	{[]string{"Edit(src/**)", "Edit(./src/**)", "Edit(/src/**)"}, "Edit(src/**)", "Edit"},
	{[]string{"Write(docs/*.md)"}, "Write(docs/*.md)", "Write"},
	{[]string{"Read(~/notes/**)"}, "Read(~/notes/**)", "Read"},
	{[]string{"Edit(//tmp/scratch/**)"}, "Edit(//tmp/scratch/**)", "Edit"},
	{[]string{"Read(*.env)"}, "Read(*.env)", "Read"},
	{[]string{"WebFetch(domain:pkg.go.dev)", "WebFetch(domain:PKG.go.DEV)"}, "WebFetch(domain:pkg.go.dev)", "WebFetch"},
	{[]string{"mcp__github__get_issue"}, "mcp__github__get_issue", "mcp__github__get_issue"},
	{[]string{"mcp__github__*", "mcp__github"}, "mcp__github__*", "mcp__github__*"},
	{[]string{"mcp__github__get_*"}, "mcp__github__get_*", "mcp__github__get_*"},
	{[]string{"mcp__my-srv__do_thing"}, "mcp__my-srv__do_thing", "mcp__my-srv__do_thing"},
	{[]string{"TodoWrite"}, "TodoWrite", "TodoWrite"},
	{[]string{"WebSearch"}, "WebSearch", "WebSearch"},
	{[]string{"Bash"}, "Bash", "Bash"},
}

func TestParseCanonical(t *testing.T) {
	if len(parseOK) == 0 {
		t.Fatal("empty table")
	}
	for _, row := range parseOK {
		for _, in := range row.in {
			r, err := Parse(in)
			if err != nil {
				t.Errorf("Parse(%q): %v", in, err)
				continue
			}
			if got := r.String(); got != row.canon {
				t.Errorf("Parse(%q).String() = %q, want %q", in, got, row.canon)
			}
			if got := r.Tool(); got != row.tool {
				t.Errorf("Parse(%q).Tool() = %q, want %q", in, got, row.tool)
			}
			r2, err := Parse(r.String())
			if err != nil {
				t.Errorf("Parse(String()=%q): %v", r.String(), err)
				continue
			}
			if r2 != r {
				t.Errorf("Parse(%q) round trip: %#v != %#v", in, r2, r)
			}
		}
	}
}

var parseBad = []struct {
	in     string
	offset int
	msg    string
}{
	{"", 0, "empty rule"},
	{"(x)", 0, "tool name"},
	{"Bash(", 5, "missing ')'"},
	{"Bash()", 5, "empty specifier"},
	{"Bash(git status; id)", 15, "one simple command"},
	{"Bash(git status && id)", 5, "one simple command"},
	{"Bash(git status | cat)", 5, "one simple command"},
	{"Bash(git status &)", 16, "background"},
	{"Bash((git status))", 5, "one simple command"},
	{"Bash(git $(id))", 9, "expansions"},
	{"Bash(git `id`)", 9, "expansions"},
	{"Bash(echo $HOME)", 10, "expansions"},
	{`Bash(echo "$HOME")`, 11, "expansions"},
	{"Bash(PATH+=/tmp git status)", 5, "assignments"},
	{"Bash(A=1 A=2 git status)", 9, "twice"},
	{"Bash(A=* git status)", 5, "literal"},
	{"Bash(* --version)", 5, "must be literal"},
	{"Bash(* )", 5, "every command"},
	{"Bash(*) +network", 7, "written alone"},
	{"Bash(*)@/bin/bash", 7, "written alone"},
	{`Bash(echo a\:*)`, 11, "trailing backslash"},
	{"Bash(ls*)", 5, "must be literal"},
	{"Bash(./x.sh)", 5, "absolute"},
	{"Bash(ls ~/x)", 8, "tilde"},
	{"Bash(ls a?)", 9, "only * is a wildcard"},
	{"Bash(ls {a,b})", 8, "only * is a wildcard"},
	{"Bash(ls # c)", 8, "comments"},
	{"Bash(cat <<EOF)", 9, "here-document"},
	{"Bash(cat <<<x)", 9, "redirection"},
	{"Bash(cat > *.txt)", 11, "literal"},
	{"Bash(git status\nid)", 15, "not allowed"},
	{"Bash(git status)x", 16, "unexpected text"},
	{"Bash(git status)@usr/bin/git", 17, "absolute"},
	{"Bash(git status)@/usr/bin/../bin/git", 17, "absolute"},
	{"Bash(git status)@/usr/my bin/git", 17, "quote"},
	{`Bash(git status)@"/usr/bin/git`, 17, "quote"},
	{`Bash(git status)@"usr/bin/git"`, 17, "absolute"},
	{`Bash(git status)@"/usr/bin/\x01"`, 17, "not allowed"},
	{"Bash(git status)@sha256:abc:/usr/bin/git", 17, "64 lower-case hex"},
	{"Bash(git status)@sha256:0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF:/usr/bin/git", 17, "64 lower-case hex"},
	{"Bash(git status)@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:", 17, "64 lower-case hex"},
	{"Bash(git status)@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:usr/bin/git", 17, "absolute"},
	{"Edit(src/**)@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef:/usr/bin/git", 12, "unexpected text"},
	{`Bash(git status)@"/usr/bin/git" `, 17, "invalid quoted"},
	{"Bash(git log *:*)", 14, "both"},
	{"Bash(echo '\u202e')", 11, "not allowed"},
	{"Bash(echo '\u200b')", 11, "not allowed"},
	{"Edit()", 5, "empty specifier"},
	{"Edit(src/../x)", 9, "segments"},
	{"Edit(src//x)", 9, "empty path segment"},
	{"Edit(src/)", 8, "trailing"},
	{"Edit({a,b}/x)", 5, "braces"},
	{`Edit(a\*)`, 6, "escapes"},
	{"Edit(src/a**)", 9, "whole path segment"},
	{"Edit(~)", 5, "~user"},
	{"Edit(~bob/x)", 5, "~user"},
	{"Edit(//)", 7, "empty path pattern"},
	{"Edit(src/[)", 5, "invalid path pattern"},
	{"Edit(src/**)@/usr/bin/x", 12, "unexpected text"},
	{"MultiEdit(src/**)", 0, "write Edit"},
	{"WebFetch(pkg.go.dev)", 9, "domain:"},
	{"WebFetch(domain:)", 16, "empty domain"},
	{"WebFetch(domain:*.go.dev)", 16, "wildcards"},
	{"WebFetch(domain:pkg.go.dev.)", 27, "empty label"},
	{"WebFetch(domain:pkg.go.dev:443)", 26, "only letters"},
	{"WebFetch(domain:user@pkg.go.dev)", 20, "only letters"},
	{"Foo(bar)", 0, "unknown tool"},
	{"Foo", 0, "unknown tool"},
	{"TodoWrite(x)", 9, "no specifier"},
	{"PowerShell(Get-Item)", 0, "not supported"},
	{"mcp__", 5, "server"},
	{"mcp__github__", 13, "missing MCP tool"},
	{"mcp__gith*b__x", 9, "unexpected"},
	{"mcp__git*", 8, "tool part only"},
	{"mcp__github__get_issue(x)", 22, "no specifier"},
	{"mcp__github__a__*", 13, "may not contain"},
}

func TestParseErrors(t *testing.T) {
	for _, row := range parseBad {
		_, err := Parse(row.in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want *ParseError", row.in, err)
			continue
		}
		if pe.Offset != row.offset || !strings.Contains(pe.Msg, row.msg) || pe.Rule != row.in {
			t.Errorf("Parse(%q): offset %d msg %q, want offset %d msg containing %q", row.in, pe.Offset, pe.Msg, row.offset, row.msg)
		}
	}
	long := "Bash(echo " + strings.Repeat("a", MaxRuleLen) + ")"
	if _, err := Parse(long); err == nil {
		t.Error("over-long rule parsed")
	}
}

func TestCoversTool(t *testing.T) {
	cases := []struct {
		rule string
		yes  []string
		no   []string
	}{
		{"Bash(git status)", []string{"Bash"}, []string{"PowerShell", "Edit", "bash", ""}},
		{"Edit(src/**)", []string{"Edit", "MultiEdit", "Write", "NotebookEdit"}, []string{"Read", "Bash", "Grep"}},
		{"Write(docs/*.md)", []string{"Write"}, []string{"Edit", "MultiEdit", "Read"}},
		{"Read(src/**)", []string{"Read"}, []string{"Grep", "Glob", "LS", "Edit"}},
		{"WebFetch(domain:pkg.go.dev)", []string{"WebFetch"}, []string{"WebSearch"}},
		{"mcp__github__get_issue", []string{"mcp__github__get_issue"}, []string{"mcp__github__get_issues", "mcp__github__get_issu", "mcp__gitlab__get_issue"}},
		{"mcp__github__*", []string{"mcp__github__get_issue", "mcp__github__x"}, []string{"mcp__github__", "mcp__github__a__b", "mcp__githubx__a", "mcp__github"}},
		{"mcp__github__get_*", []string{"mcp__github__get_issue", "mcp__github__get_"}, []string{"mcp__github__list_issues", "mcp__github__get_a__b"}},
		{"TodoWrite", []string{"TodoWrite"}, []string{"TodoRead", "Bash"}},
		{"Bash", nil, []string{"Bash"}},
		{"Edit", nil, []string{"Edit", "Write"}},
	}
	for _, c := range cases {
		r, err := Parse(c.rule)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.rule, err)
		}
		for _, tool := range c.yes {
			if !r.CoversTool(tool) {
				t.Errorf("%s should cover %q", c.rule, tool)
			}
		}
		for _, tool := range c.no {
			if r.CoversTool(tool) {
				t.Errorf("%s should not cover %q", c.rule, tool)
			}
		}
	}
	if (Rule{}).CoversTool("Bash") || (Rule{}).String() != "" {
		t.Error("zero Rule covers a tool or has a form")
	}
}

func FuzzParse(f *testing.F) {
	n := 0
	for _, row := range parseOK {
		for _, in := range row.in {
			f.Add(in)
			n++
		}
	}
	for _, row := range parseBad {
		f.Add(row.in)
		n++
	}
	if n == 0 {
		f.Fatal("no seeds")
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := Parse(in)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): error %T is not *ParseError", in, err)
			}
			if pe.Offset < 0 || pe.Offset > len(in) {
				t.Fatalf("Parse(%q): offset %d out of range", in, pe.Offset)
			}
			return
		}
		s := r.String()
		r2, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but canonical %q does not parse: %v", in, s, err)
		}
		if r2 != r || r2.String() != s {
			t.Fatalf("round trip of %q: %q -> %q", in, s, r2.String())
		}
	})
}

// TestJailRule: Bash(*) is the jail grant's rule, spelled one way only: it
// covers Bash, runs with the jail's capability, is not refused as too wide,
// and covers no call by matching (the engine decides what the jail holds).
// No widening, pin or other spelling makes it.
func TestJailRule(t *testing.T) {
	r, err := Parse(JailRule)
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsJail() || r.String() != JailRule || !r.CoversTool("Bash") || r.CoversTool("Edit") {
		t.Errorf("jail rule %+v", r)
	}
	if c := r.Capability(); c != policy.JailCapability || c.String() != "jail" {
		t.Errorf("capability %v", c)
	}
	if err := Dangerous(r, "/home/u"); err != nil {
		t.Errorf("refused: %v", err)
	}
	if err := Match(r, Call{Tool: "Bash", Input: map[string]any{"command": "ls"}, Cwd: "/p", ProjectDir: "/p"}); err == nil {
		t.Error("the jail rule matched a call by itself")
	}
	ls, err := Parse("Bash(ls *)")
	if err != nil || ls.IsJail() {
		t.Errorf("Bash(ls *): %v %v", ls, err)
	}
}

// TestJailFilesRule: Edit(**), the jail's rule for the file tools, is
// granted (it is refused as too wide no more), covers Edit and Write of
// the project's ordinary files, and never a protected path, a path outside
// the project or one a link leads outside. Every other project-wide Edit
// pattern stays refused (Edit(*) in TestDangerous).
func TestJailFilesRule(t *testing.T) {
	r, err := Parse(JailFilesRule)
	if err != nil || !r.IsJailFiles() {
		t.Fatalf("%s: %v %v", JailFilesRule, r, err)
	}
	if err := Dangerous(r, "/home/u"); err != nil {
		t.Fatalf("refused: %v", err)
	}
	proj := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"src", ".claude", ".git", ".vscode"} {
		_ = os.MkdirAll(filepath.Join(proj, d), 0o755)
	}
	_ = os.Symlink(outside, filepath.Join(proj, "out"))
	call := func(tool, path string) Call {
		return Call{Tool: tool, Input: map[string]any{"file_path": path, "content": "x", "old_string": "a", "new_string": "b"},
			Cwd: proj, ProjectDir: proj, ProjectNamed: true, Home: "/home/u"}
	}
	for _, tool := range []string{"Edit", "Write"} {
		for _, p := range []string{"src/a.go", "notes/new.md", "README.md"} {
			if err := Match(r, call(tool, filepath.Join(proj, p))); err != nil {
				t.Errorf("%s %s (control): %v", tool, p, err)
			}
		}
		for _, p := range []string{filepath.Join(proj, ".claude", "settings.json"), filepath.Join(proj, ".git", "config"),
			filepath.Join(proj, ".vscode", "tasks.json"), filepath.Join(proj, "out", "x"), filepath.Join(outside, "y"), filepath.Join(proj, "..", "z")} {
			if err := Match(r, call(tool, p)); err == nil {
				t.Errorf("%s %s: covered", tool, p)
			}
		}
	}
	if other, _ := Parse("Edit(src/**)"); other.IsJailFiles() {
		t.Error("Edit(src/**) taken for the jail's rule")
	}
}
