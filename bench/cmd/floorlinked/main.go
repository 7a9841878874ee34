// Command floorlinked is floorgo with the packages loopguard's hook decision
// links blank-imported: it reads the payload and prints a fixed answer, as
// floorgo does, and decides nothing, but it starts like a binary that links
// them (their package initialisation, the runtime's tables for their code and
// types, the pages that touches). It is the floor for any hook built from
// these packages: what is left between it and loopguard is the decision's own
// work and the rest of the binary (the CLI, the Vault client). The benchmark
// (bench/cmd/hookbench) runs it beside floorgo; BENCH.md explains.
package main

import (
	"io"
	"os"

	_ "github.com/loopguard/loopguard/agents/all"
	_ "github.com/loopguard/loopguard/audit"
	_ "github.com/loopguard/loopguard/config"
	_ "github.com/loopguard/loopguard/hooks"
	_ "github.com/loopguard/loopguard/keyring"
	_ "github.com/loopguard/loopguard/state"
)

const answer = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"floor"}}` + "\n"

func main() {
	if _, err := io.Copy(io.Discard, io.LimitReader(os.Stdin, 64<<20)); err != nil {
		os.Exit(2)
	}
	_, _ = os.Stdout.WriteString(answer)
}
