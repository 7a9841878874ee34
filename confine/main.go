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
	home, _ := os.UserHomeDir()
	pl := policy.Places{Home: home, ClaudeConfigDir: os.Getenv("CLAUDE_CONFIG_DIR"), CodexHome: os.Getenv("CODEX_HOME")}
	if d, err := policy.StateDir(); err == nil {
		pl.StateDir = d
	}
	if d, err := policy.ConfigDir(); err == nil {
		pl.ConfigDir = d
	}
	if self, err := os.Executable(); err == nil {
		pl.Self = self
	}
	return EnvFrom(os.Getenv, pl, os.Getuid())
}
