package scope

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loopguard/loopguard/shellparse"
)

// TestMustShow runs the three headline cases end to end (real
// shellparse analysis, real temp dirs and symlinks) and logs each reason;
// run with -v to read them.
func TestMustShow(t *testing.T) {
	t.Run("Bash(git status)", func(t *testing.T) {
		root := realDir(t, t.TempDir())
		bin, proj := filepath.Join(root, "bin"), filepath.Join(root, "proj")
		for _, d := range []string{bin, proj} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		fakeExe(t, bin, "git")
		fakeExe(t, bin, "id")
		env := shellparse.Env{Cwd: proj, ProjectDir: proj, Path: bin, Trusted: []string{bin}}
		r, err := Parse("Bash(git status)")
		if err != nil {
			t.Fatal(err)
		}
		if r, err = r.Pin(env); err != nil {
			t.Fatal(err)
		}
		for _, row := range []struct{ cmd, want string }{
			{"git status", ""},
			{"git status; id", ReasonNotSimple},
			{"git status $(id)", ReasonNotSimple},
			{"PATH=/tmp/x:$PATH git status", ReasonNotSimple},
			{"git status > f", ReasonRedirectNotCovered},
		} {
			res := shellparse.Analyze(row.cmd, env)
			err := Match(r, Call{Tool: "Bash", Input: map[string]any{"command": row.cmd}, Cwd: proj, ProjectDir: proj, Shell: &res})
			if got := ReasonOf(err); got != row.want || (err == nil) != (row.want == "") {
				t.Errorf("%q: got %v, want %q", row.cmd, err, row.want)
			}
			t.Logf("%-32q -> %v", row.cmd, orAllowed(err))
		}
	})
	t.Run("Edit(src/**)", func(t *testing.T) {
		tr := mkTree(t)
		r, err := Parse("Edit(src/**)")
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range []struct{ path, want string }{
			{"src/a.go", ""},
			{"src/../../etc/passwd", ReasonPathEscapes},
			{"src/x/passwd", ReasonPathEscapes}, // src/x -> ../etc (a real symlink)
			{"srcx/a.go", ReasonPathMismatch},
		} {
			err := Match(r, Call{Tool: "Edit", Input: map[string]any{"file_path": tr.proj + "/" + row.path}, Cwd: tr.proj, ProjectDir: tr.proj})
			if got := ReasonOf(err); got != row.want || (err == nil) != (row.want == "") {
				t.Errorf("%q: got %v, want %q", row.path, err, row.want)
			}
			t.Logf("%-24q -> %v", row.path, orAllowed(err))
		}
	})
	t.Run("WebFetch(domain:pkg.go.dev)", func(t *testing.T) {
		r, err := Parse("WebFetch(domain:pkg.go.dev)")
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range []struct{ url, want string }{
			{"https://pkg.go.dev/x", ""},
			{"https://pkg.go.dev.evil.example/", ReasonDomainMismatch},
			{"https://evil.example/?pkg.go.dev", ReasonDomainMismatch},
			{"https://pkg.go.dev@evil.example/", ReasonBadURL},
		} {
			err := Match(r, Call{Tool: "WebFetch", Input: map[string]any{"url": row.url}})
			if got := ReasonOf(err); got != row.want || (err == nil) != (row.want == "") {
				t.Errorf("%q: got %v, want %q", row.url, err, row.want)
			}
			t.Logf("%-36q -> %v", row.url, orAllowed(err))
		}
	})
}

func orAllowed(err error) any {
	if err == nil {
		return "allowed"
	}
	return err
}

// FuzzMatchWord checks the in-word wildcard matcher against a regexp built
// from the same pieces.
func FuzzMatchWord(f *testing.F) {
	seeds := [][2]string{{"test*", "test:unit"}, {"*", ""}, {"a*b*c", "abc"}, {"a*b*c", "aXbYc"}, {"*.go", "x.go"}, {"a*a", "a"}}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		if len(pat) > 64 || len(s) > 64 || !utf8.ValidString(pat) || !utf8.ValidString(s) {
			return // shellparse words and rule pieces are valid UTF-8
		}
		w := bashWord{lits: strings.Split(pat, "*")}
		var re strings.Builder
		re.WriteString(`(?s)\A`)
		for i, l := range w.lits {
			if i > 0 {
				re.WriteString(".*")
			}
			re.WriteString(regexp.QuoteMeta(l))
		}
		re.WriteString(`\z`)
		want := regexp.MustCompile(re.String()).MatchString(s)
		if got := matchWord(w, s); got != want {
			t.Fatalf("matchWord(%q, %q) = %v, regexp says %v", pat, s, got, want)
		}
	})
}

// FuzzMatchBash feeds command strings through shellparse and a pinned rule:
// whatever the input, a match implies a simple command, the pinned
// executable, the rule's words, and only named or harmless redirections.
func FuzzMatchBash(f *testing.F) {
	for _, s := range []string{"git status", "git status; id", "git status > f", "git log -p *.go", "LANG=C git log x", "git log 2>&1", "git log >&2 <&0"} {
		f.Add(s)
	}
	root, err := os.MkdirTemp("", "scopefuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	bin, proj := filepath.Join(root, "bin"), filepath.Join(root, "proj")
	for _, d := range []string{bin, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		f.Fatal(err)
	}
	env := shellparse.Env{Cwd: proj, ProjectDir: proj, Path: bin, Trusted: []string{bin}}
	var rules []Rule
	for _, s := range []string{"Bash(git status)", "Bash(git log *)", "Bash(git * x)", "Bash(LANG=C git log *)", "Bash(git log >out)"} {
		r, err := Parse(s)
		if err != nil {
			f.Fatal(err)
		}
		if r, err = r.Pin(env); err != nil {
			f.Fatal(err)
		}
		rules = append(rules, r)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		res := shellparse.Analyze(cmd, env)
		for _, r := range rules {
			err := Match(r, Call{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: proj, ProjectDir: proj, Shell: &res})
			if err != nil {
				if ReasonOf(err) == "" {
					t.Fatalf("%s / %q: error without reason: %v", r, cmd, err)
				}
				continue
			}
			if res.Verdict != shellparse.Simple || res.Executable != r.Executable() || len(res.Argv) == 0 || res.Argv[0].Value != "git" {
				t.Fatalf("%s matched %q: %+v", r, cmd, res)
			}
			for _, rd := range res.Redirects {
				if rd.Writes && rd.Target != "/dev/null" && rd.Target != "out" {
					t.Fatalf("%s matched %q with redirection %+v", r, cmd, rd)
				}
			}
		}
	})
}
