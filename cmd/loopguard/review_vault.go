package main

import (
	"context"
	"fmt"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/present"
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

// teamQueue lists the calls waiting across the team that verified, nobody
// decided, whose hook (as its machine says) still waits or was never held,
// that pass f and were not skipped, newest first by Vault's time; and the
// records that did not verify.
func teamQueue(ctx context.Context, c *vault.Custody, f queueFilter, skipped map[string]bool, now time.Time) (calls, unreadable []*vault.TeamPending, err error) {
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
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
		if skipped[tp.Key] || !f.keep(tp.Pending, now) || (!held.IsZero() && !now.Before(held)) {
			continue
		}
		tok, deniedBy, err := c.Answer(cctx, tp.Key)
		if err != nil {
			return nil, nil, err
		}
		if tok == "" && deniedBy == "" {
			calls = append(calls, tp)
		}
	}
	return calls, unreadable, nil
}

func teamIDs(calls []*vault.TeamPending) string {
	return joinIDs(calls, func(tp *vault.TeamPending) string { return tp.Key })
}

func reviewTeamRun(ctx context.Context, o *reviewOptions) error {
	tty, st, m := o.tty, o.store, o.minter
	c := &console{tty: tty, fd: fdOf(tty), pal: paletteFor(tty), deadlines: true}
	defer c.cooked()
	pal := c.pal
	fmt.Fprintf(tty, "%sloopguard review --backend vault%s: calls waiting across the team appear here, decided as %s. a approve, g approve+grant, d deny, s skip, v view, q quit.\n",
		pal.bold, pal.reset, present.EscapeText(m.principal))
	r := newRound(c)
	defer r.end()
	skipped := r.skipped
	lastErr := ""
	told := map[string]bool{}
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
			cur, _, err := teamQueue(ctx, m.team, o.filter, skipped, time.Now())
			if err == nil && teamIDs(cur) != shown {
				return 0, true, nil
			}
		}
	}
outer:
	for {
		calls, unreadable, err := teamQueue(ctx, m.team, o.filter, skipped, time.Now())
		for _, tp := range unreadable {
			if !told[tp.Key] {
				// Said once, and nothing of the record but its key.
				told[tp.Key] = true
				fmt.Fprintf(tty, "%sloopguard: %s%s\n", pal.yellow, unreadableLine(tp), pal.reset)
			}
		}
		if err != nil && err.Error() != lastErr {
			// Vault down, sealed, the token expired: say so once, keep
			// trying (nothing is decided without an answer from Vault).
			lastErr = err.Error()
			fmt.Fprintf(tty, "%sloopguard: warning: %s%s\n", pal.yellow, present.EscapeText(err.Error()), pal.reset)
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
		r.arrived(tp.Key, fmt.Sprintf("%d call(s) waiting across the team", len(calls)))
		fmt.Fprint(tty, "\n")
		// As review shows a local call (header first, a long body paged),
		// from the verified call only; what the machine says apart.
		head, says, body := teamParts(tp)
		showParts(c, p, head, says, body, true)
		fmt.Fprintf(tty, "%sAfter an approval a hook that waits runs the call once; otherwise the agent must retry the identical call.%s\n", pal.dim, pal.reset)
		if len(calls) > 1 {
			fmt.Fprintf(tty, "%s(%d more waiting)%s\n", pal.dim, len(calls)-1, pal.reset)
		}
		rule, ruleErr := offeredRule(p, ge)
		keys := "[a]pprove"
		if ruleErr == nil {
			keys += "  [g]rant " + present.EscapeText(rule.String())
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
			if tok, by, err := m.team.Answer(ctx, tp.Key); err != nil || tok != "" || by != "" {
				if err != nil {
					printError(tty, err)
					continue
				}
				fmt.Fprintf(tty, "%s was decided elsewhere meanwhile; moving on.\n", present.EscapeText(p.ID))
				break prompt
			}
			switch k {
			case 'a', 'A':
				if err := confirmApproval(tty, p, m.principal, o.ttl, reviewConfirmLen); err != nil {
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
				if ruleErr != nil {
					fmt.Fprintln(tty, noRuleLine(ruleErr))
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
				if err := teamDeny(ctx, m, tp.Key, time.Now()); err != nil {
					printError(tty, err)
					continue
				}
				fmt.Fprintf(tty, "Denied %s as %s. The agent on %s is told a human refused it.\n", present.EscapeText(p.ID), present.EscapeText(m.principal), present.EscapeText(machineName(tp)))
				r.denied++
				break prompt
			case 't', 'T':
				fmt.Fprintln(tty, "A whole turn is approved on the agent's machine; across the team approve each call with a.")
			case 'v', 'V':
				head, says, body := teamParts(tp)
				showParts(c, p, head, says, body, true)
				continue
			case 's', 'S':
				skipped[tp.Key] = true
				fmt.Fprintf(tty, "Skipped %s; it stays pending (loopguard team pending lists it).\n", present.EscapeText(p.ID))
				break prompt
			case 'q', 'Q', 3, 4:
				return nil
			default:
				fmt.Fprintln(tty, "Press a, g, d, s, v or q.")
			}
		}
	}
}
