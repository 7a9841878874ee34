package install

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Sandbox is what loopguard adds to Claude Code's "sandbox" settings so that
// the Bash commands it lets run are confined by the OS (bubblewrap and socat
// on Linux, Seatbelt on macOS): the fixed switches in SandboxSwitches, plus
// the paths and environment below. Entries are written as given; use
// SandboxPath to spell a path.
type Sandbox struct {
	DenyWrite  []string `json:"deny_write,omitempty"`  // sandbox.filesystem.denyWrite
	DenyRead   []string `json:"deny_read,omitempty"`   // sandbox.filesystem.denyRead
	AllowWrite []string `json:"allow_write,omitempty"` // sandbox.filesystem.allowWrite (the sandbox-only Go cache)
	Env        []EnvVar `json:"env,omitempty"`         // top-level "env", set only where the name is absent
	// Exclude are sandbox.excludedCommands entries: those that take the
	// launcher's network and unconfined forms out of the sandbox
	// (confine.Exclusions), written only with two-phase enforcement,
	// whose wrapper runs such a command only on a ticket.
	Exclude []string `json:"exclude,omitempty"`
	// Unexclude are excludedCommands entries taken out when present:
	// init's own entries, when it registers without two-phase
	// enforcement (they must never stand without the wrapper). Not
	// recorded.
	Unexclude []string `json:"-"`
}

// EnvVar is one entry of the settings' "env" object.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Switch is one boolean key of the "sandbox" object and the value loopguard
// requires.
type Switch struct {
	Key   string
	Value bool
	Why   string
}

// SandboxSwitches are the sandbox keys loopguard sets, in the order written.
// A key the file already holds with this value is left alone; any other value
// is replaced (loopguard only ever strengthens), and uninstall puts it back.
var SandboxSwitches = []Switch{
	{"enabled", true, "Bash commands run inside the OS sandbox"},
	{"failIfUnavailable", true, "Claude Code refuses to start when the sandbox cannot (instead of running every command unsandboxed)"},
	{"allowUnsandboxedCommands", false, "the agent's dangerouslyDisableSandbox is ignored (the default, true, lets any command leave the sandbox)"},
	{"autoAllowBashIfSandboxed", false, "sandboxed commands are not approved without a prompt"},
}

// The keys of the sandbox settings loopguard reads and writes.
const (
	KeySandbox    = "sandbox"
	KeyFilesystem = "filesystem"
	KeyDenyWrite  = "denyWrite"
	KeyDenyRead   = "denyRead"
	KeyAllowWrite = "allowWrite"
	KeyEnv        = "env"
	KeyExcluded   = "excludedCommands"
)

// SandboxPath spells an absolute path for the sandbox's filesystem lists.
// Claude Code reads "//x" as the absolute path /x; a single leading slash
// may be read relative to the settings file's directory, as in permission
// rules, so it is never used.
func SandboxPath(abs string) string {
	return "/" + filepath.Clean(abs)
}

// SandboxPathReadings are the absolute paths a sandbox filesystem entry, or
// the path of an Edit(...) permission rule, may mean: "//x" is /x, "~/x" is
// under home, "/x" is ambiguous (absolute, or relative to the settings file's
// directory or the project), and anything else is relative to the project.
// Glob characters end the path at the directory before them. Callers that
// look for danger check every reading; callers that look for protection
// require all of them.
func SandboxPathReadings(entry, home, settingsDir, project string) []string {
	p := entry
	if i := strings.IndexAny(p, "*?[{"); i >= 0 {
		p = p[:i]
		if j := strings.LastIndexByte(p, '/'); j >= 0 {
			p = p[:j+1]
		} else {
			p = ""
		}
	}
	var out []string
	add := func(s string) {
		s = filepath.Clean(s)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch {
	case strings.HasPrefix(p, "//"):
		add(p[1:])
	case p == "~" || strings.HasPrefix(p, "~/"):
		add(filepath.Join(home, strings.TrimPrefix(p, "~")))
	case strings.HasPrefix(p, "/"):
		add(p)
		if settingsDir != "" {
			add(filepath.Join(settingsDir, p))
		}
		if project != "" {
			add(filepath.Join(project, p))
		}
	default:
		if project != "" {
			add(filepath.Join(project, p))
		}
	}
	return out
}

func (s *Sandbox) check() error {
	for _, list := range [][]string{s.DenyWrite, s.DenyRead, s.AllowWrite, s.Exclude} {
		for _, p := range list {
			if p == "" || len(p) > 4096 || strings.ContainsAny(p, "\x00\n\r") {
				return fmt.Errorf("sandbox path %q is empty, too long or holds control characters", p)
			}
		}
	}
	for _, e := range s.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00\n\r") || strings.ContainsAny(e.Value, "\x00\n\r") {
			return fmt.Errorf("sandbox environment entry %q is not valid", e.Name)
		}
	}
	return nil
}

