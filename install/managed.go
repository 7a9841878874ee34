package install

import (
	"bytes"
	"runtime"
)

// ManagedSettingsPath is Claude Code's managed policy file: root's (an
// administrator's) settings, which no user, project or local file can
// override. "" where loopguard knows no such file.
func ManagedSettingsPath() string {
	switch runtime.GOOS {
	case "linux":
		return "/etc/claude-code/managed-settings.json"
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	}
	return ""
}

// Managed settings keys init --managed sets, besides the hooks and the
// sandbox.
const (
	// KeyManagedHooksOnly: only managed hooks (and plugins the managed
	// settings force-enable) run. loopguard, registered there, stays on;
	// a hook a user, a project or the agent adds does not run.
	KeyManagedHooksOnly = "allowManagedHooksOnly"
	// KeyDisableBypass, under "permissions", set to "disable" refuses
	// bypassPermissions mode (--dangerously-skip-permissions).
	KeyDisableBypass = "disableBypassPermissionsMode"
	keyPermissions   = "permissions"
)

// mergeManaged sets the managed-only switches in root.
func mergeManaged(root *node) error {
	if root.kind != '{' {
		return shapeError("the top level is not a JSON object")
	}
	if !isBool(root.get(KeyManagedHooksOnly), true) {
		root.set(KeyManagedHooksOnly, boolNode(true))
	}
	perms := root.get(keyPermissions)
	if perms != nil && perms.kind != '{' {
		return shapeError(`"permissions" is not a JSON object`)
	}
	perms = object(root, keyPermissions)
	if s, ok := perms.get(KeyDisableBypass).str(); !ok || s != "disable" {
		perms.set(KeyDisableBypass, fromValue("disable"))
	}
	return nil
}

// unmergeManaged takes the switches named by keys (ManagedLocks' names, as
// a record keeps them) out of data.
func unmergeManaged(data []byte, keys []string) ([]byte, bool, error) {
	root, err := parse(data)
	if err != nil {
		return nil, false, err
	}
	if root.kind != '{' {
		return data, false, nil
	}
	changed := false
	for _, k := range keys {
		switch k {
		case KeyManagedHooksOnly:
			if root.get(k) != nil {
				root.del(k)
				changed = true
			}
		case keyPermissions + "." + KeyDisableBypass:
			if perms := root.get(keyPermissions); perms != nil && perms.get(KeyDisableBypass) != nil {
				perms.del(KeyDisableBypass)
				if len(perms.keys) == 0 {
					root.del(keyPermissions)
				}
				changed = true
			}
		}
	}
	if !changed {
		return data, false, nil
	}
	out := encode(root, detectIndent(data))
	if bytes.HasSuffix(data, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, true, nil
}

// ManagedLocks reports which of the managed-only switches data (the
// managed settings) lacks, by key; none means both hold.
func ManagedLocks(data []byte) []string {
	root, err := parse(data)
	if err != nil || root.kind != '{' {
		return []string{KeyManagedHooksOnly, keyPermissions + "." + KeyDisableBypass}
	}
	var missing []string
	if !isBool(root.get(KeyManagedHooksOnly), true) {
		missing = append(missing, KeyManagedHooksOnly)
	}
	if s, ok := root.get(keyPermissions).get(KeyDisableBypass).str(); !ok || s != "disable" {
		missing = append(missing, keyPermissions+"."+KeyDisableBypass)
	}
	return missing
}
