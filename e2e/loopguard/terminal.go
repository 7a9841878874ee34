package loopguard

import (
	"context"
	"os/exec"
)

// Terminal is a program running on a pseudo-terminal of its own, as a
// person at a terminal runs it (another agent's interactive client).
type Terminal struct{ t *term }

// StartTerminal starts cmd in a new session on a new pseudo-terminal of
// rows by cols.
func StartTerminal(cmd *exec.Cmd, rows, cols int) (*Terminal, error) {
	t, err := startOnPTY(cmd)
	if err != nil {
		return nil, err
	}
	if err := t.resize(rows, cols); err != nil {
		t.close()
		return nil, err
	}
	return &Terminal{t}, nil
}

// WaitFor waits until the terminal shows s, and returns the screen.
func (t *Terminal) WaitFor(ctx context.Context, s string) (string, error) { return t.t.waitFor(ctx, s) }

// Type writes s to the terminal, as typed keys.
func (t *Terminal) Type(s string) error { return t.t.write(s) }

// Screen is everything the terminal showed.
func (t *Terminal) Screen() string { return t.t.screen() }

// Close closes the terminal (the program gets a hang-up).
func (t *Terminal) Close() { t.t.close() }
