package agents

import "github.com/loopguard/loopguard/present"

// Host is what one agent's host does with a hook, as checked on a real
// client (the version is named); doctor and the README say it.
type Host struct {
	// Client is the client and version the facts were checked on.
	Client string
	// Rewrite says how the host runs the canonical rewrite of a Bash call
	// a scoped grant covers; "" when it cannot (or it is unproven): a scope
	// then covers only a command whose text is already plain.
	Rewrite string
	// Wrapper says how loopguard's own wrapper, where the host runs the
	// model's text (Rewrite ""), runs a Bash call under its grant's
	// capability itself: the launch the rewrite makes elsewhere, and the
	// jail with it. "" when no wrapper can stand in front of its shell.
	Wrapper string
	// Timeout says what the host does with the call when a hook runs past
	// the timeout registered for it; TimeoutOpen when it runs the call.
	Timeout     string
	TimeoutOpen bool
	// Files is what the client does with a file tool's input where it
	// differs from Claude Code, which the edit diff a human reviews says.
	Files present.Client
}
