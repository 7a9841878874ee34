package install

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/register"
)

// Other agents' hook files (Codex hooks.json, Gemini settings.json,
// Copilot .github/hooks/*.json, Cursor hooks.json) are edited with the same
// tree, the same atomic writes and the same backup record as Claude Code's
// settings, so init is idempotent there too and uninstall puts the file
// back byte for byte when nothing else changed. What to write comes from
// the agent's adapter package; this file only knows the two shapes.

// What goes in the file (register.AgentFile) is said by package register
// and the agent's own package.

type agentGroup struct {
	Matcher string `json:"matcher,omitempty"`
	Hooks   []any  `json:"hooks"`
}

// isOursAgent reports whether a handler node runs loopguard's hook: its
// "command" or "bash" is a shell command running it (register.ParseShell),
// or its "exec" and "args" run it (register.Parse).
func isOursAgent(n *node, self string) bool {
	if n == nil || n.kind != '{' {
		return false
	}
	typ, ok := n.get("type").str()
	if ok && typ != "command" {
		return false
	}
	for _, k := range []string{"command", "bash"} {
		if c, ok := n.get(k).str(); ok && IsLoopguard(Handler{Type: "command", Command: c}, self) {
			return true
		}
	}
	if exe, ok := n.get("exec").str(); ok {
		h := Handler{Type: "command", Command: exe, Args: strs(n.get("args"))}
		return len(h.Args) > 0 && IsLoopguard(h, self)
	}
	return false
}

// agentHooks checks the shape of root's "hooks" for f and returns it (nil
// when absent).
func agentHooks(root *node, f register.AgentFile) (*node, error) { return hooksObject(root, f.Nested) }

// removeOursAgent takes loopguard's handlers out of every event of hk
// but those keep names (MergeAgent places loopguard's entry in them),
// dropping the groups (Nested) and event arrays this empties.
func removeOursAgent(hk *node, f register.AgentFile, keep map[string]bool) bool {
	removed := false
	for _, event := range append([]string{}, hk.keys...) {
		ev := hk.get(event)
		if keep[event] {
			continue
		}
		if removeHandlers(ev, f.Nested, func(h *node) bool { return isOursAgent(h, f.Self) }) {
			removed = true
			if len(ev.elems) == 0 {
				hk.del(event)
			}
		}
	}
	return removed
}

// MergeAgent returns data with loopguard registered as f says, one entry
// per f.Entries: in place of the first of loopguard's own in its event (a
// group that holds only loopguard's handler, or the handler itself in a
// flat file), whatever its matcher was (an older loopguard registered a
// list of tool names), else appended to the event; loopguard's handlers
// are removed from everywhere else. data nil means there is no file yet.
// changed is false, and out is data, when the registration is already
// exactly this.
func MergeAgent(data []byte, f register.AgentFile) (out []byte, changed bool, err error) {
	root, err := parseOrEmpty(data)
	if err != nil {
		return nil, false, err
	}
	if data == nil && f.Version != 0 {
		root.set("version", fromValue(f.Version))
	}
	hk, err := agentHooks(root, f)
	if err != nil {
		return nil, false, err
	}
	if hk == nil {
		hk = &node{kind: '{'}
		root.set("hooks", hk)
	}
	registers := map[string]bool{}
	for _, e := range f.Entries {
		registers[e.Event] = true
	}
	removeOursAgent(hk, f, registers)
	for _, e := range f.Entries {
		var want *node
		if f.Nested {
			want = fromValue(agentGroup{Matcher: e.Matcher, Hooks: []any{e.Handler}})
		} else {
			want = fromValue(e.Handler)
		}
		ev := hk.get(e.Event)
		if ev == nil {
			ev = &node{kind: '['}
			hk.set(e.Event, ev)
		}
		placeAgent(ev, want, f)
	}
	for _, path := range f.Off {
		if err := setOff(root, path); err != nil {
			return nil, false, err
		}
	}
	return encodeLike(root, data)
}

// dropOff takes the settings init turned off (AgentFile.Off) out of root
// where they hold false (all: whatever they hold, and an older scalar
// form above them, for comparing a file with the one init changed),
// with the objects that leaves empty.
func dropOff(root *node, paths []string, all bool) {
	for _, path := range paths {
		keys := strings.Split(path, ".")
		chain := []*node{root}
		n := root
		for _, k := range keys[:len(keys)-1] {
			if n = n.get(k); n == nil || n.kind != '{' {
				break
			}
			chain = append(chain, n)
		}
		if len(chain) < len(keys) {
			if all && n != nil && n.kind == 's' {
				chain[len(chain)-1].del(keys[len(chain)-1])
			}
		} else if v := n.get(keys[len(keys)-1]); v != nil && (all || string(v.raw) == "false") {
			n.del(keys[len(keys)-1])
		}
		for i := len(chain) - 1; i > 0 && len(chain[i].keys) == 0; i-- {
			chain[i-1].del(keys[i-1])
		}
	}
}

