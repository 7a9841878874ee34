package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// review --backend vault: the console over the calls waiting across the
// team (every agent machine sharing the Vault), decided from this machine
// through Vault. The calls are shown by showCall, as local ones (header first, paged);
// the keys are review's, less t (a turn is one machine's; approve its calls
// one by one).

// teamPoll is how often the team console asks Vault for new calls while it
// waits for a key (in reviewPoll ticks).
const teamPoll = 3

// teamQueue lists the calls waiting across the team that nobody decided,
// whose hook still waits (or that were never held), that pass f and were
// not skipped; newest first.
func teamQueue(ctx context.Context, c *vault.Custody, f queueFilter, skipped map[string]bool, now time.Time) ([]*vault.TeamPending, error) {
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
	defer cancel()
	list, _, err := c.TeamList(cctx)
	if err != nil {
		return nil, err
	}
	var out []*vault.TeamPending
	for i := range list {
		p := list[i].Pending
		if skipped[p.ID] || !f.keep(p, now) || (!p.HeldUntil.IsZero() && !now.Before(p.HeldUntil)) {
			continue
		}
		tok, deniedBy, err := c.Fetch(cctx, p.ID)
		if err != nil {
			return nil, err
		}
		if tok == "" && deniedBy == "" {
			out = append(out, &list[i])
		}
	}
	return out, nil
}

func teamIDs(calls []*vault.TeamPending) string {
	var b strings.Builder
	for _, tp := range calls {
		b.WriteString(tp.Pending.ID)
		b.WriteByte(' ')
	}
	return b.String()
}

