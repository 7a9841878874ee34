package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// review's key rules. The terminal review runs on is the human's own: the
// agent cannot type there (it runs with no controlling terminal and
// CLAUDECODE set, and review refuses to start inside it). So one key, a,
// approves an ordinary call the human has on screen, and the typed digest
// characters are kept for the calls where a second look is worth it; they
// are then the first characters of the digest shown with the call, never
// of a second digest. g (a standing grant, wider than the call) always
// asks for them, and is not offered on a DANGER call.
//
// What keeps one key from approving a call the human did not look at: the
// call on screen is never replaced by a newer one while the prompt waits
// (new calls are counted, and shown after this one is decided); keys typed
// before the prompt was drawn are thrown away; and a call that was not
// shown whole (folded, or paging stopped early) needs the second look.

// secondLook lists why approving p deserves a second look (the human then
// types the first characters of the digest shown above it); none for an
// ordinary call. whole is false when the human has not seen all of p's
// rendering (parts folded, or paging stopped). Every fact is read from the
// call's own bytes where it can be, and from what the hook recorded
// otherwise.
func secondLook(p *state.Pending, ge cli.GrantEnv, whole bool) []string {
	var why []string
	if len(present.PendingDanger(p)) > 0 {
		why = append(why, "a DANGER line")
	}
	warns := slices.Clone(p.Warnings)
	for _, w := range present.Warnings(p.Descriptor) {
		if !slices.Contains(warns, w) {
			warns = append(warns, w)
		}
	}
	execConfig, others := p.Reason == hooks.ReasonExecConfig, 0
	for _, w := range warns {
		if strings.HasPrefix(w, "EXECUTABLE CONFIGURATION") {
			execConfig = true
		} else {
			others++
		}
	}
	if execConfig {
		why = append(why, "executable configuration")
	}
	if v := commandVerdict(p, ge); v != "" {
		why = append(why, v)
	}
	if p.Reason == hooks.ReasonSandboxEscape {
		why = append(why, "it leaves the sandbox")
	}
	if p.Approved != "" || p.Reason == hooks.ReasonCallChanged || p.Reason == hooks.ReasonTargetDrift {
		why = append(why, "it differs from a call you approved")
	}
	if present.Drifted(p.Descriptor) {
		// The diff is against the file as the call recorded it, which is
		// not the file as it is now (the eighty-fourth attack run).
		why = append(why, "its file changed since the call was made")
	}
	if others > 0 {
		why = append(why, fmt.Sprintf("%d warning(s)", others))
	}
	if !whole {
		why = append(why, "not all of it was shown (v shows it again)")
	}
	return why
}

// commandVerdict says what kind of command p runs when it is not a simple
// one ("" for a simple command, or a call that is not a command): as the
// hook recorded it, or as the command's text analyses now.
func commandVerdict(p *state.Pending, ge cli.GrantEnv) string {
	switch p.Reason {
	case hooks.ReasonChained:
		return "a chained command"
	case hooks.ReasonIndirect:
		return "an indirect command"
	case hooks.ReasonShadowed:
		return "a command that may not run what it names"
	case hooks.ReasonUnparseable, hooks.ReasonNotCanonical:
		return "a command loopguard cannot analyse"
	}
	switch p.Tool {
	case "PowerShell":
		return "a command loopguard does not analyse"
	case "Bash":
	default:
		return ""
	}
	v, err := token.Decode(p.Descriptor)
	if err != nil {
		return "a command loopguard cannot read back"
	}
	m, _ := v.(map[string]any)
	in, _ := m["input"].(map[string]any)
	cmd, _ := in["command"].(string)
	res := shellparse.Analyze(cmd, shellparse.Env{Cwd: p.Cwd, Path: ge.Path, ProjectDir: p.ProjectDir, Home: ge.Home, Trusted: ge.Trusted})
	switch res.Verdict {
	case shellparse.Simple, shellparse.PathShadowed:
		// Where a name resolves is this terminal's PATH, not the hook's:
		// the hook's own verdict (its reason) is what counts for that.
		return ""
	case shellparse.Chained:
		return "a chained command"
	case shellparse.Indirect:
		return "an indirect command"
	}
	return "a command loopguard cannot analyse"
}

// renderedWhole reports whether p's rendering in review shows all of it:
// nothing folded (a long text cut to its first and last lines).
func renderedWhole(st *state.Store, p *state.Pending) bool {
	_, body := cli.RenderParts(st, p, false)
	_, full := cli.RenderParts(st, p, true)
	return body == full
}

// hasDanger reports a DANGER line for p.
func hasDanger(p *state.Pending) bool { return len(present.PendingDanger(p)) > 0 }

// width is the terminal's width in columns (80 when it cannot be told).
func (c *console) width() int {
	if w, _, err := term.GetSize(c.fd); err == nil && w > 0 {
		return w
	}
	return 80
}

// wrapItems lays items out in lines of at most width columns, two spaces
// apart; an item wider than a line has a line of its own, folded
// (cli.Fold).
func wrapItems(items []string, width int) string { return wrapJoin(items, "  ", width) }