// Union is s with the entries of t it lacks appended (nil-safe).
func (s *Sandbox) Union(t *Sandbox) *Sandbox {
	if s == nil && t == nil {
		return nil
	}
	var out Sandbox
	for _, x := range []*Sandbox{s, t} {
		if x == nil {
			continue
		}
		out.DenyWrite = appendNew(out.DenyWrite, x.DenyWrite...)
		out.DenyRead = appendNew(out.DenyRead, x.DenyRead...)
		out.AllowWrite = appendNew(out.AllowWrite, x.AllowWrite...)
		out.Exclude = appendNew(out.Exclude, x.Exclude...)
		for _, e := range x.Env {
			if !slices.ContainsFunc(out.Env, func(o EnvVar) bool { return o.Name == e.Name }) {
				out.Env = append(out.Env, e)
			}
		}
	}
	return &out
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

func boolNode(v bool) *node {
	if v {
		return &node{kind: 's', raw: []byte("true")}
	}
	return &node{kind: 's', raw: []byte("false")}
}

func isBool(n *node, v bool) bool {
	return n != nil && n.kind == 's' && string(n.raw) == string(boolNode(v).raw)
}

// object returns parent[key], creating an empty object when absent (the
// shape was checked by sandboxShape).
func object(parent *node, key string) *node {
	n := parent.get(key)
	if n == nil {
		n = &node{kind: '{'}
		parent.set(key, n)
	}
	return n
}

// mergeSandbox adds s and SandboxSwitches to root, never weakening what is
// there: switches take loopguard's value, list entries are appended when
// missing, env names already present are kept.
func mergeSandbox(root *node, s *Sandbox) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := sandboxShape(root); err != nil {
		return err
	}
	sb := object(root, KeySandbox)
	for _, sw := range SandboxSwitches {
		if !isBool(sb.get(sw.Key), sw.Value) {
			sb.set(sw.Key, boolNode(sw.Value))
		}
	}
	lists := []struct {
		key  string
		vals []string
	}{{KeyDenyWrite, s.DenyWrite}, {KeyDenyRead, s.DenyRead}, {KeyAllowWrite, s.AllowWrite}}
	for _, l := range lists {
		if len(l.vals) == 0 {
			continue
		}
		fs := object(sb, KeyFilesystem)
		arr := fs.get(l.key)
		if arr == nil {
			arr = &node{kind: '['}
			fs.set(l.key, arr)
		}
		for _, v := range l.vals {
			if !hasString(arr, v) {
				arr.elems = append(arr.elems, fromValue(v))
			}
		}
	}
	if arr := sb.get(KeyExcluded); arr != nil && len(s.Unexclude) > 0 {
		kept := arr.elems[:0:0]
		for _, e := range arr.elems {
			if v, ok := e.str(); !ok || !slices.Contains(s.Unexclude, v) {
				kept = append(kept, e)
			}
		}
		arr.elems = kept
		if len(arr.elems) == 0 {
			sb.del(KeyExcluded)
		}
	}
	if len(s.Exclude) > 0 {
		arr := sb.get(KeyExcluded)
		if arr == nil {
			arr = &node{kind: '['}
			sb.set(KeyExcluded, arr)
		}
		for _, v := range s.Exclude {
			if !hasString(arr, v) {
				arr.elems = append(arr.elems, fromValue(v))
			}
		}
	}
	if len(s.Env) > 0 {
		env := object(root, KeyEnv)
		for _, e := range s.Env {
			if env.get(e.Name) == nil {
				env.set(e.Name, fromValue(e.Value))
			}
		}
	}
	return nil
}

