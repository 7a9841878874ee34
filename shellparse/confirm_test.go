package shellparse

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// invocation is one run of a recording stub.
type invocation struct {
	path string
	args []string
}

func parseRecords(data []byte) ([]invocation, error) {
	fields := strings.Split(string(data), "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	var out []invocation
	for len(fields) > 0 {
		if len(fields) < 2 {
			return nil, fmt.Errorf("truncated record %q", data)
		}
		n, err := strconv.Atoi(fields[1])
		if err != nil || len(fields) < 2+n {
			return nil, fmt.Errorf("bad record %q", data)
		}
		out = append(out, invocation{path: fields[0], args: fields[2 : 2+n]})
		fields = fields[2+n:]
	}
	return out, nil
}

// bashOracle runs commands the analysis calls simple through real bash and
// reports any difference from the analysis. It is the one harness of the
// confirm test, the differential fuzzer and the random differential test.
//
// Each run gets a fresh, empty working directory; PATH holds only the
// fixture's recording stubs; every bash builtin is disabled (enable -n), so
// a builtin the analysis vouched for runs its stub and a builtin it did not
// expect (eval, exec, source...) is "command not found"; set -f keeps glob
// words as written, so argv compares exactly.
type bashOracle struct {
	bash    string
	fx      *fixture
	prelude string
	runs    int
	// analyze is Analyze; TestOracleCatchesDifferentials swaps in the
	// analysis an older, wrong parser gave, to show the oracle fails it.
	analyze func(string, Env) Result
}

func newBashOracle(tb testing.TB, fx *fixture) *bashOracle {
	tb.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		tb.Skip("bash not installed")
	}
	// Every builtin this bash has, also those the analysis does not know.
	out, err := exec.Command(bash, "-c", "enable").Output()
	if err != nil {
		tb.Fatalf("bash -c enable: %v", err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if n := strings.TrimPrefix(l, "enable "); n != "set" && n != "enable" && n != "eval" {
			names = append(names, n)
		}
	}
	if len(names) < 40 {
		tb.Fatalf("bash lists only %d builtins: %q", len(names), out)
	}
	// eval stays on until the command itself (see run).
	// Globbing stays on: the analysis expands globs as bash does (an
	// empty run directory matches nothing, so both keep the word).
	prelude := "enable -n " + strings.Join(names, " ") + "\n"
	return &bashOracle{bash: bash, fx: fx, prelude: prelude, analyze: Analyze}
}

// env is the analysis environment for a run in dir.
func (o *bashOracle) env(dir string) Env {
	e := o.fx.env
	e.Cwd = dir
	return e
}

// check analyses cmd as run in a fresh directory and, when it is simple and
// safe to run, runs it with bash. ran says whether bash ran; problem
// describes any disagreement ("" when bash did exactly what the analysis
// said).
func (o *bashOracle) check(tb testing.TB, cmd string) (res Result, ran bool, problem string) {
	tb.Helper()
	dir, err := os.MkdirTemp(filepath.Join(o.fx.root, "runs"), "r")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	res = o.analyze(cmd, o.env(dir))
	if res.Verdict != Simple {
		return res, false, ""
	}
	if reason := unsafeToRun(o.fx, res); reason != "" {
		return res, false, ""
	}
	allowed := map[string]bool{}
	for _, rd := range res.Redirects {
		if (rd.Op == ">&" || rd.Op == "<&") && !rd.Writes || strings.HasPrefix(rd.Target, "/dev/") {
			continue
		}
		target := rd.Target
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		allowed[target] = true
		if !rd.Writes {
			// A missing input file would stop bash before the command runs.
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				_ = os.WriteFile(target, []byte("x\n"), 0o644)
			}
		}
	}
	// Claude Code runs the command as `eval 'COMMAND'` inside bash -c;
	// both ways must agree with the analysis, and so must the canonical
	// command the hook rewrites a scoped call into.
	canonical, err := res.Canonical(dir)
	if err != nil {
		return res, true, "no canonical form: " + err.Error()
	}
	for _, mode := range []string{"-c", "eval", "canonical"} {
		text := cmd
		if mode == "canonical" {
			text, mode = canonical, "-c"
		}
		if problem := o.run(dir, mode, text, res); problem != "" {
			return res, true, "bash " + mode + ": " + problem + " (command " + strconv.Quote(text) + ")"
		}
	}
	// Nothing else appeared in the working directory.
	var extra []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !allowed[p] {
			extra = append(extra, p)
		}
		return nil
	})
	if len(extra) > 0 {
		return res, true, fmt.Sprintf("bash created files the analysis did not name: %q", extra)
	}
	return res, true, ""
}

