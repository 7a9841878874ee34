package hooks

import (
	"slices"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/token"
)

// retryKeys says what makes another call a plausible retry of the call
// whose canonical bytes these are: the reason approved_call_changed is
// true only for a call that shares one of them (and is of the same
// session, agent and tool: the caller looks only there):
//   - Bash: each command name (the keys of its executables: `go test ./x`
//     retries `go test ./...`; `ls` does not);
//   - file tools: the path;
//   - any other tool (WebFetch, an MCP tool...): the tool itself, whose
//     name is the operation (an approved transfer's retry with another
//     amount is a changed call).
//
// An approval keeps them in its grant record, so the reason does not
// depend on the pending record surviving (prune, a rewrite). They choose a
// wording, never a decision: either way the call is denied and pending.
func retryKeys(canonical []byte) []string {
	v, err := token.Decode(canonical)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	tool, _ := m["tool"].(string)
	in, _ := m["input"].(map[string]any)
	if tool == "" || in == nil {
		return nil
	}
	var keys []string
	switch field := policy.ToolOf(tool).Changes; {
	case tool == "Bash":
		ex, _ := m["executables"].(map[string]any)
		for name := range ex {
			keys = append(keys, "command:"+name)
		}
	case field != "":
		if p, _ := in[field].(string); p != "" {
			keys = append(keys, "path:"+p)
		}
	default:
		keys = append(keys, "tool:"+tool)
	}
	slices.Sort(keys)
	return keys
}

// plausibleRetry says whether the call d shares a retry key with an
// approved call whose keys are approved.
func plausibleRetry(approved []string, d *described) bool {
	for _, k := range retryKeys(d.canonical) {
		if slices.Contains(approved, k) {
			return true
		}
	}
	return false
}
