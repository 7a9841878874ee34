package confine

import (
	"fmt"
	"io"
	"os"

	"github.com/loopguard/loopguard/policy"
)

// ExitFailed is the launcher's exit status when it runs nothing: bash's
// "found but could not be executed".
const ExitFailed = 126

// Main is `loopguard-hook exec ARGS`: it confines itself as args say and
// execs the program. It returns only when it could not, with ExitFailed and
// a line on stderr; the program is then not run.
func Main(args []string, stderr io.Writer) int {
	s, err := Parse(args)
	if err == nil {
		err = run(s, envOf())
	}
	fmt.Fprintf(stderr, "loopguard: the program was not run: %v\n", err)
	return ExitFailed
}

// envOf is the launcher's Env, from its environment.
func envOf() Env {
	self, _ := os.Executable()
	return envFrom(os.Getenv, self, os.Getuid())
}

// envFrom is the Env of a launch in the environment getenv reads, by the
// binary self (whose neighbours are the guard's binaries) and user uid:
// every variable a plan depends on is read through getenv, so the hook,
// computing a plan ahead for the small launcher, records each one
// (Prepare).
func envFrom(getenv func(string) string, self string, uid int) Env {
	home, _ := policy.HomeFrom(getenv)
	pl := policy.Places{Home: home, ClaudeConfigDir: getenv("CLAUDE_CONFIG_DIR"), CodexHome: getenv("CODEX_HOME"), Self: self}
	if d, err := policy.StateDirFrom(getenv); err == nil {
		pl.StateDir = d
	}
	if d, err := policy.ConfigDirFrom(getenv); err == nil {
		pl.ConfigDir = d
	}
	return EnvFrom(getenv, pl, uid)
}
