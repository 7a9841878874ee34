package doctor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/claude"
	"github.com/loopguard/loopguard/agents/codex"
	"github.com/loopguard/loopguard/agents/copilot"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/register"
	"github.com/loopguard/loopguard/state"
)

// selectAgents is the agents doctor checks: those --agent names, or else
// those loopguard is registered with here (by init, which keeps a record,
// or by hand), or else Claude Code, the default agent.
func selectAgents(env doctorEnv) ([]string, checkResult, error) {
	if len(env.agents) > 0 {
		for _, a := range env.agents {
			if _, err := all.Lookup(a); err != nil {
				return nil, checkResult{}, cli.WithHint(err, "use --agent claude or --agent "+all.Others)
			}
		}
		return env.agents, checkResult{status: statusOK, name: "agents", detail: "checking " + strings.Join(env.agents, ", ") + " (--agent)"}, nil
	}
	backups := ""
	if dir, err := state.DefaultDir(); err == nil {
		backups = cli.BackupDir(dir)
	}
	made := func(path string, reg bool) bool {
		return reg || (backups != "" && install.Recorded(backups, path))
	}
	var sel []string
	for _, sc := range []install.Scope{install.User, install.Project, install.Local} {
		if p, err := install.SettingsPath(sc, env.settings); err == nil && made(p, cli.ClaudeRegistered(p, env.self)) {
			sel = append(sel, claude.Name)
			break
		}
	}
	for _, reg := range all.Registrations {
		for _, p := range []string{reg.UserFile(env.settings.Dirs()), reg.ProjectFile(env.settings.Cwd)} {
			if made(p, cli.Registered(reg, p, env.self)) {
				sel = append(sel, reg.Agent)
				break
			}
		}
	}
	if len(sel) == 0 {
		return []string{claude.Name}, checkResult{status: statusOK, name: "agents",
			detail: "loopguard is registered with no agent here; checking Claude Code, the default (loopguard doctor --agent NAME checks another)"}, nil
	}
	return sel, checkResult{status: statusOK, name: "agents",
		detail: "checking " + strings.Join(sel, ", ") + ", the agents loopguard is registered with here (loopguard doctor --agent NAME checks another)"}, nil
}

// checkAgents checks each selected agent other than Claude Code: every
// hook file of its that registers loopguard (complete, timeouts above the
// hook's deadline, the host's fail-open settings covered, and the agent
// will actually run it: Codex's trust, Gemini's switches), that there is
// only one, and what its host does with loopguard's answers.
func checkAgents(env doctorEnv, selected []string) []checkResult {
	var out []checkResult
	for _, reg := range all.Registrations {
		if !contains(selected, reg.Agent) {
			continue
		}
		ro := register.Options{Binary: env.self, Deadline: agents.DefaultDeadline}
		found := cli.AgentRegistrations(reg, env.settings, env.self)
		for _, f := range found {
			if f.Claude {
				continue // Claude Code's settings: checked as Claude Code's
			}
			out = append(out, checkAgentFile(env, reg, ro, f)...)
		}
		if len(found) == 0 {
			out = append(out, checkResult{status: statusFail, name: reg.Agent,
				detail: "loopguard is not registered for " + reg.Agent + " here (neither " + reg.UserFile(env.settings.Dirs()) + " nor " + reg.ProjectFile(env.settings.Cwd) + ")",
				fix:    "run: loopguard init --agent " + reg.Agent})
		}
		if len(found) > 1 {
			out = append(out, severalRegistrations(reg, found, env.self))
		}
		switch reg.Agent {
		case copilot.Name:
			out = append(out, copilotTrust(env, found)...)
		case gemini.Name:
			out = append(out, geminiTrust(env, found)...)
		case qwen.Name:
			out = append(out, qwenTrust(env, found)...)
			out = append(out, qwenCoAuthor(env, reg))
		}
		out = append(out, hostLine(reg.Agent, reg.Host), twoPhaseLine(env, reg, found))
	}
	return out
}

// checkAgentFile checks one hook file of reg that registers loopguard.
func checkAgentFile(env doctorEnv, reg register.Registration, ro register.Options, f cli.FoundReg) []checkResult {
	name := reg.Agent + " " + f.Path
	fix := "run: loopguard init --agent " + reg.Agent
	if f.Scope == "project" {
		fix += " --project"
	}
	data, _, err := install.ReadSettings(f.Path)
	if err != nil || data == nil {
		return []checkResult{{status: statusFail, name: name, detail: fmt.Sprint(err), fix: "fix or remove the file, then " + fix}}
	}
	var problems, narrow []string
	if reg.Plugin != nil {
		problems = reg.CheckPlugin(data, ro)
	} else {
		regs, err := install.AgentHooks(data, reg.File(ro))
		if err != nil {
			return []checkResult{{status: statusFail, name: name, detail: err.Error(), fix: "fix the file by hand"}}
		}
		problems, narrow = reg.Check(regs, ro), reg.Hooks.Narrow(regs)
	}
	var out []checkResult
	for _, p := range problems {
		out = append(out, checkResult{status: statusFail, name: name, detail: p, fix: fix})
	}
	for _, p := range agentRuns(reg.Agent, f.Path, data, env.self, env.settings.Dirs()) {
		out = append(out, checkResult{status: statusFail, name: name, detail: p.detail, fix: p.fix})
	}
	if len(out) == 0 {
		out = append(out, checkResult{status: statusOK, name: name, detail: "registered; an approval binds " + reg.Binding})
	}
	for _, p := range narrow {
		out = append(out, checkResult{status: statusWarn, name: name, detail: p, fix: fix + " again (it puts the catch-all in the old registration's place)"})
	}
	return out
}

