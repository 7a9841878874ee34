package approve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// TeamExact mints the exact approval of the published call tp (which the
// human confirmed) and answers it in Vault; it returns the grant and what
// happens next. What is approved is what was shown: the published record
// must still hold it.
func TeamExact(ctx context.Context, m *Minter, tp *vault.TeamPending, ttl time.Duration, now time.Time) (*token.Grant, string, error) {
	p := tp.Pending
	cur, err := TeamGet(ctx, m.Team, tp.Key)
	if err != nil {
		return nil, "", err
	}
	if cur.Pending.Digest != p.Digest || !bytes.Equal(cur.Pending.Descriptor, p.Descriptor) {
		return nil, "", cli.WithHint(fmt.Errorf("pending call %s changed while it was shown: refusing to approve", present.EscapeText(tp.Key)), "review it again: loopguard team approve "+present.EscapeText(tp.Key))
	}
	// The warnings are the machine's word on what jailed calls and file
	// tools changed in the call's project: a record published again with
	// another warning while this one was shown is not approved as the new
	// one. The approval carries the Seen of the version shown, and its
	// machine dates it no later than that: a repeat that published the
	// record again with the same words (a file they named already changed
	// again) leaves its change counted (hooks, fetchApproval).
	if !slices.Equal(cur.Says.Warnings, tp.Says.Warnings) {
		return nil, "", cli.WithHint(fmt.Errorf("the warnings %s published with pending call %s changed while it was shown (what changed in its project): refusing to approve", present.EscapeText(MachineName(tp)), present.EscapeText(tp.Key)),
			"review it again: loopguard team approve "+present.EscapeText(tp.Key))
	}
	if !cur.Open() {
		return nil, "", ErrDecided(cur, cur.Decision)
	}
	g, err := hooks.MintApproval(m.mint, p, m.Principal, ttl, now)
	if d := cur.Decision; err == nil && d != nil && g.String() == d.Token {
		// A grant has no nonce and its expiry is in whole seconds: an
		// approval again within the second of the spent one would be the
		// very grant its machine used, which never runs again. This one
		// expires a second earlier.
		g, err = hooks.MintApproval(m.mint, p, m.Principal, ttl, now.Add(-time.Second))
	}
	if err != nil {
		return nil, "", err
	}
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	if err := m.Team.Decide(cctx, tp.Key, g.String(), m.Principal, tp.Says.Seen, now); err != nil {
		return nil, "", decidedErr(cur, err)
	}
	return &g, "The waiting hook on " + MachineName(tp) + " runs it once.", nil
}

// TeamApprove is team approve's and review --backend vault's approval of
// the published call tp, which the caller showed: the human confirms it
// as m's principal by typing its digest's first n characters (Confirm),
// it is approved in Vault (TeamExact), and the grant minted and what
// happens next are said on tty (Printed).
func TeamApprove(ctx context.Context, tty *os.File, m *Minter, tp *vault.TeamPending, ttl time.Duration, n int) error {
	if err := Confirm(tty, tp.Pending, m.Principal, ttl, n); err != nil {
		return err
	}
	g, next, err := TeamExact(ctx, m, tp, ttl, time.Now())
	if err != nil {
		return err
	}
	Printed(tty, tp.Pending.ID, g, next)
	return nil
}

// TeamDeny refuses the published call at key in Vault, unless a decision
// stands (a record that did not verify may be refused too).
func TeamDeny(ctx context.Context, m *Minter, key string, now time.Time) error {
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	return decidedErr(&vault.TeamPending{Key: key}, m.Team.Decide(cctx, key, "", m.Principal, time.Time{}, now))
}

// TeamGet reads and verifies the record at key; an unreadable one is an
// error that names its key and the check it failed, nothing else.
func TeamGet(ctx context.Context, c *vault.Custody, key string) (*vault.TeamPending, error) {
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	tp, err := c.TeamGet(cctx, key)
	if err != nil {
		return nil, cli.WithHint(err, "list the calls waiting across the team with: loopguard team pending")
	}
	if tp.Err != nil {
		return nil, cli.WithHint(errors.New(UnreadableLine(tp)), "it may be a forgery, or a record of an older loopguard; deny it or wait for the machine to publish its call again")
	}
	return tp, nil
}

// ResolveTeam turns a unique prefix of a published pending id (or a key
// "<machine>/<id>") into the record's key, as the local commands do
// (cmd/loopguard/ids.go).
func ResolveTeam(ctx context.Context, c *vault.Custody, arg string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	keys, err := c.TeamKeys(cctx)
	if err != nil {
		return "", err
	}
	if slices.Contains(keys, arg) {
		return arg, nil
	}
	var ids []string
	byID := map[string][]string{}
	for _, k := range keys {
		_, id, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		if _, seen := byID[id]; !seen {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], k)
	}
	id, err := state.ResolvePrefix(arg, "pending call", ids)
	if err != nil {
		return "", cli.WithHint(err, "list the calls waiting across the team with: loopguard team pending")
	}
	if len(byID[id]) > 1 {
		return "", cli.WithHint(fmt.Errorf("pending id %s was published by %d machines", id, len(byID[id])), "name it as MACHINE/ID: "+present.EscapeText(strings.Join(byID[id], ", ")))
	}
	return byID[id][0], nil
}

