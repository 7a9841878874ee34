package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// openStore opens the per-user state directory.
func openStore() (*state.Store, error) {
	dir, err := state.DefaultDir()
	if err != nil {
		return nil, err
	}
	return state.Open(dir)
}

// loadKeys reads the master key, derives the grant keys and the audit seal
// key from it, and wipes it.
func loadKeys(ctx context.Context) (*token.Keys, []byte, error) {
	master, err := cli.LoadMaster(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer clear(master)
	return token.DeriveKeys(master)
}

// checkApprovalTTL bounds the lifetime of an exact approval.
func checkApprovalTTL(ttl time.Duration) error {
	if ttl <= 0 || ttl > hooks.MaxApprovalTTL {
		return errors.New("--ttl must be between 1s and 24h")
	}
	return nil
}

// checkGrantTTL bounds the lifetime of a scoped grant, given with flag.
func checkGrantTTL(flag string, ttl time.Duration) error {
	if ttl <= 0 || ttl > MaxGrantTTL {
		return fmt.Errorf("%s must be between 1s and %s", flag, MaxGrantTTL)
	}
	return nil
}

// record appends a CLI action to the audit log and seals it when a seal key
// is at hand.
func record(st *state.Store, seal []byte, e audit.Entry) error {
	e.Time = time.Now().UTC()
	if e.Event == "" {
		e.Event = "cli"
	}
	l := cli.AuditLog(st)
	if err := l.Append(e); err != nil {
		return fmt.Errorf("failed to write the audit log: %w", err)
	}
	if seal != nil {
		if err := l.Seal(seal); err != nil {
			return fmt.Errorf("failed to seal the audit log: %w", err)
		}
		// The keyring's anchor follows the seal, so that a state directory
		// rolled back to before it is seen. One that is not the directory
		// anchored is said now, loudly; a keyring that fails here only
		// leaves the anchor where it was.
		if err := reanchor(st, seal, false); errors.Is(err, audit.ErrStateLost) {
			return err
		}
	}
	return nil
}

// principal is the human minting grants: the OS user.
func principal() string {
	if c, err := cli.LoadConfig(); err == nil && c.Principal != "" {
		return c.Principal
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid:%d", os.Getuid())
}

// errNotHuman refuses commands that only a human at a terminal may run.
var errNotHuman = errors.New("this command must be run by a human in their own terminal")

// openTTY opens the controlling terminal for a confirmation. It refuses
// inside a coding agent and without a terminal: the agent runs commands
// with no controlling terminal and CLAUDECODE set.
func openTTY() (*os.File, error) {
	if err := refuseInAgent(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, cli.WithHint(fmt.Errorf("%w: no controlling terminal (%v)", errNotHuman, err),
			"approvals and grants are confirmed by typing at a terminal; there is no --yes")
	}
	return f, nil
}

// openTTYStore opens what a command a human confirms at their terminal
// works with: the terminal (openTTY) and the state store. The caller closes
// the terminal.
func openTTYStore() (*os.File, *state.Store, error) {
	tty, err := openTTY()
	if err != nil {
		return nil, nil, err
	}
	st, err := openStore()
	if err != nil {
		tty.Close()
		return nil, nil, err
	}
	return tty, st, nil
}

// confirm prints prompt on the terminal and reads one line.
func readLine(tty *os.File, prompt string) (string, error) {
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

// confirmPrefix asks the human to type the first n characters of digest.
func confirmPrefix(tty *os.File, digest string, n int, what string) error {
	return confirmTyped(tty, fmt.Sprintf("Type the first %d characters of the digest to %s (anything else cancels): ", n, what),
		func(line string) bool { return strings.EqualFold(line, digest[:n]) },
		"nothing was changed", errors.New("not confirmed: the typed text does not match the digest"))
}

// confirmTyped reads one line at prompt and goes on only when match
// accepts it. Anything else cancels: the terminal is told what was kept
// ("nothing was changed") and refusal is returned.
func confirmTyped(tty *os.File, prompt string, match func(line string) bool, kept string, refusal error) error {
	line, err := readLine(tty, prompt)
	if err != nil {
		return err
	}
	if !match(line) {
		fmt.Fprintf(tty, "Not confirmed; %s.\n", kept)
		return refusal
	}
	return nil
}

// is matches the line want, as typed.
func is(want string) func(string) bool { return func(line string) bool { return line == want } }

// table starts a listing's table on out: columns two spaces apart, under
// the header's names. The caller writes a tab-separated line per row and
// flushes it.
func table(out io.Writer, header ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	return tw
}

// printJSON writes v as indented JSON, without HTML escaping (the output is
// for people and programs, not for a web page), in ASCII: every character
// past it (bidi controls, zero-width spaces) and DEL as a \u escape, so a
// terminal shows what a program reads. encoding/json already escapes the
// other control characters.
func printJSON(out io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(out, asciiJSON(b.String()))
	return err
}

// asciiJSON escapes every rune of JSON text s that is not printable ASCII
// (outside strings JSON has none) as \uXXXX, in UTF-16 as JSON wants.
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0x7f:
			b.WriteString(`\u007f`)
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// shortAge renders a duration like "3m" or "2h".
func shortAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
