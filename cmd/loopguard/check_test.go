package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/shellparse"
)

func TestCheckFlagsToOptions(t *testing.T) {
	var got *checkOptions
	cmd := newCheckCmdWith(func(o *checkOptions) error { got = o; return nil })
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("CLAUDE_PROJECT_DIR", "/proj")
	t.Setenv("HOME", "/home/u")
	cmd.SetArgs([]string{"--json", "--cwd", "/proj/sub", "--trusted", "/opt/bin/", "--trusted", "/usr/bin", "git status"})
	cmd.SetOut(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := shellparse.Env{Cwd: "/proj/sub", Path: "/usr/bin:/bin", ProjectDir: "/proj", Trusted: []string{"/opt/bin", "/usr/bin"}, Home: "/home/u"}
	if got == nil || got.Command != "git status" || !got.JSON || !equalEnv(got.Env, want) {
		t.Fatalf("options %+v, want command %q, json, env %+v", got, "git status", want)
	}

	// Without CLAUDE_PROJECT_DIR the project is the cwd; without --trusted
	// the defaults apply (nil).
	o, err := checkOptionsFrom("ls", false, "/w", nil, func(k string) string { return map[string]string{"PATH": "/bin"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if o.Env.ProjectDir != "/w" || o.Env.Trusted != nil || o.JSON {
		t.Errorf("options %+v", o)
	}
	if _, err := checkOptionsFrom("ls", false, "/w", []string{"rel/bin"}, os.Getenv); err == nil {
		t.Error("a relative --trusted directory was accepted")
	}
	// Exactly one COMMAND.
	for _, args := range [][]string{{}, {"git", "status"}} {
		c := newCheckCmdWith(func(*checkOptions) error { return nil })
		c.SetArgs(args)
		c.SetOut(io.Discard)
		c.SetErr(io.Discard)
		if err := c.Execute(); err == nil {
			t.Errorf("args %q accepted", args)
		}
	}
}

func equalEnv(a, b shellparse.Env) bool {
	return a.Cwd == b.Cwd && a.Path == b.Path && a.ProjectDir == b.ProjectDir && a.Home == b.Home &&
		strings.Join(a.Trusted, ":") == strings.Join(b.Trusted, ":")
}

// checkEnv is a fixed environment: a trusted bin with git, an untrusted
// one with a shadowing ls, a project.
func checkEnv(t *testing.T) (shellparse.Env, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testfs.Tree(t, root, []byte("#!/bin/sh\n"), 0o755, "bin/git", "bin/ls", "evil/ls")
	if err := os.MkdirAll(filepath.Join(root, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	return shellparse.Env{
		Cwd: filepath.Join(root, "proj"), ProjectDir: filepath.Join(root, "proj"), Home: filepath.Join(root, "home"),
		Path:    filepath.Join(root, "evil") + string(os.PathListSeparator) + filepath.Join(root, "bin"),
		Trusted: []string{filepath.Join(root, "bin")},
	}, root
}

// TestCheckJSONGolden pins the --json output: key set, order, empty lists.
// The golden files are in testdata/check, with @R@ for the fixed
// environment's root and @ZW@ for the escaped zero-width space.
func TestCheckJSONGolden(t *testing.T) {
	env, root := checkEnv(t)
	cases := []struct {
		cmd    string
		code   cli.ExitCode
		golden string
	}{
		{"git status > ~/x.txt 2>&1", cli.ExitOK, "simple_redirects.json"},
		{"LANG=C echo *.go", cli.ExitOK, "simple_glob.json"},
		{"git status; ls", cli.ExitError, "chained.json"},
		{"ls -la", cli.ExitError, "path_shadowed.json"},
		{"eval git\u200b status", cli.ExitError, "indirect.json"},
		{"echo 'unterminated", cli.ExitError, "unparseable.json"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		err := checkRun(&checkOptions{Out: &out, Command: c.cmd, JSON: true, Env: env})
		if got := exitCodeOf(err); got != c.code {
			t.Errorf("%q: exit %d (%v), want %d", c.cmd, got, err, c.code)
		}
		// JSON output is ASCII: the zero-width space is a \u escape, so a
		// terminal shows it and a program reads the same string.
		golden, err := os.ReadFile(filepath.Join("testdata", "check", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.NewReplacer("@R@", root, "@ZW@", `\u200b`).Replace(string(golden))
		if out.String() != want {
			t.Errorf("%q: --json output\n%s\nwant\n%s", c.cmd, out.String(), want)
		}
	}
}

func exitCodeOf(err error) cli.ExitCode {
	if err == nil {
		return cli.ExitOK
	}
	var ee *cli.Exit
	if errors.As(err, &ee) {
		if ee.Err != cli.ErrSilent {
			return -1
		}
		return ee.Code
	}
	return -1
}

func TestCheckHumanOutput(t *testing.T) {
	env, root := checkEnv(t)
	// check runs check on command, wants exit code code, and wants every
	// text of want in the output.
	check := func(what, command string, code cli.ExitCode, want ...string) {
		t.Helper()
		var out bytes.Buffer
		err := checkRun(&checkOptions{Out: &out, Command: command, Env: env})
		if exitCodeOf(err) != code {
			t.Fatalf("%s: %v", what, err)
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("output lacks %q:\n%s", w, out.String())
			}
		}
	}
	check("simple command", "git commit -m 'a b' > log 2>&1", cli.ExitOK,
		"verdict:  simple\n",
		"  [0] git  -> "+filepath.Join(root, "bin/git")+"\n",
		"  [3] \"a b\"\n",
		"  > log  (writes)\n",
		"  2>&1  (duplicates a file descriptor)\n",
		"1:1 command: git commit -m 'a b'\n",
		"A scoped grant can cover this command.\n",
	)
	check("chained command", "git status && curl x | sh", cli.ExitError,
		"verdict:  chained (at 1:12)\n",
		"reason:   && joins two commands, and the chain cannot be judged part by part: the part `curl x`: curl is not found in PATH\n",
		"1:12 &&\n",
		"1:22 |\n",
		"  curl -> (builtin or not found)\n",
		"only an exact approval of the whole command can",
	)

	// Hidden characters are shown escaped, never raw.
	var out bytes.Buffer
	_ = checkRun(&checkOptions{Out: &out, Command: "echo \u202eabc", Env: env})
	if strings.ContainsRune(out.String(), '\u202e') {
		t.Errorf("raw bidi control in output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `\u{202e}`) || !strings.Contains(out.String(), "U+202E bidi control character") {
		t.Errorf("bidi control not shown:\n%s", out.String())
	}
}
