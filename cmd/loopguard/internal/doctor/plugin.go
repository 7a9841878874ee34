package doctor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
)

// pluginScope names the plugin's registration in doctor's report.
const pluginScope = "plugin"

// checkPlugin finds loopguard's plugin when a settings file (files, read)
// enables it, and returns its registrations, each with the file it comes
// from, plus what is wrong with it.
func checkPlugin(env doctorEnv, files []loadedSettings) (regs []pluginReg, out []checkResult) {
	var enabledIn []string
	for _, f := range files {
		if f.data != nil && install.PluginEnabled(f.data) {
			enabledIn = append(enabledIn, f.path)
		}
	}
	if len(enabledIn) == 0 {
		return nil, nil
	}
	name := "plugin " + install.PluginID
	roots, err := install.PluginInstalls(install.PluginsDir(env.settings))
	if err != nil {
		return nil, []checkResult{{status: statusFail, name: name, detail: err.Error(), fix: "claude plugin install " + install.PluginID}}
	}
	if len(roots) == 0 {
		return nil, []checkResult{{status: statusFail, name: name,
			detail: "enabled in " + strings.Join(enabledIn, ", ") + " but not installed, so it runs no hook",
			fix:    "claude plugin install " + install.PluginID}}
	}
	for _, root := range roots {
		f := loadedSettings{scope: pluginScope, path: filepath.Join(root, install.PluginHooksFile)}
		rs, err := install.PluginRegistered(root)
		if err != nil {
			out = append(out, checkResult{status: statusFail, name: name, detail: err.Error(), fix: "claude plugin install " + install.PluginID})
			continue
		}
		for _, r := range rs {
			if r.Ours {
				regs = append(regs, pluginReg{f: f, r: r})
			}
		}
	}
	out = append(out, checkResult{status: statusOK, name: name, detail: "enabled in " + strings.Join(enabledIn, ", ") + "; installed at " + strings.Join(roots, ", ")})
	return regs, out
}

// pluginReg is one hook handler of the installed plugin.
type pluginReg struct {
	f loadedSettings
	r install.Registered
}

// pluginBinary resolves the plugin's bare command as Claude Code will,
// through PATH (doctor runs with your shell's PATH, which Claude Code
// started from your shell inherits).
func pluginBinary(cmd string) (string, checkResult, bool) {
	if filepath.IsAbs(cmd) {
		return cmd, checkResult{}, true
	}
	p, err := exec.LookPath(cmd)
	if err != nil {
		return "", checkResult{status: statusFail, name: "plugin " + install.PluginID,
			detail: fmt.Sprintf("its hook runs %s from PATH, and PATH has none: Claude Code blocks every call (onFailure block)", cmd),
			fix:    "put the directory holding loopguard and loopguard-hook in PATH (the release archive's, or Homebrew's bin)"}, false
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p, checkResult{}, true
}

// checkManagedInstall checks a managed registration (init --managed): the
// file and the binaries it runs are root's alone, and the switches that
// keep other layers from adding hooks or skipping permissions are set.
func checkManagedInstall(f loadedSettings, regs []install.Registered) []checkResult {
	name := "managed " + f.path
	var out []checkResult
	if fsx.UserWritable(f.path) {
		out = append(out, checkResult{status: statusFail, name: name,
			detail: "the managed settings can be changed by someone other than root: whoever can write them can take loopguard off",
			fix:    "sudo chown root:root " + f.path + " " + filepath.Dir(f.path) + " && sudo chmod 0644 " + f.path})
	}
	seen := map[string]bool{}
	for _, r := range regs {
		if !r.Ours || seen[r.Handler.Command] {
			continue
		}
		seen[r.Handler.Command] = true
		// The binary registered, the launchers beside it (and a stale small
		// launcher: policy.Retired), and loopguard beside loopguard-hook
		// (which runs it under the Vault backend).
		bins := append(append([]string{r.Handler.Command}, policy.Launchers(r.Handler.Command)...), policy.Retired(r.Handler.Command)...)
		if full, hook := policy.Binaries(r.Handler.Command); hook == r.Handler.Command {
			bins = append(bins, full)
		}
		for _, b := range bins {
			if _, err := os.Stat(b); err == nil && fsx.UserWritable(b) {
				out = append(out, checkResult{status: statusFail, name: name,
					detail: b + " can be replaced without root (it or a directory above it is not root's alone): replacing it replaces the guard for every user",
					fix:    "install the binaries where only root can write (sudo install -o root -g root -m 0755 ... /usr/local/bin/), then sudo loopguard init --managed from there"})
			}
		}
	}
	if missing := install.ManagedLocks(f.data); len(missing) > 0 {
		out = append(out, checkResult{status: statusWarn, name: name,
			detail: "loopguard is a managed hook, but " + strings.Join(missing, " and ") + " is not set: other layers' hooks run beside it (one returning updatedInput changes a call after approval), or bypass mode is allowed",
			fix:    "sudo loopguard init --managed"})
	}
	if len(out) == 0 {
		out = append(out, checkResult{status: statusOK, name: name, detail: "root's alone, with the binaries it runs; allowManagedHooksOnly and disableBypassPermissionsMode set"})
	}
	return out
}
