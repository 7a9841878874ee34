package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/loopguard/loopguard/state"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"loopguard": func() { os.Exit(int(Main(os.Args[1:]))) },
	})
}

// realKeyring reports whether the tests run inside scripts/with-keyring,
// and fails the test when `make test` demanded it but it is missing.
func realKeyring(t testing.TB) bool {
	if os.Getenv("LOOPGUARD_REAL_KEYRING") == "1" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return true
	}
	if os.Getenv("LOOPGUARD_REQUIRE_REAL_KEYRING") == "1" {
		t.Fatal("LOOPGUARD_REQUIRE_REAL_KEYRING=1 but there is no real keyring session: run through scripts/with-keyring (make test)")
	}
	return false
}

// scriptParams runs the scripts in dir with a private HOME and state dir
// per script. Scripts that need the OS keyring start with `[!keyring] skip`;
// under `make test` there is always one.
func scriptParams(t *testing.T, dir string) testscript.Params {
	hasKeyring := realKeyring(t)
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			env.Setenv("CLAUDECODE", "")
			env.Setenv("NO_COLOR", "1")
			for _, k := range []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"} {
				env.Setenv(k, os.Getenv(k))
			}
			return os.MkdirAll(home, 0o700)
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "keyring":
				return hasKeyring, nil
			}
			return false, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"typedigest":      cmdTypeDigest,
			"lastpending":     cmdLastPending,
			"private-keyring": cmdPrivateKeyring,
			"typegrant":       cmdTypeGrant,
			"expandenv":       cmdExpandEnv,
		},
	}
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, filepath.Join("testdata", "script")))
}

func scriptStore(ts *testscript.TestScript) *state.Store {
	st, err := state.Open(filepath.Join(ts.Getenv("XDG_STATE_HOME"), "loopguard"))
	ts.Check(err)
	return st
}

// typedigest ID FILE: write what a human types to approve pending call ID
// (the first characters of its digest, and a newline) to FILE. ID may be
// $VAR.
func cmdTypeDigest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: typedigest ID FILE")
	}
	p, err := scriptStore(ts).GetPending(args[0])
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(p.Digest[:approvePrefixLen]+"\n"), 0o600))
}

// lastpending VAR: set VAR to the id of the most recently seen pending call.
func cmdLastPending(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lastpending VAR")
	}
	list, errs := scriptStore(ts).ListPending()
	if len(errs) > 0 {
		ts.Fatalf("%v", errs)
	}
	if len(list) == 0 {
		ts.Fatalf("no pending calls")
	}
	ts.Setenv(args[0], list[0].ID)
}

// typegrant FILE [--session=S | --any-session] [--agent=A] [--ttl=D] RULE...:
// write what a human types to confirm that grant (run with the script's
// HOME, PATH and $WORK as the project) to FILE.
func cmdTypeGrant(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: typegrant FILE [flags] RULE...")
	}
	o := &grantOptions{ttl: time.Hour, agent: "main"}
	for _, a := range args[1:] {
		var err error
		switch {
		case strings.HasPrefix(a, "--session="):
			o.session = strings.TrimPrefix(a, "--session=")
		case a == "--any-session":
			o.anySession = true
		case strings.HasPrefix(a, "--agent="):
			o.agent = strings.TrimPrefix(a, "--agent=")
		case strings.HasPrefix(a, "--ttl="):
			o.ttl, err = time.ParseDuration(strings.TrimPrefix(a, "--ttl="))
		default:
			o.rules = append(o.rules, a)
		}
		ts.Check(err)
	}
	proj := ts.Getenv("CLAUDE_PROJECT_DIR")
	if proj == "" {
		proj = ts.Getenv("WORK")
	}
	rules, session, agent, err := prepareGrants(scriptStore(ts), o, grantEnv{home: ts.Getenv("HOME"), project: proj, path: ts.Getenv("PATH")})
	ts.Check(err)
	d := grantDigest(rules, session, agent, o.ttl)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(d[:approvePrefixLen]+"\n"), 0o600))
}

// expandenv IN OUT: copy IN to OUT with $VAR and ${VAR} replaced from the
// script's environment (for payloads that name $WORK).
func cmdExpandEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expandenv IN OUT")
	}
	out := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o600))
}
