package cli

import (
	"slices"

	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/copilot"
	"github.com/loopguard/loopguard/agents/cursor"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/register"
)

// FoundReg is one file in which loopguard is registered for an agent.
type FoundReg struct {
	Path string
	// Claude is Claude Code's settings file, which the agent runs too.
	Claude bool
	Scope  string // user or project (for the fix line)
}

// Registered reports whether the file at path registers loopguard for
// reg (its hook entries, or its plugin).
func Registered(reg register.Registration, path, self string) bool {
	data, _, err := install.ReadSettings(path)
	if err != nil || data == nil {
		return false
	}
	if reg.Plugin != nil {
		return reg.IsOurs(data)
	}
	return install.RegistersAgent(data, reg.File(register.Options{Binary: self}))
}

// ClaudeRegistered reports whether Claude Code's settings file at path
// registers loopguard.
func ClaudeRegistered(path, self string) bool {
	data, _, err := install.ReadSettings(path)
	if err != nil || data == nil {
		return false
	}
	return install.Registers(data, self)
}

// AgentRegistrations lists every file from which the agent of reg runs
// loopguard here: its own user and project files, and the Claude Code
// settings it runs too (Copilot CLI runs a repository's
// .claude/settings.json hooks in a trusted folder; Cursor runs Claude
// Code's user and project hooks, its "third-party hooks", by default).
// More than one is more than one hook per call.
func AgentRegistrations(reg register.Registration, env install.Env, self string) []FoundReg {
	var out []FoundReg
	if Registered(reg, reg.UserFile(env.Dirs()), self) {
		out = append(out, FoundReg{Path: reg.UserFile(env.Dirs()), Scope: "user"})
	}
	if p := reg.ProjectFile(env.Cwd); p != reg.UserFile(env.Dirs()) && Registered(reg, p, self) {
		out = append(out, FoundReg{Path: p, Scope: "project"})
	}
	for _, sc := range claudeScopesRun(reg.Agent) {
		if p, err := install.SettingsPath(sc, env); err == nil && ClaudeRegistered(p, self) {
			out = append(out, FoundReg{Path: p, Claude: true, Scope: string(sc)})
		}
	}
	return out
}

// claudeScopesRun is where the agent named agent runs Claude Code's hooks
// as well as its own: Copilot CLI a repository's .claude/settings.json
// (and settings.local.json), Cursor the user's and the project's.
func claudeScopesRun(agent string) []install.Scope {
	switch agent {
	case copilot.Name:
		return []install.Scope{install.Project, install.Local}
	case cursor.Name:
		return []install.Scope{install.User, install.Project, install.Local}
	}
	return nil
}

// OwnRegistrationRunning names an agent's own registration of loopguard
// that would run beside Claude Code's settings at scope sc, which that
// agent runs too, where the agent's hook cannot tell the two apart (its
// registrations carry no --scope: Cursor): init for Claude Code there
// would make a second decision per call of that agent ("" when none). The
// reverse order, init --agent after init, is refused by initcmd's initAgentRun the
// same way. Copilot's are told apart (a decision is followed, not taken
// twice: TestCopilotTwoRegistrationsRunOnce), in either order.
func OwnRegistrationRunning(env install.Env, sc install.Scope, self string) (agent, path, scope string) {
	for _, reg := range all.Registrations {
		if reg.Hooks.Scoped || !slices.Contains(claudeScopesRun(reg.Agent), sc) {
			continue
		}
		for _, f := range AgentRegistrations(reg, env, self) {
			if !f.Claude {
				return reg.Agent, f.Path, f.Scope
			}
		}
	}
	return "", "", ""
}
