package hooks

import "strings"

// ReasonSandboxEscape: a Bash call that asks its host to run it outside
// the OS sandbox (Claude Code's dangerouslyDisableSandbox, Codex's
// sandbox_permissions) or to widen its network for this one command
// (allowed_domains). No scoped grant covers it; only an exact approval,
// which shows the field, can.
const ReasonSandboxEscape = "sandbox_escape"

// The agent-chosen Bash input fields that change the sandbox (Claude Code
// 2.1.328's Bash schema).
const (
	fieldDisableSandbox = "dangerouslyDisableSandbox"
	fieldAllowedDomains = "allowed_domains"
	// fieldSandboxPermissions is Codex's (exec_command, 0.171): any value
	// but use_default asks to run the command outside its sandbox
	// (require_escalated) or with more than it gives
	// (with_additional_permissions).
	fieldSandboxPermissions = "sandbox_permissions"
)

// Escape requests as the model spells them, for Call.Escape.
const (
	EscapeClaude = "dangerouslyDisableSandbox: true"
	EscapeCodex  = `sandbox_permissions: "require_escalated" and a justification`
)

// sandboxEscape says why a call asks to leave or widen the sandbox, or "".
// Fail closed: any value but an explicit false (or null) for
// dangerouslyDisableSandbox, any sandbox_permissions but use_default (or
// null, or empty), and any allowed_domains that is not empty (or null),
// counts, whatever its type.
func sandboxEscape(c *Call) string {
	var why []string
	if v, ok := c.ToolInput[fieldDisableSandbox]; ok && v != nil && v != false {
		why = append(why, fieldDisableSandbox+" is set (the command would run outside the sandbox)")
	}
	if v, ok := c.ToolInput[fieldSandboxPermissions]; ok && v != nil && v != "" && v != "use_default" {
		why = append(why, fieldSandboxPermissions+" asks for more than the sandbox gives (the command would run outside it, or with more)")
	}
	if v, ok := c.ToolInput[fieldAllowedDomains]; ok && v != nil {
		if l, isList := v.([]any); !isList || len(l) > 0 {
			why = append(why, fieldAllowedDomains+" is set (the command would reach network hosts the agent chose)")
		}
	}
	return strings.Join(why, "; ")
}
