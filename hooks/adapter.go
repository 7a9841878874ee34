package hooks

import "io"

// This file is what agent adapters outside this package (agents/...) need
// from the Claude Code adapter and the engine's error mapping. It only
// exports; the behaviour stays where it is.

// WriteClaude encodes d in Claude Code's hook output for event and returns
// the exit code (see writeClaude).
func WriteClaude(event string, d Decision, stdout, stderr io.Writer) int {
	return writeClaude(event, d, stdout, stderr)
}

// SetupFailure maps an error building the engine to a deny.
func SetupFailure(err error) Decision { return failure(err) }

// Malformed is the deny of a payload the engine cannot decide on.
func Malformed(msg string) Decision { return malformed(msg) }

// Clip cuts a message to MaxReasonLen.
func Clip(s string) string { return clip(s) }