// sandboxShape refuses a file whose sandbox settings are not the shape
// Claude Code reads, before anything is changed.
func sandboxShape(root *node) error {
	if root.kind != '{' {
		return shapeError("the top level is not a JSON object")
	}
	if env := root.get(KeyEnv); env != nil && env.kind != '{' {
		return shapeError(`"env" is not an object`)
	}
	sb := root.get(KeySandbox)
	if sb == nil {
		return nil
	}
	if sb.kind != '{' {
		return shapeError(`"sandbox" is not an object`)
	}
	if a := sb.get(KeyExcluded); a != nil && a.kind != '[' {
		return shapeError(`"sandbox.excludedCommands" is not an array`)
	}
	fs := sb.get(KeyFilesystem)
	if fs == nil {
		return nil
	}
	if fs.kind != '{' {
		return shapeError(`"sandbox.filesystem" is not an object`)
	}
	for _, k := range []string{KeyDenyWrite, KeyDenyRead, KeyAllowWrite} {
		if a := fs.get(k); a != nil && a.kind != '[' {
			return shapeError(`"sandbox.filesystem.%s" is not an array`, k)
		}
	}
	return nil
}

func hasString(arr *node, v string) bool {
	if arr == nil || arr.kind != '[' {
		return false
	}
	for _, e := range arr.elems {
		if s, ok := e.str(); ok && s == v {
			return true
		}
	}
	return false
}

// UnmergeSandbox takes out of data what Merge added for s, given original,
// the file's bytes before loopguard first wrote it (nil: there was no file).
// A switch that still holds loopguard's value gets its original value back
// (or is removed when it had none); list entries and env names of s that the
// original lacked are removed; containers that this empties and the original
// lacked are removed. Later edits by someone else are kept. changed is false,
// and out is data, when there was nothing to take out.
func UnmergeSandbox(data, original []byte, s *Sandbox) (out []byte, changed bool, err error) {
	if s == nil {
		return data, false, nil
	}
	root, err := parse(data)
	if err != nil {
		return nil, false, err
	}
	orig := &node{kind: '{'}
	if original != nil {
		if orig, err = parse(original); err != nil {
			return nil, false, fmt.Errorf("the recorded original: %w", err)
		}
	}
	if root.kind != '{' {
		return nil, false, shapeError("the top level is not a JSON object")
	}
	if orig.kind != '{' {
		orig = &node{kind: '{'}
	}
	if !unmergeSandboxTree(root, orig, s) {
		return data, false, nil
	}
	out = encode(root, detectIndent(data))
	if len(data) > 0 && data[len(data)-1] == '\n' {
		out = append(out, '\n')
	}
	return out, true, nil
}

func unmergeSandboxTree(root, orig *node, s *Sandbox) bool {
	changed := false
	osb := orig.get(KeySandbox)
	if sb := root.get(KeySandbox); sb != nil && sb.kind == '{' {
		for _, sw := range SandboxSwitches {
			cur := sb.get(sw.Key)
			if !isBool(cur, sw.Value) {
				continue // someone else's value since
			}
			switch was := osb.get(sw.Key); {
			case was == nil:
				sb.del(sw.Key)
				changed = true
			case !isBool(was, sw.Value):
				sb.set(sw.Key, was)
				changed = true
			}
		}
		if unmergeList(sb, osb, KeyExcluded, s.Exclude) {
			changed = true
		}
		ofs := osb.get(KeyFilesystem)
		if fs := sb.get(KeyFilesystem); fs != nil && fs.kind == '{' {
			lists := []struct {
				key  string
				vals []string
			}{{KeyDenyWrite, s.DenyWrite}, {KeyDenyRead, s.DenyRead}, {KeyAllowWrite, s.AllowWrite}}
			for _, l := range lists {
				arr := fs.get(l.key)
				if arr == nil || arr.kind != '[' {
					continue
				}
				oarr := ofs.get(l.key)
				kept := arr.elems[:0:0]
				for _, e := range arr.elems {
					v, ok := e.str()
					if ok && slices.Contains(l.vals, v) && !hasString(oarr, v) {
						changed = true
						continue
					}
					kept = append(kept, e)
				}
				arr.elems = kept
				if len(arr.elems) == 0 && oarr == nil {
					fs.del(l.key)
					changed = true
				}
			}
			if len(fs.keys) == 0 && ofs == nil {
				sb.del(KeyFilesystem)
				changed = true
			}
		}
		if len(sb.keys) == 0 && osb == nil {
			root.del(KeySandbox)
			changed = true
		}
	}
	oenv := orig.get(KeyEnv)
	if env := root.get(KeyEnv); env != nil && env.kind == '{' {
		for _, e := range s.Env {
			cur, ok := env.get(e.Name).str()
			if ok && cur == e.Value && oenv.get(e.Name) == nil {
				env.del(e.Name)
				changed = true
			}
		}
		if len(env.keys) == 0 && oenv == nil {
			root.del(KeyEnv)
			changed = true
		}
	}
	return changed
}

