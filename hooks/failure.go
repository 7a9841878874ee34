package hooks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/loopguard/loopguard/audit"
)

// ReasonStateLost: the state directory is not the one the keyring's anchor
// names (removed and made again, replaced, or rolled back: package audit's
// LostError). Every call is denied until a human puts it back or accepts
// the loss at their terminal.
const ReasonStateLost = audit.ReasonStateLost

// stateLostAdvice ends a state_lost deny: what the human does.
const stateLostAdvice = ". Every call is blocked until the user, at their own terminal, puts the directory back or accepts the loss with `loopguard audit restart --accept-loss` (`loopguard doctor` says what is missing)."

// SetupFailure maps an engine set-up error to a deny.
func SetupFailure(err error) Decision {
	if errors.Is(err, audit.ErrStateLost) {
		return denied(ReasonStateLost, fmt.Sprintf("%v%s", err, stateLostAdvice))
	}
	var ke interface{ Hint() string }
	reason := ReasonInternal
	if errors.As(err, &ke) && strings.Contains(err.Error(), "keyring") {
		reason = ReasonKeyring
	}
	return denied(reason, fmt.Sprintf("%v. The call is blocked; the user should run `loopguard doctor`.", err))
}

// Malformed is the deny of a payload the engine cannot decide on.
func Malformed(msg string) Decision {
	return denied(ReasonMalformed, msg)
}
