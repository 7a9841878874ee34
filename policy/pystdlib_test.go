package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// TestPythonStdlibTable: pythonStdlib is sorted (isPythonStdlib searches
// it) and holds every name of the real python3's
// sys.stdlib_module_names, where there is a python3 (a name a later
// python adds must be added to the table).
func TestPythonStdlibTable(t *testing.T) {
	if !slices.IsSorted(pythonStdlib) {
		t.Fatal("pythonStdlib is not sorted")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	out, err := exec.Command(py, "-c", "import sys; print('\\n'.join(sorted(sys.stdlib_module_names)))").Output()
	if err != nil {
		t.Skipf("python3 has no sys.stdlib_module_names: %v", err)
	}
	for _, n := range strings.Fields(string(out)) {
		if !isPythonStdlib(n) {
			t.Errorf("python3's standard library has %s, pythonStdlib does not", n)
		}
	}
	for _, n := range []string{"app", "nbstripout", "pre_commit", "requests"} {
		if isPythonStdlib(n) {
			t.Errorf("control: isPythonStdlib(%s)", n)
		}
	}
}

// TestCommandPathsPythonTop: python's -m and -c put the directory they
// run in first on sys.path, so a module there named as one of the
// standard library's is what python imports: each of its names there is
// protected, as NAME.py and NAME/ (the ninety-third attack run's
// argparse.py and logging.py); not with -P or -I (python leaves the
// directory off), nor for a script in another directory (its own
// directory comes first), nor names of no standard module (controls).
func TestCommandPathsPythonTop(t *testing.T) {
	const top = "/p"
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{`"/usr/bin/python3" -m nbstripout`, true},
		{`python3 -mpre_commit hook-impl`, true},
		{`python3 -c 'import sys'`, true},
		{`env A=1 python3.11 -m tool`, true},
		{`python3 -I -m nbstripout`, false},
		{`python3 -Pm nbstripout`, false},
		{`python3 -P -c 'import sys'`, false},
		{`python3 tools/conv.py`, false},
		{`nbstripout`, false},
	} {
		got := commandPaths(c.cmd, top, top, nil)
		for _, rel := range []string{"argparse.py", "logging.py", "logging", "json", "_pydecimal.py"} {
			if has := slices.Contains(got, filepath.Join(top, rel)); has != c.want {
				t.Errorf("%q: commandPaths holds %s: %v, want %v", c.cmd, rel, has, c.want)
			}
		}
		for _, rel := range []string{"app.py", "app", "setup.py"} {
			if slices.Contains(got, filepath.Join(top, rel)) {
				t.Errorf("control: %q: commandPaths holds %s", c.cmd, rel)
			}
		}
	}
}

// TestHooksPathsPythonModuleTop: the ninety-third attack run's global
// textconv that runs python -m (nbstripout --install --global writes
// `"/usr/bin/python3" -m nbstripout`; here json.tool, which imports
// argparse): real git and python3 are the oracle that an argparse.py at
// the top of the working tree runs on the user's git diff; HooksPaths
// holds it and Classify calls it executable configuration. Control: app.py
// beside it stays writable, and with -P it is neither run nor held.
func TestHooksPathsPythonModuleTop(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	for _, safe := range []bool{false, true} {
		root := realDir(t, t.TempDir())
		home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
		mark := filepath.Join(root, "ran")
		opt := "-m"
		if safe {
			opt = "-P -m"
		}
		testfs.Write(t, filepath.Join(home, ".gitconfig"), []byte("[diff \"js\"]\n\ttextconv = \""+py+"\" "+opt+" json.tool\n"), 0o644)
		testfs.Write(t, filepath.Join(home, ".config", "git", "attributes"), []byte("*.json diff=js\n"), 0o644)
		testfs.Write(t, filepath.Join(proj, "a.json"), []byte("{}\n"), 0o644)
		run := func(args ...string) {
			cmd := exec.Command(git, args...)
			cmd.Dir = proj
			cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}
			_ = cmd.Run()
		}
		run("init", "-q", "-b", "main")
		run("add", "a.json")
		run("commit", "-qm", "x")
		testfs.Write(t, filepath.Join(proj, "argparse.py"), []byte("open('"+mark+"', 'a').write('argparse\\n')\nfrom importlib import import_module\n"), 0o644)
		testfs.Write(t, filepath.Join(proj, "a.json"), []byte("{\"a\": 1}\n"), 0o644)
		run("diff")
		b, _ := os.ReadFile(mark)
		if ran := strings.Contains(string(b), "argparse"); ran == safe {
			t.Fatalf("the oracle (-P %v): git diff ran the top's argparse.py: %v", safe, ran)
		}
		got := HooksPaths(proj, home, nil)
		pl := Places{Home: home, HooksPaths: got}.Prepare()
		if c := pl.Classify(filepath.Join(proj, "argparse.py")); c.Protected() == safe {
			t.Errorf("-P %v: Classify(argparse.py) = %+v", safe, c)
		}
		if c := pl.Classify(filepath.Join(proj, "app.py")); c.Protected() {
			t.Errorf("control: Classify(app.py) = %+v, want it writable", c)
		}
	}
}

