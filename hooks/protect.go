package hooks

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// protectedPaths are the directories and files no agent call may touch.
func (e *Engine) protectedPaths() []string {
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, filepath.Clean(p))
		}
	}
	add(e.Env.StateDir)
	add(e.Env.ConfigDir)
	add(e.Env.Self)
	if e.Env.Home != "" {
		add(filepath.Join(e.Env.Home, ".claude", "settings.json"))
		add(filepath.Join(e.Env.Home, ".claude", "settings.local.json"))
		add(filepath.Join(e.Env.Home, ".config", "loopguard"))
		add(filepath.Join(e.Env.Home, ".local", "share", "keyrings"))
		add(filepath.Join(e.Env.Home, ".local", "state", "loopguard"))
	}
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		add(filepath.Join(d, "settings.json"))
	}
	add("/etc/claude-code")
	return out
}

// isSettingsFile matches any .claude/settings.json or settings.local.json:
// project settings can register or remove hooks.
func isSettingsFile(p string) bool {
	base := filepath.Base(p)
	return filepath.Base(filepath.Dir(p)) == ".claude" &&
		(base == "settings.json" || base == "settings.local.json")
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// resolvePath cleans p (relative to cwd) and resolves symlinks, also for a
// path that does not exist yet (by resolving its longest existing parent).
func resolvePath(cwd, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	rest := ""
	cur := p
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// pathProtected reports whether p (literal or resolved) is a protected path.
func (e *Engine) pathProtected(cwd, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if strings.HasPrefix(p, "~/") && e.Env.Home != "" {
		p = filepath.Join(e.Env.Home, p[2:])
	}
	lit := p
	if !filepath.IsAbs(lit) {
		lit = filepath.Join(cwd, lit)
	}
	for _, cand := range []string{filepath.Clean(lit), resolvePath(cwd, p)} {
		if isSettingsFile(cand) {
			return cand, true
		}
		for _, prot := range e.protectedPaths() {
			if under(cand, prot) {
				return prot, true
			}
		}
	}
	return "", false
}

// protected reports why d touches loopguard itself or the agent's hook
// settings, or "" when it does not.
func (e *Engine) protected(c *Call, d *described) string {
	if d.target != "" {
		if what, ok := e.pathProtected(c.Cwd, d.target); ok {
			return "it would change " + what
		}
	}
	if field, ok := readTools[c.ToolName]; ok {
		if p, _ := c.ToolInput[field].(string); p != "" {
			if what, ok := e.pathProtected(c.Cwd, p); ok {
				return "it would read " + what
			}
		}
	}
	if d.shell != nil {
		return e.shellProtected(c, d)
	}
	return ""
}

func (e *Engine) shellProtected(c *Call, d *described) string {
	for name, exe := range d.shell.Executables {
		if policy.IsKeyringTool(name) || (exe != "" && (exe == e.Env.Self || policy.IsKeyringTool(exe))) {
			return "it runs " + name
		}
	}
	for _, w := range d.shell.Argv {
		if what, ok := e.pathProtected(c.Cwd, w.Value); ok {
			return "it names " + what
		}
	}
	for _, r := range d.shell.Redirects {
		if what, ok := e.pathProtected(c.Cwd, r.Target); ok {
			return "it redirects to " + what
		}
	}
	// Whatever the parse, look at the raw text with quotes and backslashes
	// taken out, so `.cla\ude/settings.json` or '.cl''aude' is caught too.
	cmd, _ := c.ToolInput["command"].(string)
	flat := strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(cmd)
	for _, prot := range e.protectedPaths() {
		if strings.Contains(flat, prot) {
			return "it names " + prot
		}
	}
	for _, frag := range []string{".local/state/loopguard", ".config/loopguard", ".local/share/keyrings", "org.freedesktop.secrets"} {
		if strings.Contains(flat, frag) {
			return "it names " + frag
		}
	}
	if strings.Contains(flat, ".claude") && strings.Contains(flat, "settings") {
		return "it names the agent's settings (.claude/settings*.json)"
	}
	for _, name := range policy.KeyringTools() {
		// "security" and "loopguard" are ordinary words in arguments; as
		// commands they were caught above.
		if name != "security" && name != "loopguard" && containsWord(flat, name) {
			return "it names " + name
		}
	}
	return ""
}

// containsWord reports whether name occurs in s not as part of a longer word.
func containsWord(s, name string) bool {
	isWord := func(b byte) bool {
		return b == '-' || b == '_' || b == '.' || (b >= '0' && b <= '9') || (b|0x20 >= 'a' && b|0x20 <= 'z')
	}
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isWord(s[j-1])) && (end == len(s) || !isWord(s[end])) {
			return true
		}
		i = j + 1
	}
}
