package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/initcmd"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/state"
)

type uninstallOptions struct {
	out, errOut io.Writer

	scope    initcmd.ScopeFlags
	dryRun   bool
	purgeKey bool
	yes      bool   // --purge-key without asking (scripts)
	agent    string // "" or "claude": Claude Code; else see initcmd.UninstallAgent
	managed  bool   // as root: the managed settings (initcmd.UninstallManaged)
}

func newUninstallCmd() *cobra.Command {
	var o uninstallOptions
	cmd := &cobra.Command{
		Use:   "uninstall [--user | --project | --local]",
		Short: "Remove exactly what init registered in the Claude Code settings",
		Long: `Remove loopguard's hooks from the Claude Code settings files, with the
sandbox settings init added (a value of yours that init strengthened gets
its old value back), and nothing else. Without a flag, every file where init registered loopguard on this
machine (user, and this project's project and local files) is cleaned;
--user, --project or --local picks one file, and also removes a registration
made by hand or by someone else (a committed project file).

When the rest of a file is as init found it, its original bytes are put back
exactly; a file init created is deleted (and its .claude directory, if init
created it and it is empty). When other settings changed since, only
loopguard's entries are removed and everything else is kept. When init's
backup is gone (it is kept in the state directory, and that was removed),
uninstall still knows what init adds to ~/.claude/settings.json (the hooks,
the sandbox block, GOCACHE) and takes exactly those values out: a file in
Claude Code's own layout comes back byte for byte (a setting of yours with
the very same value as init's goes too).

The key stays in the OS keyring (approvals and the audit log need it) unless
--purge-key is given, which asks you to confirm on your terminal before
anything is changed (--yes confirms it for a script). The state directory
(grants, pending calls, audit log) is left in place; after a purge, the
next 'loopguard init' creates a new key, sets the old audit log aside (kept,
not deleted) and starts a new sealed chain, which 'loopguard audit verify'
then names.`,
		Example: `  loopguard uninstall
  loopguard uninstall --project --dry-run
  loopguard uninstall --purge-key
  loopguard uninstall --purge-key --yes   # in a script: no question`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out, o.errOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return uninstallRun(cmd.Context(), &o)
		},
	}
	o.scope.Add(cmd, "remove from")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the changes and do nothing")
	cmd.Flags().BoolVar(&o.purgeKey, "purge-key", false, "also delete the key from the OS keyring (asks on the terminal first)")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "with --purge-key: delete the key without asking")
	cmd.Flags().StringVar(&o.agent, "agent", "", "remove loopguard from another agent's hooks: codex, gemini, copilot, cursor, qwen or opencode")
	cmd.Flags().BoolVar(&o.managed, "managed", false, "as root: remove what init --managed wrote to Claude Code's managed settings")
	for _, f := range []string{"user", "project", "local", "agent", "purge-key"} {
		cmd.MarkFlagsMutuallyExclusive("managed", f)
	}
	return cmd
}

