package initcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
)

// offerToolchains offers the PATH directories where toolchains (cargo,
// pip, go tools...) resolve outside the trusted ones, and records the
// human's choice in the config's trusted_dirs. Scopes over programs there
// are pinned to their content when the directory is the user's to write.
func offerToolchains(out io.Writer, o *initOptions) error {
	path, cfg, err := cli.LoadConfigPath()
	if err != nil {
		return err
	}
	found := config.ToolchainDirs(os.Getenv("PATH"), cfg.Trusted())
	if len(found) == 0 || o.toolchains == "none" {
		return nil
	}
	var add []string
	switch o.toolchains {
	case "all":
		for _, d := range found {
			add = append(add, d.Dir)
		}
	case "ask":
		tty, err := cli.OpenTTY()
		if err != nil {
			var dirs []string
			for _, d := range found {
				dirs = append(dirs, present.EscapeText(d.Dir)+" ("+strings.Join(d.Names, ", ")+")")
			}
			fmt.Fprintf(out, "Toolchains: not trusted, so scoped grants cannot cover them: %s; trust them with `loopguard init --toolchains all` (or edit trusted_dirs in %s).\n", strings.Join(dirs, "; "), path)
			return nil
		}
		defer tty.Close()
		fmt.Fprintln(tty, "Toolchain directories in your PATH that loopguard does not trust yet (a scoped grant cannot cover their programs):")
		for _, d := range found {
			yes, err := cli.AskYes(tty, fmt.Sprintf("  trust %s (%s)? A grant over a program there is pinned to the file's content, and refused if it changes.", present.EscapeText(d.Dir), strings.Join(d.Names, ", ")))
			if err != nil {
				return err
			}
			if yes {
				add = append(add, d.Dir)
			}
		}
	}
	if len(add) == 0 {
		return nil
	}
	cfg.TrustedDirs = append(append([]string(nil), cfg.Trusted()...), add...)
	if err := config.Save(path, cfg); err != nil {
		return err
	}
	fmt.Fprintf(out, "Toolchains: trusted %s (recorded in %s); grants over programs there are pinned to their content.\n", strings.Join(add, " "), path)
	return nil
}

// offerPreset grants the read-only preset: at once with --preset, after a
// question and the usual digest confirmation on a terminal, never with
// --no-preset or without a terminal. From a user-wide install it covers
// every session (all projects); from a project's, that project's.
func offerPreset(ctx context.Context, out io.Writer, st *state.Store, o *initOptions, where install.Scope) error {
	g := Grant{Store: st, Preset: o.preset, TTL: cli.MaxGrantTTL, Agent: "main", AnySession: where == install.User}
	if o.preset != "" {
		// The flag is the human's choice, typed at init, which refuses to
		// run inside an agent; the preset is a fixed, reviewed list.
		g.Tty, g.Confirm = out, func(string) error { return nil }
		return o.deps.Grant(ctx, g)
	}
	if o.noPreset || o.mode != hooks.ModeEnforce {
		return nil
	}
	tty, err := cli.OpenTTY()
	if err != nil {
		fmt.Fprintln(out, "Preset: none granted; `loopguard grant --preset readonly` lets everyday read-only commands (ls, cat, git status...) run without a decision.")
		return nil
	}
	defer tty.Close()
	rules, _ := scope.Preset(scope.PresetReadOnly, "")
	var names []string
	for _, r := range rules {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(r.String(), "Bash("), ")"))
	}
	fmt.Fprintf(tty, "The read-only preset lets these run without a decision, for 7 days (protected files stay denied; git only in the project's own repository):\n  %s\n", strings.Join(names, ", "))
	yes, err := cli.AskYes(tty, "Grant it?")
	if err != nil || !yes {
		return err
	}
	g.Preset, g.Tty = scope.PresetReadOnly, tty
	g.Confirm = func(digest string) error {
		return cli.ConfirmPrefix(tty, digest, approve.PrefixLen, "grant")
	}
	return o.deps.Grant(ctx, g)
}

// offerJail mints the jail grant, Bash(*), by default where the kernel
// enforces the jail (Landlock; ABI 6 or later scopes signals and abstract
// sockets to it, below that jailed calls run read-only): every Bash call
// that no narrower grant covers then runs jailed without a decision,
// unless the analysis finds it needs to leave the jail (issue 36). Not
// with --no-jail, nor in ask or audit mode; the same with or without a
// terminal, since init's own flags are the human's choice.
func offerJail(ctx context.Context, out io.Writer, st *state.Store, o *initOptions, where install.Scope) error {
	if o.noJail || o.mode != hooks.ModeEnforce {
		return nil
	}
	abi := confine.ABI()
	if abi < confine.MinABI {
		fmt.Fprintf(out, "Jail: not granted: this kernel has no usable Landlock (ABI %d, the jail needs %d); every Bash call no grant covers asks.\n", abi, confine.MinABI)
		return nil
	}
	g := Grant{Store: st, Rules: []string{scope.JailRule, scope.JailFilesRule}, TTL: cli.MaxGrantTTL, Agent: "any", AnySession: where == install.User,
		Tty: out, Confirm: func(string) error { return nil }}
	if err := o.deps.Grant(ctx, g); err != nil {
		return err
	}
	if abi < 6 {
		fmt.Fprintf(out, "Jail: Landlock ABI %d cannot keep a jailed program from signalling your other processes (ABI 6 can), so jailed calls run read-only here.\n", abi)
	}
	fmt.Fprintln(out, "Jail: every Bash call that no narrower grant covers runs whole in the jail, without a decision, unless it needs the network, a write outside the project or git's own directory, or looks destructive; Edit(**) lets the file tools write the project's files the jail could write (never its executable configuration); `loopguard revoke` takes the grants back, `loopguard init --no-jail` does not make them.")
	return nil
}
