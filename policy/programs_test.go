package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
)

// commandRunnerExamples: for each CommandRunner, a call that runs a command
// through its arguments (the analysis must see it) and one that does not.
var commandRunnerExamples = map[string][2]string{
	"find":    {"find . -exec id ;", "find . -name x"},
	"ssh":     {"ssh host id", "ssh host"},
	"docker":  {"docker run alpine id", "docker ps -a"},
	"podman":  {"podman exec c id", "podman images"},
	"kubectl": {"kubectl exec pod -- id", "kubectl get pods"},
	"npx":     {"npx -c id", "npx jest"},
}

// TestLayersAgree asks shellparse and scope the same questions about every
// program the policy lists; hooks is asked in hooks/scoped_policy_test.go.
func TestLayersAgree(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj") // not containing bin: a stub there would be path_shadowed
	env := shellparse.Env{Cwd: proj, ProjectDir: proj, Home: dir, Path: filepath.Join(dir, "bin"), Trusted: []string{filepath.Join(dir, "bin")}}
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	stub := func(n string) {
		if err := os.WriteFile(filepath.Join(dir, "bin", n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stub("ls")
	refused := func(rule string) bool {
		r, err := scope.Parse(rule)
		if err != nil {
			return true // not even a rule
		}
		return scope.Dangerous(r, "/home/u") != nil
	}
	asked := 0
	for _, c := range []policy.Class{policy.Shell, policy.Interpreter, policy.Runner, policy.CommandRunner, policy.Guard, policy.FileWriter} {
		names := policy.Names(c)
		if len(names) == 0 {
			t.Fatalf("no %s programs", c)
		}
		for _, n := range names {
			if n == "." || strings.Contains(n, "/") {
				continue
			}
			stub(n)
			asked++
			if c == policy.FileWriter {
				if !refused("Bash(" + n + " *)") {
					t.Errorf("scope grants Bash(%s *), policy says %s", n, c)
				}
				continue
			}
			if !refused("Bash("+n+" *)") || !refused("Bash("+n+" x)") {
				t.Errorf("scope grants a rule over %s, policy says %s", n, c)
			}
			var q string
			switch c {
			case policy.Shell, policy.Interpreter:
				q = n + " -" // a script on stdin
			case policy.Runner:
				q = n + " id"
			case policy.CommandRunner:
				ex, ok := commandRunnerExamples[n]
				if !ok {
					t.Errorf("%s: no example: add one to commandRunnerExamples", n)
					continue
				}
				q = ex[0]
				if res := shellparse.Analyze(ex[1], env); res.Verdict != shellparse.Simple {
					t.Errorf("control %q: %s (%s)", ex[1], res.Verdict, res.Reason)
				}
			case policy.Guard:
				continue // a scope refusal and the hook's protected check (hooks tests)
			}
			if res := shellparse.Analyze(q, env); res.Verdict != shellparse.Indirect && res.Verdict != shellparse.Chained {
				t.Errorf("shellparse calls %q %s (%s), policy says %s is a %s", q, res.Verdict, res.Reason, n, c)
			}
		}
	}
	// The names that drifted before there was one list.
	for n, c := range map[string]policy.Class{"nu": policy.Shell, "xonsh": policy.Shell, "docker": policy.CommandRunner, "kubectl": policy.CommandRunner} {
		if p, ok := policy.Lookup(n); !ok || p.Class != c {
			t.Errorf("%s: %+v, want %s", n, p, c)
		}
	}
	// Control: an ordinary program is plain to every layer.
	if refused("Bash(ls *)") {
		t.Error("scope refuses Bash(ls *)")
	}
	if res := shellparse.Analyze("ls -", env); res.Verdict != shellparse.Simple {
		t.Errorf("ls -: %s (%s)", res.Verdict, res.Reason)
	}
	t.Logf("asked %d programs", asked)
}

func TestBaseAndLookup(t *testing.T) {
	for in, want := range map[string]string{
		"python3.12": "python", "/usr/bin/python3.12-dbg": "python", "python3.11m": "python", "perl5.36.0": "perl",
		"node18": "node", "Bash": "bash", "bash5": "bash", "BASH.EXE": "bash", "ld-linux-x86-64.so.2": "ld.so",
		"git": "git", "7z": "7z", "g++": "g++",
	} {
		if got := policy.Base(in); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
	for _, n := range []string{"/usr/bin/NU", "xonsh", "ENV", "Python3", "secret-tool"} {
		if _, ok := policy.Lookup(n); !ok {
			t.Errorf("Lookup(%q) found nothing", n)
		}
	}
	for _, n := range []string{"ls", "git", "go", "make", "security-scanner"} {
		if p, ok := policy.Lookup(n); ok {
			t.Errorf("Lookup(%q) = %+v, want nothing", n, p)
		}
	}
	if !policy.IsKeyringTool("/usr/bin/secret-tool") || policy.IsKeyringTool("ls") || !policy.IsKeyringTool("loopguard") {
		t.Error("IsKeyringTool")
	}
	if len(policy.KeyringTools()) < 10 {
		t.Error("keyring tools list is short")
	}
}

// TestInlineCodeAgrees: each inline-code form shellparse calls indirect for
// a program in the option table is, word for word, a word the table says a
// wildcard may not cover. Both layers are asked the same command lines.
func TestInlineCodeAgrees(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	env := shellparse.Env{Cwd: proj, ProjectDir: proj, Home: dir, Path: filepath.Join(dir, "bin"), Trusted: []string{filepath.Join(dir, "bin")}}
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"make", "go", "tar", "git", "npm", "sort"} {
		if err := os.WriteFile(filepath.Join(dir, "bin", n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, argv := range [][]string{
		{"make", "--eval=x:;id"}, {"make", "-E", "x:;id"}, {"make", "SHELL=/tmp/x"}, {"make", ".SHELLFLAGS=-c id"},
		{"make", "MAKESHELL=/tmp/x"},
		{"go", "build", "-exec", "/tmp/x"}, {"go", "test", "-toolexec=/tmp/x"}, {"go", "vet", "-vettool=/tmp/x"},
		{"go", "env", "-w", "CC=/tmp/x"}, {"go", "run", "example.com/x@latest"},
		{"tar", "--to-command=id", "-xf", "a"}, {"tar", "--use-compress-program=/tmp/x", "-cf", "a", "b"},
		{"tar", "-I", "/tmp/x", "-cf", "a", "b"}, {"tar", "-F", "/tmp/x", "-cf", "a", "b"},
		{"tar", "--checkpoint-action=exec=id", "-cf", "a", "b"}, {"tar", "--info-script=/tmp/x", "-cf", "a", "b"},
		{"git", "-c", "core.pager=id", "log"}, {"git", "--exec-path=/tmp", "log"}, {"git", "fetch", "--upload-pack=id"},
		{"git", "push", "--receive-pack=id"}, {"git", "grep", "-O", "x"}, {"git", "difftool"}, {"git", "mergetool"},
		{"git", "bisect", "run", "id"}, {"git", "submodule", "foreach", "id"}, {"git", "clone", "-u", "id", "u"},
		{"git", "clone", "ext::sh -c id"}, {"git", "config", "alias.x", "!id"}, {"git", "rebase", "-x", "id"},
		{"git", "filter-branch", "--tree-filter", "id"},
		{"npm", "--script-shell=/tmp/x", "run", "t"}, {"npm", "exec", "-c", "id"},
	} {
		var quoted []string
		for _, a := range argv {
			quoted = append(quoted, "'"+a+"'")
		}
		cmd := strings.Join(quoted, " ")
		if res := shellparse.Analyze(cmd, env); res.Verdict != shellparse.Indirect {
			t.Errorf("shellparse: %s is %s (%s), want indirect", cmd, res.Verdict, res.Reason)
		}
		if len(policy.CheckArgv(argv)) == 0 {
			t.Errorf("policy: %s: a wildcard would cover every word", cmd)
		}
	}
}