// preCommitHook is the hook script pre-commit install writes (its
// template, as pre-commit 3 and 4 fill it in): INSTALL_PYTHON is
// assigned, then run with -mpre_commit.
const preCommitHook = `#!/usr/bin/env bash
# File generated by pre-commit: https://pre-commit.com
# ID: 138fd403232d2ddd5efb44317e38bf03

# start templated
INSTALL_PYTHON=@PY@
ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)
# end templated

HERE="$(cd "$(dirname "$0")" && pwd)"
ARGS+=(--hook-dir "$HERE" -- "$@")

if [ -x "$INSTALL_PYTHON" ]; then
    exec "$INSTALL_PYTHON" -mpre_commit "${ARGS[@]}"
elif command -v pre-commit > /dev/null; then
    exec pre-commit "${ARGS[@]}"
else
    echo '` + "`pre-commit`" + ` not found.  Did you forget to activate your virtualenv?' 1>&2
    exit 1
fi
`

// TestHookProgramsPreCommitTemplate: pre-commit's own hook script runs
// "$INSTALL_PYTHON" -mpre_commit from the top of the working tree, so a
// pre_commit.py or logging.py there runs on the user's git commit (the
// ninety-third attack run's; real git and python3 the oracle): its
// variable is read for the interpreter it names, and the top's
// pre_commit.py and standard-library names are held. Controls: app.py
// is not; a hook whose variable names another program with no -m holds
// no standard-library name.
func TestHookProgramsPreCommitTemplate(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	home := realDir(t, t.TempDir())
	proj := filepath.Join(home, "proj")
	mark := filepath.Join(home, "ran")
	env := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}
	run := func(args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = proj, env
		_ = cmd.Run()
	}
	testfs.Write(t, filepath.Join(proj, "README"), []byte("x\n"), 0o644)
	run("init", "-q", "-b", "main")
	testfs.Write(t, filepath.Join(proj, ".git", "hooks", "pre-commit"), []byte(strings.Replace(preCommitHook, "@PY@", py, 1)), 0o755)
	testfs.Write(t, filepath.Join(proj, "logging.py"), []byte("open('"+mark+"', 'a').write('logging\\n')\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "pre_commit.py"), []byte("import logging\nraise SystemExit(0)\n"), 0o644)
	run("add", "README")
	run("commit", "-qm", "x")
	if b, _ := os.ReadFile(mark); string(b) != "logging\n" {
		t.Fatalf("the oracle: git commit ran %q, not the top's logging.py", b)
	}
	got := HookPrograms(proj, HooksPaths(proj, home, nil))
	for _, w := range []string{"pre_commit.py", "pre_commit", "logging.py", "logging", "argparse.py"} {
		if !slices.Contains(got, filepath.Join(proj, w)) {
			t.Errorf("HookPrograms holds no %s", w)
		}
	}
	if slices.Contains(got, filepath.Join(proj, "app.py")) {
		t.Errorf("control: HookPrograms holds app.py")
	}
	testfs.Write(t, filepath.Join(proj, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nTOOL=/usr/bin/make\nexec \"$TOOL\" -C sub check\n"), 0o755)
	if got := HookPrograms(proj, HooksPaths(proj, home, nil)); slices.Contains(got, filepath.Join(proj, "logging.py")) {
		t.Errorf("control: a hook that runs make holds logging.py: %q", got)
	}
}