// TeamState says where the published call tp stands: open, or the
// decision that stands, and by whom.
func TeamState(tp *vault.TeamPending) string {
	d := tp.Decision
	if d == nil {
		return "open"
	}
	by := present.EscapeText(d.Principal)
	spent := "used"
	if !d.Used {
		spent = "expired unused"
	}
	switch {
	case d.Denied:
		return "denied by " + by
	case d.Token == "" && tp.Open():
		return "open again (the decision by " + by + " held no grant)"
	case d.Token == "":
		return "void (the decision by " + by + " holds no grant)"
	case tp.Open():
		return "open again (approved by " + by + ", " + spent + ")"
	case d.Spent():
		return spent + " (approved by " + by + ")"
	}
	return "approved by " + by + ", not used yet"
}

// ErrDecided is why a decision on the published call tp is refused: the
// decision that stands (vault.DecidedError) is written once.
func ErrDecided(tp *vault.TeamPending, d *vault.Decision) error {
	_, id, _ := strings.Cut(tp.Key, "/")
	state := "decided by another approver"
	if d != nil {
		state = TeamState(&vault.TeamPending{Key: tp.Key, Written: tp.Written, Decision: d})
	}
	return cli.WithHint(fmt.Errorf("pending call %s is %s: a decision is written once", present.EscapeText(id), state),
		"see where every call stands with: loopguard team pending")
}

// decidedErr turns a vault.DecidedError from deciding tp into ErrDecided.
func decidedErr(tp *vault.TeamPending, err error) error {
	var de *vault.DecidedError
	if errors.As(err, &de) {
		return ErrDecided(tp, de.Decision)
	}
	return err
}

// MachineName is the name Vault knows the machine of tp by, or its entity id.
func MachineName(tp *vault.TeamPending) string {
	if tp.MachineName != "" {
		return tp.MachineName
	}
	return tp.Machine
}

// UnreadableLine is all that is shown of a record that did not verify: its
// key and the check it failed.
func UnreadableLine(tp *vault.TeamPending) string {
	return fmt.Sprintf("unreadable: pending/%s: %s; not shown", present.EscapeText(tp.Key), present.EscapeText(tp.Err.Error()))
}

// TeamParts renders another machine's call tp for review, as review
// renders a local one, from the verified call only: head (the machine as
// Vault knows it, then the call, where it lands, its danger lines and
// warnings, the digest: all computed here from the call), says (the block
// of what the agent machine says, labelled as its words) and body.
func TeamParts(tp *vault.TeamPending) (head, says, body string) {
	p := tp.Pending
	p.Warnings = present.CallNotes(p.Descriptor)
	esc := present.EscapeText
	name := "(its name is not readable with your Vault token)"
	if tp.MachineName != "" {
		name = esc(tp.MachineName)
	}
	head = fmt.Sprintf("machine: %s (Vault identity %s)\nproject: %s (the call's cwd)\n", name, esc(tp.Machine), esc(p.ProjectDir))
	if tp.Decision != nil {
		// Asked again after an approval was spent: said, not hidden.
		head += "state: " + TeamState(tp) + "\n"
	}
	h, body := cli.RenderParts(nil, p, false)
	return head + h, agentSays(tp.Says, time.Now()), body
}

// maxSaysShown bounds each line of what an agent machine says, as shown.
const maxSaysShown = 200

// agentSays is the labelled block of what an agent machine published about
// its call that no one checked: each line escaped, cut and marked as its
// words; "" when it said nothing.
func agentSays(s vault.AgentSays, now time.Time) string {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "  | %s %s\n", k, present.EscapeText(cli.Short(v, maxSaysShown)))
		}
	}
	line("host:", s.Host)
	reason := s.Reason
	if s.Detail != "" {
		reason += ": " + s.Detail
	}
	line("reason:", reason)
	line("project:", s.ProjectDir)
	line("agent type:", s.AgentType)
	if !s.Created.IsZero() {
		line("recorded:", present.FormatTime(s.Created))
	}
	if now.Before(s.HeldUntil) {
		line("its hook waits for your answer until", present.FormatTime(s.HeldUntil))
	}
	for i, w := range s.Warnings {
		if i == 8 {
			line("notes:", fmt.Sprintf("%d more", len(s.Warnings)-i))
			break
		}
		line("note:", w)
	}
	if b.Len() == 0 {
		return ""
	}
	return "The agent machine says (its own words; loopguard checked none of this):\n" + b.String()
}

// TeamQueue lists the calls waiting across the team that verified, are
// open (nobody decided, or the approval was used or expired before the
// machine asked again), whose hook (as its machine says) still waits or
// was never held, that pass f and were not skipped, newest first by
// Vault's time; and the records that did not verify.
func TeamQueue(ctx context.Context, c *vault.Custody, f cli.QueueFilter, skipped map[string]bool, now time.Time) (calls, unreadable []*vault.TeamPending, err error) {
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	list, err := c.TeamList(cctx)
	if err != nil {
		return nil, nil, err
	}
	for i := range list {
		tp := &list[i]
		if tp.Err != nil {
			unreadable = append(unreadable, tp)
			continue
		}
		held := tp.Says.HeldUntil
		if skipped[tp.Key] || !f.Keep(tp.Pending, now) || (!held.IsZero() && !now.Before(held)) || !tp.Open() {
			continue
		}
		calls = append(calls, tp)
	}
	return calls, unreadable, nil
}