// run runs cmd once with bash in dir, directly (mode "-c") or through the
// eval builtin (mode "eval"), and compares what ran with res.
func (o *bashOracle) run(dir, mode, cmd string, res Result) string {
	script := o.prelude + "enable -n eval set enable\n" + cmd
	if mode == "eval" {
		script = o.prelude + "enable -n set enable\neval '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
	}
	rec := filepath.Join(o.fx.root, "runs", filepath.Base(dir)+".record")
	defer os.Remove(rec)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, o.bash, "-c", script)
	c.Dir = dir
	c.Env = []string{"PATH=" + o.fx.env.Path, "HOME=" + o.fx.env.Home, "LG_RECORD=" + rec, "LC_ALL=C.UTF-8"}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	_ = c.Run()
	o.runs++
	data, _ := os.ReadFile(rec)
	recs, err := parseRecords(data)
	if err != nil {
		return err.Error()
	}
	if len(recs) == 0 {
		// bash could not open an analysed redirect (a directory, a closed
		// descriptor) and ran nothing: it says so naming that target.
		for _, rd := range res.Redirects {
			if strings.Contains(stderr.String(), ": "+rd.Target+": ") {
				return ""
			}
		}
	}
	if len(recs) != 1 {
		return fmt.Sprintf("bash ran %d programs %v, want 1; stderr: %s", len(recs), recs, stderr.String())
	}
	got := recs[0]
	if res.Builtin {
		if filepath.Base(got.path) != res.Argv[0].Value {
			return fmt.Sprintf("bash ran %s, want the stub for builtin %s", got.path, res.Argv[0].Value)
		}
	} else if p, _ := filepath.EvalSymlinks(got.path); p != res.Executable {
		return fmt.Sprintf("bash ran %s, we resolved %s", p, res.Executable)
	}
	var want []string
	for _, w := range res.Argv[1:] {
		want = append(want, w.Value)
	}
	if !reflect.DeepEqual(got.args, want) && !(len(got.args) == 0 && len(want) == 0) {
		return fmt.Sprintf("bash passed %q, we computed %q", got.args, want)
	}
	for _, rd := range res.Redirects {
		if !rd.Writes || strings.HasPrefix(rd.Target, "/dev/") {
			continue
		}
		target := rd.Target
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		if _, err := os.Stat(target); err != nil {
			return fmt.Sprintf("bash did not create %s: %v", target, err)
		}
	}
	for _, rd := range res.Redirects {
		if rd.Writes && !strings.HasPrefix(rd.Target, "/dev/") {
			target := rd.Target
			if !filepath.IsAbs(target) {
				target = filepath.Join(dir, target)
			}
			_ = os.Remove(target) // the next mode must create it again
		}
	}
	return ""
}

// TestConfirmWithBash runs every simple corpus row through real bash (see
// bashOracle) and checks that bash ran exactly one program, the one we
// resolved, with the argv we computed, and created exactly the files our
// writing redirects name.
func TestConfirmWithBash(t *testing.T) {
	fx := newFixture(t)
	o := newBashOracle(t, fx)
	ran := 0
	for _, r := range loadCorpus(t) {
		if r.verdict != Simple {
			continue
		}
		for _, in := range r.inputs {
			_, did, problem := o.check(t, fx.repl.Replace(in))
			if did {
				ran++
			}
			if problem != "" {
				t.Errorf("%s:%d %q: %s", r.file, r.line, in, problem)
			}
		}
	}
	t.Logf("confirmed %d simple inputs with bash", ran)
	if ran < 200 {
		t.Errorf("only %d inputs confirmed with bash", ran)
	}
}

// unsafeToRun keeps the confirm test inside the fixture: redirects may
// only name files below it or /dev/null, the program must be a stub.
func unsafeToRun(fx *fixture, res Result) string {
	if !res.Builtin && !strings.HasPrefix(res.Executable, fx.root+string(filepath.Separator)) {
		return "executable outside the fixture"
	}
	for _, rd := range res.Redirects {
		t := rd.Target
		switch {
		case rd.Op == ">&" && !rd.Writes:
		case t == "/dev/null":
		case filepath.IsAbs(t) && !strings.HasPrefix(t, fx.root+string(filepath.Separator)):
			return "redirect outside the fixture: " + t
		case strings.Contains(t, ".."):
			return "redirect with ..: " + t
		}
	}
	return ""
}
