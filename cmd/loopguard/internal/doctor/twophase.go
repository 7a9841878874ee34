package doctor

import (
	"path/filepath"

	"github.com/loopguard/loopguard/agents/opencode"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// twoPhaseLine says whether a hook that never answers (hung past the
// host's timeout, crashed, not loaded) lets the agent's shell call run:
// for Gemini CLI and Qwen Code, whether the user's settings put
// loopguard's own shell tool in place and the hooks issue tickets; for
// the others, that there is no place for a wrapper.
func twoPhaseLine(env doctorEnv, reg register.Registration, found []cli.FoundReg) checkResult {
	name := reg.Agent + " two-phase"
	if reg.Agent == opencode.Name {
		return opencodeTwoPhaseLine(env, reg)
	}
	if !cli.ShellToolAgents[reg.Agent] {
		detail := "none: " + reg.Agent + " has no place for loopguard's wrapper in front of its shell, so a hook that never answers (hung past the host's timeout, killed, not loaded) lets its call run"
		if reg.Plugin != nil {
			detail = "none: loopguard's plugin blocks a call its hook does not answer, but a plugin " + reg.Agent + " failed to load lets every call run"
		}
		return checkResult{status: statusWarn, name: name, detail: detail}
	}
	launcher := policy.Launcher(env.self)
	for _, f := range found {
		if f.Claude || f.Scope != "user" {
			continue
		}
		data, _, err := install.ReadSettings(f.Path)
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
			detail := f.Path + " puts loopguard's own shell tool (" + launcher + ") in place of run_shell_command: a shell command runs only on a ticket the hook issued for it"
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

// opencodeTwoPhaseLine is doctor's two-phase line for OpenCode: on when
// the user's plugin runs the hook with --ticket and the user's
// opencode.json names the installed wrapper as OpenCode's shell.
func opencodeTwoPhaseLine(env doctorEnv, reg register.Registration) checkResult {
	name := reg.Agent + " two-phase"
	launcher := policy.Launcher(env.self)
	path := reg.UserFile(env.settings.Dirs())
	data, _, err := install.ReadSettings(path)
	st, perr := opencode.ReadPlugin(data)
	cfg := cli.OpenCodeConfig(path)
	cdata, _, cerr := install.ReadSettings(cfg)
	shell := install.OpenCodeShell(cdata)
	switch {
	case err == nil && perr == nil && st.Intact && st.Ticket && cerr == nil && shell != "" && sameFile(shell, launcher):
		return checkResult{status: statusOK, name: name,
			detail: cfg + " names loopguard's wrapper (" + launcher + ") as OpenCode's shell and the plugin runs the hook with --ticket: a shell command runs only on a ticket the hook issued for it; the plugin refuses every shell call (no_wrapper) when OpenCode's effective shell is another (a project's opencode.json, OPENCODE_CONFIG*)"}
	case err == nil && perr == nil && st.Ticket:
		return checkResult{status: statusFail, name: name,
			detail: "loopguard's plugin runs the hook with --ticket, but " + cfg + " does not name " + launcher + " as OpenCode's shell: every shell call is refused (no_wrapper)",
			fix:    "loopguard init --agent opencode --ticket"}
	}
	return checkResult{status: statusWarn, name: name,
		detail: "off: loopguard's plugin blocks a call its hook does not answer, but a plugin OpenCode failed to load (or one that answers nothing) lets every call run",
		fix:    "run: loopguard init --agent opencode --ticket (loopguard's wrapper as OpenCode's shell)"}
}

// sameFile reports whether a and b name the same file: the same path, or
// symlinks resolved.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
