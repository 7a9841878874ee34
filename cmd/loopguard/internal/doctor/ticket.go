package doctor

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/ticket"
)

// checkTicket is doctor's line on two-phase enforcement (init --ticket,
// package ticket): whether loopguard's hooks are registered with --ticket,
// the prefix that puts the wrapper in front of Claude Code's shell is set
// to the wrapper, and no project or local settings file replaces or unsets
// it, or sets a variable that runs code around it (ticket.AroundWrapper;
// the hook then refuses every Bash call: no_wrapper).
func checkTicket(env doctorEnv) checkResult {
	const name = "two-phase"
	wrapper, ticketHooks := "", false
	prefix := map[string]string{} // settings file -> its CLAUDE_CODE_SHELL_PREFIX
	var order []string
	around, aroundFix := "", "" // a project's settings run code around the wrapper
	for _, sc := range []install.Scope{install.User, install.Project, install.Local} {
		p, err := install.SettingsPath(sc, env.settings)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) || err != nil {
			continue
		}
		if hs, err := install.Hooks(data, env.self); err == nil {
			for _, h := range hs {
				if c, err := h.Handler.Hook(env.self); h.Ours && err == nil && c.Ticket {
					ticketHooks = true
					wrapper = install.Options{Binary: c.Binary, Ticket: true}.Wrapper()
				}
			}
		}
		if sb, err := install.ReadSandbox(data); err == nil {
			if v, ok := sb.Env[install.PrefixEnv]; ok {
				prefix[p] = v
				order = append(order, p)
			}
			if sc != install.User {
				for _, k := range slices.Sorted(maps.Keys(sb.Env)) {
					if why := ticket.AroundWrapper(k); why != "" && around == "" {
						around = fmt.Sprintf("%s sets %s, which %s", p, k, why)
						aroundFix = "remove " + k + " from " + p
					}
				}
			}
		}
	}
	if !ticketHooks {
		return checkResult{status: statusSkip, name: name,
			detail: "off: a Bash call runs when loopguard's hook was not loaded or never answered (loopguard init --ticket puts loopguard's wrapper in front of the shell)"}
	}
	ok := false
	for _, p := range order {
		if prefix[p] != wrapper {
			return checkResult{status: statusFail, name: name,
				detail: fmt.Sprintf("%s sets %s to %q, not loopguard's wrapper %s: the hook refuses every Bash call (no_wrapper)", p, install.PrefixEnv, prefix[p], wrapper),
				fix:    "remove " + install.PrefixEnv + " from " + p}
		}
		ok = true
	}
	if !ok {
		return checkResult{status: statusFail, name: name,
			detail: "loopguard's hooks are registered with --ticket, but no settings file sets " + install.PrefixEnv + ": every Bash call is refused (no_wrapper)",
			fix:    "loopguard init --ticket"}
	}
	if around != "" {
		return checkResult{status: statusFail, name: name,
			detail: around + ": the hook refuses every Bash call (no_wrapper)", fix: aroundFix}
	}
	if fi, err := os.Stat(wrapper); err != nil || fi.Mode().Perm()&0o111 == 0 {
		return checkResult{status: statusFail, name: name, detail: "the wrapper " + wrapper + " is not there: every Bash call is refused",
			fix: "install every binary (make install), then loopguard init --ticket"}
	}
	return checkResult{status: statusOK, name: name,
		detail: "on: every Bash command runs through " + wrapper + " only on a ticket the hook issued for exactly it; a hook that hung, crashed or was not loaded runs nothing"}
}
