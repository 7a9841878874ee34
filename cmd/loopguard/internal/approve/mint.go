package approve

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// PrefixLen is how many characters of a call's digest approve and team
// approve ask for.
const PrefixLen = hooks.ConfirmPrefixLen

// Exact mints the exact approval of p, after checking that the record
// still holds what was shown, and logs it.
func Exact(st *state.Store, m *Minter, p *state.Pending, ttl time.Duration, now time.Time) (*token.Grant, error) {
	// What is approved is what was shown: the record must still hold it.
	if cur, err := st.GetPending(p.ID); err != nil || cur.Digest != p.Digest || !bytes.Equal(cur.Descriptor, p.Descriptor) {
		return nil, cli.WithHint(fmt.Errorf("pending call %s changed while it was shown: refusing to approve", p.ID), "review it again: loopguard show "+p.ID)
	}
	// The warning of what jailed calls and file tools changed in the
	// project is the one shown (p.Planted, computed when it was): an
	// approved call runs outside the jail, and the eighty-sixth attack
	// run's jailed Makefile rewrite after the call was shown ran unseen.
	if w := hooks.PlantedNow(st, p); w != p.Planted {
		what := "now: " + w
		if w == "" {
			what = "none now"
		}
		return nil, cli.WithHint(fmt.Errorf("what jailed calls or the agent's file tools changed in the project of pending call %s is not what was shown with it (%s): refusing to approve", p.ID, present.EscapeText(what)),
			"review it again: loopguard show "+p.ID)
	}
	g, err := hooks.ApproveWith(st, m.mint, p, m.Principal, ttl, now)
	if err != nil {
		return nil, err
	}
	if err := cli.Record(st, m.Seal, m.entry(audit.Entry{Session: p.Session, Agent: p.Agent, AgentType: p.AgentType, Tool: p.Tool,
		Digest: p.Digest, Decision: "approve", Grant: g.ID(), Pending: p.ID, Principal: g.Principal})); err != nil {
		return nil, err
	}
	return g, nil
}

// Grant mints, stores (Minter.publish) and logs one scoped grant of rule
// r, with the grant file's notes rec (a preset's name).
func Grant(st *state.Store, m *Minter, r scope.Rule, session, agent string, expiry, now time.Time, rec state.GrantRecord) (*token.Grant, error) {
	g, err := m.mint(token.Grant{Principal: m.Principal, Agent: agent, Session: session,
		Tool: r.Tool(), ArgHash: token.Any, Scope: r.String(), Expiry: expiry}, now)
	if err != nil {
		return nil, err
	}
	if err := m.publish(st, &g, rec, now); err != nil {
		return nil, err
	}
	if err := cli.Record(st, m.Seal, m.entry(audit.Entry{Session: session, Agent: agent, Tool: g.Tool, Decision: "grant",
		Grant: g.ID(), Principal: g.Principal, Detail: presetDetail(rec.Preset) + g.Scope})); err != nil {
		return nil, err
	}
	return &g, nil
}

func presetDetail(preset string) string {
	if preset == "" {
		return ""
	}
	return "preset " + preset + ": "
}

// Deny refuses pending call p with note (shown to the agent) and logs it.
// m is who refuses; nil: the OS user (cli.Principal), with no key read,
// for taking power away needs none, and the log left unsealed.
func Deny(st *state.Store, m *Minter, p *state.Pending, note string, now time.Time) error {
	if m == nil {
		m = &Minter{Principal: cli.Principal()}
	}
	if err := st.Refuse(p.ID, m.Principal, note, now); err != nil {
		return err
	}
	return cli.Record(st, m.Seal, m.entry(audit.Entry{Session: p.Session, Agent: p.Agent, AgentType: p.AgentType, Tool: p.Tool,
		Digest: p.Digest, Decision: "deny-pending", Pending: p.ID, Principal: m.Principal, Detail: note}))
}

// Confirm has the human confirm the exact approval of call p (the caller
// showed it) as principal by typing the digest's first n characters: the
// one approve prompt of approve, review and team
func Confirm(tty *os.File, p *state.Pending, principal string, ttl time.Duration, n int) error {
	fmt.Fprintf(tty, "\nApprove this exact call once, for %s, as %s?\n", ttl, present.EscapeText(principal))
	return cli.ConfirmPrefix(tty, p.Digest, n, "approve")
}

// Printed tells the human what their approval of call id minted: the one
// line of approve, review and team
func Printed(tty *os.File, id string, g *token.Grant, next string) {
	fmt.Fprintf(tty, "Approved %s: grant %s, single use, valid until %s. %s\n", present.EscapeText(id), g.ID(), present.FormatTime(g.Expiry), present.EscapeText(next))
}

// Next tells the human what happens next to call p once approved. Said
// before the approval lands: a held call's hook may be gone a moment
// after, having run it.
func Next(p *state.Pending, now time.Time) string {
	if p.Held(now) {
		return "The held call runs now."
	}
	return "The agent may now retry the identical call."
}
