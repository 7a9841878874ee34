package codex

import (
	"strings"
	"testing"
)

// The hashes Codex 0.171.0 wrote when its user chose "Trust all and
// continue" for this hooks.json (recorded from its config.toml).
const trustedHooks = `{"hooks":{"PreToolUse":[{"matcher":"^(Bash|apply_patch|mcp__.*)$","hooks":[{"type":"command","command":"/bin/true hook codex --event PreToolUse","timeout":30,"statusMessage":"loopguard"}]}],"PostToolUse":[{"matcher":"x","hooks":[{"type":"command","command":"/bin/true post","timeout":31}]},{"matcher":"y","hooks":[{"type":"command","command":"/bin/true a","timeout":32},{"type":"command","command":"/bin/true b","timeout":33}]}]}}`

const trustedConfig = `model = "gpt-fake"

[hooks.state]

[hooks.state."/h/.codex/hooks.json:pre_tool_use:0:0"]
trusted_hash = "sha256:293c2c9eed7d9f09c7bf0a5e928b332c17c66d692737f2bd77e38201a9c2edd7"

[hooks.state."/h/.codex/hooks.json:post_tool_use:0:0"]
trusted_hash = "sha256:1847bacd700a25f0549e371530e915fe6d311c4054d575245331d11600c19612"

[hooks.state."/h/.codex/hooks.json:post_tool_use:1:0"]
trusted_hash = "sha256:1efc7c540468490268b6afff56eec5b849fc7e52e6b2be92c31eb9b4363fa292"

[hooks.state."/h/.codex/hooks.json:post_tool_use:1:1"]
trusted_hash = "sha256:cfbe1ae4e5ff439fafbd478be9f22964ffc4d22fa41ec1b369b67577746a1ce4"
`

func TestTrustHashMatchesCodex(t *testing.T) {
	all := func(map[string]any) bool { return true }
	got, err := Untrusted("/h/.codex/hooks.json", []byte(trustedHooks), []byte(trustedConfig), all)
	if err != nil || len(got) != 0 {
		t.Fatalf("untrusted %v, %v; want every handler trusted as Codex recorded", got, err)
	}
	// Changed since it was trusted: another timeout.
	changed := strings.Replace(trustedHooks, `"timeout":30`, `"timeout":31`, 1)
	if got, _ := Untrusted("/h/.codex/hooks.json", []byte(changed), []byte(trustedConfig), all); len(got) != 1 || !strings.Contains(got[0], "changed") {
		t.Errorf("changed handler: %v", got)
	}
	// Another file's trust does not count.
	if got, _ := Untrusted("/other/hooks.json", []byte(trustedHooks), []byte(trustedConfig), all); len(got) != 4 {
		t.Errorf("untrusted file: %v", got)
	}
}
