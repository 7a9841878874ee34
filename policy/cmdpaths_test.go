package policy

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// FuzzCommandPaths: whatever the text of a git setting or a .envrc (the
// hook reads both on every call), commandPaths returns, never
// panic, and give only paths below the top.
func FuzzCommandPaths(f *testing.F) {
	for _, s := range []string{
		`sh -c 'cl/clean.sh "$1"' -- %f`, `python3 -mtools2.conv`, `PYTHONPATH=tools python3 -m conv`,
		`eval "$(./gen/genenv)"`, "source_env_if_exists \\\n .envrc.cont", `export $(grep -v '^#' .env.shared | xargs)`,
		`for f in .envrc.d/*.sh; do source_env "$f"; done`, "$(", "`", `"$(git rev-parse --show-toplevel)/fm/fmt.sh"`, `use flake ./nix`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		const top = "/p"
		for _, p := range commandPaths(text, top, top, envrc) {
			if !strings.HasPrefix(p, top+"/") {
				t.Fatalf("%q gave %q, not below the top", text, p)
			}
		}
	})
}

// TestCommandPathsForms: the forty-eighth attack run's forms, each a
// command a hook, an MCP server or a .envrc ran after a call rewrote the
// file it names (python3, node, git and direnv ran them): a cd before
// the command (in sh -c's quotes too, and back with cd - or popd), an
// option naming the directory it runs in, python's -m in a cluster of flags and an option's value
// before the script, node's file options and its module resolution, a
// nested .envrc's $PWD and source_up, a load that is a link. Controls: a
// file a linter is given is not code it runs, nor an option's value a
// script, nor a directory source_env names (its .envrc is).
func TestCommandPathsForms(t *testing.T) {
	proj := realDir(t, t.TempDir())
	testfs.Tree(t, proj, nil, 0o644, "shared/.envrc", "tools/dev-env.sh", "svc/api/.envrc")
	testfs.Write(t, filepath.Join(proj, "srv/package.json"), []byte(`{"main": "dist/main.js"}`), 0o644)
	if err := os.Symlink("../../tools/dev-env.sh", filepath.Join(proj, "svc/api/dev.sh")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd, dir  string
		d         *dialect
		want, not []string
	}{
		{"cd web && python3 check.py", "", nil, []string{"web/check.py", "web"}, nil},
		{"(cd web && python3 lint.py); python3 top.py", "", nil, []string{"web/lint.py", "top.py"}, nil},
		{"sh -c 'cd web && python3 check.py'", "", nil, []string{"web/check.py"}, nil},
		{"cd web; cd ..; cd -; python3 a.py", "", nil, []string{"web/a.py", "a.py"}, nil},
		{"pushd web; pushd ../api; popd; python3 b.py", "", nil, []string{"web/b.py", "api/b.py"}, nil},
		{"make -Cweb all && make -s -C tools/sync", "", nil, []string{"tools/sync"}, []string{"Makefile", "web/Makefile"}},
		{"uv --directory weather run weather.py", "", nil, []string{"weather/weather.py"}, nil},
		{"uv run --directory=sub srv.py", "", nil, []string{"sub/srv.py"}, nil},
		{"env -C q6dir node q6.js", "", nil, []string{"q6dir/q6.js"}, nil},
		{"poetry -C pp run python main.py", "", nil, []string{"pp/main.py"}, nil},
		{"python3 -um srv", "", nil, []string{"srv.py", "srv"}, []string{"-um"}},
		{"python3 -W ignore serve", "", nil, []string{"serve"}, []string{"ignore"}},
		{"python -m app.tools.lint", "", nil, []string{"app/tools/lint.py", "app/tools/lint", "app/tools", "app/tools/__init__.py", "app/__init__.py"}, []string{"app"}},
		{"node --env-file=.env.mcp srv.js", "", nil, []string{".env.mcp", "srv.js"}, nil},
		{"node --env-file .env.mcp --require hook.js srv.js", "", nil, []string{".env.mcp", "hook.js", "srv.js"}, nil},
		{"node server", "", nil, []string{"server", "server.js", "server/index.js"}, nil},
		{"cd srv && node .", "", nil, []string{"srv/index.js", "srv/dist/main.js"}, nil},
		{"node --eval go", "", nil, nil, []string{"go"}},
		{"npx eslint --max-warnings 0 index.js && prettier --check app.ts", "", nil, nil, []string{"index.js", "app.ts", "0"}},
		{"source_up env.common\nsource_env_if_exists \"$PWD/dev.local\"\nsource_env ../../shared", "svc/api", envrc,
			[]string{"svc/env.common", "env.common", "svc/api/dev.local", "shared/.envrc"}, []string{"shared", "dev.local"}},
		{"source_env_if_exists dev.sh", "svc/api", envrc, []string{"svc/api/dev.sh", "tools/dev-env.sh"}, nil},
	} {
		got := commandPaths(c.cmd, filepath.Join(proj, c.dir), proj, c.d)
		for _, w := range c.want {
			if !slices.Contains(got, filepath.Join(proj, w)) {
				t.Errorf("%q: commandPaths = %q, want %s in it", c.cmd, got, w)
			}
		}
		for _, n := range c.not {
			if slices.Contains(got, filepath.Join(proj, n)) {
				t.Errorf("control: %q: commandPaths = %q holds %s", c.cmd, got, n)
			}
		}
	}
}

