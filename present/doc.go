// Package present is everything a person or a model reads about a call:
// the full rendering of its descriptor (Render, every byte, escaped), the
// change a file tool makes as a diff (Changes), the danger lines and the
// notes an approver on another machine needs (Danger, CallNotes), the
// one-line summary (Summary), and the escaping every agent-chosen string
// goes through before it reaches a terminal or an agent's host
// (EscapeText, Clip). It decides nothing: the engine (hooks) allows and
// denies, and the CLI, the console and the agents' adapters show what
// present writes.
package present