// unmergeList takes out of parent[key] the entries of vals that orig[key]
// lacked, and the key itself when that empties it and orig lacked it.
func unmergeList(parent, orig *node, key string, vals []string) bool {
	arr := parent.get(key)
	if arr == nil || arr.kind != '[' || len(vals) == 0 {
		return false
	}
	oarr := orig.get(key)
	changed := false
	kept := arr.elems[:0:0]
	for _, e := range arr.elems {
		v, ok := e.str()
		if ok && slices.Contains(vals, v) && !hasString(oarr, v) {
			changed = true
			continue
		}
		kept = append(kept, e)
	}
	arr.elems = kept
	if len(arr.elems) == 0 && oarr == nil {
		parent.del(key)
		changed = true
	}
	return changed
}

// SandboxSettings is the sandbox-related part of one settings file, as
// `loopguard doctor` judges it. Unknown shapes read as absent.
type SandboxSettings struct {
	Present  bool            // the file has a "sandbox" object
	Bools    map[string]bool // every boolean key of "sandbox" (nested keys as "network.allowAllUnixSockets")
	Lists    map[string][]string
	EditRule []string // the paths of Edit(...) rules in permissions.allow
	Env      map[string]string
}

// ReadSandbox reads the sandbox-related settings of data.
func ReadSandbox(data []byte) (*SandboxSettings, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	out := &SandboxSettings{Bools: map[string]bool{}, Lists: map[string][]string{}, Env: map[string]string{}}
	if root.kind != '{' {
		return out, nil
	}
	if sb := root.get(KeySandbox); sb != nil && sb.kind == '{' {
		out.Present = true
		var walk func(prefix string, n *node)
		walk = func(prefix string, n *node) {
			for i, k := range n.keys {
				v := n.vals[i]
				switch {
				case v.kind == '{':
					walk(prefix+k+".", v)
				case v.kind == '[':
					var l []string
					for _, e := range v.elems {
						if s, ok := e.str(); ok {
							l = append(l, s)
						} else {
							l = append(l, string(encode(e, "")))
						}
					}
					out.Lists[prefix+k] = l
				case isBool(v, true):
					out.Bools[prefix+k] = true
				case isBool(v, false):
					out.Bools[prefix+k] = false
				}
			}
		}
		walk("", sb)
	}
	if perms := root.get("permissions"); perms != nil {
		if allow := perms.get("allow"); allow != nil && allow.kind == '[' {
			for _, e := range allow.elems {
				r, _ := e.str()
				if p, ok := strings.CutPrefix(r, "Edit("); ok && strings.HasSuffix(p, ")") {
					out.EditRule = append(out.EditRule, strings.TrimSuffix(p, ")"))
				}
			}
		}
	}
	if env := root.get(KeyEnv); env != nil && env.kind == '{' {
		for i, k := range env.keys {
			if s, ok := env.vals[i].str(); ok {
				out.Env[k] = s
			}
		}
	}
	return out, nil
}
