package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/codex"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/internal/udiff"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/state"
)

// agentFile is the hook file of reg chosen by the scope flags: --user (the
// default) or --project; --local is Claude Code's only.
func agentFile(reg agents.Registration, s scopeFlags) (string, string, error) {
	env, err := settingsEnv()
	if err != nil {
		return "", "", err
	}
	switch {
	case s.local:
		return "", "", withHint(fmt.Errorf("--local is for Claude Code only; %s has no local hook file", reg.Agent), "use --user or --project")
	case s.project:
		return reg.ProjectFile(env.Cwd), "project", nil
	}
	return reg.UserFile(env.Home), "user", nil
}

// initAgentRun is `loopguard init --agent NAME`: the same key, state,
// config and audit seal as for Claude Code, then loopguard registered in
// that agent's hook file.
func initAgentRun(ctx context.Context, out, errOut io.Writer, o *initOptions, bin string) error {
	reg, err := all.Registration(o.agent)
	if err != nil {
		return withHint(err, "use --agent codex, gemini, copilot or cursor (Claude Code is the default)")
	}
	if o.wait > 0 {
		return withHint(errors.New("--wait is for Claude Code only"), "drop --wait")
	}
	if o.tools != install.DefaultMatcher {
		return withHint(errors.New("--tools is for Claude Code only"), "drop --tools; loopguard registers the tools with side effects for "+reg.Agent)
	}
	path, scope, err := agentFile(reg, o.scope)
	if err != nil {
		return err
	}
	hookBin, why := hookBinary(bin)
	ro := agents.RegOptions{Binary: hookBin, Mode: o.mode, Deadline: hooks.DefaultDeadline}
	f := reg.File(ro)
	dir, err := state.DefaultDir()
	if err != nil {
		return err
	}
	res, err := install.ApplyAgent(path, filepath.Join(dir, "install"), f, true)
	if err != nil {
		return err
	}
	if o.dryRun {
		printDryRun(out, path, dir, res)
		return nil
	}
	st, seal, err := initKeyAndState(ctx, out, errOut)
	if err != nil {
		return err
	}
	res, err = install.ApplyAgent(path, filepath.Join(st.Dir, "install"), f, false)
	if err != nil {
		return err
	}
	if !res.Changed {
		fmt.Fprintf(out, "Hooks: %s already registers loopguard this way; nothing changed.\n", path)
	} else {
		verb := "updated"
		if !res.Existed {
			verb = "created"
		}
		var events []string
		for _, e := range f.Entries {
			events = append(events, e.Event)
		}
		fmt.Fprintf(out, "Hooks: %s %s: %s run %s hook %s (mode %s).\n", path, verb, strings.Join(events, ", "), hookBin, reg.Agent, o.mode)
		hookBinaryNote(out, bin, why)
		if res.Existed {
			fmt.Fprintf(out, "Backup of the original: %s (used by loopguard uninstall --agent %s).\n", res.Backup, reg.Agent)
		}
		if err := record(st, seal, audit.Entry{Decision: "init", Mode: o.mode, Principal: principal(),
			Detail: reg.Agent + " " + path}); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Binding: %s.\n", reg.Binding)
	switch reg.Agent {
	case codex.Name:
		fmt.Fprintln(out, "Next: Codex runs a hook only once you trust it: start `codex`, type /hooks and trust loopguard's hooks (doctor checks this). Then run `loopguard doctor`.")
	case gemini.Name:
		fmt.Fprintln(out, "Next: Gemini CLI runs settings hooks only in trusted folders; trust this folder in Gemini. Then run `loopguard doctor`.")
	default:
		fmt.Fprintln(out, "Next: run `loopguard doctor`; new sessions pick the hooks up.")
	}
	if scope == "project" {
		fmt.Fprintf(errOut, "loopguard: warning: %s is shared with the repository, and the hook path %s is this machine's\n", path, hookBin)
	}
	return nil
}

// initKeyAndState creates the key (if there is none), the state directory
// and the config, and seals the empty audit log: what every hook needs
// before it is registered. It returns the store and the audit seal key.
func initKeyAndState(ctx context.Context, out, errOut io.Writer) (*state.Store, []byte, error) {
	created, err := keyring.Create(ctx)
	if err != nil {
		return nil, nil, err
	}
	if created {
		fmt.Fprintln(out, "Key: created in the OS keyring.")
	} else {
		fmt.Fprintln(out, "Key: already in the OS keyring, kept.")
	}
	st, err := openStore()
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(out, "State: %s (mode 0700).\n", st.Dir)
	if err := initConfig(out); err != nil {
		return nil, nil, err
	}
	_, seal, err := loadKeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	if seal, err = sealForInit(st, seal, created, out, errOut); err != nil {
		return nil, nil, err
	}
	return st, seal, nil
}

// uninstallAgentRun is `loopguard uninstall --agent NAME`.
func uninstallAgentRun(out, errOut io.Writer, o *uninstallOptions) error {
	reg, err := all.Registration(o.agent)
	if err != nil {
		return withHint(err, "use --agent codex, gemini, copilot or cursor")
	}
	dir, err := state.DefaultDir()
	if err != nil {
		return err
	}
	backups := filepath.Join(dir, "install")
	self, _ := selfPath()
	env, err := settingsEnv()
	if err != nil {
		return err
	}
	paths := []string{reg.UserFile(env.Home), reg.ProjectFile(env.Cwd)}
	explicit := o.scope.user || o.scope.project
	if explicit {
		p, _, err := agentFile(reg, o.scope)
		if err != nil {
			return err
		}
		paths = []string{p}
	}
	removed := 0
	for _, path := range paths {
		if !explicit && !install.Recorded(backups, path) {
			continue
		}
		f := reg.File(agents.RegOptions{Binary: self})
		res, err := install.RemoveAgent(path, backups, f, o.dryRun)
		if err != nil {
			return err
		}
		if !res.Changed {
			if explicit {
				fmt.Fprintf(out, "%s: no loopguard hooks; nothing to remove.\n", path)
			}
			continue
		}
		removed++
		switch {
		case o.dryRun:
			fmt.Fprint(out, udiff.Diff(path, res.Old, res.New))
		case res.Restored:
			fmt.Fprintf(out, "%s: loopguard hooks removed; the original file is back, byte for byte.\n", path)
		case res.Deleted:
			fmt.Fprintf(out, "%s: removed (init had created it).\n", path)
		default:
			fmt.Fprintf(out, "%s: loopguard hooks removed; other settings changed since init, so they were kept as they are now.\n", path)
		}
	}
	if removed == 0 {
		fmt.Fprintf(out, "loopguard was not registered for %s by init here.\n", reg.Agent)
	}
	_ = errOut
	return nil
}
