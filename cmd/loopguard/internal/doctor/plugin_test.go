package doctor

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

// settingsReport runs doctor's settings checks over a home whose user
// settings are user (nil: none), a managed file managed (nil: none), and
// loopguard's plugin installed with hooks plugin (nil: not installed).
func settingsReport(t *testing.T, user, managed, plugin []byte) string {
	t.Helper()
	home := t.TempDir()
	self, err := cli.SelfPath()
	if err != nil {
		t.Fatal(err)
	}
	write := func(p string, b []byte) {
		testfs.Write(t, p, b, 0o644)
	}
	if user != nil {
		write(filepath.Join(home, ".claude", "settings.json"), user)
	}
	env := doctorEnv{self: self, settings: install.Env{Home: home, Cwd: home}, managed: filepath.Join(home, "managed-settings.json")}
	if managed != nil {
		write(env.managed, managed)
	}
	if plugin != nil {
		root := filepath.Join(home, ".claude", "plugins", "cache", "loopguard", "loopguard", "0.1.0")
		write(filepath.Join(root, install.PluginHooksFile), plugin)
		write(filepath.Join(home, ".claude", "plugins", "installed_plugins.json"),
			[]byte(`{"version": 2, "plugins": {"loopguard@loopguard": [{"scope": "user", "installPath": "`+root+`"}]}}`))
	}
	var b strings.Builder
	for _, r := range checkSettings(env) {
		b.WriteString(r.status.String() + "  " + r.name + ": " + r.detail + "\n")
		for _, l := range strings.Split(r.fix, "\n") {
			if l != "" {
				b.WriteString("      fix: " + l + "\n")
			}
		}
	}
	return b.String()
}

// withoutFailure is a registration as an older init wrote it, without
// PostToolUseFailure.
func withoutFailure(t *testing.T, reg []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(reg, &m); err != nil {
		t.Fatal(err)
	}
	hk, _ := m["hooks"].(map[string]any)
	if hk[install.PostToolUseFailure] == nil {
		t.Fatalf("no PostToolUseFailure to take out:\n%s", reg)
	}
	delete(hk, install.PostToolUseFailure)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDoctorManagedAndPlugin(t *testing.T) {
	self, err := cli.SelfPath()
	if err != nil {
		t.Fatal(err)
	}
	o := install.Options{Binary: self, Mode: hooks.ModeEnforce, Deadline: agents.DefaultDeadline}
	merged := func(data []byte, o install.Options) []byte {
		out, _, err := install.Merge(data, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	userReg := merged(nil, o)
	om := o
	om.Managed = true
	managedReg := merged(nil, om)
	pluginHooks := install.PluginHooks(install.Options{Binary: policy.HookBinaryName, Mode: hooks.ModeEnforce,
		Wait: time.Minute, Deadline: agents.DefaultDeadline})

	for _, c := range []struct {
		name                string
		user, managed, plug []byte
		want, not           []string
	}{
		{name: "control: user settings", user: userReg,
			want: []string{"ok    hooks PreToolUse: registered (1)"}, not: []string{"FAIL"}},
		{name: "allowManagedHooksOnly without loopguard in the managed settings", user: userReg, managed: []byte(`{"allowManagedHooksOnly": true}`),
			want: []string{"FAIL  hooks PreToolUse: loopguard is not registered", "FAIL  managed " /* its line */, "Claude Code runs no hook from user, project or local settings"}},
		{name: "managed registration", managed: managedReg,
			want: []string{"ok    hooks PreToolUse: registered (1)", "managed-settings.json: runs this binary"}},
		{name: "managed and user", user: userReg, managed: managedReg,
			want: []string{"ok    hooks PreToolUse: registered (1)", "WARN  managed "}},
		{name: "plugin and user settings", user: append(userReg[:len(userReg)-2:len(userReg)-2], []byte(`,"enabledPlugins": {"loopguard@loopguard": true}}`)...), plug: pluginHooks,
			want: []string{"FAIL  hooks PreToolUse: loopguard runs twice for every call", "ok    plugin loopguard@loopguard: enabled in"}},
		{name: "plugin installed, not enabled", user: userReg, plug: pluginHooks,
			want: []string{"ok    hooks PreToolUse: registered (1)", "ok    hooks PostToolUseFailure: registered (1)"}, not: []string{"runs twice", "plugin loopguard@loopguard"}},
		// What an older init or plugin registered, without
		// PostToolUseFailure: the rest still counts, and the fix names the
		// layer that holds it.
		{name: "older user settings", user: withoutFailure(t, userReg),
			want: []string{"ok    hooks PreToolUse: registered (1)", "ok    hooks PostToolUse: registered (1)",
				"FAIL  hooks PostToolUseFailure: loopguard is registered without PostToolUseFailure (an older loopguard registered it)",
				"fix: re-run loopguard init to register PostToolUseFailure\n"},
			not: []string{"hooks PreToolUse: loopguard is not registered", "plugin update", "--managed"}},
		{name: "older plugin", user: []byte(`{"enabledPlugins": {"loopguard@loopguard": true}}`), plug: withoutFailure(t, pluginHooks),
			want: []string{"ok    hooks PreToolUse: registered (1)", "FAIL  hooks PostToolUseFailure: loopguard is registered without PostToolUseFailure",
				"fix: update the plugin, which registers PostToolUseFailure: claude plugin update loopguard@loopguard"},
			not: []string{"re-run loopguard init"}},
		{name: "older managed settings", managed: withoutFailure(t, managedReg),
			want: []string{"ok    hooks PreToolUse: registered (1)", "FAIL  hooks PostToolUseFailure: loopguard is registered without PostToolUseFailure",
				"fix: re-run sudo loopguard init --managed to register PostToolUseFailure for every user", "managed-settings.json: runs this binary"},
			not: []string{"plugin update", "re-run loopguard init to"}},
		// Control: with nothing else registered it is the plain missing event.
		{name: "nothing registered", user: []byte(`{}`),
			want: []string{"FAIL  hooks PostToolUseFailure: loopguard is not registered for PostToolUseFailure"}, not: []string{"an older loopguard"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := settingsReport(t, c.user, c.managed, c.plug)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("doctor does not say %q:\n%s", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("doctor says %q:\n%s", n, got)
				}
			}
		})
	}
}
