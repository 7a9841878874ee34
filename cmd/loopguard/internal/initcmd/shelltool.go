package initcmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/loopguard/loopguard/agents/opencode"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// Two-phase enforcement for Gemini CLI and Qwen Code (`init --agent
// gemini|qwen --ticket`): their user settings get loopguard's own shell
// tool in place of run_shell_command (package shelltool), and the hooks
// --ticket.

// shellToolLauncher is the wrapper init --ticket names in the agent's
// settings ("" without --ticket), or why it cannot.
func shellToolLauncher(o *initOptions, reg register.Registration, scope, hookBin string) (string, error) {
	if !o.ticket {
		return "", nil
	}
	if !cli.ShellToolAgents[reg.Agent] && reg.Agent != opencode.Name {
		return "", cli.WithHint(fmt.Errorf("--ticket: %s has no place for loopguard's wrapper in front of its shell (docs/agents.md, \"The other agents\"): a hook that never answers lets its call run", reg.Agent),
			"drop --ticket; for Gemini CLI and Qwen Code, --ticket puts loopguard's own shell tool in their settings, for OpenCode loopguard's wrapper as its shell")
	}
	if scope != "user" {
		return "", cli.WithHint(errors.New("--ticket writes loopguard's wrapper into the user's settings"), "drop --project")
	}
	if o.mode != "" && o.mode != "enforce" {
		return "", cli.WithHint(errors.New("two-phase enforcement (--ticket) works only with mode enforce"), "drop --mode")
	}
	return policy.Launcher(hookBin), nil
}

// shellToolNote says what init --ticket wrote for the agent.
func shellToolNote(out io.Writer, agent, path, launcher string) {
	if launcher == "" {
		return
	}
	if agent == opencode.Name {
		fmt.Fprintf(out, "Two-phase: %s names %s as OpenCode's shell, and the plugin runs the hook with --ticket: every shell command runs only on a ticket the hook issued for exactly it; a plugin that hung, threw, answered nothing or was not loaded runs nothing (no_decision). The shell also refuses the commands you type after ! and a command template's shell lines (they carry no ticket).\n", cli.OpenCodeConfig(path), launcher)
		return
	}
	fmt.Fprintf(out, "Two-phase: %s excludes run_shell_command and lists loopguard's own shell tool (tools.discoveryCommand, tools.callCommand: %s): every shell command runs only on a ticket the hook issued for exactly it; a hook that hung, crashed or was not loaded runs nothing (no_decision).\n", path, launcher)
	if agent == qwen.Name {
		fmt.Fprintln(out, "Qwen Code lists the tool only when QWEN_CODE_LEGACY_MCP_BLOCKING=1 is in its environment; without it there is no shell tool at all.")
	}
}
