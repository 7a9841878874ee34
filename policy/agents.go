package policy

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// AgentPath is one file or directory of a coding agent that can register,
// disable, trust or reconfigure hooks: guard-critical, like Claude Code's
// settings (denied to every agent call, whatever grants exist).
type AgentPath struct {
	Agent string // codex, gemini, copilot, cursor, qwen, opencode
	Path  string // absolute; a directory covers everything under it
	Why   string
}

// Where an agent path is anchored.
const (
	atAgent   = "agent"   // the agent's user directory (AgentHome)
	atProject = "project" // a project directory, at any depth
)

// agentHomes are the agents' user directories under the home directory,
// "/"-separated (Codex's is CodexHome): a table the linker lays out, which
// costs nothing at start-up nor at first use (the hook's protected set
// asks it on every call).
var agentHomes = []struct{ agent, dir string }{
	{"gemini", ".gemini"}, {"copilot", ".copilot"}, {"cursor", ".cursor"},
	{"qwen", ".qwen"}, {"opencode", ".config/opencode"},
}

// AgentHome is the directory under which agent (codex, gemini, copilot,
// cursor, qwen, opencode) keeps its user files, for a user whose home is
// home; codexHome is $CODEX_HOME as set. "" for an unknown agent, or
// without a home. The one home of these places: the protected set
// (AgentPaths) and the hook files init writes (package register) both take
// them from here.
func AgentHome(agent, home, codexHome string) string {
	if agent == "codex" {
		return CodexHome(home, codexHome)
	}
	if home == "" {
		return ""
	}
	for _, h := range agentHomes {
		if h.agent == agent {
			return filepath.Join(home, filepath.FromSlash(h.dir))
		}
	}
	return ""
}

// agentFiles are every other agent's guard-critical files and directories:
// each registers, disables, trusts or reconfigures hooks. base is atAgent,
// atProject, or an absolute directory.
var agentFiles = []struct {
	agent, base, why string
	parts            []string
}{
	// Codex: hooks.json registers hooks; config.toml holds inline [hooks],
	// the hooks' trust hashes ([hooks.state]), features and approval
	// policy; requirements.toml is the managed layer; plugins bring hooks.
	{"codex", atAgent, "Codex hooks", []string{"hooks.json"}},
	{"codex", atAgent, "Codex config: inline hooks, hook trust, features", []string{"config.toml"}},
	{"codex", atAgent, "Codex plugins (plugin hooks)", []string{"plugins"}},
	{"codex", atAgent, "Codex session records (loopguard reads the session's project from them)", []string{"sessions"}},
	{"codex", atProject, "Codex project hooks", []string{".codex", "hooks.json"}},
	{"codex", atProject, "Codex project config", []string{".codex", "config.toml"}},
	{"codex", "/etc/codex", "Codex managed requirements", nil},

	// Gemini CLI: the hooks key of settings.json (user, project, system),
	// and extensions, whose hooks run even in untrusted folders.
	{"gemini", atAgent, "Gemini settings and hooks", []string{"settings.json"}},
	{"gemini", atAgent, "Gemini extensions (extension hooks)", []string{"extensions"}},
	{"gemini", atAgent, "Gemini trusted folders", []string{"trustedFolders.json"}},
	{"gemini", atProject, "Gemini project settings and hooks", []string{".gemini", "settings.json"}},
	{"gemini", atProject, "Gemini project extensions", []string{".gemini", "extensions"}},
	{"gemini", "/etc/gemini-cli", "Gemini system settings", nil},

	// Copilot CLI: hook files, inline hooks in settings, policy hooks,
	// plugins. The repository's .claude settings are Claude Code's (already
	// protected) and Copilot reads them too.
	{"copilot", atAgent, "Copilot user hooks", []string{"hooks"}},
	{"copilot", atAgent, "Copilot user settings (inline hooks, disableAllHooks)", []string{"settings.json"}},
	{"copilot", atAgent, "Copilot config", []string{"config.json"}},
	{"copilot", atAgent, "Copilot plugins (plugin hooks)", []string{"installed-plugins"}},
	{"copilot", atProject, "Copilot repository hooks", []string{".github", "hooks"}},
	{"copilot", atProject, "Copilot repository settings (inline hooks)", []string{".github", "copilot", "settings.json"}},
	{"copilot", atProject, "Copilot local settings (inline hooks)", []string{".github", "copilot", "settings.local.json"}},
	{"copilot", "/etc/github-copilot", "Copilot policy hooks", nil},

	// Cursor: hooks.json (user, project, enterprise), and its settings
	// that turn third-party (Claude) hooks on or off.
	{"cursor", atAgent, "Cursor user hooks", []string{"hooks.json"}},
	{"cursor", atAgent, "Cursor CLI config", []string{"cli-config.json"}},
	{"cursor", atProject, "Cursor project hooks", []string{".cursor", "hooks.json"}},
	{"cursor", "/etc/cursor", "Cursor enterprise hooks", nil},

	// Qwen Code: the hooks key of settings.json (user, project, system),
	// its extensions (which bring hooks), and trusted folders.
	{"qwen", atAgent, "Qwen Code settings and hooks", []string{"settings.json"}},
	{"qwen", atAgent, "Qwen Code extensions (extension hooks)", []string{"extensions"}},
	{"qwen", atAgent, "Qwen Code trusted folders", []string{"trustedFolders.json"}},
	{"qwen", atProject, "Qwen Code project settings and hooks", []string{".qwen", "settings.json"}},
	{"qwen", atProject, "Qwen Code project extensions", []string{".qwen", "extensions"}},
	{"qwen", atAgent, "Qwen Code subagents (an executor runs a command)", []string{"agents"}},
	{"qwen", atProject, "Qwen Code project subagents (an executor runs a command)", []string{".qwen", "agents"}},
	{"qwen", "/etc/qwen-code", "Qwen Code system settings", nil},

	// OpenCode: its config directories hold plugins, which run in its
	// process and can change any call after loopguard's plugin decided
	// (loopguard's own plugin is there), and its config (opencode.json),
	// which loads more plugins and sets permissions.
	{"opencode", atAgent, "OpenCode config and plugins (loopguard's plugin)", nil},
	{"opencode", atProject, "OpenCode project config and plugins", []string{".opencode"}},
	{"opencode", atProject, "OpenCode project config (plugins, permissions)", []string{"opencode.json"}},
	{"opencode", atProject, "OpenCode project config (plugins, permissions)", []string{"opencode.jsonc"}},
	{"opencode", "/etc/opencode", "OpenCode managed config", nil},
}

