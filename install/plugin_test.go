package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPluginEnabled(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"enabledPlugins": {"loopguard@loopguard": true}}`, true},
		{`{"enabledPlugins": {"loopguard@loopguard": false}}`, false},
		{`{"enabledPlugins": {"loopguard@elsewhere": true}}`, false}, // another marketplace's "loopguard"
		{`{"enabledPlugins": {"loopguard@loopguard": "true"}}`, false},
		{`{"enabledPlugins": []}`, false},
		{`{}`, false},
		{`not json`, false},
	} {
		if got := PluginEnabled([]byte(c.data)); got != c.want {
			t.Errorf("PluginEnabled(%s) = %v; want %v", c.data, got, c.want)
		}
	}
}

// writePlugin installs a copy of the plugin with hooks under home's
// ~/.claude/plugins, as `claude plugin install` lays it out.
func writePlugin(t *testing.T, home string, hooks []byte) string {
	t.Helper()
	plugins := filepath.Join(home, ".claude", "plugins")
	root := filepath.Join(plugins, "cache", MarketplaceName, PluginName, "0.1.0")
	if err := os.MkdirAll(filepath.Join(root, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if hooks != nil {
		if err := os.WriteFile(filepath.Join(root, PluginHooksFile), hooks, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx := `{"version": 2, "plugins": {"` + PluginID + `": [{"scope": "user", "installPath": "` + root + `"}], "other@x": [{"installPath": "/elsewhere"}]}}`
	if err := os.WriteFile(filepath.Join(plugins, "installed_plugins.json"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// The plugin counts as registering loopguard only when a settings file
// enables it and the installed copy's hooks run loopguard for every event.
func TestPluginGuards(t *testing.T) {
	opts := Options{Binary: "loopguard-hook", Mode: "enforce", Wait: 2 * time.Minute, Deadline: 5 * time.Second}
	enabled := []byte(`{"enabledPlugins": {"loopguard@loopguard": true}}`)

	home := t.TempDir()
	env := Env{Home: home}
	if ok, err := PluginGuards(env, enabled); ok || err != nil {
		t.Fatalf("not installed: PluginGuards = %v, %v; want false", ok, err)
	}
	root := writePlugin(t, home, PluginHooks(opts))
	if roots, err := PluginInstalls(PluginsDir(env)); err != nil || len(roots) != 1 || roots[0] != root {
		t.Fatalf("PluginInstalls = %v, %v; want [%s]", roots, err, root)
	}
	if ok, err := PluginGuards(env, enabled); !ok || err != nil {
		t.Fatalf("installed and enabled: PluginGuards = %v, %v; want true", ok, err)
	}
	if ok, _ := PluginGuards(env, nil, []byte(`{}`)); ok {
		t.Error("installed but enabled nowhere: PluginGuards = true")
	}
	// A copy whose hooks leave out an event, or run something else, is no
	// registration of loopguard's.
	partial := strings.Replace(string(PluginHooks(opts)), `"PostToolUse"`, `"Stop"`, 1)
	writePlugin(t, home, []byte(partial))
	if ok, _ := PluginGuards(env, enabled); ok {
		t.Error("a plugin without PostToolUse counts as loopguard's registration")
	}
	// A copy an older release installed, without PostToolUseFailure, still
	// runs loopguard on every call: init must not register it a second
	// time (doctor says to update the plugin).
	writePlugin(t, home, withoutEvent(t, PluginHooks(opts), PostToolUseFailure))
	if ok, _ := PluginGuards(env, enabled); !ok {
		t.Error("a plugin without PostToolUseFailure does not count as loopguard's registration")
	}
	other := strings.ReplaceAll(string(PluginHooks(opts)), `"loopguard-hook"`, `"/bin/true"`)
	writePlugin(t, home, []byte(other))
	if ok, _ := PluginGuards(env, enabled); ok {
		t.Error("a plugin running /bin/true counts as loopguard's registration")
	}
	// $CLAUDE_CONFIG_DIR moves the plugins directory.
	if got := PluginsDir(Env{Home: home, ConfigDir: "/cfg"}); got != "/cfg/plugins" {
		t.Errorf("PluginsDir with CLAUDE_CONFIG_DIR = %s", got)
	}
}

// NoHooks takes loopguard's handlers out and still merges the sandbox;
// the other hooks stay.
func TestMergeNoHooks(t *testing.T) {
	o := Options{Binary: "/usr/local/bin/loopguard-hook", Deadline: 5 * time.Second}
	reg, _, err := Merge([]byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/bin/true"}]}]}}`), o)
	if err != nil {
		t.Fatal(err)
	}
	o.NoHooks = true
	o.Sandbox = &Sandbox{DenyWrite: []string{"//x"}}
	out, changed, err := Merge(reg, o)
	if err != nil || !changed {
		t.Fatalf("Merge NoHooks: changed %v, %v", changed, err)
	}
	regs, err := Hooks(out, o.Binary)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 1 || regs[0].Ours || regs[0].Event != "Stop" {
		t.Errorf("after NoHooks: %+v; want only the Stop hook", regs)
	}
	if sb, err := ReadSandbox(out); err != nil || sb == nil || !strings.Contains(string(out), `"//x"`) {
		t.Errorf("the sandbox was not merged: %s", out)
	}
	// A fresh file gets no empty "hooks".
	fresh, _, err := Merge(nil, o)
	if err != nil || strings.Contains(string(fresh), `"hooks"`) {
		t.Errorf("Merge(nil) with NoHooks = %s, %v", fresh, err)
	}
}
