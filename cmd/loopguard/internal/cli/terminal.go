package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
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
