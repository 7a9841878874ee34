package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/codex"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/install"
)

// checkAgents checks every other agent's hook files (user and this
// project's) that register loopguard: the registration is complete, its
// timeouts are above the hook's deadline, the host's fail-open settings are
// covered, and the agent will actually run it (Codex's trust, Gemini's
// switches). An agent with no loopguard registration gets one skip line.
func checkAgents(env doctorEnv) []checkResult {
	var out []checkResult
	for _, reg := range all.Registrations {
		ro := agents.RegOptions{Binary: env.self, Deadline: hooks.DefaultDeadline}
		found := false
		for _, path := range []string{reg.UserFile(env.settings.Home), reg.ProjectFile(env.settings.Cwd)} {
			data, _, err := install.ReadSettings(path)
			name := reg.Agent + " " + path
			if err != nil {
				out = append(out, checkResult{status: statusFail, name: name, detail: err.Error(), fix: "fix or remove the file, then run: loopguard init --agent " + reg.Agent})
				continue
			}
			if data == nil {
				continue
			}
			regs, err := install.AgentHooks(data, reg.File(ro))
			if err != nil {
				if hasLoopguard(data) {
					out = append(out, checkResult{status: statusFail, name: name, detail: err.Error(), fix: "fix the file by hand"})
				}
				continue
			}
			ours := false
			for _, r := range regs {
				ours = ours || r.Ours
			}
			if !ours {
				continue
			}
			found = true
			problems := reg.Check(regs, ro)
			problems = append(problems, agentRuns(reg.Agent, path, data)...)
			fix := "run: loopguard init --agent " + reg.Agent
			if path == reg.ProjectFile(env.settings.Cwd) {
				fix += " --project"
			}
			for _, p := range problems {
				out = append(out, checkResult{status: statusFail, name: name, detail: p, fix: fix})
			}
			if len(problems) == 0 {
				out = append(out, checkResult{status: statusOK, name: name, detail: "registered; an approval binds " + reg.Binding})
			}
		}
		if !found {
			out = append(out, checkResult{status: statusSkip, name: reg.Agent, detail: "loopguard is not registered (loopguard init --agent " + reg.Agent + ")"})
		}
	}
	return out
}

func hasLoopguard(data []byte) bool { return strings.Contains(string(data), "loopguard") }

// agentRuns checks what else decides whether the host runs loopguard's hook
// from the file at path.
func agentRuns(agent, path string, data []byte) []string {
	switch agent {
	case codex.Name:
		return codexTrusted(path)
	case gemini.Name:
		return geminiEnabled(data)
	}
	return nil
}

// codexHome is $CODEX_HOME or ~/.codex.
func codexHome() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex")
}

// codexTrusted looks in Codex's config.toml for the trust entry of the
// PreToolUse hook in path ([hooks.state."<path>:pre_tool_use:..."], which
// Codex writes when the user trusts the hook with /hooks), and for hooks
// being switched off. The entry's hash is not recomputed.
func codexTrusted(path string) []string {
	cfg := filepath.Join(codexHome(), "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil && !os.IsNotExist(err) {
		return []string{fmt.Sprintf("cannot read %s: %v", cfg, err)}
	}
	text := string(b)
	var problems []string
	if !strings.Contains(text, path+":pre_tool_use:") {
		problems = append(problems, fmt.Sprintf("the hook is not trusted in %s, so Codex does not run it (every call runs unguarded): start `codex`, type /hooks and trust loopguard's hooks", cfg))
	}
	for _, line := range strings.Split(text, "\n") {
		l := strings.ReplaceAll(line, " ", "")
		if l == "hooks=false" || l == "codex_hooks=false" {
			problems = append(problems, fmt.Sprintf("%s turns hooks off (%s)", cfg, strings.TrimSpace(line)))
		}
	}
	return problems
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
