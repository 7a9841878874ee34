package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/initcmd"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
)

// pluginHooksFile is the plugin's registration in the repository.
var pluginHooksFile = filepath.Join("..", "..", "plugins", install.PluginName, install.PluginHooksFile)

// The plugin's hooks.json is init's default registration with the hook
// binary named for PATH: the two ways in decide alike. Regenerate it with
// LOOPGUARD_UPDATE_PLUGIN=1 go test ./cmd/loopguard -run TestPluginHooks.
func TestPluginHooksAreInits(t *testing.T) {
	want := install.PluginHooks(install.Options{Binary: policy.HookBinaryName, Mode: hooks.ModeEnforce,
		Wait: initcmd.DefaultWait, Deadline: agents.DefaultDeadline})
	if os.Getenv("LOOPGUARD_UPDATE_PLUGIN") == "1" {
		if err := os.WriteFile(pluginHooksFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(pluginHooksFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not init's registration; want:\n%s", pluginHooksFile, want)
	}
	regs, err := install.Hooks(got, "")
	if err != nil {
		t.Fatal(err)
	}
	if !install.CoversEvents(regs) {
		t.Fatalf("the plugin does not run loopguard for every event: %+v", regs)
	}
	for _, r := range regs {
		if r.Handler.OnFailure != install.OnFailureBlock || r.Handler.Command != policy.HookBinaryName || r.Matcher != install.DefaultMatcher {
			t.Errorf("%s: %+v (matcher %q); want loopguard-hook for every tool with onFailure block", r.Event, r.Handler, r.Matcher)
		}
	}
}
