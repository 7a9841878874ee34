package hooks

import "testing"

// A scoped grant never covers a Bash call that leaves the sandbox or widens
// its network; an exact approval (which shows the field) does. Controls: the
// same command without the fields, or with them at their harmless values,
// stays covered by the scope.
func TestSandboxEscapeNeedsExactApproval(t *testing.T) {
	h := newHarness(t)
	bash := withInput(h.fixture("pretooluse-bash.json"), "command", "go test ./...")
	h.grantScope("Bash(go test ./...)", "*", "main")
	for _, c := range []struct {
		name string
		set  map[string]any
	}{
		{"disable sandbox", map[string]any{"dangerouslyDisableSandbox": true}},
		{"disable sandbox as a string", map[string]any{"dangerouslyDisableSandbox": "true"}},
		{"disable sandbox as a number", map[string]any{"dangerouslyDisableSandbox": float64(1)}},
		{"allowed domains", map[string]any{"allowed_domains": []any{"evil.example"}}},
		{"allowed domains as a string", map[string]any{"allowed_domains": "evil.example"}},
		{"both", map[string]any{"dangerouslyDisableSandbox": true, "allowed_domains": []any{"evil.example"}}},
		{"Codex's escalation", map[string]any{"sandbox_permissions": "require_escalated", "justification": "x"}},
		{"Codex's additional permissions", map[string]any{"sandbox_permissions": "with_additional_permissions"}},
		{"Codex's field, another type", map[string]any{"sandbox_permissions": true}},
	} {
		call := with(bash, func(m map[string]any) {
			for k, v := range c.set {
				input(m)[k] = v
			}
		})
		d := h.decide(call)
		expect(t, c.name, d, Deny, ReasonSandboxEscape)
		perm := with(call, func(m map[string]any) { m["hook_event_name"] = PermissionRequest; delete(m, "tool_use_id") })
		expect(t, c.name+" (PermissionRequest)", h.decide(perm), Deny, ReasonSandboxEscape)
		h.approve(d)
		expect(t, c.name+" (approved exactly)", h.decide(call), Allow, ReasonExactGrant)
	}
	for _, c := range []struct {
		name string
		set  map[string]any
	}{
		{"plain", nil},
		{"disable sandbox false", map[string]any{"dangerouslyDisableSandbox": false}},
		{"disable sandbox null", map[string]any{"dangerouslyDisableSandbox": nil}},
		{"no allowed domains", map[string]any{"allowed_domains": []any{}}},
		{"allowed domains null", map[string]any{"allowed_domains": nil}},
		{"Codex's default", map[string]any{"sandbox_permissions": "use_default"}},
		{"Codex's field null", map[string]any{"sandbox_permissions": nil}},
	} {
		call := with(bash, func(m map[string]any) {
			for k, v := range c.set {
				input(m)[k] = v
			}
		})
		expect(t, "control: "+c.name, h.decide(call), Allow, ReasonScopedGrant)
	}
}