// plainProtected reports whether name (lower case), which does not start
// with a dot, is an agent's project file protected at any depth. The walk
// of a project-write launch asks it of every name in the project.
func plainProtected(name string) bool { return plainProtectedNames()[name] }

var plainProtectedNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, f := range agentFiles {
		if f.base == atProject && len(f.parts) == 1 && !strings.HasPrefix(f.parts[0], ".") {
			m[f.parts[0]] = true
		}
	}
	return m
})

// AgentPaths lists every other agent's guard-critical paths for a user
// whose home is home, working in project (either may be "": its paths are
// left out). codexHome is $CODEX_HOME ("" means home/.codex). The protected
// set (Places.Classify) judges the same table: the project paths at any
// depth, the others where they are.
func AgentPaths(home, project, codexHome string) []AgentPath {
	var out []AgentPath
	for _, f := range agentFiles {
		base := f.base
		switch base {
		case atAgent:
			base = AgentHome(f.agent, home, codexHome)
		case atProject:
			base = project
		}
		if base == "" {
			continue
		}
		out = append(out, AgentPath{Agent: f.agent, Path: filepath.Join(append([]string{base}, f.parts...)...), Why: f.why})
	}
	return out
}

// CodexHome is where Codex keeps its user files (hooks.json, config.toml,
// sessions): env, the value of $CODEX_HOME, when it is set, else
// home/.codex ("" when both are ""). The one home of this rule: the
// protected set, init, doctor, uninstall and the hook's reading of Codex's
// session records all take it from here, so that loopguard never writes
// a hook file Codex does not read.
func CodexHome(home, env string) string {
	if env != "" {
		return env
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".codex")
}

// CodexHomeEnv is CodexHome for this process: its $CODEX_HOME, and the
// user's home directory.
func CodexHomeEnv() string {
	home, _ := os.UserHomeDir()
	return CodexHome(home, os.Getenv("CODEX_HOME"))
}

// agentProjectRule classifies segs (a path's segments from a dot-named one
// on) against the project files of agentFiles: such a file at any depth is
// guard-critical, as a nested project's own is.
func agentProjectRule(dir string, segs []string) (Protection, bool) {
	for _, f := range agentFiles {
		if f.base == atProject && foldPrefix(f.parts, segs) {
			return Protection{Tier: GuardCritical, What: f.why, Path: filepath.Join(append([]string{dir}, f.parts...)...)}, true
		}
	}
	return Protection{}, false
}

// AgentEnv lists environment variables each coding agent sets for the
// commands its tools run (seen on Claude Code 2.1.328, Codex 0.171.0, Gemini
// CLI 0.61.0, Copilot CLI 1.0.102; read from Qwen Code 0.24.4's shell tool
// and OpenCode 1.18.33's start-up, which sets OPENCODE=1 in its own
// environment). A command that finds one runs inside
// an agent, where approving, granting or changing the guard is refused.
var AgentEnv = []struct{ Var, Agent string }{
	{"CLAUDECODE", "Claude Code"},
	{"CODEX_THREAD_ID", "Codex"},
	{"CODEX_SESSION_ID", "Codex"},
	{"GEMINI_CLI", "Gemini CLI"},
	{"COPILOT_CLI", "Copilot CLI"},
	{"COPILOT_AGENT_SESSION_ID", "Copilot CLI"},
	{"QWEN_CODE", "Qwen Code"},
	{"OPENCODE", "OpenCode"},
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

// agentProjectAncestor reports whether segs (from a dot-named segment on)
// end inside the names of one of agentFiles' project files of more than
// one name (.github for .github/hooks): a directory moved into its place
// brings the file with it. It is executable configuration, not
// guard-critical: .github and .cursor hold ordinary files too.
func agentProjectAncestor(dir string, segs []string) (Protection, bool) {
	for _, f := range agentFiles {
		if f.base == atProject && len(segs) < len(f.parts) && foldPrefix(segs, f.parts) {
			return Protection{Tier: ExecConfig, What: "a directory that holds " + f.why, Path: filepath.Join(append([]string{dir}, segs...)...), Holds: ownHolder(segs[len(segs)-1])}, true
		}
	}
	return Protection{}, false
}

// foldPrefix reports whether the segments pre begin s, in any case.
func foldPrefix(pre, s []string) bool {
	if len(pre) > len(s) {
		return false
	}
	for i, p := range pre {
		if !strings.EqualFold(p, s[i]) {
			return false
		}
	}
	return true
}
