package shellparse

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestChainParts: a list of simple commands keeps its parts, each judged
// in the cwd a cd of the chain moved to; anything else in a chain, and a cd
// that could fail quietly, leaves no parts.
func TestChainParts(t *testing.T) {
	env, proj := chainFixture(t)
	for _, c := range []struct {
		cmd  string
		ops  []string
		cwds []string // per part, relative to proj ("" = proj)
	}{
		{"ls | head", []string{"|"}, []string{"", ""}},
		{"git status && git diff", []string{"&&"}, []string{"", ""}},
		{"ls 2>&1 | wc -l", []string{"|"}, []string{"", ""}},
		{"cat a || cat b; ls >/dev/null", []string{"||", ";"}, []string{"", "", ""}},
		{"cd sub && ls && cat x", []string{"&&", "&&"}, []string{"", "sub", "sub"}},
		{"ls\ncat a", []string{";"}, []string{"", ""}},
		{"ls |& head", []string{"|&"}, []string{"", ""}},
	} {
		res := Analyze(c.cmd, env)
		if res.Verdict != Chained || len(res.Parts) != len(c.cwds) {
			t.Errorf("%q: %s, %d parts (%s)", c.cmd, res.Verdict, len(res.Parts), res.Reason)
			continue
		}
		if !reflect.DeepEqual(res.Ops, c.ops) {
			t.Errorf("%q: ops %q, want %q", c.cmd, res.Ops, c.ops)
		}
		for i, p := range res.Parts {
			want := filepath.Join(proj, c.cwds[i])
			if p.Verdict != Simple || filepath.Clean(p.Cwd) != want {
				t.Errorf("%q part %d: %s in %s, want simple in %s", c.cmd, i, p.Verdict, p.Cwd, want)
			}
		}
	}
	for _, cmd := range []string{
		"ls | sh", "(ls; cat a)", "{ ls; }", "ls & cat a", "! ls && cat a", "ls $(id) && cat a", "f() { ls; }; f",
		"cd sub; ls", "cd sub | ls", "ls | cd sub", "cd && ls", "cd - && ls", "cd nosuchdir && ls", "cd -P sub && ls",
		"ls && eval x", "cat <<EOF | head\nx\nEOF", "ls # c\n cat a", "curl x | python3", "ls | xargs rm",
		"printf -v PATH /tmp && git status", "pushd sub && ls", "umask 000 && touch x", "kill 1 && ls",
	} {
		if res := Analyze(cmd, env); res.Verdict == Simple || len(res.Parts) > 0 && allSimple(res.Parts) && !hasInterpreter(res.Parts) {
			t.Errorf("%q: %s with %d parts", cmd, res.Verdict, len(res.Parts))
		}
	}
}

// TestChainSaysWhyNotParts: a chain that cannot be judged part by part says
// which part or shape keeps it whole (the operator alone is not why a
// grant cannot cover it); a chain of simple parts says nothing more.
func TestChainSaysWhyNotParts(t *testing.T) {
	env, _ := chainFixture(t)
	for _, c := range []struct{ cmd, why string }{
		{"command -v zip && ls", "the part `command -v zip`: builtin command"},
		{"ls && eval x", "the part `eval x`: builtin eval"},
		{"cd && ls", "cd with no directory goes to the home directory"},
		{"cd - && ls", "cd - goes to the previous directory"},
		{"cd sub; ls", "cd followed by ;"},
		{"ls | cd sub", "cd in a pipeline"},
		{"cd nosuchdir && ls", "cd nosuchdir: not an existing directory"},
		{"cd sub sub && ls", "cd with more than one word"},
		{"(ls) && cat a", "subshell"},
		{"{ ls; } > f && ls", "command group"},
		{"pushd sub && ls", "the builtin pushd changes"},
		{"ls & cat a", "in the background"},
		{"! ls && cat a", "negated"},
	} {
		res := Analyze(c.cmd, env)
		if res.Verdict != Chained || len(res.Parts) > 0 {
			t.Errorf("%q: %s with %d parts", c.cmd, res.Verdict, len(res.Parts))
			continue
		}
		if !strings.Contains(res.Reason, "cannot be judged part by part: ") || !strings.Contains(res.Reason, c.why) {
			t.Errorf("%q: reason %q, want it to say %q", c.cmd, res.Reason, c.why)
		}
	}
	// Controls: the same shapes made of simple parts keep their parts and
	// say only what joins them.
	for _, cmd := range []string{"cd sub && ls", "ls && cat a", "ls | head", "which zip && ls"} {
		res := Analyze(cmd, env)
		if res.Verdict != Chained || len(res.Parts) == 0 || strings.Contains(res.Reason, "part by part") {
			t.Errorf("%q: %s, %d parts, reason %q", cmd, res.Verdict, len(res.Parts), res.Reason)
		}
	}
}

