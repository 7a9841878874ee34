package initcmd

import (
	"github.com/loopguard/loopguard/register"
)

// Where an agent's host runs the model's own command text (Qwen Code:
// agents.Host.Rewrite ""), loopguard's own wrapper in front of its shell
// (init --agent qwen --ticket: the shell tool, package shelltool) makes
// the launch the rewrite makes elsewhere, from the capability the hook
// wrote into the call's ticket: a scoped grant's program runs confined
// there, and the jail applies (agents.Host.Wrapper).

// wrapperJails: init --ticket put such a wrapper in front of reg's shell
// (launcher is the one it names).
func wrapperJails(reg register.Registration, launcher string) bool {
	return launcher != "" && reg.Host.Wrapper != ""
}

// wrapperHint says how an agent that runs the model's text gets the
// jail, "" for one that cannot.
func wrapperHint(reg register.Registration) string {
	if reg.Host.Wrapper == "" {
		return ""
	}
	return " With --ticket, loopguard's own shell tool runs each call confined to its grant's capability, and init grants the jail."
}

// wrapperNote says what the wrapper does for reg.
func wrapperNote(reg register.Registration) string {
	return "Confined: " + reg.Hooks.Host + " runs the model's own command text; " + reg.Host.Wrapper +
		": a scoped grant's program and a jailed call run confined by the kernel, as where the host runs loopguard's rewrite."
}
