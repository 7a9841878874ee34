// Package scripttest holds what loopguard's testscript suites share: the
// real-keyring condition, a private HOME and state dir per script, and the
// script commands that play the human (typedigest, lastpending, expandenv).
// It is for tests only.
package scripttest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/internal/keyringtest"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/state"
)

// Cmd is a testscript command.
type Cmd = func(ts *testscript.TestScript, neg bool, args []string)

// Params gives every script its own HOME and state dir, the keyring session
// of the test process, the `keyring` condition and the shared commands;
// extra commands are added to them. Scripts that need the OS keyring start
// with `[!keyring] skip`; under `make test` there is always one.
func Params(t testing.TB, extra map[string]Cmd) testscript.Params {
	hasKeyring := keyringtest.Want(t)
	cmds := map[string]Cmd{
		"typedigest":  TypeDigest,
		"lastpending": LastPending,
		"expandenv":   ExpandEnv,
	}
	for k, v := range extra {
		cmds[k] = v
	}
	return testscript.Params{
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			for _, m := range policy.AgentEnv {
				env.Setenv(m.Var, "")
			}
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
			case "landlock":
				// The kernel can confine a launched program.
				return confine.ABI() >= confine.MinABI, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: cmds,
	}
}

// Store opens the script's state dir.
func Store(ts *testscript.TestScript) *state.Store {
	st, err := state.Open(filepath.Join(ts.Getenv("XDG_STATE_HOME"), "loopguard"))
	ts.Check(err)
	return st
}

// TypeDigest is `typedigest ID FILE`: write what a human types to approve
// pending call ID (the first characters of its digest as the record holds
// it now, and a newline) to FILE.
func TypeDigest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: typedigest ID FILE")
	}
	p, err := Store(ts).GetPending(args[0])
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(p.Digest[:hooks.ConfirmPrefixLen]+"\n"), 0o600))
}

// LastPending is `lastpending VAR`: set VAR to the id of the most recently
// seen pending call.
func LastPending(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lastpending VAR")
	}
	list, errs := Store(ts).ListPending()
	if len(errs) > 0 {
		ts.Fatalf("%v", errs)
	}
	if len(list) == 0 {
		ts.Fatalf("no pending calls")
	}
	ts.Setenv(args[0], list[0].ID)
}

// ExpandEnv is `expandenv IN OUT`: copy IN to OUT with $VAR and ${VAR}
// replaced from the script's environment (for payloads naming $WORK).
func ExpandEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expandenv IN OUT")
	}
	out := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o600))
}
