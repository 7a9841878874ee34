package hooks

import (
	"context"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/token"
)

// A grant bound to the project covers the rule's calls in every session
// started in that project (a client restart starts a new one), only where
// Claude Code names the project (CLAUDE_PROJECT_DIR), never through the
// payload's cwd, and never another project's calls.
func TestProjectGrant(t *testing.T) {
	h := newHarness(t)
	call := withInput(h.fixture("pretooluse-bash.json"), "command", "git status")
	restarted := with(call, func(m map[string]any) { m["session_id"] = "0f6c1c5e-new-session" })
	other := withInput(call, "command", "git status --short")
	h.grantScope("Bash(git status)", token.ProjectSession(h.Project), token.MainAgent)
	decide := func(projectDir string, payload map[string]any) Decision {
		e := h.eng()
		e.Env.ProjectDir = projectDir
		return e.Decide(context.Background(), h.call(payload))
	}
	expect(t, "this project", decide(h.Project, call), Allow, ReasonScopedGrant)
	expect(t, "after a restart", decide(h.Project, restarted), Allow, ReasonScopedGrant)
	expect(t, "the project dir written with a trailing slash", decide(h.Project+"/", restarted), Allow, ReasonScopedGrant)
	expect(t, "another command", decide(h.Project, other), Deny, ReasonNoGrant)
	expect(t, "another project", decide(h.Project+"-other", call), Deny, ReasonNoGrant)
	// Without CLAUDE_PROJECT_DIR the payload's cwd (the project here) does
	// not stand in for it.
	expect(t, "no CLAUDE_PROJECT_DIR", decide("", call), Deny, ReasonNoGrant)
}

// A call refused for lack of a grant, whose rule a grant of another session
// holds, says so (the reason code stays no_grant); a call no grant's rule
// covers says nothing of the kind.
func TestGrantElsewhereSaysSo(t *testing.T) {
	h := newHarness(t)
	call := withInput(h.fixture("pretooluse-bash.json"), "command", "git status")
	g := h.grantScope("Bash(git status)", "an-earlier-session", token.MainAgent)
	// Claude Code restarted in the project: the earlier session was the
	// last one seen there.
	if err := h.Store.NoteSession(h.Project, "an-earlier-session", h.now); err != nil {
		t.Fatal(err)
	}
	d := h.decide(call)
	expect(t, "another session's grant", d, Deny, ReasonNoGrant)
	if !strings.Contains(d.Message, "grant "+g.ID()+" (Bash(git status)@") || !strings.Contains(d.Message, "bound to session an-earlier-session") {
		t.Errorf("the refusal does not name the grant of the other session: %q", d.Message)
	}
	other := withInput(call, "command", "git status --short")
	if d := h.decide(other); strings.Contains(d.Message, "would cover it") {
		t.Errorf("a call the rule does not cover is said to be covered: %q", d.Message)
	}
}
