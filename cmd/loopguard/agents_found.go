package main

import (
	"github.com/loopguard/loopguard/agents/copilot"
	"github.com/loopguard/loopguard/agents/cursor"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/register"
)

// foundReg is one file in which loopguard is registered for an agent.
type foundReg struct {
	path string
	// claude is Claude Code's settings file, which the agent runs too.
	claude bool
	scope  string // user or project (for the fix line)
}

// registered reports whether the file at path registers loopguard for
// reg (its hook entries, or its plugin).
func registered(reg register.Registration, path, self string) bool {
	data, _, err := install.ReadSettings(path)
	if err != nil || data == nil {
		return false
	}
	if reg.Plugin != nil {
		return reg.IsOurs(data)
	}
	return install.RegistersAgent(data, reg.File(register.Options{Binary: self}))
}

// claudeRegistered reports whether Claude Code's settings file at path
// registers loopguard.
func claudeRegistered(path, self string) bool {
	data, _, err := install.ReadSettings(path)
	if err != nil || data == nil {
		return false
	}
	return install.Registers(data, self)
}

// agentRegistrations lists every file from which the agent of reg runs
// loopguard here: its own user and project files, and the Claude Code
// settings it runs too (Copilot CLI runs a repository's
// .claude/settings.json hooks in a trusted folder; Cursor runs Claude
// Code's user and project hooks, its "third-party hooks", by default).
// More than one is more than one hook per call.
func agentRegistrations(reg register.Registration, env install.Env, self string) []foundReg {
	var out []foundReg
	if registered(reg, reg.UserFile(env.Dirs()), self) {
		out = append(out, foundReg{path: reg.UserFile(env.Dirs()), scope: "user"})
	}
	if p := reg.ProjectFile(env.Cwd); p != reg.UserFile(env.Dirs()) && registered(reg, p, self) {
		out = append(out, foundReg{path: p, scope: "project"})
	}
	var claude []install.Scope
	switch reg.Agent {
	case copilot.Name:
		claude = []install.Scope{install.Project, install.Local}
	case cursor.Name:
		claude = []install.Scope{install.User, install.Project, install.Local}
	}
	for _, sc := range claude {
		if p, err := install.SettingsPath(sc, env); err == nil && claudeRegistered(p, self) {
			out = append(out, foundReg{path: p, claude: true, scope: string(sc)})
		}
	}
	return out
}
