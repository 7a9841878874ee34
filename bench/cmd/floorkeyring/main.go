// Command floorkeyring is the floor for any Go hook that verifies with a key
// kept in the OS keyring: it reads the payload from stdin, reads one secret
// from the keyring with go-keyring (the library loopguard uses, called
// directly, without loopguard's session bus check or timeout), and prints a
// fixed PreToolUse answer. The benchmark (bench/cmd/hookbench) runs it beside
// loopguard, inside the same Secret Service session.
package main

import (
	"io"
	"os"

	gokeyring "github.com/zalando/go-keyring"
)

const answer = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"floor"}}` + "\n"

func main() {
	if _, err := io.Copy(io.Discard, io.LimitReader(os.Stdin, 64<<20)); err != nil {
		os.Exit(2)
	}
	// The item loopguard keeps its master key in (keyring.Service,
	// keyring.Account); named here so this binary links nothing of loopguard.
	secret, err := gokeyring.Get("loopguard", "master-key")
	if err != nil || secret == "" {
		os.Exit(2)
	}
	_, _ = os.Stdout.WriteString(answer)
}
