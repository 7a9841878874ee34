package confine

import (
	"reflect"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

func TestArgsRoundTrip(t *testing.T) {
	for _, s := range []Spec{
		{Cap: policy.Capability{}, Project: "/p", Cwd: "/p/src", Exe: "/usr/bin/git", Argv: []string{"git", "log", "-1"}},
		{Cap: policy.Capability{Write: true, Network: true}, Project: "/p", Cwd: "/p", Exe: "/usr/local/go/bin/go", Argv: []string{"go", "test", "--", "./..."},
			Redirects: []Redirect{{Fd: 1, Op: ">", Path: "/p/out log"}, {Fd: 2, Op: "dup", Dup: 1}, {Fd: 0, Op: "<", Path: "/p/in"},
				{Fd: 3, Op: "close"}, {Fd: 1, Op: ">", Path: "/p/a", Append: true}, {Fd: 4, Op: "<>", Path: "/p/rw"}}},
		{Cap: policy.Capability{Write: true, Git: true}, Project: "/p", Cwd: "/p", Exe: "/usr/bin/git", Argv: []string{"git", "--", "-rf"}},
	} {
		args := s.Args()
		if args[0] != Subcommand {
			t.Fatalf("args start with %q", args[0])
		}
		got, err := Parse(args[1:])
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"--cap", "read-only", "--project", "/p", "--", "/bin/ls", "ls"},                                          // no --cwd
		{"--cap", "root", "--project", "/p", "--cwd", "/p", "--", "/bin/ls", "ls"},                                // unknown capability
		{"--cap", "read-only", "--cap", "project-write", "--project", "/p", "--cwd", "/p", "--", "/bin/ls", "ls"}, // twice
		{"--cap", "read-only", "--project", "p", "--cwd", "/p", "--", "/bin/ls", "ls"},                            // relative
		{"--cap", "read-only", "--project", "/p/../q", "--cwd", "/p", "--", "/bin/ls", "ls"},                      // not clean
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--", "ls", "ls"},                                // relative program
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--", "/bin/ls"},                                 // no argv0
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--redirect", "1>rel", "--", "/bin/ls", "ls"},
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--redirect", ">/x", "--", "/bin/ls", "ls"},
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--bogus", "x", "--", "/bin/ls", "ls"},
		{"--cap", "read-only+git", "--project", "/p", "--cwd", "/p", "--", "/bin/ls", "ls"},
	} {
		if _, err := Parse(args); err == nil {
			t.Errorf("%q parsed", args)
		}
	}
}
