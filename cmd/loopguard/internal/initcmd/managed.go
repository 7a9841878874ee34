package initcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/state"
)

// The managed install (init --managed): loopguard registered in Claude
// Code's managed settings, which root owns and no user, project or local
// file can override. With allowManagedHooksOnly no other layer's hook runs
// (loopguard, a managed hook, stays on), and disableBypassPermissionsMode
// refuses --dangerously-skip-permissions. The binaries must be root's, so
// nothing the user runs can replace them. Each user still runs
// `loopguard init` for their own key and state; it then registers no hook
// of its own (hooksElsewhere).

// errNotRoot is init --managed run by another user than root.
var errNotRoot = errors.New("init --managed writes Claude Code's managed settings, which only root may write")

// rootOnly checks that no one but root can replace the binary at p: it
// and every directory above it are root's and writable by no group or
// other user (fsx.UserWritable).
func rootOnly(p string) error {
	if fsx.UserWritable(p) {
		return cli.WithHint(fmt.Errorf("%s can be changed by someone other than root (it or a directory above it is not root's alone)", p),
			"install the four binaries side by side where only root can write, e.g. sudo install -o root -g root -m 0755 loopguard loopguard-hook loopguard-exec loopguard-confine /usr/local/bin/, and run init --managed from there")
	}
	return nil
}

// managedSandbox is the sandbox block for every user: the paths are
// spelled under ~ (each user's own), the binaries absolute.
func managedSandbox(bin string, others ...string) *install.Sandbox {
	sp := install.SandboxPath
	deny := []string{"~/.local/state/loopguard", "~/.config/loopguard", sp(bin)}
	for _, o := range others {
		if o != "" {
			deny = append(deny, sp(o))
		}
	}
	deny = append(deny, "~/.local/share/keyrings")
	return &install.Sandbox{DenyWrite: deny, DenyRead: []string{"~/.local/state/loopguard", "~/.local/share/keyrings"}}
}

func initManagedRun(o *initOptions, bin string) error {
	out := o.out
	path := install.ManagedSettingsPath()
	if path == "" {
		return cli.WithHint(errors.New("no managed settings file of Claude Code is known on this system"), "use loopguard init (user settings)")
	}
	if os.Geteuid() != 0 && !o.dryRun {
		return cli.WithHint(errNotRoot, "run it as root: sudo loopguard init --managed")
	}
	hookBin, why := cli.HookBinary(bin)
	if err := rootOnly(bin); err != nil {
		return err
	}
	_, twin := policy.Binaries(bin)
	if _, err := os.Stat(twin); err != nil {
		twin = ""
	} else if err := rootOnly(twin); err != nil {
		return err
	}
	// The hook runs the launchers beside it: replacing one replaces what a
	// scoped call runs under (and a stale small launcher an earlier
	// release left there, which that release's hook ran: policy.Retired).
	var launchers []string
	for _, l := range append(policy.Launchers(bin), policy.Retired(bin)...) {
		if _, err := os.Stat(l); err != nil {
			continue
		}
		if err := rootOnly(l); err != nil {
			return err
		}
		launchers = append(launchers, l)
	}
	opts := install.Options{Binary: hookBin, Mode: o.mode, Wait: o.wait, Deadline: agents.DefaultDeadline, Matcher: o.tools, Managed: true}
	if !o.noSandbox {
		opts.Sandbox = managedSandbox(bin, append([]string{twin}, launchers...)...)
	}
	apply := func(backups string, dry bool) (*install.Result, error) {
		return install.Apply(path, backups, opts, dry)
	}
	backups, done, err := checkApply(out, path, o.dryRun, apply)
	if err != nil || done {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", filepath.Dir(path), err)
	}
	res, err := apply(backups, false)
	if err != nil {
		return err
	}
	if !res.Changed {
		fmt.Fprintf(out, "Managed: %s already registers loopguard this way; nothing changed.\n", path)
	} else {
		fmt.Fprintf(out, "Managed: %s: %s run %s hook for every user, with onFailure block;\n", path, install.EventList(), hookBin)
		fmt.Fprintf(out, "         allowManagedHooksOnly (no user, project, local or plugin hook runs; loopguard, managed, stays on) and\n")
		fmt.Fprintf(out, "         permissions.disableBypassPermissionsMode \"disable\".\n")
		hookBinaryNote(out, bin, why)
	}
	if opts.Sandbox != nil {
		fmt.Fprintln(out, "Sandbox: on for every user (enabled, failIfUnavailable, allowUnsandboxedCommands false), denying writes to ~/.local/state/loopguard, ~/.config/loopguard, the keyrings and the binaries.")
	}
	fmt.Fprintln(out, "Next: each user runs `loopguard init` once (their key and state; it registers no hook of its own), then `loopguard doctor`.")
	return nil
}

// hooksElsewhere names the layer that already runs loopguard's hook for
// every event here, other than the file init writes (target): the managed
// settings, or loopguard's plugin enabled in some settings file. "" when
// none does.
func hooksElsewhere(env install.Env, target, managed string) (string, error) {
	var all [][]byte
	read := func(p string) []byte {
		data, _, err := install.ReadSettings(p)
		if err != nil {
			return nil
		}
		return data
	}
	if managed != "" && managed != target {
		if data := read(managed); data != nil {
			if regs, err := install.Hooks(data, ""); err == nil && install.CoversEvents(regs) {
				return "the managed settings " + managed, nil
			}
			all = append(all, data)
		}
	}
	for _, sc := range []install.Scope{install.User, install.Project, install.Local} {
		if p, err := install.SettingsPath(sc, env); err == nil {
			all = append(all, read(p))
		}
	}
	ok, err := install.PluginGuards(env, all...)
	if err != nil || !ok {
		return "", err
	}
	return "loopguard's Claude Code plugin (" + install.PluginID + ")", nil
}

// UninstallManaged is uninstall --managed: init --managed's entries out
// of the managed settings, the file as it was when nothing else changed
// (dryRun: what that would change).
func UninstallManaged(out io.Writer, dryRun bool) error {
	path := install.ManagedSettingsPath()
	if path == "" {
		return errors.New("no managed settings file of Claude Code is known on this system")
	}
	if os.Geteuid() != 0 && !dryRun {
		return cli.WithHint(errNotRoot, "run it as root: sudo loopguard uninstall --managed")
	}
	dir, err := state.DefaultDir()
	if err != nil {
		return err
	}
	self, _ := cli.SelfPath()
	res, err := install.Remove(path, cli.BackupDir(dir), self, dryRun)
	if err != nil {
		return err
	}
	ReportRemoval(out, res, dryRun, "init --managed")
	if dryRun {
		fmt.Fprintln(out, "Dry run: nothing was written.")
	}
	return nil
}
