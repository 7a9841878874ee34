package initcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/codex"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/register"
	"github.com/loopguard/loopguard/state"
)

// agentFile is the hook file of reg chosen by the scope flags: --user (the
// default) or --project; --local is Claude Code's only.
func agentFile(reg register.Registration, s ScopeFlags) (string, string, error) {
	env, err := cli.SettingsEnv()
	if err != nil {
		return "", "", err
	}
	switch {
	case s.Local:
		return "", "", cli.WithHint(fmt.Errorf("--local is for Claude Code only; %s has no local hook file", reg.Agent), "use --user or --project")
	case s.Project:
		return reg.ProjectFile(env.Cwd), "project", nil
	}
	return reg.UserFile(env.Dirs()), "user", nil
}

// initAgentRun is `loopguard init --agent NAME`: the same key, state,
// config and audit seal as for Claude Code, then loopguard registered in
// that agent's hook file.
func initAgentRun(ctx context.Context, o *initOptions, bin string) error {
	out, errOut := o.out, o.errOut
	reg, err := all.Registration(o.agent)
	if err != nil {
		return cli.WithHint(err, "use --agent "+all.Others+" (Claude Code is the default)")
	}
	if o.wait > 0 {
		return cli.WithHint(errors.New("--wait is for Claude Code only"), "drop --wait")
	}
	if o.tools != install.DefaultMatcher {
		return cli.WithHint(errors.New("--tools is for Claude Code only"), "drop --tools; loopguard registers the tools with side effects for "+reg.Agent)
	}
	path, scope, err := agentFile(reg, o.scope)
	if err != nil {
		return err
	}
	hookBin, why := cli.HookBinary(bin)
	ro := register.Options{Binary: hookBin, Mode: o.mode, Deadline: agents.DefaultDeadline, Scope: scope}
	launcher, err := shellToolLauncher(o, reg, scope, hookBin)
	if err != nil {
		return err
	}
	ro.Ticket = launcher != ""
	// One registration per agent: a second would run loopguard twice for
	// every call.
	env, err := cli.SettingsEnv()
	if err != nil {
		return err
	}
	for _, f := range cli.AgentRegistrations(reg, env, bin) {
		if f.Path == path || reg.Hooks.Scoped {
			// The same file; or the agent's other file, which the hook
			// tells apart from this one by its --scope (a repository's,
			// which a cloud agent may need) or by Claude Code's own
			// format (the repository's .claude/settings.json Copilot
			// runs too): one decision, followed by the other.
			continue
		}
		hint := "remove that one first (loopguard uninstall --agent " + reg.Agent + " --" + f.Scope + "), or keep it and register nothing more"
		if f.Claude {
			hint = "the Claude Code registration there already guards " + reg.Agent + ", which runs it and is answered in its own format; to use " + reg.Agent + "'s own file instead, remove loopguard from " + f.Path + " (loopguard uninstall --" + f.Scope + ")"
		}
		return cli.WithHint(fmt.Errorf("%s already runs loopguard from %s: a second registration would run it twice for every call", reg.Agent, f.Path), hint)
	}
	apply := func(backups string, dry bool) (*install.Result, error) {
		if reg.Plugin != nil {
			return applyOpenCode(path, backups, reg.Plugin(ro), reg, launcher, dry)
		}
		if launcher != "" {
			return install.ApplyAgentShellTool(path, backups, reg.File(ro), launcher, dry)
		}
		return install.ApplyAgent(path, backups, reg.File(ro), dry)
	}
	backups, done, err := checkApply(out, path, o.dryRun, apply)
	if err != nil || done {
		return err
	}
	st, seal, err := initKeyAndState(ctx, o.deps, out, errOut)
	if err != nil {
		return err
	}
	res, err := apply(backups, false)
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
		if reg.Plugin != nil {
			events = []string{"every tool call"}
		} else {
			for _, e := range reg.File(ro).Entries {
				events = append(events, e.Event)
			}
		}
		fmt.Fprintf(out, "Hooks: %s %s: %s run %s hook %s (mode %s).\n", path, verb, strings.Join(events, ", "), hookBin, reg.Agent, o.mode)
		hookBinaryNote(out, bin, why)
		if res.Existed {
			fmt.Fprintf(out, "Backup of the original: %s (used by loopguard uninstall --agent %s).\n", res.Backup, reg.Agent)
		}
		if err := cli.Record(st, seal, audit.Entry{Decision: "init", Mode: o.mode, Principal: cli.Principal(),
			Detail: reg.Agent + " " + path}); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Binding: %s.\n", reg.Binding)
	if off := reg.File(ro).Off; len(off) > 0 {
		fmt.Fprintf(out, "Settings: %s set to false in %s: %s rewrites a command after its hooks ran where they are on, so what ran would not be what loopguard decided (uninstall gives the file back when nothing else in it changed).\n", strings.Join(off, ", "), path, reg.Agent)
	}
	shellToolNote(out, reg.Agent, path, launcher)
	if reg.Host.Rewrite == "" {
		fmt.Fprintf(out, "Scopes: %s runs the model's own command text, so a scoped grant covers only a command already written plainly (no $'...', backslashes, globs); the rest needs an exact approval.\n", reg.Agent)
		if wrapperJails(reg, launcher) {
			fmt.Fprintln(out, wrapperNote(reg))
		}
	}
	if reg.Host.Rewrite == "" && !wrapperJails(reg, launcher) {
		fmt.Fprintf(out, "Jail: not granted: %s runs the model's own command text, so loopguard cannot run a call in the jail there; every Bash call no grant covers asks.%s\n", reg.Agent, wrapperHint(reg))
	} else {
		// The jail runs a call through the agent's input rewrite, which
		// this agent runs, or through loopguard's wrapper in front of
		// its shell: the same grant as init's for Claude Code.
		where := install.Project
		if scope == "user" {
			where = install.User
		}
		if err := offerJail(ctx, out, st, o, where); err != nil {
			return err
		}
	}
	switch reg.Agent {
	case codex.Name:
		fmt.Fprintln(out, "Next: "+cli.CodexTrustStep(scope == "project")+" Then run `loopguard doctor --agent codex`.")
	case gemini.Name, qwen.Name:
		fmt.Fprintf(out, "Next: %s runs settings hooks only in trusted folders; trust this folder in it. Then run `loopguard doctor --agent %s`.\n", reg.Agent, reg.Agent)
	default:
		fmt.Fprintf(out, "Next: run `loopguard doctor --agent %s`; new sessions pick the hooks up.\n", reg.Agent)
	}
	if scope == "project" {
		fmt.Fprintf(errOut, "loopguard: warning: %s is shared with the repository, and the hook path %s is this machine's\n", path, hookBin)
	}
	return nil
}