// hostLine says what the agent's host does with loopguard's answers: the
// rewrite of a scoped Bash call (and its confinement), and a hook timeout.
func hostLine(agent string, h agents.Host) checkResult {
	rw := "scoped Bash calls run rewritten to what was analysed (" + h.Rewrite + ")"
	if h.Rewrite == "" {
		rw = "NO rewrite: " + agent + " runs the model's own command text, so a scope covers only a command already written plainly (no $'...', backslashes, globs), and nothing it runs is confined by the kernel"
		if h.Wrapper != "" {
			rw += " unless loopguard's wrapper stands in front of its shell (" + h.Wrapper + "; the two-phase line says whether it does)"
		}
	}
	to := h.Timeout
	if h.TimeoutOpen {
		to += fmt.Sprintf("; loopguard answers within its own %s deadline, well under the timeout it registers", agents.DefaultDeadline)
	}
	return checkResult{status: statusOK, name: agent + " host", detail: h.Client + ": " + rw + "; on a hook timeout: " + to}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// agentProblem is a reason the host will not run loopguard's hook, and how
// to fix it.
type agentProblem struct{ detail, fix string }

// agentRuns checks what else decides whether the host runs loopguard's hook
// from the file at path.
func agentRuns(agent, path string, data []byte, self string, dirs register.Dirs) []agentProblem {
	switch agent {
	case codex.Name:
		return codexTrusted(path, data, self, dirs)
	case gemini.Name:
		var out []agentProblem
		for _, p := range geminiEnabled(data) {
			out = append(out, agentProblem{p, "edit " + path + " by hand"})
		}
		return out
	}
	return nil
}

// codexTrusted checks that Codex trusts loopguard's handlers in the hooks
// file at path, as they are now (codex.Untrusted recomputes each trust
// hash), and that its config does not turn hooks off.
func codexTrusted(path string, data []byte, self string, dirs register.Dirs) []agentProblem {
	codexHome := dirs.Agent(codex.Name)
	cfg := filepath.Join(codexHome, "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil && !os.IsNotExist(err) {
		return []agentProblem{{fmt.Sprintf("cannot read %s: %v", cfg, err), "make it readable"}}
	}
	ours := func(h map[string]any) bool {
		cmd, _ := h["command"].(string)
		return install.IsLoopguard(install.Handler{Type: "command", Command: cmd}, self)
	}
	untrusted, err := codex.Untrusted(path, data, b, ours)
	if err != nil {
		return []agentProblem{{"cannot read " + path + ": " + err.Error(), "fix the file by hand"}}
	}
	var out []agentProblem
	if len(untrusted) > 0 {
		out = append(out, agentProblem{
			fmt.Sprintf("Codex does not trust loopguard's hooks as they are now (%s), so it does not run them: every call runs unguarded", strings.Join(untrusted, ", ")),
			cli.CodexTrustStep(!strings.HasPrefix(path, codexHome+string(filepath.Separator)))})
	}
	for _, line := range strings.Split(string(b), "\n") {
		l := strings.ReplaceAll(line, " ", "")
		if l == "hooks=false" || l == "codex_hooks=false" {
			out = append(out, agentProblem{fmt.Sprintf("%s turns hooks off (%s)", cfg, strings.TrimSpace(line)), "remove that line from " + cfg})
		}
	}
	return out
}

// geminiEnabled checks Gemini's hooksConfig switches in the same settings.
func geminiEnabled(data []byte) []string {
	var s struct {
		HooksConfig struct {
			Enabled  *bool    `json:"enabled"`
			Disabled []string `json:"disabled"`
		} `json:"hooksConfig"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	var problems []string
	if s.HooksConfig.Enabled != nil && !*s.HooksConfig.Enabled {
		problems = append(problems, `"hooksConfig.enabled" is false: Gemini runs no hooks`)
	}
	for _, d := range s.HooksConfig.Disabled {
		if d == "loopguard" {
			problems = append(problems, `"hooksConfig.disabled" lists loopguard: Gemini skips it`)
		}
	}
	return problems
}
