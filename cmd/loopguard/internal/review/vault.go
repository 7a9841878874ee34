package review

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/token"
)

// review --backend vault: review's loop (reviewLoop) over the calls
// waiting across the team (every agent machine sharing the Vault), decided
// from this machine through Vault. The keys are review's, less t (a turn
// is one machine's; approve its calls one by one).

// teamPoll is how often the team console asks Vault for new calls while it
// waits for a key (in reviewPoll ticks).
const teamPoll = 3

// reviewTeam is the calls waiting across the team, read from Vault and
// decided through it as the approver (o.minter).
type reviewTeam struct {
	o *reviewOptions
	m *approve.Minter
}

// words: the queue is Vault's, read every teamPoll ticks; a turn is one
// machine's (t is not offered); the prompt has no live line, so a change
// in the queue shows the call again.
func (b *reviewTeam) words() reviewWords {
	return reviewWords{idle: "Waiting for calls across the team (q to quit)...", waiting: "loopguard: %d call(s) waiting across the team", lists: "loopguard team pending",
		noTurn: "A whole turn is approved on the agent's machine; across the team approve each call with a.", every: teamPoll, redraw: true}
}

func (b *reviewTeam) intro(c *console) string {
	return fmt.Sprintf("%sloopguard review --backend vault%s: calls waiting across the team appear here, decided as %s. a approve, d deny, s skip, v view, q quit; g (approve and grant a rule) when the prompt under a call offers it.\n",
		c.pal.bold, c.pal.reset, present.EscapeText(b.m.Principal))
}

// queue: a record that did not verify is said once, and nothing of it but
// its key; Vault down, sealed or the token expired is queue's error.
func (b *reviewTeam) queue(ctx context.Context, skipped map[string]bool, now time.Time) ([]*reviewCall, []string, error) {
	list, unreadable, err := approve.TeamQueue(ctx, b.m.Team, b.o.filter, skipped, now)
	calls := make([]*reviewCall, len(list))
	for i, tp := range list {
		calls[i] = &reviewCall{key: tp.Key, p: tp.Pending, tp: tp}
	}
	var warns []string
	for _, tp := range unreadable {
		warns = append(warns, approve.UnreadableLine(tp))
	}
	return calls, warns, err
}

// show: as review shows a local call (header first, a long body paged),
// from the verified call only; what the machine says apart.
func (b *reviewTeam) show(c *console, rc *reviewCall) bool {
	head, says, body := approve.TeamParts(rc.tp)
	return showParts(c, rc.p, head, says, body, true)
}

// shown: whether a hook waits is the other machine's word, so there is no
// countdown; how many more wait is said here.
func (b *reviewTeam) shown(c *console, _ *reviewCall, more int) {
	fmt.Fprintf(c.tty, "%sAfter an approval a hook that waits runs the call once; otherwise the agent must retry the identical call.%s\n", c.pal.dim, c.pal.reset)
	if more > 0 {
		fmt.Fprintf(c.tty, "%s(%d more waiting)%s\n", c.pal.dim, more, c.pal.reset)
	}
}

// pin: a record in Vault stays until it is decided or its machine takes
// it back; nothing here can drop it.
func (b *reviewTeam) pin(*reviewCall, time.Time) {}

// secondLook: none, because a (approve) always asks for the digest's
// characters. The facts that let one key approve a local call (the hook's
// reason, whether the call differs from one approved, whether it was held)
// are, for another machine's call, only its word (the record binds the
// call, not them): one key never approves a call across the team.
func (b *reviewTeam) secondLook(*reviewCall, bool) []string { return nil }

// turnOf: a turn is one machine's; across the team each call is its own.
func (b *reviewTeam) turnOf(rc *reviewCall, _ []*reviewCall) []*reviewCall {
	return []*reviewCall{rc}
}

func (b *reviewTeam) ordinary([]*reviewCall) bool { return false }

func (b *reviewTeam) keyLine(c *console, keys []string) string {
	return c.pal.bold + strings.Join(keys, "  ") + ":" + c.pal.reset + " "
}

func (b *reviewTeam) status(*reviewCall, int, time.Time, int) string { return "" }

func (b *reviewTeam) gone(c *console, _ *reviewCall, _ time.Time) string {
	return c.pal.dim + "The queue changed; redrawing." + c.pal.reset
}

// open asks Vault: an error (Vault unreachable) leaves the call on screen
// and undecided.
func (b *reviewTeam) open(ctx context.Context, rc *reviewCall) (bool, error) {
	tok, by, err := b.m.Team.Answer(ctx, rc.key)
	return err == nil && tok == "" && by == "", err
}

func (b *reviewTeam) approve(ctx context.Context, c *console, rc *reviewCall, _ []string) error {
	return approve.TeamApprove(ctx, c.tty, b.m, rc.tp, b.o.ttl, reviewConfirmLen)
}

func (b *reviewTeam) exact(ctx context.Context, rc *reviewCall) func(*approve.Minter) (*token.Grant, string, error) {
	return func(m *approve.Minter) (*token.Grant, string, error) {
		return approve.TeamExact(ctx, m, rc.tp, b.o.ttl, time.Now())
	}
}

func (b *reviewTeam) approveTurn(context.Context, *console, []*reviewCall) (int, error) {
	return 0, errors.New("a whole turn is approved on the agent's machine")
}

// deny: Vault's answer carries no note for the agent, so none is asked.
func (b *reviewTeam) deny(ctx context.Context, c *console, rc *reviewCall) error {
	if err := approve.TeamDeny(ctx, b.m, rc.key, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(c.tty, "Denied %s as %s. The agent on %s is told a human refused it.\n", present.EscapeText(rc.p.ID), present.EscapeText(b.m.Principal), present.EscapeText(approve.MachineName(rc.tp)))
	return nil
}
