// Package hooks is the decision engine: for each tool call a coding agent
// is about to make (a Call), Engine.Decide says whether it carries a valid
// approval, holds it for a human, or refuses it, and records why. It knows
// no agent: each agent's adapter (agents/claude, agents/codex, ...) decodes
// its payload into a Call and encodes the Decision, and agents.Run holds
// one call to the hook's deadline. What a person or a model reads about a
// call is written by package present.
package hooks

import (
	"github.com/loopguard/loopguard/token"
)

// Events the engine understands.
const (
	PreToolUse        = "PreToolUse"
	PermissionRequest = "PermissionRequest"
	PostToolUse       = "PostToolUse"
	// PostToolUseFailure is PostToolUse for a call that failed (Claude
	// Code: a Bash command that exited non-zero): the same check of what
	// ran, with the failure's text as the Output.
	PostToolUseFailure = "PostToolUseFailure"
	// SessionEnd is Claude Code's end of a session: no call, so the
	// engine never sees it (the hook sweeps for a launch the session's
	// end killed: hookmain).
	SessionEnd = "SessionEnd"
)

// after reports whether event comes after the call ran.
func after(event string) bool { return event == PostToolUse || event == PostToolUseFailure }

// Call is a tool call as the engine sees it.
type Call struct {
	Event          string
	SessionID      string
	AgentID        string // "" for the main agent
	AgentType      string
	Cwd            string
	ToolName       string
	ToolUseID      string
	PermissionMode string
	// ToolInput is the complete tool_input, decoded by token.Decode (strict:
	// duplicate keys, invalid UTF-8 and lone surrogates are malformed).
	ToolInput map[string]any
	// ProjectDir is the project the host names for this call when the
	// hook's environment does not (CLAUDE_PROJECT_DIR): Codex's session
	// directory, read from its session record. "" when unknown.
	ProjectDir string
	// CallKey is the identity the agent's host gives every hook it runs for
	// this one call (Copilot's timestamp, a tool_use_id), "" when there is
	// none: another registration of loopguard asked about the same call
	// answers as the first did (answer.go).
	CallKey string
	// TypesLater says the host lets the model type into a command after it
	// started, and no hook sees what it types (Codex's write_stdin): an
	// approval of a program that reads commands from its standard input
	// then approves whatever is typed into it, and the human and the model
	// are told so.
	TypesLater bool
	// Rewrite says the agent's host runs the input an allow returns
	// (Decision.UpdatedInput) in place of the model's: Claude Code's
	// updatedInput. Without it a scope covers only a Bash command whose
	// text is already canonical (rewrite.go).
	Rewrite bool
	// PinBash says the host runs a Bash call's command with a shell the
	// model picks per call, which the payload does not carry (Codex's
	// exec_command: "shell":"/bin/sh", "login":false): the analysis is
	// bash's, so every allow of such a call, where the host runs the
	// rewrite, carries the command to run as `exec BASH -c 'TEXT'`
	// (pinnedBash), which any POSIX shell reads the same.
	PinBash bool
	// HostShells are the names of the shells the host may look up on its
	// own PATH to run a Bash call with (Codex's exec_command: the model
	// names the shell per call, "shell":"zsh", which the payload does not
	// carry, and Codex runs which(zsh)). A call is denied path_shadowed
	// while any of them resolves, on the PATH the hook sees (the host's),
	// to a program the trusted-directory rule does not vouch for
	// (hostShellShadowed): the host would run it with the call's command
	// as its argument, whatever the decision.
	HostShells []string
	// Wrapped says the host runs the model's own command text, unchanged,
	// through loopguard's wrapper, which runs it whole (bash -c) under the
	// capability the allow names (Decision.Capability, carried by its
	// ticket): loopguard's shell tool under Qwen Code (package shelltool).
	// A scope still covers only a command whose text is plain there (the
	// text is what bash reads), but what a grant covers runs confined, and
	// the jail grant applies, as where the host runs the rewrite.
	Wrapped bool
	// Escape is how the model asks this host to run a Bash call outside
	// its sandbox (Claude Code's dangerouslyDisableSandbox, Codex's
	// sandbox_permissions), which loopguard holds for the human's exact
	// approval (sandbox_escape): the line beside a jailed call's refusal
	// tells the model to ask so. "" when the host has no such request.
	Escape string
	// Output is what the call's result said, after it ran (PostToolUse):
	// a Bash call's standard output and error, or the failure's text, as
	// the host reports them; "" when it reports none. Only a confined
	// call's is read, for a refusal by the jail (jailnote.go).
	Output string
}

// Launches says a Bash call can run through the launcher under a
// capability: the host runs the rewrite, or loopguard's wrapper makes the
// launch (Wrapped).
func (c *Call) Launches() bool { return c.Rewrite || c.Wrapped }

// Agent is the agent identity grants bind to: the subagent's agent_id, or
// "main".
func (c *Call) Agent() string {
	if c.AgentID != "" {
		return c.AgentID
	}
	return token.MainAgent
}

// MalformedError is a payload the engine refuses to decide on.
type MalformedError struct{ Msg string }

func (e *MalformedError) Error() string { return "malformed hook payload: " + e.Msg }
