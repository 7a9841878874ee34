package shellparse

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// invocation is one run of a recording stub.
type invocation struct {
	path string
	args []string
}

func parseRecords(t *testing.T, data []byte) []invocation {
	t.Helper()
	fields := strings.Split(string(data), "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	var out []invocation
	for len(fields) > 0 {
		if len(fields) < 2 {
			t.Fatalf("truncated record %q", data)
		}
		n, err := strconv.Atoi(fields[1])
		if err != nil || len(fields) < 2+n {
			t.Fatalf("bad record %q", data)
		}
		out = append(out, invocation{path: fields[0], args: fields[2 : 2+n]})
		fields = fields[2+n:]
	}
	return out
}

// TestConfirmWithBash runs every simple corpus row through real bash, with
// PATH holding only recording stubs and the builtins the rows use disabled,
// and checks that bash ran exactly one program, the one we resolved, with
// the argv we computed, and created the files our writing redirects name.
func TestConfirmWithBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	fx := newFixture(t)
	rows := loadCorpus(t)
	// Disabled so that bash looks the name up in PATH and runs our stub.
	const disable = "enable -n echo printf test [ pwd true false kill type cd umask ulimit exit wait :\n"
	recFile := filepath.Join(fx.root, "record")
	ran, skipped := 0, 0
	for _, r := range rows {
		if r.verdict != Simple {
			continue
		}
		for _, in := range r.inputs {
			cmd := fx.repl.Replace(in)
			res := Analyze(cmd, fx.env)
			if res.Verdict != Simple {
				continue // TestCorpus reports it
			}
			if reason := unsafeToRun(fx, res); reason != "" {
				skipped++
				t.Logf("skip %q: %s", in, reason)
				continue
			}
			dir := fx.env.Cwd
			for _, w := range res.Argv {
				if w.Glob {
					dir = filepath.Join(fx.root, "empty") // no file matches, the pattern stays
				}
			}
			_ = os.Remove(recFile)
			c := exec.Command(bash, "-c", disable+cmd)
			c.Dir = dir
			c.Env = []string{"PATH=" + fx.env.Path, "HOME=" + fx.env.Home, "LG_RECORD=" + recFile, "LC_ALL=C.UTF-8"}
			var stderr bytes.Buffer
			c.Stderr = &stderr
			_ = c.Run()
			ran++
			data, _ := os.ReadFile(recFile)
			recs := parseRecords(t, data)
			where := r.file + ":" + strconv.Itoa(r.line) + " " + strconv.Quote(in)
			if len(recs) != 1 {
				t.Errorf("%s: bash ran %d programs, want 1; stderr: %s", where, len(recs), stderr.String())
				continue
			}
			got := recs[0]
			if res.Builtin {
				if filepath.Base(got.path) != res.Argv[0].Value {
					t.Errorf("%s: bash ran %s, want the stub for builtin %s", where, got.path, res.Argv[0].Value)
				}
			} else if p, _ := filepath.EvalSymlinks(got.path); p != res.Executable {
				t.Errorf("%s: bash ran %s, we resolved %s", where, p, res.Executable)
			}
			var want []string
			for _, w := range res.Argv[1:] {
				want = append(want, w.Value)
			}
			if !reflect.DeepEqual(got.args, want) && !(len(got.args) == 0 && len(want) == 0) {
				t.Errorf("%s: bash passed %q, we computed %q", where, got.args, want)
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
					t.Errorf("%s: bash did not create %s: %v", where, target, err)
				}
			}
		}
	}
	t.Logf("confirmed %d simple inputs with bash, skipped %d", ran, skipped)
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
