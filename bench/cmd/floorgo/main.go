// Command floorgo is the floor for any Go hook (issue 39's "minimal static
// Go hook"): it reads the payload from stdin and decodes it as JSON, as a
// hook must before it can decide anything, and prints a fixed PreToolUse
// allow. It decides nothing. The benchmark (bench/cmd/hookbench) runs it
// beside loopguard; floorkeyring and floorlinked start from it.
package main

import (
	"encoding/json"
	"io"
	"os"
)

const answer = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"floor"}}` + "\n"

func main() {
	data, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
	if err != nil {
		os.Exit(2)
	}
	// A cut payload (the malformed path) is read to its end and answered
	// all the same: the floor's work is the reading and the decoding.
	var call struct {
		Event string          `json:"hook_event_name"`
		Tool  string          `json:"tool_name"`
		Input json.RawMessage `json:"tool_input"`
	}
	_ = json.Unmarshal(data, &call)
	_, _ = os.Stdout.WriteString(answer)
}
