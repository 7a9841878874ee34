package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
)

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
	st, err := cli.OpenStore()
	if err != nil {
		tty.Close()
		return nil, nil, err
	}
	return tty, st, nil
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
