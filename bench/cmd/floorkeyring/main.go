// Command floorkeyring is the floor for any Go hook that verifies with a key
// kept in the OS keyring: it reads and decodes the payload as floorgo does, reads one secret
// from the keyring with go-keyring (the library loopguard uses, called
// directly, without loopguard's session bus check or timeout), and prints a
// fixed PreToolUse answer. The benchmark (bench/cmd/hookbench) runs it beside
// loopguard, inside the same Secret Service session.
package main

import (
	"encoding/json"
	"io"
	"os"

	gokeyring "github.com/zalando/go-keyring"
)

const answer = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"floor"}}` + "\n"

func main() {
	data, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
	if err != nil {
		os.Exit(2)
	}
	var call struct {
		Event string          `json:"hook_event_name"`
		Tool  string          `json:"tool_name"`
		Input json.RawMessage `json:"tool_input"`
	}
	_ = json.Unmarshal(data, &call)
	// The item loopguard keeps its master key in (keyring.Service,
	// keyring.Account); named here so this binary links nothing of loopguard.
	secret, err := gokeyring.Get("loopguard", "master-key")
	if err != nil || secret == "" {
		os.Exit(2)
	}
	_, _ = os.Stdout.WriteString(answer)
}
