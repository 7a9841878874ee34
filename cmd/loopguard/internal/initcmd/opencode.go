package initcmd

import (
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/register"
)

// Two-phase enforcement for OpenCode (`init --agent opencode --ticket`):
// the user's opencode.json names loopguard-exec as OpenCode's "shell"
// (package shellwrap), and loopguard's plugin runs the hook with
// --ticket, handing it the shell of OpenCode's effective configuration.

// applyOpenCode writes loopguard's plugin at path and, with launcher,
// the shell setting in the user's opencode.json; the result is the
// plugin's, changed when either file changed.
func applyOpenCode(path, backups string, plugin []byte, reg register.Registration, launcher string, dry bool) (*install.Result, error) {
	res, err := install.ApplyOwned(path, backups, plugin, reg.IsOurs, dry)
	if err != nil || launcher == "" {
		return res, err
	}
	sh, err := install.ApplyOpenCodeShell(cli.OpenCodeConfig(path), backups, launcher, dry)
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
	cfg := cli.OpenCodeConfig(path)
	if !install.Recorded(backups, cfg) {
		return &install.Result{Path: cfg}, nil
	}
	return install.RemoveOpenCodeShell(cfg, backups, dry)
}
