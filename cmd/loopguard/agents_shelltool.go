package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/opencode"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// Two-phase enforcement for Gemini CLI and Qwen Code (`init --agent
// gemini|qwen --ticket`): their user settings get loopguard's own shell
// tool in place of run_shell_command (package shelltool), and the hooks
// --ticket.

// shellToolAgents are the agents whose settings can put loopguard's own
// shell tool in front of every shell command.
var shellToolAgents = map[string]bool{gemini.Name: true, qwen.Name: true}

// shellToolLauncher is the wrapper init --ticket names in the agent's
// settings ("" without --ticket), or why it cannot.
func shellToolLauncher(o *initOptions, reg register.Registration, scope, hookBin string) (string, error) {
	if !o.ticket {
		return "", nil
	}
	if !shellToolAgents[reg.Agent] && reg.Agent != opencode.Name {
		return "", withHint(fmt.Errorf("--ticket: %s has no place for loopguard's wrapper in front of its shell (docs/agents.md, \"The other agents\"): a hook that never answers lets its call run", reg.Agent),
			"drop --ticket; for Gemini CLI and Qwen Code, --ticket puts loopguard's own shell tool in their settings, for OpenCode loopguard's wrapper as its shell")
	}
	if scope != "user" {
		return "", withHint(errors.New("--ticket writes loopguard's wrapper into the user's settings"), "drop --project")
	}
	if o.mode != "" && o.mode != "enforce" {
		return "", withHint(errors.New("two-phase enforcement (--ticket) works only with mode enforce"), "drop --mode")
	}
	return policy.Launcher(hookBin), nil
}

// shellToolNote says what init --ticket wrote for the agent.
func shellToolNote(out io.Writer, agent, path, launcher string) {
	if launcher == "" {
		return
	}
	if agent == opencode.Name {
		fmt.Fprintf(out, "Two-phase: %s names %s as OpenCode's shell, and the plugin runs the hook with --ticket: every shell command runs only on a ticket the hook issued for exactly it; a plugin that hung, threw, answered nothing or was not loaded runs nothing (no_decision). The shell also refuses the commands you type after ! and a command template's shell lines (they carry no ticket).\n", opencodeConfig(path), launcher)
		return
	}
	fmt.Fprintf(out, "Two-phase: %s excludes run_shell_command and lists loopguard's own shell tool (tools.discoveryCommand, tools.callCommand: %s): every shell command runs only on a ticket the hook issued for exactly it; a hook that hung, crashed or was not loaded runs nothing (no_decision).\n", path, launcher)
	if agent == qwen.Name {
		fmt.Fprintln(out, "Qwen Code lists the tool only when QWEN_CODE_LEGACY_MCP_BLOCKING=1 is in its environment; without it there is no shell tool at all.")
	}
}

// twoPhaseLine says whether a hook that never answers (hung past the
// host's timeout, crashed, not loaded) lets the agent's shell call run:
// for Gemini CLI and Qwen Code, whether the user's settings put
// loopguard's own shell tool in place and the hooks issue tickets; for
// the others, that there is no place for a wrapper.
func twoPhaseLine(env doctorEnv, reg register.Registration, found []foundReg) checkResult {
	name := reg.Agent + " two-phase"
	if reg.Agent == opencode.Name {
		return opencodeTwoPhaseLine(env, reg)
	}
	if !shellToolAgents[reg.Agent] {
		detail := "none: " + reg.Agent + " has no place for loopguard's wrapper in front of its shell, so a hook that never answers (hung past the host's timeout, killed, not loaded) lets its call run"
		if reg.Plugin != nil {
			detail = "none: loopguard's plugin blocks a call its hook does not answer, but a plugin " + reg.Agent + " failed to load lets every call run"
		}
		return checkResult{status: statusWarn, name: name, detail: detail}
	}
	launcher := policy.Launcher(env.self)
	for _, f := range found {
		if f.claude || f.scope != "user" {
			continue
		}
		data, _, err := install.ReadSettings(f.path)
		if err != nil || data == nil || !install.HasShellTool(data, launcher) {
			continue
		}
		regs, err := install.AgentHooks(data, reg.File(register.Options{Binary: env.self}))
		if err != nil {
			continue
		}
		ticketed := 0
		for _, r := range regs {
			line, _ := r.Fields[reg.Hooks.CmdKey].(string)
			if c, err := register.ParseShell(line, env.self); r.Ours && err == nil && c.Ticket {
				ticketed++
			}
		}
		if ticketed == len(reg.Hooks.Events) {
			detail := f.path + " puts loopguard's own shell tool (" + launcher + ") in place of run_shell_command: a shell command runs only on a ticket the hook issued for it"
			if reg.Agent == qwen.Name {
				detail += " (Qwen Code lists the tool only with QWEN_CODE_LEGACY_MCP_BLOCKING=1 in its environment; without it there is no shell at all)"
			}
			return checkResult{status: statusOK, name: name, detail: detail}
		}
	}
	return checkResult{status: statusWarn, name: name,
		detail: "off: a hook that never answers (hung past " + reg.Agent + "'s timeout, killed, not loaded) lets its shell call run",
		fix:    "run: loopguard init --agent " + reg.Agent + " --ticket (loopguard's own shell tool in place of run_shell_command)"}
}
