package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/loopguard/loopguard/state"
)

// reviewPoll is how often the console looks for new pending calls while it
// waits for a key.
const reviewPoll = 300 * time.Millisecond

func newReviewCmd() *cobra.Command {
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "review",
		Short: "A live console on your terminal to approve or deny calls as they arrive",
		Long: `Watch for pending calls and decide each one from your terminal. Every call is
shown in full, exactly as it would run, with its warnings; then:

  a  approve it once (you confirm by typing the first characters of its digest)
  d  deny it (the agent is told a human refused it)
  s  skip it for now
  q  quit (also Ctrl-C or Ctrl-D)

Made for wait mode ('loopguard init --wait 2m'): the agent's call is held
until you answer here, and runs (or is refused) without a retry. In the
default mode the agent retries the identical call after you approve.

review talks to /dev/tty only and refuses inside an agent (CLAUDECODE set).
Colours are used only on a terminal and never when NO_COLOR is set.`,
		Example: "  loopguard review\n  loopguard review --ttl 2m",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkApprovalTTL(ttl); err != nil {
				return err
			}
			tty, err := openTTY()
			if err != nil {
				return err
			}
			defer tty.Close()
			st, err := openStore()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			return reviewRun(ctx, tty, st, ttl)
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Minute, "how long an approval stays valid")
	return cmd
}

// palette holds the escape sequences of the console; all empty without
// colour.
type palette struct{ bold, red, yellow, green, dim, reset string }

func paletteFor(tty *os.File) palette {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" || !term.IsTerminal(fdOf(tty)) {
		return palette{}
	}
	return palette{bold: "\x1b[1m", red: "\x1b[1;31m", yellow: "\x1b[33m", green: "\x1b[32m", dim: "\x1b[2m", reset: "\x1b[0m"}
}

// colourise marks up renderPending's text: the header bold, warnings in
// colour. The text itself is unchanged.
func (p palette) colourise(s string) string {
	if p.reset == "" {
		return s
	}
	lines := strings.Split(s, "\n")
	inWarn := false
	for i, l := range lines {
		switch {
		case i == 0:
			lines[i] = p.bold + l + p.reset
		case strings.Contains(l, "WARNING(S)"):
			inWarn = true
			lines[i] = p.red + l + p.reset
		case inWarn && strings.HasPrefix(l, "  "):
			lines[i] = p.yellow + l + p.reset
		case strings.HasPrefix(l, "digest: "):
			lines[i] = p.dim + l + p.reset
		}
	}
	return strings.Join(lines, "\n")
}

// console is the review loop's terminal: cooked for output and the digest
// prompt, raw only while it waits for one key.
type console struct {
	tty   *os.File
	fd    int
	saved *term.State
	pal   palette
	// deadlines is false when the terminal cannot time out reads; new
	// calls then show after the next key.
	deadlines bool
}

var errQuit = errors.New("quit")

// fdOf returns f's descriptor without f.Fd(), which would put the file in
// blocking mode and make read deadlines (the console's polling) stop
// working.
func fdOf(f *os.File) int {
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(d uintptr) { fd = int(d) })
	}
	return fd
}

// key waits for one key press. With poll set it returns 0 every reviewPoll
// so the caller can look for new calls.
func (c *console) key(ctx context.Context, poll bool) (byte, error) {
	st, err := term.MakeRaw(c.fd)
	if err != nil {
		return 0, fmt.Errorf("failed to read a key from the terminal: %w", err)
	}
	c.saved = st
	defer c.cooked()
	buf := make([]byte, 1)
	for {
		if err := ctx.Err(); err != nil {
			return 0, errQuit
		}
		if c.deadlines {
			if err := c.tty.SetReadDeadline(time.Now().Add(reviewPoll)); err != nil {
				c.deadlines = false
			}
		}
		n, err := c.tty.Read(buf)
		if n == 1 {
			return buf[0], nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if poll {
				return 0, nil
			}
			continue
		}
		if err != nil {
			return 0, errQuit // the terminal went away
		}
	}
}

