package register

// Other agents' hook files (Codex hooks.json, Gemini and Qwen Code
// settings.json, Copilot .github/hooks/*.json, Cursor hooks.json) hold
// loopguard's handlers in one of two shapes; package install edits them
// (ApplyAgent, RemoveAgent) as AgentFile says.

// AgentFile says how one agent's hook file registers loopguard.
type AgentFile struct {
	// Nested: "hooks".<event> is an array of groups, each
	// {"matcher": ..., "hooks": [handler, ...]} (Codex, Gemini, Qwen).
	// Otherwise it is an array of handlers (Copilot, Cursor).
	Nested bool
	// Version, when not 0, is written as "version" at the top of a file
	// loopguard creates (Copilot and Cursor want "version": 1).
	Version int
	Entries []AgentEntry
	// Self is the running binary: a handler running it counts as
	// loopguard's even if it is not named loopguard (see Parse).
	Self string
	// Off are boolean settings, dotted paths ("general.gitCoAuthor.commit"),
	// that init sets to false beside the hooks: a host's rewrite of a call
	// after its hooks ran, which loopguard turns off so that what runs is
	// what was decided. Uninstall leaves them as they are.
	Off []string
}

// AgentEntry is one handler loopguard registers.
type AgentEntry struct {
	Event string
	// Matcher is the group's matcher (Nested only; "" writes none).
	Matcher string
	// Handler is written as encoding/json writes it (use a struct: its
	// field order is kept).
	Handler any
}

// Found is one handler found in an agent's hook file.
type Found struct {
	Event   string
	Matcher string // the group's (Nested) or the handler's own "matcher"
	// Fields is the handler as plain JSON values (numbers as float64).
	Fields map[string]any
	Ours   bool
}
