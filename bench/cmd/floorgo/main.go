// Command floorgo is the floor for any Go hook: it reads the payload from
// stdin, as a hook must, and prints a fixed PreToolUse answer. It decides
// nothing. The benchmark (bench/cmd/hookbench) runs it beside loopguard.
package main

import (
	"io"
	"os"
)

const answer = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"floor"}}` + "\n"

func main() {
	if _, err := io.Copy(io.Discard, io.LimitReader(os.Stdin, 64<<20)); err != nil {
		os.Exit(2)
	}
	_, _ = os.Stdout.WriteString(answer)
}