// setOff sets the boolean setting at the dotted path under root to false,
// making the objects on the way; one of them that is a scalar (an older
// form of the setting: Qwen Code's general.gitCoAuthor was a boolean, or
// a string) becomes an object, and an array there is an error.
func setOff(root *node, path string) error {
	keys := strings.Split(path, ".")
	n := root
	for i, k := range keys[:len(keys)-1] {
		next := n.get(k)
		if next == nil || next.kind != '{' {
			if next != nil && next.kind != 's' {
				return &SyntaxError{Msg: `"` + strings.Join(keys[:i+1], ".") + `" is not an object`}
			}
			next = &node{kind: '{'}
			n.set(k, next)
		}
		n = next
	}
	n.set(keys[len(keys)-1], fromValue(false))
	return nil
}

// placeAgent puts want, loopguard's entry, in the event array ev: in place
// of the first element that is loopguard's alone, taking loopguard out of
// every other; with none, loopguard is taken out of every element and want
// appended.
func placeAgent(ev, want *node, f register.AgentFile) {
	ours := func(h *node) bool { return isOursAgent(h, f.Self) }
	alone := func(g *node) bool {
		if !f.Nested {
			return ours(g)
		}
		if g.kind != '{' {
			return false
		}
		hs := g.get("hooks")
		if hs == nil || len(hs.elems) != 1 || !ours(hs.elems[0]) {
			return false
		}
		for _, k := range g.keys {
			if k != "matcher" && k != "hooks" {
				return false
			}
		}
		return true
	}
	slot := slices.IndexFunc(ev.elems, alone)
	if slot < 0 {
		removeHandlers(ev, f.Nested, ours)
		ev.elems = append(ev.elems, want)
		return
	}
	var kept []*node
	for i, g := range ev.elems {
		if i == slot {
			kept = append(kept, want)
			continue
		}
		one := &node{kind: '[', elems: []*node{g}}
		removeHandlers(one, f.Nested, ours)
		kept = append(kept, one.elems...)
	}
	ev.elems = kept
}

// UnmergeAgent returns data without loopguard's handlers, dropping the
// groups, event arrays and "hooks" object this empties.
func UnmergeAgent(data []byte, f register.AgentFile) (out []byte, changed bool, err error) {
	return removeFrom(data, func(root *node) (bool, error) { return unmergeAgentTree(root, f) })
}

func unmergeAgentTree(root *node, f register.AgentFile) (bool, error) {
	hk, err := agentHooks(root, f)
	if err != nil || hk == nil {
		return false, err
	}
	changed := removeOursAgent(hk, f, nil)
	if changed {
		dropOff(root, f.Off, false)
	}
	if changed && len(hk.keys) == 0 {
		root.del("hooks")
		// What is left of a file that held only hooks is its version.
		if v := root.get("version"); len(root.keys) == 1 && v != nil && f.Version != 0 && string(v.raw) == fmt.Sprint(f.Version) {
			root.del("version")
		}
	}
	return changed, nil
}

// ApplyAgent registers loopguard in the agent's hook file at path (see
// Apply: the same checks, atomic write and backup record).
func ApplyAgent(path, backupDir string, f register.AgentFile, dryRun bool) (*Result, error) {
	return apply(path, backupDir, editor{
		merge:   func(data []byte) ([]byte, bool, error) { return MergeAgent(data, f) },
		hasOurs: func(data []byte) bool { return RegistersAgent(data, f) },
	}, dryRun)
}

// RemoveAgent takes loopguard's registration out of the agent's hook file
// at path, restoring the original bytes when the rest is unchanged (see
// Remove).
func RemoveAgent(path, backupDir string, f register.AgentFile, dryRun bool) (*Result, error) {
	return remove(path, backupDir, editor{
		unmerge: func(data []byte) ([]byte, bool, error) { return UnmergeAgent(data, f) },
		same:    func(a, b []byte) bool { return sameAgent(a, b, f) },
	}, dryRun)
}

// RegistersAgent reports whether an agent's hook file data registers
// loopguard's hook as f says.
func RegistersAgent(data []byte, f register.AgentFile) bool {
	rs, _ := AgentHooks(data, f)
	for _, r := range rs {
		if r.Ours {
			return true
		}
	}
	return false
}

func sameAgent(a, b []byte, f register.AgentFile) bool {
	return sameWithout(a, b, func(n *node) error {
		_, err := unmergeAgentTree(n, f)
		dropOff(n, f.Off, true)
		if hk := n.get("hooks"); err == nil && hk != nil && hk.kind == '{' && len(hk.keys) == 0 {
			n.del("hooks")
		}
		return err
	})
}

// AgentHooks lists every handler in an agent's hook file, in file order.
func AgentHooks(data []byte, f register.AgentFile) ([]register.Found, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	hk, err := agentHooks(root, f)
	if err != nil || hk == nil {
		return nil, err
	}
	var out []register.Found
	add := func(event, matcher string, h *node) {
		var m map[string]any
		if json.Unmarshal(encode(h, ""), &m) != nil {
			return
		}
		if mm, ok := m["matcher"].(string); ok && matcher == "" {
			matcher = mm
		}
		out = append(out, register.Found{Event: event, Matcher: matcher, Fields: m, Ours: isOursAgent(h, f.Self)})
	}
	for i, event := range hk.keys {
		for _, g := range hk.vals[i].elems {
			if !f.Nested {
				add(event, "", g)
				continue
			}
			m, _ := g.get("matcher").str()
			if hs := g.get("hooks"); hs != nil {
				for _, h := range hs.elems {
					add(event, m, h)
				}
			}
		}
	}
	return out, nil
}
