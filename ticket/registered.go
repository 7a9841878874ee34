package ticket

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/shellparse"
)

// Registered is what the wrapper runs without a ticket, by identity: the
// shell-form hook commands and the stdio MCP servers registered where the
// agent cannot write, the user's own files (in the home the password
// database names, never $HOME or CLAUDE_CONFIG_DIR) and the managed
// settings. A project's hooks and its .mcp.json are the repository's, and
// are not passed through.
type Registered struct {
	// Hooks are shell-form hook command lines, matched byte for byte.
	Hooks []string
	// Servers are stdio MCP servers' command and arguments, matched word
	// for word against the one command the host's quoted line holds.
	Servers [][]string
}

// ManagedSettings is Claude Code's managed settings file on Linux.
const ManagedSettings = "/etc/claude-code/managed-settings.json"

// maxSettings bounds a settings file the wrapper reads.
const maxSettings = 8 << 20

// ReadRegistered reads the registrations of the user whose home is home,
// for an MCP server started in cwd.
func ReadRegistered(home, cwd string) Registered {
	var r Registered
	for _, p := range []string{filepath.Join(home, ".claude", "settings.json"), ManagedSettings} {
		var s struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Type    string   `json:"type"`
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		if readJSON(p, &s) {
			for _, groups := range s.Hooks {
				for _, g := range groups {
					for _, h := range g.Hooks {
						if h.Type == "command" && h.Args == nil && h.Command != "" {
							r.Hooks = append(r.Hooks, h.Command)
						}
					}
				}
			}
		}
	}
	type server struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	var cj struct {
		MCPServers map[string]server `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]server `json:"mcpServers"`
		} `json:"projects"`
	}
	if readJSON(filepath.Join(home, ".claude.json"), &cj) {
		add := func(m map[string]server) {
			for _, s := range m {
				if (s.Type == "" || s.Type == "stdio") && s.Command != "" {
					r.Servers = append(r.Servers, append([]string{s.Command}, s.Args...))
				}
			}
		}
		add(cj.MCPServers)
		if p, ok := cj.Projects[cwd]; ok {
			add(p.MCPServers)
		}
	}
	return r
}

func readJSON(path string, v any) bool {
	data, err := fsx.ReadRegular(path, maxSettings, 0)
	return err == nil && json.Unmarshal(data, v) == nil
}

// match returns what to run for text when it is a registered hook command
// (sh -c, as the host would have run it) or a registered MCP server's line
// (its words, run directly).
func (r Registered) match(text string) ([]string, bool) {
	if slices.Contains(r.Hooks, text) {
		return []string{"/bin/sh", "-c", text}, true
	}
	cmds, _, ok := shellparse.List(text)
	if !ok || len(cmds) != 1 {
		return nil, false
	}
	for _, s := range r.Servers {
		if slices.Equal(s, cmds[0]) {
			return s, true
		}
	}
	return nil, false
}
