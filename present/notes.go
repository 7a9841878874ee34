package present

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/token"
)

// CallNotes says where a call lands from its canonical bytes alone, for an
// approver on another machine, who reads none of its files: the target as
// the tool names it and as the hook resolved it (the descriptor records
// both, and the digest binds them), a .git/ or .claude/ directory, and
// executable configuration named at any depth (policy.ProjectExecConfig).
// Like Danger, it is a warning; it decides nothing.
func CallNotes(canonical []byte) []string {
	v, err := token.Decode(canonical)
	if err != nil {
		return []string{"the call does not decode"}
	}
	m, _ := v.(map[string]any)
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) && len(out) < 16 {
			out = append(out, s)
		}
	}
	exec := func(p, verb string) {
		if pr := policy.ProjectExecConfig(p); pr.Tier >= policy.ExecConfig {
			add("EXECUTABLE CONFIGURATION: " + verb + " " + EscapeText(p) + " (" + pr.What + "). It makes an agent, your shell, git or another tool run code later; approve only if you wrote this yourself")
		}
	}
	if t, ok := m["target"].(map[string]any); ok {
		p, _ := t["path"].(string)
		res, _ := t["resolved"].(string)
		if res != "" && res != p {
			add("TARGET: " + EscapeText(p) + " resolves to " + EscapeText(res) + " (through a symlink, as the hook on that machine resolved it)")
		}
		for _, at := range []string{p, res} {
			if at == "" {
				continue
			}
			for _, seg := range strings.Split(filepath.Clean(at), string(filepath.Separator)) {
				if s := strings.ToLower(seg); s == ".git" || s == ".claude" {
					add("WARNING: this writes into a " + seg + "/ directory (" + EscapeText(at) + ")")
					break
				}
			}
			exec(at, "it would change")
		}
	}
	in, _ := m["input"].(map[string]any)
	if cmd, ok := in["command"].(string); ok {
		flat := strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(cmd)
		for i, w := range shellparse.Tokens(flat) {
			if i >= shellparse.MaxTokens {
				add("the command has more words than are checked one by one")
				break
			}
			exec(w, "it names")
		}
	}
	return out
}