// UninstallAgent is `loopguard uninstall --agent NAME`: init --agent's
// registration taken out of the files s names (none: wherever init wrote
// it), or, dryRun, what that would change.
func UninstallAgent(out io.Writer, agent string, s ScopeFlags, dryRun bool) error {
	reg, err := all.Registration(agent)
	if err != nil {
		return cli.WithHint(err, "use --agent "+all.Others)
	}
	dir, err := state.DefaultDir()
	if err != nil {
		return err
	}
	backups := cli.BackupDir(dir)
	self, _ := cli.SelfPath()
	env, err := cli.SettingsEnv()
	if err != nil {
		return err
	}
	paths := []string{reg.UserFile(env.Dirs()), reg.ProjectFile(env.Cwd)}
	explicit := s.User || s.Project
	if explicit {
		p, _, err := agentFile(reg, s)
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
		var res *install.Result
		if reg.Plugin != nil {
			res, err = install.RemoveOwned(path, backups, reg.IsOurs, dryRun)
			if err == nil && path == reg.UserFile(env.Dirs()) {
				var sh *install.Result
				if sh, err = removeOpenCodeShell(path, backups, dryRun); err == nil && sh.Changed {
					ReportRemoval(out, sh, dryRun, "init")
				}
			}
		} else if cli.ShellToolAgents[reg.Agent] {
			res, err = install.RemoveAgentShellTool(path, backups, reg.File(register.Options{Binary: self}), dryRun)
		} else {
			res, err = install.RemoveAgent(path, backups, reg.File(register.Options{Binary: self}), dryRun)
		}
		if err != nil {
			return err
		}
		if !res.Changed && !explicit {
			continue
		}
		ReportRemoval(out, res, dryRun, "init")
		if res.Changed {
			removed++
		}
	}
	if removed == 0 {
		fmt.Fprintf(out, "loopguard was not registered for %s by init here.\n", reg.Agent)
	}
	if dryRun {
		fmt.Fprintln(out, "Dry run: nothing was written.")
	}
	return nil
}
