package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents/copilot"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/register"
)

// copilotConfig is Copilot CLI's config.json, where it keeps the folders
// the user trusts: in $COPILOT_HOME when set, else in ~/.copilot.
func copilotConfig(dirs register.Dirs) string {
	home := os.Getenv("COPILOT_HOME")
	if home == "" {
		home = dirs.Agent(copilot.Name)
	}
	return filepath.Join(home, copilot.ConfigFile)
}

// copilotTrust checks the registrations of Copilot's found in the project
// (its .github/hooks file, the Claude Code settings it runs there): Copilot
// runs them only in a folder the user trusts, and ignores them silently
// elsewhere. Without a user registration beside them, that is a failure:
// every call runs unguarded.
func copilotTrust(env doctorEnv, found []cli.FoundReg) []checkResult {
	var inProject []string
	user := false
	for _, f := range found {
		if f.Scope == register.ScopeUser && !f.Claude {
			user = true
		} else {
			inProject = append(inProject, f.Path)
		}
	}
	if len(inProject) == 0 {
		return nil
	}
	dir := filepath.Clean(env.settings.Cwd)
	cfg := copilotConfig(env.settings.Dirs())
	trusted, err := copilotTrusts(cfg, dir)
	name := "copilot folder trust"
	if err != nil {
		return []checkResult{{status: statusFail, name: name,
			detail: fmt.Sprintf("cannot tell whether Copilot trusts %s: %v; it runs %s only in a folder it trusts", dir, err, strings.Join(inProject, " and ")),
			fix:    "make " + cfg + " readable JSON, then " + copilot.TrustStep(dir)}}
	}
	switch {
	case trusted:
		return []checkResult{{status: statusOK, name: name,
			detail: fmt.Sprintf("Copilot trusts %s (%s), so it runs %s", dir, cfg, strings.Join(inProject, " and "))}}
	case user:
		return []checkResult{{status: statusOK, name: name,
			detail: fmt.Sprintf("Copilot does not trust %s (%s), so it ignores %s; the user registration guards this folder", dir, cfg, strings.Join(inProject, " and "))}}
	}
	return []checkResult{{status: statusFail, name: name,
		detail: fmt.Sprintf("Copilot does not trust %s (not in %s), so it ignores %s without a word: every call here runs unguarded", dir, cfg, strings.Join(inProject, " and ")),
		fix:    copilot.TrustStep(dir)}}
}

// copilotTrusts reads Copilot's config at cfg (missing: nothing trusted)
// and says whether it trusts dir, as written or with its symbolic links
// resolved.
func copilotTrusts(cfg, dir string) (bool, error) {
	data, _, err := install.ReadSettings(cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if data == nil {
		return false, nil
	}
	ok, err := copilot.Trusted(data, dir)
	if err != nil || ok {
		return ok, err
	}
	if r, rerr := filepath.EvalSymlinks(dir); rerr == nil && r != dir {
		return copilot.Trusted(data, r)
	}
	return false, nil
}

// registrationNames are the names the hook gives loopguard's handlers in
// the agent's own hook file at path (hooks.RegistrationName), as their
// commands are written; nil when it cannot be read. (Claude Code's
// registration, which Copilot and Cursor run too, names no agent: its
// names are never an agent's own.)
func registrationNames(reg register.Registration, path, self string) []string {
	data, _, err := install.ReadSettings(path)
	if err != nil || data == nil || reg.Plugin != nil {
		return nil
	}
	regs, err := install.AgentHooks(data, reg.File(register.Options{Binary: self}))
	if err != nil {
		return nil
	}
	var names []string
	for _, r := range regs {
		line, ok := r.Fields[reg.Hooks.CmdKey].(string)
		if !ok || !r.Ours {
			continue
		}
		if c, err := register.ParseShell(line, self); err == nil {
			names = append(names, hooks.RegistrationName(c.Agent, c.Event, c.Mode, c.Scope))
		}
	}
	return names
}

// sharedNames says which of the registrations found share a name (the
// hook cannot tell them apart, so the second decides every call again and
// refuses an approval the first used), "" when none does.
func sharedNames(reg register.Registration, found []cli.FoundReg, self string) string {
	seen := map[string]string{}
	for _, f := range found {
		if f.Claude {
			continue
		}
		for _, n := range registrationNames(reg, f.Path, self) {
			if other, ok := seen[n]; ok && other != f.Path {
				return other + " and " + f.Path
			}
			seen[n] = f.Path
		}
	}
	return ""
}

// severalRegistrations is doctor's line for an agent that runs loopguard
// from more than one file. Where each registration names its file
// (register.Hooks.Scoped: --scope), the hook tells them apart and answers
// a call once, the second following the first's answer. Where two cannot
// be told apart, the fix rewrites the user's own registration or removes
// it, never a project's file, which a repository may commit and a cloud
// agent may need.
func severalRegistrations(reg register.Registration, found []cli.FoundReg, self string) checkResult {
	var paths []string
	for _, f := range found {
		paths = append(paths, f.Path)
	}
	name := reg.Agent + " registrations"
	runs := fmt.Sprintf("%s runs loopguard from %d files (%s) for every call", reg.Agent, len(found), strings.Join(paths, " and "))
	both := sharedNames(reg, found, self)
	if both == "" && reg.Hooks.Scoped {
		return checkResult{status: statusOK, name: name,
			detail: runs + "; each names its registration (--scope, or Claude Code's own), so the hook tells them apart: the first decides a call, each other follows that answer once, and one approval runs the call once"}
	}
	if both != "" {
		fix := "keep the project's file (a repository may commit it): remove yours, loopguard uninstall --agent " + reg.Agent + " --user; it then guards only projects that register it"
		if reg.Hooks.Scoped {
			fix = "run: loopguard init --agent " + reg.Agent + " (your user registration then names its file, --scope user, and the project's is left as it is)"
		}
		return checkResult{status: statusFail, name: name,
			detail: runs + "; the commands in " + both + " cannot be told apart, so the second decides every call again and refuses the approval the first used: an approved call never runs",
			fix:    fix}
	}
	// Claude Code's registration beside the agent's own: told apart by
	// name, answered once where the host gives every hook the call's
	// identity.
	fix := "keep one: loopguard uninstall --agent " + reg.Agent + " --user"
	last := found[len(found)-1]
	if last.Claude {
		fix = "keep one: loopguard uninstall --agent " + reg.Agent + " (" + reg.Agent + " then runs the Claude Code registration in " + last.Path + ", answered in its own format), or remove loopguard from that file"
	}
	return checkResult{status: statusFail, name: name,
		detail: runs + "; loopguard answers a call once only where the host gives every hook the call's identity, and each registration is one more chance to disagree",
		fix:    fix}
}