// chainFixture is the fixture's environment, its cwd the project, which
// holds a directory sub.
func chainFixture(t *testing.T) (Env, string) {
	t.Helper()
	fx := newFixture(t)
	env := fx.env
	proj := filepath.Join(fx.root, "project")
	env.Cwd = proj
	if err := os.MkdirAll(filepath.Join(proj, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return env, proj
}

func allSimple(ps []Result) bool {
	for _, p := range ps {
		if p.Verdict != Simple {
			return false
		}
	}
	return true
}

// hasInterpreter: a part that is a shell or interpreter reading a script on
// stdin is simple to the parser; a scope never covers it (policy refuses
// such rules), which the engine's tests show.
func hasInterpreter(ps []Result) bool {
	for _, p := range ps {
		switch filepath.Base(p.Argv[0].Value) {
		case "sh", "bash", "python3", "xargs":
			return true
		}
	}
	return false
}

// TestChainCanonicalMatchesBash: a chain's canonical form, run by real
// bash, runs the same programs with the same arguments, in the same order
// and directories, as the chain the model wrote.
func TestChainCanonicalMatchesBash(t *testing.T) {
	fx := newFixture(t)
	o := newBashOracle(t, fx)
	for _, cmd := range []string{
		"ls | head -n 3", "git status && git diff --stat", "cat 'a b' || echo no; ls -la",
		"echo x >/dev/null && ls $'-l'", "ls *.nomatch | wc -l", "cd sub && ls && cat x",
		"git log --oneline -3 2>&1 | head", "true && false || ls",
	} {
		dir, err := os.MkdirTemp(filepath.Join(fx.root, "runs"), "c")
		if err != nil {
			t.Fatal(err)
		}
		_ = os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
		for _, f := range []string{"a b", "sub/x"} {
			_ = os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644)
		}
		res := Analyze(cmd, o.env(dir))
		if len(res.Parts) == 0 {
			t.Errorf("%q: no parts (%s: %s)", cmd, res.Verdict, res.Reason)
			continue
		}
		canon, err := res.CanonicalChain(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, want := normalRecords(dir, o.records(t, dir, canon)), normalRecords(dir, o.records(t, dir, cmd))
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n model's text ran %v\n canonical %q ran %v", cmd, want, canon, got)
		}
		if strings.Contains(canon, "sub") && !strings.Contains(canon, "cd '"+filepath.Join(dir, "sub")+"'") {
			t.Errorf("%q: cd not made absolute: %s", cmd, canon)
		}
	}
}

// records runs cmd with bash in dir, every builtin disabled (the stubs on
// PATH record each program run, each process in a file of its own), and
// returns what ran.
func (o *bashOracle) records(t *testing.T, dir, cmd string) []invocation {
	t.Helper()
	recDir, err := os.MkdirTemp(filepath.Join(o.fx.root, "runs"), "rec")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(recDir)
	c := exec.Command(o.bash, "-c", o.prelude+"enable -n eval set enable\n"+cmd)
	c.Dir = dir
	c.Env = []string{"PATH=" + o.fx.env.Path, "HOME=" + o.fx.env.Home, "LG_RECORD_DIR=" + recDir, "LC_ALL=C.UTF-8"}
	_ = c.Run()
	files, _ := os.ReadDir(recDir)
	var recs []invocation
	for _, f := range files {
		data, _ := os.ReadFile(filepath.Join(recDir, f.Name()))
		r, err := parseRecords(data)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r...)
	}
	return recs
}

// normalRecords sorts what ran (a pipeline's parts start together) and
// writes a cd stub's directory as the absolute path bash's cd would use.
func normalRecords(dir string, recs []invocation) []string {
	var out []string
	for _, r := range recs {
		args := r.args
		if filepath.Base(r.path) == "cd" && len(args) == 1 && !filepath.IsAbs(args[0]) {
			args = []string{filepath.Join(dir, args[0])}
		}
		out = append(out, r.path+"\x00"+strings.Join(args, "\x00"))
	}
	sort.Strings(out)
	return out
}
