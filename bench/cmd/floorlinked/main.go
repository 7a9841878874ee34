// Command floorlinked is floorgo with the packages loopguard's hook decision
// links blank-imported: it reads and decodes the payload and prints a fixed answer, as
// floorgo does, and decides nothing, but it starts like a binary that links
// them (their package initialisation, the runtime's tables for their code and
// types, the pages that touches). It is the floor for any hook built from
// these packages: what is left between it and loopguard is the decision's own
// work and the rest of the binary (the CLI, the Vault client). The benchmark
// (bench/cmd/hookbench) runs it beside floorgo; BENCH.md explains.
package main

import (
	"encoding/json"
	"io"
	"os"

	_ "github.com/loopguard/loopguard/agents/all"
	_ "github.com/loopguard/loopguard/audit"
	_ "github.com/loopguard/loopguard/config"
	_ "github.com/loopguard/loopguard/hooks"
	_ "github.com/loopguard/loopguard/keyring"
	_ "github.com/loopguard/loopguard/state"
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
	_, _ = os.Stdout.WriteString(answer)
}