// cooked restores the terminal's mode and clears any read deadline.
func (c *console) cooked() {
	if c.saved != nil {
		_ = term.Restore(c.fd, c.saved)
		c.saved = nil
	}
	if c.deadlines {
		_ = c.tty.SetReadDeadline(time.Time{})
	}
}

// openCalls lists the open pending calls not yet skipped, oldest first.
func openCalls(st *state.Store, skipped map[string]bool) ([]*state.Pending, []error) {
	list, errs := st.ListPending()
	var out []*state.Pending
	for _, p := range list {
		if p.Status == state.StatusOpen && !skipped[p.ID] {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seen.Before(out[j].Seen) })
	return out, errs
}

func reviewRun(ctx context.Context, tty *os.File, st *state.Store, ttl time.Duration) error {
	c := &console{tty: tty, fd: fdOf(tty), pal: paletteFor(tty), deadlines: true}
	defer c.cooked()
	pal := c.pal
	fmt.Fprintf(tty, "%sloopguard review%s: pending calls appear here as they arrive. a approve, d deny, s skip, q quit.\n", pal.bold, pal.reset)
	skipped := map[string]bool{}
	warned := map[string]bool{}
	waiting := false
	approved, denied := 0, 0
	defer func() {
		fmt.Fprintf(tty, "\nReview ended: %d approved, %d denied, %d skipped.\n", approved, denied, len(skipped))
	}()
	for {
		calls, errs := openCalls(st, skipped)
		for _, err := range errs {
			if !warned[err.Error()] {
				warned[err.Error()] = true
				fmt.Fprintf(tty, "%sloopguard: warning: %v%s\n", pal.yellow, err, pal.reset)
			}
		}
		if len(calls) == 0 {
			if !waiting {
				waiting = true
				fmt.Fprintf(tty, "%sWaiting for calls (q to quit)...%s\n", pal.dim, pal.reset)
			}
			k, err := c.key(ctx, true)
			if err != nil {
				return nil
			}
			if k == 'q' || k == 3 || k == 4 {
				return nil
			}
			continue
		}
		waiting = false
		p := calls[0]
		fmt.Fprintf(tty, "\n%s", pal.colourise(renderPending(p)))
		if len(calls) > 1 {
			fmt.Fprintf(tty, "%s(%d more waiting)%s\n", pal.dim, len(calls)-1, pal.reset)
		}
	prompt:
		for {
			fmt.Fprintf(tty, "%s[a]pprove  [d]eny  [s]kip  [q]uit:%s ", pal.bold, pal.reset)
			k, err := c.key(ctx, false)
			if err != nil {
				fmt.Fprintln(tty)
				return nil
			}
			fmt.Fprintf(tty, "%c\n", printableKey(k))
			// The call may have been decided elsewhere meanwhile.
			if cur, err := st.GetPending(p.ID); err != nil || cur.Status != state.StatusOpen {
				fmt.Fprintf(tty, "%s was decided elsewhere meanwhile; moving on.\n", p.ID)
				break prompt
			}
			switch k {
			case 'a', 'A':
				if err := approveRun(ctx, tty, st, p.ID, p.Digest, ttl, time.Now()); err != nil {
					printError(tty, err)
					continue // still open: ask again
				}
				approved++
				fmt.Fprintf(tty, "%sapproved%s %s\n", pal.green, pal.reset, p.ID)
				break prompt
			case 'd', 'D':
				if err := denyRun(tty, st, p.ID, "", time.Now()); err != nil {
					printError(tty, err)
					continue
				}
				denied++
				break prompt
			case 's', 'S':
				skipped[p.ID] = true
				fmt.Fprintf(tty, "Skipped %s; it stays pending (loopguard pending lists it).\n", p.ID)
				break prompt
			case 'q', 'Q', 3, 4:
				return nil
			default:
				fmt.Fprintln(tty, "Press a, d, s or q.")
			}
		}
	}
}

func printableKey(k byte) rune {
	if k >= 0x20 && k < 0x7f {
		return rune(k)
	}
	return '?'
}
