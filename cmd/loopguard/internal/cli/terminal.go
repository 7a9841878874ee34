package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/state"
)

// ReadLine prints prompt on the terminal and reads one line.
func ReadLine(tty *os.File, prompt string) (string, error) {
	if _, err := fmt.Fprint(tty, prompt); err != nil {
		return "", err
	}
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 1024 {
		n, err := tty.Read(buf)
		if n == 1 {
			if buf[0] == '\n' || buf[0] == '\r' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			if b.Len() == 0 {
				return "", fmt.Errorf("failed to read from the terminal: %w", err)
			}
			break
		}
	}
	return strings.TrimSpace(b.String()), nil
}

// ConfirmPrefix asks the human to type the first n characters of digest.
func ConfirmPrefix(tty *os.File, digest string, n int, what string) error {
	return ConfirmTyped(tty, fmt.Sprintf("Type the first %d characters of the digest to %s (anything else cancels): ", n, what),
		func(line string) bool { return strings.EqualFold(line, digest[:n]) },
		"nothing was changed", errors.New("not confirmed: the typed text does not match the digest"))
}

// ConfirmTyped reads one line at prompt and goes on only when match
// accepts it. Anything else cancels: the terminal is told what was kept
// ("nothing was changed") and refusal is returned.
func ConfirmTyped(tty *os.File, prompt string, match func(line string) bool, kept string, refusal error) error {
	line, err := ReadLine(tty, prompt)
	if err != nil {
		return err
	}
	if !match(line) {
		fmt.Fprintf(tty, "Not confirmed; %s.\n", kept)
		return refusal
	}
	return nil
}

// ErrNotHuman refuses commands that only a human at a terminal may run.
var ErrNotHuman = errors.New("this command must be run by a human in their own terminal")

// OpenTTY opens the controlling terminal for a confirmation. It refuses
// inside a coding agent and without a terminal: the agent runs commands
// with no controlling terminal and CLAUDECODE set.
func OpenTTY() (*os.File, error) {
	if err := RefuseInAgent(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, WithHint(fmt.Errorf("%w: no controlling terminal (%v)", ErrNotHuman, err),
			"approvals and grants are confirmed by typing at a terminal; there is no --yes")
	}
	return f, nil
}

// OpenTTYStore opens what a command a human confirms at their terminal
// works with: the terminal (OpenTTY) and the state store. The caller closes
// the terminal.
func OpenTTYStore() (*os.File, *state.Store, error) {
	tty, err := OpenTTY()
	if err != nil {
		return nil, nil, err
	}
	st, err := OpenStore()
	if err != nil {
		tty.Close()
		return nil, nil, err
	}
	return tty, st, nil
}

// RefuseInAgent stops commands that would weaken the guard when an agent
// runs them.
func RefuseInAgent() error {
	if agent, v := policy.InsideAgent(os.Getenv); agent != "" {
		return WithHint(fmt.Errorf("%w: %s is set, so this runs inside %s", ErrNotHuman, v, agent),
			"open a terminal of your own (outside the agent) and run the command there")
	}
	return nil
}

// CheckApprovalTTL bounds the lifetime of an exact approval.
func CheckApprovalTTL(ttl time.Duration) error {
	if ttl <= 0 || ttl > hooks.MaxApprovalTTL {
		return errors.New("--ttl must be between 1s and 24h")
	}
	return nil
}

// CheckGrantTTL bounds the lifetime of a scoped grant, given with flag.
func CheckGrantTTL(flag string, ttl time.Duration) error {
	if ttl <= 0 || ttl > MaxGrantTTL {
		return fmt.Errorf("%s must be between 1s and %s", flag, MaxGrantTTL)
	}
	return nil
}

// MaxGrantTTL bounds a scoped grant's life.
const MaxGrantTTL = 7 * 24 * time.Hour

// AskYes asks a yes/no question on the terminal; only y or yes is yes.
func AskYes(tty *os.File, question string) (bool, error) {
	line, err := ReadLine(tty, question+" [y/N] ")
	if err != nil {
		return false, err
	}
	line = strings.ToLower(line)
	return line == "y" || line == "yes", nil
}
