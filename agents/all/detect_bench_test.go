package all

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
)

// BenchmarkDetect1MB is what recognising the agent adds to an unnamed
// (Claude Code) registration's hook call for a 1 MB Write payload, once
// agents.Run has decoded it: a few key lookups, no second decode.
func BenchmarkDetect1MB(b *testing.B) {
	payload, _ := json.Marshal(map[string]any{
		"session_id": "s", "transcript_path": "/t", "cwd": "/p", "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_1",
		"tool_input": map[string]any{"file_path": "/p/big.txt", "content": strings.Repeat("0123456789abcdef\n", 1<<20/17)},
	})
	m, err := agents.Object(payload)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if a, err := Detect(m); err != nil || a.Name() != "claude" {
			b.Fatal(a, err)
		}
	}
}
