package hooks

import "github.com/loopguard/loopguard/token"

// plausibleRetry says whether a call (cur, as described) plausibly retries
// the approved call whose canonical bytes are approved: the reason
// approved_call_changed is true only then; any other call gets the
// ordinary reason. Both calls are of one session, agent and tool (the
// caller looks only there); besides:
//   - Bash: the two commands share a command name (the keys of their
//     executables: `go test ./x` retries `go test ./...`; `ls` does not);
//   - file tools: the same path;
//   - any other tool (WebFetch, an MCP tool...): the tool itself, whose
//     name is the operation (an approved transfer's retry with another
//     amount is a changed call).
//
// It is a choice of wording, never a decision: either way the call is
// denied and pending.
func plausibleRetry(approved []byte, cur *described) bool {
	v, err := token.Decode(approved)
	if err != nil {
		return false
	}
	m, _ := v.(map[string]any)
	if m["tool"] != cur.desc.Tool {
		return false
	}
	in, _ := m["input"].(map[string]any)
	curIn, _ := cur.desc.Input.(map[string]any)
	if in == nil || curIn == nil {
		return false
	}
	if cur.desc.Tool == "Bash" {
		ex, _ := m["executables"].(map[string]any)
		for name := range cur.desc.Executables {
			if _, ok := ex[name]; ok {
				return true
			}
		}
		return false
	}
	if field, ok := fileTools[cur.desc.Tool]; ok {
		p, _ := in[field].(string)
		return p != "" && p == curIn[field]
	}
	return true
}
