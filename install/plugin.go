package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
)

// loopguard's Claude Code plugin, in the repository's marketplace
// (.claude-plugin/marketplace.json; the plugin is plugins/loopguard). Its
// hooks/hooks.json is PluginHooks' output: init's registration with the
// hook binary named, not a path, so that Claude Code runs the
// loopguard-hook its PATH finds (the release archive's, Homebrew's).
const (
	PluginName      = "loopguard"
	MarketplaceName = "loopguard"
	PluginID        = PluginName + "@" + MarketplaceName
	// PluginHooksFile is the plugin's hook registration, relative to
	// its root.
	PluginHooksFile = "hooks/hooks.json"
)

// PluginHooks is the hooks/hooks.json of loopguard's plugin: HandlerFor
// every event, as init registers it, with o.Binary as Claude Code should
// find it (a bare name is looked up in its PATH).
func PluginHooks(o Options) []byte {
	root := &node{kind: '{'}
	root.set("description", fromValue("loopguard: every tool call runs only with a human's approval (loopguard-hook, from your PATH)"))
	hk := &node{kind: '{'}
	for _, ev := range Events {
		hk.set(ev, &node{kind: '[', elems: []*node{fromValue(group{Matcher: o.matcher(), Hooks: []Handler{HandlerFor(o, ev)}})}})
	}
	root.set("hooks", hk)
	return append(encode(root, "  "), '\n')
}

// PluginEnabled reports whether the settings data enable loopguard's
// plugin ("enabledPlugins": {"loopguard@loopguard": true}).
func PluginEnabled(data []byte) bool {
	root, err := parse(data)
	if err != nil || root.kind != '{' {
		return false
	}
	ep := root.get("enabledPlugins")
	return ep != nil && ep.kind == '{' && isBool(ep.get(PluginID), true)
}

// PluginsDir is the directory where Claude Code keeps its plugins:
// $CLAUDE_CONFIG_DIR/plugins, or ~/.claude/plugins.
func PluginsDir(env Env) string {
	if env.ConfigDir != "" {
		return filepath.Join(env.ConfigDir, "plugins")
	}
	return filepath.Join(env.Home, ".claude", "plugins")
}

// maxPluginIndex bounds installed_plugins.json.
const maxPluginIndex = 1 << 20

// PluginInstalls lists where Claude Code installed loopguard's plugin
// (installed_plugins.json in pluginsDir: one path per installed scope).
// None, and no error, when it is not installed.
func PluginInstalls(pluginsDir string) ([]string, error) {
	path := filepath.Join(pluginsDir, "installed_plugins.json")
	data, _, err := ReadSettings(path)
	if err != nil || data == nil {
		return nil, err
	}
	if len(data) > maxPluginIndex {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPluginIndex)
	}
	var idx struct {
		Plugins map[string][]struct {
			Scope       string `json:"scope"`
			InstallPath string `json:"installPath"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, in := range idx.Plugins[PluginID] {
		if filepath.IsAbs(in.InstallPath) {
			out = append(out, filepath.Clean(in.InstallPath))
		}
	}
	return out, nil
}

// PluginRegistered reads the hooks an installed copy of the plugin (its
// root, from PluginInstalls) registers. A copy without hooks.json
// registers none.
func PluginRegistered(root string) ([]Registered, error) {
	data, _, err := ReadSettings(filepath.Join(root, PluginHooksFile))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && data == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Hooks(data, "")
}

// PluginGuards reports whether loopguard's plugin registers loopguard for
// every event here: enabled in one of the settings files (their bytes,
// nil for an absent file) and installed with hooks that run loopguard for
// each of Events. Then init registers no hook of its own, so the hook never
// runs twice for one call.
func PluginGuards(env Env, settings ...[]byte) (bool, error) {
	enabled := false
	for _, data := range settings {
		if data != nil && PluginEnabled(data) {
			enabled = true
		}
	}
	if !enabled {
		return false, nil
	}
	roots, err := PluginInstalls(PluginsDir(env))
	if err != nil {
		return false, err
	}
	for _, root := range roots {
		regs, err := PluginRegistered(root)
		if err != nil {
			return false, err
		}
		if CoversEvents(regs) {
			return true, nil
		}
	}
	return false, nil
}

// CoversEvents reports whether regs run loopguard for every one of Events,
// or for every one but those of Later (a registration an older init or
// plugin wrote).
func CoversEvents(regs []Registered) bool {
	seen := map[string]bool{}
	for _, r := range regs {
		if r.Ours {
			seen[r.Event] = true
		}
	}
	for _, ev := range Events {
		if !seen[ev] && !slices.Contains(Later, ev) {
			return false
		}
	}
	return true
}
