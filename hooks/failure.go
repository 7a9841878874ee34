package hooks

import (
	"errors"
	"fmt"
	"strings"
)

// SetupFailure maps an engine set-up error to a deny.
func SetupFailure(err error) Decision {
	var ke interface{ Hint() string }
	reason := ReasonInternal
	if errors.As(err, &ke) && strings.Contains(err.Error(), "keyring") {
		reason = ReasonKeyring
	}
	return Decision{Behavior: Deny, Reason: reason, Message: fmt.Sprintf("loopguard: %s: %v. The call is blocked; the user should run `loopguard doctor`.", reason, err)}
}

// Malformed is the deny of a payload the engine cannot decide on.
func Malformed(msg string) Decision {
	return Decision{Behavior: Deny, Reason: ReasonMalformed, Message: "loopguard: malformed_input: " + msg}
}