// wrapText wraps a sentence at spaces to lines of at most width columns.
func wrapText(s string, width int) string { return wrapJoin(strings.Fields(s), " ", width) }

func wrapJoin(items []string, sep string, width int) string {
	var b strings.Builder
	col := 0
	for _, it := range items {
		switch {
		case col == 0:
		case col+len(sep)+len(it) > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteString(sep)
			col += len(sep)
		}
		b.WriteString(it)
		col += len(it)
	}
	return cli.Fold(b.String(), width) + "\n"
}

// rowsOf is how many terminal rows line takes at width columns (review's
// text is escaped to printable ASCII: a byte is a column).
func rowsOf(line string, width int) int {
	n := len(strings.TrimRight(line, "\n"))
	if n == 0 || width <= 0 {
		return 1
	}
	return (n + width - 1) / width
}

// rowsIn is how many terminal rows text takes at width columns, written
// from the start of a row: its lines as rowsOf counts them (a last line
// left open counts; the empty row after a final newline does not).
func rowsIn(text string, width int) int {
	n := 0
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			n += rowsOf(l, width)
		}
	}
	return n
}

// statusLine is the last line of the prompt, which review keeps up to date
// while it waits for a key: whether the agent waits and how long it still
// will, and how many more calls wait. It fits width, shortened when it must.
func statusLine(st *state.Store, p *state.Pending, more int, now time.Time, width int) string {
	var long, short string
	switch {
	case cli.Held(p, now):
		left := p.HeldUntil.Sub(now).Round(time.Second).String()
		long, short = "HELD: the agent waits for your answer, "+left+" left", "HELD, "+left+" left"
	case cli.WaitOver(st, p, now):
		long, short = "WAIT OVER: the agent was told; approve for its retry", "WAIT OVER: approve for its retry"
	default:
		long, short = "Not held: after an approval the agent must retry the identical call", "Not held: the agent retries"
	}
	if more > 0 {
		long += fmt.Sprintf(" (%d more waiting)", more)
		short += fmt.Sprintf(" (+%d)", more)
	}
	long, short = long+" > ", short+" > "
	if len(long) < width {
		return long
	}
	return short
}

// live reports whether the console can redraw its last line in place.
func (c *console) live() bool {
	return term.IsTerminal(c.fd) && os.Getenv("TERM") != "dumb"
}

// redraw replaces the last line, was, with now (a carriage return, the new
// text, spaces over what is left of the old one: no escape sequence).
func (c *console) redraw(was, now string) {
	pad := ""
	if len(was) > len(now) {
		pad = strings.Repeat(" ", len(was)-len(now))
		pad += strings.Repeat("\b", len(pad))
	}
	fmt.Fprint(c.tty, "\r"+now+pad)
}

// drain throws away the keys typed before the prompt is drawn, so that a
// key meant for the previous call (a double press, a key typed while a new
// call was being drawn) never decides this one.
func (c *console) drain() {
	if !c.deadlines {
		return
	}
	st, err := term.MakeRaw(c.fd)
	if err != nil {
		return
	}
	defer func() { _ = term.Restore(c.fd, st) }()
	defer func() { _ = c.tty.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, 64)
	for range 64 {
		if err := c.tty.SetReadDeadline(time.Now().Add(5 * time.Millisecond)); err != nil {
			c.deadlines = false
			return
		}
		if n, err := c.tty.Read(buf); n == 0 || err != nil {
			return
		}
	}
}

// announce rings the bell and names how many calls wait in the window's
// title (title) when calls holds one not announced before: a call that
// arrives while the human looks at another is noticed without replacing
// it.
func (r *round) announce(calls []*reviewCall, title string) {
	fresh := false
	for _, rc := range calls {
		if !r.announced[rc.key] {
			r.announced[rc.key], fresh = true, true
		}
	}
	r.idling = r.idling && len(calls) == 0
	if fresh {
		fmt.Fprint(r.c.tty, "\a")
		r.title(title)
	}
}

// gone says why call id left the queue while it was on screen.
func gone(st *state.Store, id string, now time.Time) string {
	p, err := st.GetPending(id)
	switch {
	case err != nil:
		return id + " is no longer pending (loopguard pending --all lists what is)."
	case p.Status != state.StatusOpen:
		return id + " was decided elsewhere meanwhile (" + p.Status + "); moving on."
	case p.HolderPID > 0 && !cli.Held(p, now):
		return id + " left the queue: its hook is gone without an answer to the agent (Esc in the agent, or its session ended); loopguard pending --all lists it."
	}
	return id + " left the queue; loopguard pending --all lists it."
}

// confirmKey asks for one key: y confirms, anything else cancels.
func confirmKey(ctx context.Context, c *console, prompt string) error {
	fmt.Fprint(c.tty, prompt)
	k, err := c.key(ctx, false)
	if err != nil {
		fmt.Fprintln(c.tty)
		return err
	}
	fmt.Fprintf(c.tty, "%c\n", printableKey(k))
	if k != 'y' && k != 'Y' {
		fmt.Fprintln(c.tty, "Not confirmed; nothing was changed.")
		return errors.New("not confirmed")
	}
	return nil
}
