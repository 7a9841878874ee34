package hooks

import (
	"context"
	"testing"
)

// One decision across registrations (answer.go): two registrations of one
// agent (the user's file and the repository's, told apart by --scope) run
// for one call answer it once, and one approval never runs two calls.
// Each row plays calls through registrations in the host's order; key is
// the identity the host gives the call ("" none).
func TestOneDecisionAcrossRegistrations(t *testing.T) {
	const (
		user    = "copilot|preToolUse|enforce|user"
		project = "copilot|preToolUse|enforce|project"
		// Before --scope, both registrations had this one name.
		unnamed = "copilot|preToolUse|enforce"
	)
	type ask struct{ reg, key, want string }
	rows := []struct {
		name string
		asks []ask
	}{
		{"the approved call, through both registrations, then a repeat", []ask{
			{user, "t:1", "allow/exact_grant"}, {project, "t:1", "allow/exact_grant"},
			{user, "t:2", "deny/approval_consumed"}, {project, "t:2", "deny/approval_consumed"}}},
		// Attack: two identical calls sharing one identity (the same
		// millisecond): the second reaches the registration that decided
		// the first, which decides it again.
		{"two calls with one identity", []ask{
			{user, "t:1", "allow/exact_grant"}, {project, "t:1", "allow/exact_grant"},
			{user, "t:1", "deny/approval_consumed"}, {project, "t:1", "deny/approval_consumed"}}},
		// Attack: the second call's registrations in the other order.
		{"one identity, the other order", []ask{
			{user, "t:1", "allow/exact_grant"},
			{project, "t:1", "allow/exact_grant"}, {project, "t:1", "deny/approval_consumed"},
			{user, "t:1", "deny/approval_consumed"}}},
		// No identity from the host: the record of the decided call.
		{"no identity: the decided call's record", []ask{
			{user, "", "allow/exact_grant"}, {project, "", "allow/exact_grant"},
			{user, "", "deny/approval_consumed"}, {project, "", "deny/approval_consumed"}}},
		{"no identity, a repeat through the second registration first", []ask{
			{user, "", "allow/exact_grant"}, {project, "", "allow/exact_grant"},
			{project, "", "deny/approval_consumed"}, {user, "", "deny/approval_consumed"}}},
		// Control, the bug: registrations that share a name cannot be told
		// apart; the second consumes the approval again.
		{"control: one name for both", []ask{
			{unnamed, "t:1", "allow/exact_grant"}, {unnamed, "t:1", "deny/approval_consumed"}}},
		// Control: one registration follows no one, with no identity.
		{"control: one unnamed registration, no identity", []ask{
			{unnamed, "", "allow/exact_grant"}, {unnamed, "", "deny/approval_consumed"}}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			h := newHarness(t)
			p := h.bashCall("echo one >> runs.txt")
			first := h.decide(p)
			expect(t, "unapproved", first, Deny, ReasonNoGrant)
			h.approve(first)
			for i, a := range row.asks {
				e := h.eng()
				e.Registration = a.reg
				c := h.call(p)
				c.CallKey = a.key
				d := e.Decide(context.Background(), c)
				if got := d.Behavior + "/" + d.Reason; got != a.want {
					t.Errorf("ask %d (%s, key %q): %s (%s), want %s", i, a.reg, a.key, got, d.Message, a.want)
				}
			}
		})
	}
}