func uninstallRun(ctx context.Context, o *uninstallOptions) error {
	out, errOut := o.out, o.errOut
	if err := cli.RefuseInAgent(); err != nil {
		return err
	}
	if o.agent != "" && o.agent != "claude" {
		return initcmd.UninstallAgent(o.out, o.agent, o.scope, o.dryRun)
	}
	if o.managed {
		return initcmd.UninstallManaged(o.out, o.dryRun)
	}
	if o.yes && !o.purgeKey {
		return errors.New("--yes only confirms --purge-key")
	}
	// --purge-key is confirmed before anything is removed.
	if o.purgeKey && !o.dryRun && !o.yes {
		if err := confirmPurge(); err != nil {
			return err
		}
	}
	env, err := cli.SettingsEnv()
	if err != nil {
		return err
	}
	dir, err := state.DefaultDir()
	if err != nil {
		return err
	}
	backups := cli.BackupDir(dir)
	self, _ := cli.SelfPath()
	var firstErr error
	seen := map[string]bool{}
	removed := 0
	var cleaned, left []string
	explicit := o.scope.Scopes(nil) != nil
	for _, sc := range o.scope.Scopes([]install.Scope{install.User, install.Project, install.Local}) {
		path, err := install.SettingsPath(sc, env)
		if err != nil || seen[path] {
			continue
		}
		seen[path] = true
		recorded := install.Recorded(backups, path)
		var res *install.Result
		switch {
		case !recorded && sc == install.User:
			// init's record is gone (the state directory was removed, or
			// it never was init's): the user's own file is cleaned of
			// what init adds, known by value (unrecordedSandbox).
			res, err = install.RemoveUnrecorded(path, self, unrecordedSandbox(self), o.dryRun)
		case !recorded && !explicit:
			// Without a flag, only what init registered here is removed:
			// a project file may carry a teammate's registration.
			if data, _, err := install.ReadSettings(path); err == nil && data != nil && install.Registers(data, self) {
				fmt.Fprintf(out, "%s: registers loopguard, but not through init on this machine; left alone (remove it with --%s).\n", path, sc)
				left = append(left, path)
			}
			continue
		default:
			res, err = install.Remove(path, backups, self, o.dryRun)
		}
		if err != nil {
			cli.PrintError(errOut, err)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if !res.Changed && !res.Existed && !explicit {
			continue
		}
		initcmd.ReportRemoval(out, res, o.dryRun, "init")
		if !res.Changed {
			continue
		}
		removed++
		cleaned = append(cleaned, path)
	}
	if o.dryRun {
		fmt.Fprintln(out, "Dry run: nothing was written.")
		return firstErr
	}
	switch {
	case firstErr != nil:
	case removed == 0 && len(left) > 0:
		fmt.Fprintf(out, "Nothing was removed: Claude Code still runs loopguard from %s.\n", strings.Join(left, ", "))
	case removed == 0:
		fmt.Fprintln(out, "loopguard was not registered in these settings files.")
	case len(left) > 0:
		fmt.Fprintf(out, "Claude Code no longer runs loopguard for the settings cleaned above; it still does from %s.\n", strings.Join(left, ", "))
	default:
		fmt.Fprintln(out, "Claude Code no longer runs loopguard for these settings; tool calls are no longer guarded by it.")
	}
	if removed > 0 {
		// Logged where the state directory is; a removed one is not made
		// again for it.
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			if st, err := cli.OpenStore(); err == nil {
				_ = cli.Record(st, nil, audit.Entry{Decision: "uninstall", Principal: cli.Principal(), Detail: strings.Join(cleaned, ", ")})
			}
		}
	}
	if firstErr != nil {
		return &cli.Exit{Code: cli.ExitError, Err: cli.ErrSilent}
	}
	if o.purgeKey {
		return purgeKey(ctx, out)
	}
	fmt.Fprintln(out, "The key stays in the OS keyring; remove it with: loopguard uninstall --purge-key")
	return nil
}

// unrecordedSandbox is what init adds to the user's settings besides the
// hooks (the sandbox block and GOCACHE, internal/cli's sandbox.go), as
// init run from self would add it now: what uninstall takes out, by
// value, of a file whose backup record is gone. nil when it cannot be
// worked out.
func unrecordedSandbox(self string) *install.Sandbox {
	p, err := cli.ResolveSandboxPaths(self)
	if err != nil {
		return nil
	}
	return p.Spec()
}

// confirmPurge asks on the terminal before --purge-key changes anything.
func confirmPurge() error {
	tty, err := cli.OpenTTY()
	if err != nil {
		return cli.WithHint(err, "in a script, confirm with --yes")
	}
	defer tty.Close()
	fmt.Fprintln(tty, "This removes loopguard's hooks and then deletes its key from the OS keyring: every approval and grant")
	fmt.Fprintln(tty, "becomes invalid, and the audit log's seal can no longer be checked (the log itself is kept; a later")
	fmt.Fprintln(tty, "`loopguard init` sets it aside and starts a new sealed chain).")
	return cli.ConfirmTyped(tty, "Type 'delete key' to go on (anything else cancels; nothing is changed): ", is("delete key"),
		"nothing was changed", errors.New("not confirmed: nothing was changed"))
}

// purgeKey deletes the master key, confirmed already, and logs it.
func purgeKey(ctx context.Context, out io.Writer) error {
	if st, err := cli.OpenStore(); err == nil {
		// Logged before the key goes: the entry is the last of this chain.
		if err := cli.Record(st, nil, audit.Entry{Decision: "purge-key", Principal: cli.Principal()}); err != nil {
			return err
		}
	}
	kctx, cancel := cli.KeyringCtx(ctx)
	defer cancel()
	if err := keyring.Delete(kctx); err != nil {
		if errors.Is(err, keyring.ErrNoKey) {
			fmt.Fprintln(out, "There was no key in the OS keyring.")
			return nil
		}
		return err
	}
	fmt.Fprintln(out, "Key deleted from the OS keyring.")
	if d, err := state.DefaultDir(); err == nil {
		// The state directory's anchor, MACed under that key, goes with it.
		if err := deleteAnchor(d); err != nil {
			fmt.Fprintf(out, "The state directory's anchor in the keyring could not be removed (%v); the next `loopguard init` replaces it.\n", err)
		}
		if _, err := os.Stat(d); err == nil {
			fmt.Fprintf(out, "The state directory %s is left in place with the audit log; a new `loopguard init` keeps that log aside and starts a new sealed chain.\n", d)
		}
	}
	return nil
}
