package policy

import "path/filepath"

// AgentPath is one file or directory of a coding agent that can register,
// disable, trust or reconfigure hooks: guard-critical, like Claude Code's
// settings (denied to every agent call, whatever grants exist).
type AgentPath struct {
	Agent string // codex, gemini, copilot, cursor
	Path  string // absolute; a directory covers everything under it
	Why   string
}

// AgentPaths lists every other agent's guard-critical paths for a user
// whose home is home, working in project (either may be "": its paths are
// left out). codexHome is $CODEX_HOME ("" means home/.codex). The paths are
// plain data; the protected set that judges calls includes them.
func AgentPaths(home, project, codexHome string) []AgentPath {
	var out []AgentPath
	add := func(agent, base string, why string, parts ...string) {
		if base == "" {
			return
		}
		out = append(out, AgentPath{Agent: agent, Path: filepath.Join(append([]string{base}, parts...)...), Why: why})
	}
	if codexHome == "" && home != "" {
		codexHome = filepath.Join(home, ".codex")
	}
	// Codex: hooks.json registers hooks; config.toml holds inline [hooks],
	// the hooks' trust hashes ([hooks.state]), features and approval
	// policy; requirements.toml is the managed layer; plugins bring hooks.
	add("codex", codexHome, "Codex hooks", "hooks.json")
	add("codex", codexHome, "Codex config: inline hooks, hook trust, features", "config.toml")
	add("codex", codexHome, "Codex plugins (plugin hooks)", "plugins")
	add("codex", project, "Codex project hooks", ".codex", "hooks.json")
	add("codex", project, "Codex project config", ".codex", "config.toml")
	add("codex", "/etc/codex", "Codex managed requirements")

	// Gemini CLI: the hooks key of settings.json (user, project, system),
	// and extensions, whose hooks run even in untrusted folders.
	add("gemini", home, "Gemini settings and hooks", ".gemini", "settings.json")
	add("gemini", home, "Gemini extensions (extension hooks)", ".gemini", "extensions")
	add("gemini", home, "Gemini trusted folders", ".gemini", "trustedFolders.json")
	add("gemini", project, "Gemini project settings and hooks", ".gemini", "settings.json")
	add("gemini", project, "Gemini project extensions", ".gemini", "extensions")
	add("gemini", "/etc/gemini-cli", "Gemini system settings")

	// Copilot CLI: hook files, inline hooks in settings, policy hooks,
	// plugins. The repository's .claude settings are Claude Code's (already
	// protected) and Copilot reads them too.
	add("copilot", home, "Copilot user hooks", ".copilot", "hooks")
	add("copilot", home, "Copilot user settings (inline hooks, disableAllHooks)", ".copilot", "settings.json")
	add("copilot", home, "Copilot config", ".copilot", "config.json")
	add("copilot", home, "Copilot plugins (plugin hooks)", ".copilot", "installed-plugins")
	add("copilot", project, "Copilot repository hooks", ".github", "hooks")
	add("copilot", project, "Copilot repository settings (inline hooks)", ".github", "copilot", "settings.json")
	add("copilot", project, "Copilot local settings (inline hooks)", ".github", "copilot", "settings.local.json")
	add("copilot", "/etc/github-copilot", "Copilot policy hooks")

	// Cursor: hooks.json (user, project, enterprise), and its settings
	// that turn third-party (Claude) hooks on or off.
	add("cursor", home, "Cursor user hooks", ".cursor", "hooks.json")
	add("cursor", home, "Cursor CLI config", ".cursor", "cli-config.json")
	add("cursor", project, "Cursor project hooks", ".cursor", "hooks.json")
	add("cursor", "/etc/cursor", "Cursor enterprise hooks")
	return out
}

// AgentEnv lists environment variables each coding agent sets for the
// commands its tools run (seen on Claude Code 2.1.328, Codex 0.171.0, Gemini
// CLI 0.61.0, Copilot CLI 1.0.102). A command that finds one runs inside
// an agent, where approving, granting or changing the guard is refused.
var AgentEnv = []struct{ Var, Agent string }{
	{"CLAUDECODE", "Claude Code"},
	{"CODEX_THREAD_ID", "Codex"},
	{"CODEX_SESSION_ID", "Codex"},
	{"GEMINI_CLI", "Gemini CLI"},
	{"COPILOT_CLI", "Copilot CLI"},
	{"COPILOT_AGENT_SESSION_ID", "Copilot CLI"},
}

// InsideAgent names the agent whose marker getenv finds ("" when none),
// and the variable.
func InsideAgent(getenv func(string) string) (agent, variable string) {
	for _, m := range AgentEnv {
		if getenv(m.Var) != "" {
			return m.Agent, m.Var
		}
	}
	return "", ""
}
