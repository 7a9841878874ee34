package doctor

import (
	"fmt"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// checkJailGrant says whether the jail grant (Bash(*), issue 36) is live,
// for which sessions, until when, and what the kernel makes of it: with
// Landlock ABI 6 or later jailed calls write the project; below it they
// run read-only (the kernel cannot keep a writing program from signalling
// the user's other processes); without Landlock there is no jail.
func checkJailGrant(st *state.Store, now time.Time) checkResult {
	r, all, ok := grantsCheck("jail", st)
	if !ok {
		return r
	}
	var live, expired *token.Grant
	for _, gf := range all {
		if gf.Err != nil || gf.Grant.Scope != scope.JailRule {
			continue
		}
		if now.Before(gf.Grant.Expiry) {
			if live == nil || gf.Grant.Expiry.After(live.Expiry) {
				live = gf.Grant
			}
		} else if expired == nil {
			expired = gf.Grant
		}
	}
	abi := confine.ABI()
	switch {
	case live == nil && expired != nil:
		r.status = statusWarn
		r.detail = "the jail grant expired at " + present.FormatTime(expired.Expiry) + ": every Bash call no other grant covers asks again"
		r.fix = "grant it again: loopguard grant 'Bash(*)' (or loopguard init)"
		return r
	case live == nil:
		r.detail = "not granted: every Bash call no grant covers goes to a human (loopguard init grants it; loopguard grant 'Bash(*)')"
		return r
	case abi < confine.MinABI:
		r.status = statusWarn
		r.detail = fmt.Sprintf("granted, but this kernel has no usable Landlock (ABI %d): nothing is jailed, every Bash call no grant covers asks", abi)
		return r
	}
	who := "sessions of " + present.EscapeText(live.Session)
	if live.Session == token.Any {
		who = "every session"
	} else if dir, ok := token.ProjectOf(live.Session); ok {
		who = "every session of " + present.EscapeText(dir)
	}
	how := "write the project (not its executable configuration or instruction files), nothing outside it, no network"
	if abi < 6 {
		how = "run read-only: Landlock ABI " + fmt.Sprint(abi) + " cannot keep a jailed program from signalling your other processes (ABI 6 can)"
	}
	r.detail = fmt.Sprintf("granted %s for %s until %s: Bash calls no narrower grant covers run whole in the jail without a decision and %s; what needs more is asked", live.ID(), who, present.FormatTime(live.Expiry), how)
	return r
}

// grantsCheck starts a doctor check named name over the grants in st: the
// result so far, every grant file, and ok false when there are none to
// judge (no state directory: skipped; unreadable: a warning, in r).
func grantsCheck(name string, st *state.Store) (r checkResult, all []state.GrantFile, ok bool) {
	r = checkResult{name: name, status: statusOK}
	if st == nil {
		r.status, r.detail = statusSkip, "no state directory to read the grants from"
		return r, nil, false
	}
	all, err := st.AllGrants()
	if err != nil {
		r.status, r.detail = statusWarn, "cannot read the grants: "+err.Error()
		return r, nil, false
	}
	return r, all, true
}
