package install

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
	"github.com/loopguard/loopguard/shelltool"
)

// Gemini CLI's and Qwen Code's settings for loopguard's own shell tool
// (package shelltool): the built-in run_shell_command excluded, and
// loopguard-exec as the discovery and call commands, beside loopguard's
// hooks in the same user settings file (`init --agent gemini|qwen
// --ticket`). Uninstall takes them out with the hooks.

// ApplyAgentShellTool is ApplyAgent with the shell tool's settings for the
// wrapper launcher merged into the same file.
func ApplyAgentShellTool(path, backupDir string, f register.AgentFile, launcher string, dryRun bool) (*Result, error) {
	return apply(path, backupDir, editor{
		merge: func(data []byte) ([]byte, bool, error) {
			out, _, err := MergeAgent(data, f)
			if err != nil {
				return nil, false, err
			}
			root, err := parse(out)
			if err != nil {
				return nil, false, err
			}
			if err := mergeShellTool(root, launcher); err != nil {
				return nil, false, err
			}
			return encodeLike(root, data)
		},
		hasOurs: func(data []byte) bool { return RegistersAgent(data, f) },
	}, dryRun)
}

// RemoveAgentShellTool is RemoveAgent that also takes the shell tool's
// settings out, when they name a loopguard-exec.
func RemoveAgentShellTool(path, backupDir string, f register.AgentFile, dryRun bool) (*Result, error) {
	strip := func(root *node) (bool, error) {
		a, err := unmergeAgentTree(root, f)
		if err != nil {
			return false, err
		}
		return unmergeShellTool(root) || a, nil
	}
	return remove(path, backupDir, editor{
		unmerge: func(data []byte) ([]byte, bool, error) { return removeFrom(data, strip) },
		same: func(a, b []byte) bool {
			return sameWithout(a, b, func(n *node) error {
				_, err := strip(n)
				dropOff(n, f.Off, true)
				if hk := n.get("hooks"); err == nil && hk != nil && hk.kind == '{' && len(hk.keys) == 0 {
					n.del("hooks")
				}
				return err
			})
		},
	}, dryRun)
}

// HasShellTool reports whether settings data put loopguard's shell tool
// at launcher in place of the built-in shell.
func HasShellTool(data []byte, launcher string) bool {
	root, err := parse(data)
	if err != nil {
		return false
	}
	tools := root.get("tools")
	dc, _ := tools.get("discoveryCommand").str()
	cc, _ := tools.get("callCommand").str()
	return dc == shelltool.DiscoveryCommand(launcher) && cc == launcher && hasString(tools.get("exclude"), shelltool.BuiltinShell)
}

func mergeShellTool(root *node, launcher string) error {
	tools := root.get("tools")
	if tools == nil {
		tools = &node{kind: '{'}
		root.set("tools", tools)
	}
	if tools.kind != '{' {
		return &SyntaxError{Msg: `"tools" is not an object`}
	}
	ex := tools.get("exclude")
	if ex == nil {
		ex = &node{kind: '['}
		tools.set("exclude", ex)
	}
	if ex.kind != '[' {
		return &SyntaxError{Msg: `"tools.exclude" is not an array`}
	}
	if !hasString(ex, shelltool.BuiltinShell) {
		ex.elems = append(ex.elems, fromValue(shelltool.BuiltinShell))
	}
	for _, k := range []string{"discoveryCommand", "callCommand"} {
		if v := tools.get(k); v != nil {
			if s, _ := v.str(); !shellToolCommand(k, s) {
				return errors.New(`the settings already name tools.` + k + ` (` + s + `): a tool command of the user's own; loopguard's shell tool needs that setting`)
			}
		}
	}
	tools.set("discoveryCommand", fromValue(shelltool.DiscoveryCommand(launcher)))
	tools.set("callCommand", fromValue(launcher))
	return nil
}

// shellToolCommand reports whether a discovery or call command is loopguard's (a
// loopguard-exec, wherever it was installed).
func shellToolCommand(key, s string) bool {
	exe := s
	if key == "discoveryCommand" {
		rest, ok := strings.CutSuffix(s, " "+shelltool.DiscoverWord)
		if !ok {
			return false
		}
		exe = strings.Trim(rest, "'")
	}
	return filepath.IsAbs(exe) && strings.TrimSuffix(filepath.Base(exe), ".exe") == policy.ExecBinaryName
}

// unmergeShellTool takes loopguard's discovery and call commands out of
// root, and with them the exclusion of the built-in shell; tools and its
// exclude go when that empties them.
func unmergeShellTool(root *node) bool {
	tools := root.get("tools")
	if tools == nil || tools.kind != '{' {
		return false
	}
	changed := false
	for _, k := range []string{"discoveryCommand", "callCommand"} {
		if s, ok := tools.get(k).str(); ok && shellToolCommand(k, s) {
			tools.del(k)
			changed = true
		}
	}
	if !changed {
		return false
	}
	if ex := tools.get("exclude"); ex != nil && ex.kind == '[' {
		kept := ex.elems[:0:0]
		for _, e := range ex.elems {
			if s, ok := e.str(); !ok || s != shelltool.BuiltinShell {
				kept = append(kept, e)
			}
		}
		ex.elems = kept
		if len(kept) == 0 {
			tools.del("exclude")
		}
	}
	if len(tools.keys) == 0 {
		root.del("tools")
	}
	return true
}