// nestedCds is a hook of 64 KiB of eight cds before an sh -c, nested four
// deep: each command is read in every directory a cd went to, and again
// in each text it holds.
func nestedCds() string {
	cds := "cd a; cd b; cd c; cd d; cd e; cd f; cd g; cd h; "
	inner := "python3 x.py"
	for range 4 {
		inner = cds + "sh -c '" + strings.ReplaceAll(inner, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("python3 first.py\n")
	for b.Len() < 64<<10 {
		b.WriteString(inner + "\n")
	}
	return b.String()
}

// TestCommandReadsBounded: a reading reads at most maxCommandReads simple
// commands (the hook above took a second of every hook call before the
// bound, BenchmarkCommandPathsNestedCds), and what comes before the bound
// is found (control).
func TestCommandReadsBounded(t *testing.T) {
	reads := maxCommandReads
	got := commandPathsWithin(nestedCds(), "/p", "/p", nil, &reads, nil)
	if reads != 0 {
		t.Errorf("the hook of nested cds left %d of %d reads: its reading was not bounded by them", reads, maxCommandReads)
	}
	if !slices.Contains(got, "/p/first.py") || !slices.Contains(got, "/p/a/b/c/d/e/f/g/h/x.py") {
		t.Errorf("control: commandPaths gave %d paths, want first.py and a/b/c/d/e/f/g/h/x.py among them", len(got))
	}
}

func BenchmarkCommandPathsNestedCds(b *testing.B) {
	text := nestedCds()
	for b.Loop() {
		commandPaths(text, "/p", "/p", nil)
	}
}

// TestDirOptionsReadLinearly: each directory option (make -C) is read
// through once, as a chain to maxDirHops, where each read what followed it
// again (the seventy-fifth attack run's make -C. a thousand times, 4 KB in
// a committed .envrc, took 3 s of every hook call, cubic in the options).
// The bytes allocated are the measure: a thousand options cost at most
// thirty times a hundred. Control: a path after two directory options is
// read in the directory they name.
func TestDirOptionsReadLinearly(t *testing.T) {
	proj := realDir(t, t.TempDir())
	testfs.Tree(t, proj, nil, 0o644, "a/b/run.sh")
	if got := commandPaths("make -C a -C b ./run.sh", proj, proj, nil); !slices.Contains(got, filepath.Join(proj, "a/b/run.sh")) {
		t.Errorf("control: make -C a -C b ./run.sh: %v, want a/b/run.sh among them", got)
	}
	text := func(n int) string { return "make" + strings.Repeat(" -C.", n) + " ./run.sh" }
	allocated := func(s string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		commandPaths(s, proj, proj, nil)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(text(100)), allocated(text(1000))
	if large > 30*small {
		t.Errorf("1,000 directory options allocate %d bytes, 100 %d: not linear", large, small)
	}
}
