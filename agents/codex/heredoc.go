package codex

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/patch"
	"github.com/loopguard/loopguard/hooks"
)

// Codex takes a shell command of the form `apply_patch <<'EOF' ... EOF`
// (optionally after `cd DIR && `) and applies the patch itself instead of
// running a shell; its hook still sees a Bash call (checked on 0.171.0). A
// Codex helper named apply_patch may also be on the command's PATH. So a
// Bash call whose first word is apply_patch or applypatch is a patch: in the
// heredoc form it is mapped like the apply_patch tool (the file it changes,
// that file's state); in any other form it is refused, since loopguard
// cannot tell what it would change.

var heredocPatch = lazyRegexp(`^(?:cd ([^\s'"\\$;&|<>()` + "`" + `]+|'[^']*') && )?(apply_patch|applypatch) <<(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)\n((?s:.*))\n([A-Za-z_][A-Za-z0-9_]*)\n?$`)

var firstWordPatch = lazyRegexp(`^\s*(?:cd\s+\S+\s*&&\s*)?\\?['"]?(apply_patch|applypatch)\b`)

// mapShellPatch maps a Bash call that Codex would treat as a patch. It
// reports false for any other command.
func mapShellPatch(c *hooks.Call) (bool, error) {
	cmd, ok := c.ToolInput["command"].(string)
	if !ok || !firstWordPatch().MatchString(cmd) {
		return false, nil
	}
	m := heredocPatch().FindStringSubmatch(cmd)
	if m == nil || m[3] != m[5] || m[4] != m[7] {
		return true, agents.Errorf("a shell apply_patch loopguard cannot read: use the form apply_patch <<'EOF' (patch) EOF, one file per patch")
	}
	dir, body := m[1], m[6]
	if dir != "" {
		dir = strings.Trim(dir, "'")
		c.Cwd = filepath.Clean(agents.Abs(c.Cwd, dir))
	}
	c.ToolInput = map[string]any{"command": cmd, "patch": body}
	return true, patch.Map(c, body)
}

// lazyRegexp compiles expr on first use: the hook of another agent never
// pays for it at start-up.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
