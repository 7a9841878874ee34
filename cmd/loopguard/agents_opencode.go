package main

import (
	"path/filepath"

	"github.com/loopguard/loopguard/agents/opencode"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// Two-phase enforcement for OpenCode (`init --agent opencode --ticket`):
// the user's opencode.json names loopguard-exec as OpenCode's "shell"
// (package shellwrap), and loopguard's plugin runs the hook with
// --ticket, handing it the shell of OpenCode's effective configuration.

// opencodeConfig is the user's opencode.json beside the plugin directory
// that holds pluginPath (~/.config/opencode/plugin/loopguard.js).
func opencodeConfig(pluginPath string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(pluginPath)), "opencode.json")
}

// applyOpenCode writes loopguard's plugin at path and, with launcher,
// the shell setting in the user's opencode.json; the result is the
// plugin's, changed when either file changed.
func applyOpenCode(path, backups string, plugin []byte, reg register.Registration, launcher string, dry bool) (*install.Result, error) {
	res, err := install.ApplyOwned(path, backups, plugin, reg.IsOurs, dry)
	if err != nil || launcher == "" {
		return res, err
	}
	sh, err := install.ApplyOpenCodeShell(opencodeConfig(path), backups, launcher, dry)
	if err != nil {
		return nil, err
	}
	res.Changed = res.Changed || sh.Changed
	return res, nil
}

// removeOpenCodeShell takes loopguard's shell setting out of the
// opencode.json beside the user's plugin file path, when init recorded
// writing it.
func removeOpenCodeShell(path, backups string, dry bool) (*install.Result, error) {
	cfg := opencodeConfig(path)
	if !install.Recorded(backups, cfg) {
		return &install.Result{Path: cfg}, nil
	}
	return install.RemoveOpenCodeShell(cfg, backups, dry)
}

// opencodeTwoPhaseLine is doctor's two-phase line for OpenCode: on when
// the user's plugin runs the hook with --ticket and the user's
// opencode.json names the installed wrapper as OpenCode's shell.
func opencodeTwoPhaseLine(env doctorEnv, reg register.Registration) checkResult {
	name := reg.Agent + " two-phase"
	launcher := policy.Launcher(env.self)
	path := reg.UserFile(env.settings.Dirs())
	data, _, err := install.ReadSettings(path)
	st, perr := opencode.ReadPlugin(data)
	cfg := opencodeConfig(path)
	cdata, _, cerr := install.ReadSettings(cfg)
	shell := install.OpenCodeShell(cdata)
	switch {
	case err == nil && perr == nil && st.Intact && st.Ticket && cerr == nil && shell != "" && sameFile(shell, launcher):
		return checkResult{status: statusOK, name: name,
			detail: cfg + " names loopguard's wrapper (" + launcher + ") as OpenCode's shell and the plugin runs the hook with --ticket: a shell command runs only on a ticket the hook issued for it; the plugin refuses every shell call (no_wrapper) when OpenCode's effective shell is another (a project's opencode.json, OPENCODE_CONFIG*)"}
	case err == nil && perr == nil && st.Ticket:
		return checkResult{status: statusFail, name: name,
			detail: "loopguard's plugin runs the hook with --ticket, but " + cfg + " does not name " + launcher + " as OpenCode's shell: every shell call is refused (no_wrapper)",
			fix:    "loopguard init --agent opencode --ticket"}
	}
	return checkResult{status: statusWarn, name: name,
		detail: "off: loopguard's plugin blocks a call its hook does not answer, but a plugin OpenCode failed to load (or one that answers nothing) lets every call run",
		fix:    "run: loopguard init --agent opencode --ticket (loopguard's wrapper as OpenCode's shell)"}
}

// sameFile reports whether a and b name the same file: the same path, or
// symlinks resolved.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
