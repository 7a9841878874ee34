//go:build linux

package loopguard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxScreen bounds what is kept of a terminal's output.
const maxScreen = 1 << 20

// term is the master side of a pseudo-terminal and what was read from it.
type term struct {
	master *os.File
	done   chan struct{}

	mu  sync.Mutex
	buf strings.Builder
}

// openPTY opens a new pseudo-terminal pair.
func openPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to open /dev/ptmx: %w", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("failed to unlock the pseudo-terminal: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("failed to get the pseudo-terminal number: %w", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("failed to open the pseudo-terminal: %w", err)
	}
	return m, s, nil
}

// startOnPTY starts cmd in a new session whose controlling terminal is a
// new pseudo-terminal (stdin, stdout and stderr too), and collects what the
// terminal shows.
func startOnPTY(cmd *exec.Cmd) (*term, error) {
	m, s, err := openPTY()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	s.Close() // the child holds its own copy; EOF (EIO) comes when it ends
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("failed to start %s: %w", cmd.Path, err)
	}
	t := &term{master: m, done: make(chan struct{})}
	go t.read()
	return t, nil
}

func (t *term) read() {
	defer close(t.done)
	b := make([]byte, 4096)
	for {
		n, err := t.master.Read(b)
		t.mu.Lock()
		if t.buf.Len() < maxScreen {
			t.buf.Write(b[:n])
		}
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (t *term) screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// waitFor waits until the screen shows s.
func (t *term) waitFor(ctx context.Context, s string) (string, error) {
	return t.waitUntil(ctx, fmt.Sprintf("%q", s), func(sc string) bool { return strings.Contains(sc, s) })
}

// waitUntil waits until the screen satisfies ok (what names the wait in
// the error) and returns the screen.
func (t *term) waitUntil(ctx context.Context, what string, ok func(screen string) bool) (string, error) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if sc := t.screen(); ok(sc) {
			return sc, nil
		}
		select {
		case <-ctx.Done():
			return t.screen(), ctx.Err()
		case <-t.done:
			sc := t.screen()
			if ok(sc) {
				return sc, nil
			}
			return sc, fmt.Errorf("the terminal closed before showing %s", what)
		case <-tick.C:
		}
	}
}

func (t *term) write(s string) error {
	_, err := t.master.WriteString(s)
	return err
}

// drain waits (briefly) for the terminal to close and returns the screen.
func (t *term) drain() string {
	select {
	case <-t.done:
	case <-time.After(5 * time.Second):
	}
	return t.screen()
}

func (t *term) close() { t.master.Close() }

// resize sets the terminal's size (a full-screen program draws to it).
func (t *term) resize(rows, cols int) error {
	return unix.IoctlSetWinsize(int(t.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
}

// escapes are a terminal's control sequences (CSI, OSC, and the two-byte
// ones).
var escapes = regexp.MustCompile("\x1b(?:\\[[0-9;?<>=!]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|[()][0-9A-Za-z]|.)")

// squashed is s without terminal escapes and without blanks: a full-screen
// program (Claude Code) places each word with its own cursor movement, so
// a sentence is found on its screen by its letters alone.
func squashed(s string) string {
	return strings.Join(strings.Fields(escapes.ReplaceAllString(s, " ")), "")
}

// waitForText waits until the screen, its escapes and blanks left out,
// shows s (its blanks left out too).
func (t *term) waitForText(ctx context.Context, s string) (string, error) {
	want := squashed(s)
	return t.waitUntil(ctx, fmt.Sprintf("%q", s), func(sc string) bool { return strings.Contains(squashed(sc), want) })
}
