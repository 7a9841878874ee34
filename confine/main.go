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

// Main is `loopguard-hook exec ARGS`: it runs the program confined as
// args say and returns its exit status (128+N when signal N ended it), or
// ExitFailed with a line on stderr when the program was not run.
func Main(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == recoverFlag {
		return recoverMain(args[1:], envOf(), stderr)
	}
	if len(args) > 0 && args[0] == stage2Flag {
		err := stage2()
		fmt.Fprintf(stderr, "loopguard: the program was not run: %v\n", err)
		return ExitFailed
	}
	if len(args) == 0 || (len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help")) {
		fmt.Fprint(stderr, Usage)
		if len(args) == 0 {
			return ExitFailed
		}
		return 0
	}
	s, err := Parse(args)
	if err == nil && s.Unconfined {
		err = runUnconfined(s, envOf())
	} else if err == nil {
		var code int
		if code, err = run(s, envOf(), stderr); err == nil {
			return code
		}
	}
	fmt.Fprintf(stderr, "loopguard: the program was not run: %v\n", err)
	return ExitFailed
}

// Usage is the launcher's own help (exec with no arguments, -h, --help).
const Usage = `usage: loopguard-confine exec --cap CAPABILITY --project DIR --cwd DIR [--redirect FD>PATH]... -- PROGRAM ARGV0 [ARGS...]

Runs PROGRAM confined by the kernel to CAPABILITY (read-only or
project-write, +git, +network[:PORTS]; or jail) in the
project DIR, starting in --cwd; every path absolute and clean. The hook
writes this command line for the Bash calls it allows (docs/confinement.md);
a human rarely types it. Exit status: the program's, or 126 when it was
not run (the reason on standard error, after "loopguard:").
`

// envOf is the launcher's Env, from its environment.
func envOf() Env {
	self, _ := os.Executable()
	return envFrom(os.Getenv, self, os.Getuid())
}

// envFrom is the Env of a launch in the environment getenv reads, by the
// binary self (whose neighbours are the guard's binaries) and user uid:
// every variable a plan depends on is read through getenv.
func envFrom(getenv func(string) string, self string, uid int) Env {
	home, _ := policy.HomeFrom(getenv)
	pl := policy.Places{Home: home, ClaudeConfigDir: getenv("CLAUDE_CONFIG_DIR"), CodexHome: getenv("CODEX_HOME"), Self: self, XDGConfigHome: getenv("XDG_CONFIG_HOME")}
	if d, err := policy.StateDirFrom(getenv); err == nil {
		pl.StateDir = d
	}
	if d, err := policy.ConfigDirFrom(getenv); err == nil {
		pl.ConfigDir = d
	}
	return EnvFrom(getenv, pl, uid)
}