func reviewTeamRun(ctx context.Context, tty *os.File, st *state.Store, m *minter, o reviewOptions) error {
	c := &console{tty: tty, fd: fdOf(tty), pal: paletteFor(tty), deadlines: true}
	defer c.cooked()
	pal := c.pal
	fmt.Fprintf(tty, "%sloopguard review --backend vault%s: calls waiting across the team appear here, decided as %s. a approve, g approve+grant, d deny, s skip, v view, q quit.\n",
		pal.bold, pal.reset, hooks.EscapeText(m.principal))
	r := newRound(c)
	defer r.end()
	skipped := r.skipped
	lastErr := ""
	ge, _ := currentGrantEnv()
	// waitKey waits for a key, asking Vault every teamPoll ticks whether
	// the queue changed; changed is true when it did.
	waitKey := func(shown string) (k byte, changed bool, err error) {
		for ticks := 1; ; ticks++ {
			k, err := c.key(ctx, true)
			if err != nil || k != 0 {
				return k, false, err
			}
			if ticks%teamPoll != 0 {
				continue
			}
			cur, err := teamQueue(ctx, m.team, o.filter, skipped, time.Now())
			if err == nil && teamIDs(cur) != shown {
				return 0, true, nil
			}
		}
	}
outer:
	for {
		calls, err := teamQueue(ctx, m.team, o.filter, skipped, time.Now())
		if err != nil && err.Error() != lastErr {
			// Vault down, sealed, the token expired: say so once, keep
			// trying (nothing is decided without an answer from Vault).
			lastErr = err.Error()
			fmt.Fprintf(tty, "%sloopguard: warning: %v%s\n", pal.yellow, err, pal.reset)
		}
		if len(calls) == 0 {
			r.idle("Waiting for calls across the team (q to quit)...")
			k, _, err := waitKey("")
			if err != nil || k == 'q' || k == 3 || k == 4 {
				return nil
			}
			continue
		}
		lastErr = ""
		tp := calls[0]
		p := tp.Pending
		now := time.Now()
		r.arrived(p.ID, fmt.Sprintf("%d call(s) waiting across the team", len(calls)))
		fmt.Fprintf(tty, "\nmachine: %s (as its hook reports it)\n", hooks.EscapeText(tp.Host))
		// As review shows a local call: header first, a long body paged.
		showCall(c, nil, p)
		if now.Before(p.HeldUntil) {
			fmt.Fprintf(tty, "%sHELD on %s: the agent waits for your answer (%s left).%s\n", pal.bold, hooks.EscapeText(tp.Host), p.HeldUntil.Sub(now).Round(time.Second), pal.reset)
		} else {
			fmt.Fprintf(tty, "%sNot held: after an approval the agent must retry the identical call.%s\n", pal.dim, pal.reset)
		}
		if len(calls) > 1 {
			fmt.Fprintf(tty, "%s(%d more waiting)%s\n", pal.dim, len(calls)-1, pal.reset)
		}
		rule, ruleErr := narrowRule(p, ge)
		keys := "[a]pprove"
		if ruleErr == nil && !hasDanger(p) {
			keys += "  [g]rant " + hooks.EscapeText(rule.String())
		}
		keys += "  [d]eny  [s]kip  [v]iew  [q]uit:"
		shown := teamIDs(calls)
	prompt:
		for {
			fmt.Fprintf(tty, "%s%s%s ", pal.bold, keys, pal.reset)
			k, changed, err := waitKey(shown)
			if changed {
				fmt.Fprintf(tty, "\n%sThe queue changed; redrawing.%s\n", pal.dim, pal.reset)
				continue outer
			}
			if err != nil {
				fmt.Fprintln(tty)
				return nil
			}
			fmt.Fprintf(tty, "%c\n", printableKey(k))
			// The call may have been decided elsewhere meanwhile.
			if tok, by, err := m.team.Fetch(ctx, p.ID); err != nil || tok != "" || by != "" {
				if err != nil {
					printError(tty, err)
					continue
				}
				fmt.Fprintf(tty, "%s was decided elsewhere meanwhile; moving on.\n", p.ID)
				break prompt
			}
			switch k {
			case 'a', 'A':
				if err := confirmApproval(tty, p, false, tp.Host, m.principal, o.ttl, reviewConfirmLen); err != nil {
					printError(tty, err)
					continue
				}
				g, next, err := teamApprove(ctx, m, tp, o.ttl, time.Now())
				if err != nil {
					printError(tty, err)
					continue
				}
				printApproved(tty, p.ID, g, next)
				r.approved++
				break prompt
			case 'g', 'G':
				if hasDanger(p) {
					fmt.Fprintln(tty, "No rule is offered for a call with a DANGER line; approve it once with a.")
					continue
				}
				if ruleErr != nil {
					fmt.Fprintf(tty, "No rule is offered for this call (%v); approve it once with a.\n", ruleErr)
					continue
				}
				err := approveAndGrantWith(ctx, tty, st, p, rule, o, time.Now(), func(m *minter) (*token.Grant, string, error) {
					return teamApprove(ctx, m, tp, o.ttl, time.Now())
				})
				if err != nil {
					printError(tty, err)
					continue
				}
				r.approved++
				break prompt
			case 'd', 'D':
				if err := teamDeny(ctx, m, p.ID, time.Now()); err != nil {
					printError(tty, err)
					continue
				}
				fmt.Fprintf(tty, "Denied %s as %s. The agent on %s is told a human refused it.\n", p.ID, hooks.EscapeText(m.principal), hooks.EscapeText(tp.Host))
				r.denied++
				break prompt
			case 't', 'T':
				fmt.Fprintln(tty, "A whole turn is approved on the agent's machine; across the team approve each call with a.")
			case 'v', 'V':
				showCall(c, nil, p)
				continue
			case 's', 'S':
				skipped[p.ID] = true
				fmt.Fprintf(tty, "Skipped %s; it stays pending (loopguard team pending lists it).\n", p.ID)
				break prompt
			case 'q', 'Q', 3, 4:
				return nil
			default:
				fmt.Fprintln(tty, "Press a, g, d, s, v or q.")
			}
		}
	}
}
