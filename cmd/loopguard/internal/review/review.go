package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	webconsole "github.com/loopguard/loopguard/console"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// reviewPoll is how often the console looks for new pending calls while it
// waits for a key.
const reviewPoll = 300 * time.Millisecond

func NewCmd() *cobra.Command {
	o := &reviewOptions{}
	cmd := &cobra.Command{
		Use:   "review",
		Short: "A live console on your terminal to approve or deny calls as they arrive",
		Long: `Watch for pending calls and decide each one from your terminal, newest
first. Every call is shown in full, exactly as it would run, with its
warnings; a new call rings the terminal's bell and sets its title. Then:

  a  approve it once, with this one key (this terminal is yours: the agent
     cannot type here). A call worth a second look (a DANGER line,
     executable configuration, a chained or indirect command, a call that
     differs from one you approved, warnings, or one not shown whole) asks
     for the first 4 characters of the digest shown above it, and Enter
  g  approve it and grant the narrowest rule that covers it (the rule is
     shown first; a rule loopguard would refuse is never offered, nor is g
     on a DANGER call); a grant outlives the call, so g always asks for the
     first 4 characters of the call's digest. For a chain (cd sub && go
     test ./..., git add x && git commit -m y) g grants the narrowest rule
     of each part no grant covers yet, each listed above the prompt; it is
     not offered when a part has a DANGER line or cannot be granted alone
  w  approve it and grant the rule one step wider than the command: the
     program, its subcommand and * (Bash(go test *) for go test -v
     ./...), shown on the prompt; offered only where that * cannot take
     an option that runs code or writes a file, a DANGER form, or a
     download, and never on a DANGER call; asks as g does
  t  approve every call of the same turn, shown together, then y (offered
     when none of them needs a second look); a turn taller than the
     terminal is paged, and y is asked for only once all of it was shown
  d  deny it, with an optional reason the agent is shown
  s  skip it for now
  v  view the call again (a long one is paged: Space for more, q to stop)
  q  quit (also Ctrl-C or Ctrl-D)

The call on screen stays there until you decide it: calls that arrive
meanwhile ring the bell and are counted, and come next. Keys typed before
a call's prompt appears are thrown away.

In the default wait mode the agent's call is held until you answer here,
and runs (or is refused) without a retry; the time left counts down on the
prompt line. A call whose wait ran out stays here, marked WAIT OVER: the
agent was told it did not run and to retry once you approve, and its
retry of the identical call (only its description may differ) then runs.
A call whose hook went without an answer (Esc in the agent, the session
ended) leaves the queue ('loopguard pending --all' still lists it).

review talks to /dev/tty only and refuses inside an agent (CLAUDECODE set).
Colours are used only on a terminal and never when NO_COLOR is set.`,
		Example: "  loopguard review\n  loopguard review --session 066fc3ad --since 10m\n  loopguard review --project . --grant-ttl 4h\n  loopguard review --backend vault   # the calls waiting across the team",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckApprovalTTL(o.ttl); err != nil {
				return err
			}
			if err := cli.CheckGrantTTL("--grant-ttl", o.grantTTL); err != nil {
				return err
			}
			if o.filter.Project != "" {
				abs, err := filepath.Abs(o.filter.Project)
				if err != nil {
					return err
				}
				o.filter.Project = abs
			}
			tty, st, err := cli.OpenTTYStore()
			if err != nil {
				return err
			}
			defer tty.Close()
			// What a rule and a second look are judged in (OfferedRule,
			// secondLook), once for the session: this terminal's (empty
			// when the config does not load).
			o.ge, _ = cli.CurrentGrantEnv()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			switch o.backend {
			case "vault":
				m, err := approve.LoadTeam(ctx)
				if err != nil {
					return err
				}
				o.tty, o.store, o.minter = tty, st, m
				return reviewLoop(ctx, o, &reviewTeam{o: o, m: m})
			case "":
				o.tty, o.store = tty, st
				return reviewLoop(ctx, o, &reviewLocal{o: o})
			}
			return fmt.Errorf("--backend %q: want vault (the calls waiting across the team), or leave it out (this machine's calls)", o.backend)
		},
	}
	cmd.Flags().DurationVar(&o.ttl, "ttl", 10*time.Minute, "how long an approval stays valid")
	cmd.Flags().DurationVar(&o.grantTTL, "grant-ttl", time.Hour, "how long a grant minted with g stays valid")
	cmd.Flags().StringVar(&o.filter.Session, "session", "", "only calls of sessions whose id starts with this")
	cmd.Flags().StringVar(&o.filter.Project, "project", "", "only calls of this project directory")
	cmd.Flags().DurationVar(&o.filter.Since, "since", 0, "only calls seen within this long")
	cmd.Flags().StringVar(&o.backend, "backend", "", "vault: the calls waiting across the team, decided through Vault (needs \"backend\": \"vault\")")
	return cmd
}

// reviewOptions is what review needs: its flags, terminal and store, and
// with --backend vault the minter of the team's approvals.
type reviewOptions struct {
	tty    *os.File
	store  *state.Store
	minter *approve.Minter // --backend vault

	ttl, grantTTL time.Duration
	filter        cli.QueueFilter
	backend       string // "vault": the team's calls (vault.go)
	ge            cli.GrantEnv
}

// reviewConfirmLen is how many digest characters review asks for when a
// call is worth a second look, and for g: with the key and Enter, 6
// keystrokes. The confirmation is there so the human looks at the call,
// not as a secret; an ordinary call is approved with one key
// (keys.go).
const reviewConfirmLen = 4

// palette holds the escape sequences of the console; all empty without
// colour.
type palette struct{ bold, red, yellow, green, dim, reset string }

func paletteFor(tty *os.File) palette {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" || !term.IsTerminal(fdOf(tty)) {
		return palette{}
	}
	return palette{bold: "\x1b[1m", red: "\x1b[1;31m", yellow: "\x1b[33m", green: "\x1b[32m", dim: "\x1b[2m", reset: "\x1b[0m"}
}

// colourise marks up renderPending's header: its first line bold, danger
// and warnings in colour, the digest dim, as LineKinds names the lines
// (the console's page colours the same names). The text is unchanged.
func (p palette) colourise(s string) string {
	if p.reset == "" {
		return s
	}
	colour := map[string]string{"title": p.bold, "danger": p.red, "warnings": p.red, "warn": p.yellow, "digest": p.dim}
	var b strings.Builder
	kind := ""
	for i, l := range LineKinds(s, true) {
		if i > 0 {
			b.WriteByte('\n')
		}
		// A row cli.Fold added is coloured as the line it goes on.
		if i == 0 || !strings.HasPrefix(l.Text, cli.FoldMark) {
			kind = l.Kind
		}
		if c := colour[kind]; c != "" {
			b.WriteString(c + l.Text + p.reset)
		} else {
			b.WriteString(l.Text)
		}
	}
	if strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// LineKinds names what each line of a rendering is (cli.RenderParts' head
// when head, else its body): "title", "danger", "warnings" (a warnings
// header), "warn", "digest" in the head; "hunk", "add", "del" in the
// diff before the exact call. review's colours and the console's page
// both follow it.
func LineKinds(text string, head bool) []webconsole.Line {
	text = strings.TrimSuffix(text, "\n")
	var out []webconsole.Line
	inWarn, inChanges := false, !head
	for i, l := range strings.Split(text, "\n") {
		k := ""
		switch {
		case head && i == 0:
			k = "title"
		case head && strings.HasPrefix(l, "!!! DANGER"):
			k = "danger"
		case head && strings.Contains(l, "WARNING(S)"):
			inWarn, k = true, "warnings"
		case head && inWarn && strings.HasPrefix(l, "  "):
			k = "warn"
		case head && strings.HasPrefix(l, "digest: "):
			k = "digest"
		case head:
		case l == "The exact call:":
			inChanges = false
		case !inChanges:
		case strings.HasPrefix(l, "@@"):
			k = "hunk"
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++ "):
			k = "add"
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--- "):
			k = "del"
		}
		out = append(out, webconsole.Line{Text: l, Kind: k})
	}
	return out
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

// round is what a review console keeps from one call to the next, the same
// for this machine's calls and the team's: a bell and the window's title
// once per call, the waiting line once per idle spell, and the tally said
// at the end.
type round struct {
	c                *console
	titles           bool
	announced        map[string]bool
	skipped          map[string]bool
	idling           bool
	approved, denied int
}

func newRound(c *console) *round {
	return &round{c: c, titles: term.IsTerminal(c.fd) && os.Getenv("TERM") != "dumb",
		announced: map[string]bool{}, skipped: map[string]bool{}}
}

// idle says once, until a call arrives, that the console waits (msg).
func (r *round) idle(msg string) {
	if r.idling {
		return
	}
	r.idling = true
	r.title("loopguard review: nothing waiting")
	fmt.Fprintf(r.c.tty, "%s%s%s\n", r.c.pal.dim, msg, r.c.pal.reset)
}

func (r *round) title(t string) {
	if r.titles {
		fmt.Fprintf(r.c.tty, "\x1b]2;%s\a", present.EscapeText(t))
	}
}

// end restores the title and says the tally.
func (r *round) end() {
	r.title("loopguard review")
	fmt.Fprintf(r.c.tty, "\nReview ended: %d approved, %d denied, %d skipped.\n", r.approved, r.denied, len(r.skipped))
}

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

// reviewCall is one call in review's queue: key names it there (its id
// on this machine; "<machine>/<id>" across the team), p is the call as
// shown, tp its verified record in Vault (the team's calls only).
type reviewCall struct {
	key string
	p   *state.Pending
	tp  *vault.TeamPending
}

func keysOf(calls []*reviewCall) string {
	return joinIDs(calls, func(rc *reviewCall) string { return rc.key })
}

// reviewBackend is where review's calls wait and how a decision is
// carried out: this machine's state directory and keyring (reviewLocal),
// or the team's calls in Vault (reviewTeam, vault.go). The loop,
// reviewLoop, is one: what is shown and in which order, the keys, the
// checks before a decision and what is refused. A backend holds only what
// truly differs between the two, each said where it is.
type reviewBackend interface {
	// words are the backend's fixed lines.
	words() reviewWords
	// intro is the line review starts with.
	intro(c *console) string
	// queue lists the calls waiting that pass the filter and were not
	// skipped, newest first; warns are lines to say once each (after
	// "loopguard: "), err a failure to read the queue at all.
	queue(ctx context.Context, skipped map[string]bool, now time.Time) (calls []*reviewCall, warns []string, err error)
	// show shows rc (header first, a long body paged) and reports
	// whether all of it was shown.
	show(c *console, rc *reviewCall) bool
	// shown is said once after a call is first shown; more calls wait
	// besides it.
	shown(c *console, rc *reviewCall, more int)
	// pin keeps rc in the queue while the human has it open.
	pin(rc *reviewCall, now time.Time)
	// secondLook lists why approving rc asks for the digest's characters
	// (keys.go); whole is false when not all of it was shown.
	secondLook(rc *reviewCall, whole bool) []string
	// turnOf is rc and the other waiting calls of its turn.
	turnOf(rc *reviewCall, calls []*reviewCall) []*reviewCall
	// ordinary reports whether none of calls needs a second look.
	ordinary(calls []*reviewCall) bool
	// keyLine is the prompt's keys; status its live last line ("" for
	// none).
	keyLine(c *console, keys []string) string
	status(rc *reviewCall, more int, now time.Time, width int) string
	// gone says why rc left the queue while it was on screen.
	gone(c *console, rc *reviewCall, now time.Time) string
	// open reports whether rc is still undecided; an error is said and
	// the prompt asked again.
	open(ctx context.Context, rc *reviewCall) (bool, error)
	// approve approves rc once, asking for the digest's characters when
	// look holds a reason (or always, where the backend says why).
	approve(ctx context.Context, c *console, rc *reviewCall, look []string) error
	// exact is g's approval of rc (the grant is review's own).
	exact(ctx context.Context, rc *reviewCall) func(*approve.Minter) (*token.Grant, string, error)
	// approveTurn approves the calls of turn together (t); it returns
	// how many it approved.
	approveTurn(ctx context.Context, c *console, turn []*reviewCall) (int, error)
	// deny refuses rc and says so.
	deny(ctx context.Context, c *console, rc *reviewCall) error
}

// reviewWords are a backend's fixed lines.
type reviewWords struct {
	idle    string // said once while nothing waits
	waiting string // the window's title while calls wait (%d: how many)
	lists   string // the command that lists a skipped call
	noTurn  string // the answer to t where no turn is offered
	// every is how many reviewPoll ticks pass between reads of the queue.
	every int
	// redraw: the prompt has no live line that counts new calls, so a
	// change in the queue shows the call again (with the new count).
	redraw bool
}

// reviewLoop is review: the calls of b, one at a time, decided by the
// human at o.tty.
func reviewLoop(ctx context.Context, o *reviewOptions, b reviewBackend) error {
	tty := o.tty
	c := &console{tty: tty, fd: fdOf(tty), pal: paletteFor(tty), deadlines: true}
	defer c.cooked()
	fmt.Fprint(tty, b.intro(c))
	r := newRound(c)
	defer r.end()
	rv := &reviewer{o: o, b: b, c: c, r: r, w: b.words(), warned: map[string]bool{}}
	for {
		calls := rv.read(ctx, time.Now())
		if len(calls) == 0 {
			if rv.idle(ctx) {
				return nil
			}
			continue
		}
		if rv.decideOne(ctx, calls) {
			return nil
		}
	}
}

// reviewer is one run of reviewLoop: its backend, console and round, and
// what it remembers between calls.
type reviewer struct {
	o       *reviewOptions
	b       reviewBackend
	c       *console
	r       *round
	w       reviewWords
	warned  map[string]bool // the queue's warnings said once
	lastErr string          // the queue's failure, said once
	current string          // the call on screen: never replaced while the prompt waits
}

// read reads the queue, saying each warning once and a failure to read it
// once until it reads again.
func (rv *reviewer) read(ctx context.Context, now time.Time) []*reviewCall {
	pal, tty := rv.c.pal, rv.c.tty
	calls, warns, err := rv.b.queue(ctx, rv.r.skipped, now)
	for _, l := range warns {
		if !rv.warned[l] {
			rv.warned[l] = true
			fmt.Fprintf(tty, "%sloopguard: %s%s\n", pal.yellow, l, pal.reset)
		}
	}
	if err != nil && err.Error() != rv.lastErr {
		// The queue cannot be read (Vault down, sealed, the token
		// expired): say so once, keep trying; nothing is decided
		// without it.
		rv.lastErr = err.Error()
		fmt.Fprintf(tty, "%sloopguard: warning: %s%s\n", pal.yellow, present.EscapeText(err.Error()), pal.reset)
	}
	if len(calls) > 0 {
		rv.lastErr = ""
	}
	return calls
}

// idle waits while nothing is queued, until a key or the next read of the
// queue; it reports whether the human quit.
func (rv *reviewer) idle(ctx context.Context) bool {
	rv.current = ""
	rv.r.idle(rv.w.idle)
	for tick := 1; ; tick++ {
		k, err := rv.c.key(ctx, true)
		if err != nil || k == 'q' || k == 3 || k == 4 {
			return true
		}
		if k != 0 || tick%rv.w.every == 0 {
			return false
		}
	}
}

// onScreen is the call review shows and what its prompt offers.
type onScreen struct {
	rc                    *reviewCall
	look                  []string // why a needs the digest's characters
	offer                 grantOffer
	turn                  []*reviewCall
	turnOK                bool
	more                  int // calls waiting besides its turn
	pinned                time.Time
	shownTurn, shownQueue string
}

// what a key did to the call on screen.
type keyOutcome int

const (
	keyAgain   keyOutcome = iota // ask again (still open); from prompt: a key to act on
	keyPrompt                    // from prompt: no key to act on, ask again
	keyDecided                   // decided, skipped, or gone: the next call
	keyRedraw                    // the queue changed: read it and show again
	keyQuit
)

// decideOne shows the first call of calls (or the one already on
// screen) and asks until it is decided; it reports whether the human
// quit.
func (rv *reviewer) decideOne(ctx context.Context, calls []*reviewCall) bool {
	s := rv.show(calls, time.Now())
	for {
		k, out := rv.prompt(ctx, s)
		switch out {
		case keyQuit:
			return true
		case keyRedraw, keyDecided:
			return false
		case keyPrompt:
			continue
		}
		switch rv.act(ctx, s, k) {
		case keyQuit:
			return true
		case keyDecided, keyRedraw:
			return false
		}
	}
}

// show puts a call of calls on screen (the one there already, if still
// queued) and works out what its prompt offers.
func (rv *reviewer) show(calls []*reviewCall, now time.Time) *onScreen {
	b, c, o := rv.b, rv.c, rv.o
	rc := calls[0]
	if i := slices.IndexFunc(calls, func(q *reviewCall) bool { return q.key == rv.current }); i >= 0 {
		rc = calls[i]
	}
	rv.current = rc.key
	rv.r.announce(calls, fmt.Sprintf(rv.w.waiting, len(calls)))
	fmt.Fprint(c.tty, "\n")
	whole := b.show(c, rc)
	s := &onScreen{rc: rc, turn: b.turnOf(rc, calls)}
	s.more = len(calls) - len(s.turn)
	b.shown(c, rc, s.more)
	// The human has it open: no flood of new calls drops it meanwhile
	// (pinned again while the prompt waits).
	b.pin(rc, now)
	s.pinned = now
	s.look = b.secondLook(rc, whole)
	s.offer = offerFor(o.store, rc.p, o.ge, now)
	s.turnOK = len(s.turn) > 1 && len(s.look) == 0 && b.ordinary(s.turn[1:])
	s.shownTurn, s.shownQueue = keysOf(s.turn), keysOf(calls)
	return s
}

// keys are the prompt's keys for s.
func (s *onScreen) keys() []string {
	keys := []string{"[a]pprove"}
	if g := s.offer.gKey(); g != "" {
		keys = append(keys, g)
	}
	if w := s.offer.wKey(); w != "" {
		keys = append(keys, w)
	}
	if n := s.offer.nKey(); n != "" {
		keys = append(keys, n)
	}
	if s.turnOK {
		keys = append(keys, fmt.Sprintf("[t]urn: all %d", len(s.turn)))
	}
	return append(keys, "[d]eny", "[s]kip", "[v]iew", "[q]uit")
}

// prompt draws the prompt under the call on screen and waits for a key,
// keeping the status line current meanwhile. A key that is not keyAgain's
// is what happened instead (the call left the queue, its turn or the
// queue changed, the terminal went away).
func (rv *reviewer) prompt(ctx context.Context, s *onScreen) (byte, keyOutcome) {
	c, tty, pal := rv.c, rv.c.tty, rv.c.pal
	c.drain()
	fmt.Fprint(tty, cli.Fold(s.offer.partLines(c.width()), c.width()))
	fmt.Fprint(tty, cli.Fold(s.offer.netLines(c.width()), c.width()))
	if len(s.look) > 0 {
		fmt.Fprint(tty, pal.yellow+wrapText(fmt.Sprintf("SECOND LOOK (%s): a asks for the first %d characters of the digest shown above.", strings.Join(s.look, "; "), reviewConfirmLen), c.width())+pal.reset)
	}
	fmt.Fprint(tty, rv.b.keyLine(c, s.keys()))
	status := rv.b.status(s.rc, s.more, time.Now(), c.width())
	fmt.Fprint(tty, status)
	k, err := c.key(ctx, true)
	for tick := 1; err == nil && k == 0; tick++ {
		// No key yet: the time left counts down, new calls are counted
		// (shown after this one), and a call that left the queue is said
		// to have.
		if tick%rv.w.every == 0 {
			if out := rv.watch(ctx, s, &status); out != keyAgain {
				return 0, out
			}
		}
		k, err = c.key(ctx, true)
	}
	if err != nil {
		fmt.Fprintln(tty)
		return 0, keyQuit
	}
	fmt.Fprintf(tty, "%c\n", printableKey(k))
	// The call may have been decided elsewhere meanwhile.
	if ok, err := rv.b.open(ctx, s.rc); err != nil {
		cli.PrintError(tty, err)
		return 0, keyPrompt
	} else if !ok {
		fmt.Fprintf(tty, "%s was decided elsewhere meanwhile; moving on.\n", present.EscapeText(s.rc.p.ID))
		return 0, keyDecided
	}
	return k, keyAgain
}

// watch is one look at the queue while the prompt waits: the call is
// pinned again, and a call gone, a turn or a queue changed ends the
// prompt; else the status line is brought up to date.
func (rv *reviewer) watch(ctx context.Context, s *onScreen, status *string) keyOutcome {
	b, c, tty, pal, rc := rv.b, rv.c, rv.c.tty, rv.c.pal, s.rc
	now := time.Now()
	if now.Sub(s.pinned) > state.PinFor/2 {
		b.pin(rc, now)
		s.pinned = now
	}
	cur, _, qerr := b.queue(ctx, rv.r.skipped, now)
	i := slices.IndexFunc(cur, func(q *reviewCall) bool { return q.key == rc.key })
	switch {
	case qerr != nil:
		// Unknown: the prompt waits on.
	case i < 0:
		fmt.Fprintf(tty, "\n%s\n", b.gone(c, rc, now))
		return keyRedraw
	case keysOf(b.turnOf(cur[i], cur)) != s.shownTurn:
		fmt.Fprintf(tty, "\n%sMore calls of this turn arrived; showing it again.%s\n", pal.dim, pal.reset)
		return keyRedraw
	case cur[i].p.Digest == rc.p.Digest && cur[i].p.Planted != rc.p.Planted:
		// What jailed calls and file tools changed in its project is not
		// what is on screen: an approval now would be refused (approve.Exact).
		fmt.Fprintf(tty, "\n%sWhat jailed calls or file tools changed in this call's project changed; showing it again.%s\n", pal.dim, pal.reset)
		return keyRedraw
	case rv.w.redraw && keysOf(cur) != s.shownQueue:
		fmt.Fprintf(tty, "\n%sThe queue changed; redrawing.%s\n", pal.dim, pal.reset)
		return keyRedraw
	default:
		rc.p.HeldUntil, rc.p.HolderPID = cur[i].p.HeldUntil, cur[i].p.HolderPID
		rv.r.announce(cur, fmt.Sprintf(rv.w.waiting, len(cur)))
		s.more = len(cur) - len(s.turn)
		if st := b.status(rc, s.more, now, c.width()); st != *status {
			if c.live() {
				c.redraw(*status, st)
			}
			*status = st
		}
	}
	return keyAgain
}

// act carries out key k on the call on screen.
func (rv *reviewer) act(ctx context.Context, s *onScreen, k byte) keyOutcome {
	b, c, tty, o, rc, r := rv.b, rv.c, rv.c.tty, rv.o, s.rc, rv.r
	p := rc.p
	decided := func(err error, n *int) keyOutcome {
		if err != nil {
			cli.PrintError(tty, err)
			return keyAgain // still open: ask again
		}
		*n++
		return keyDecided
	}
	switch k {
	case 'a', 'A':
		return decided(b.approve(ctx, c, rc, s.look), &r.approved)
	case 'g', 'G':
		if s.offer.err != nil {
			fmt.Fprintln(tty, noGrantLine(s.offer.err))
			return keyAgain
		}
		return decided(approveAndGrantWith(ctx, tty, o.store, p, s.offer.rules, o, time.Now(), b.exact(ctx, rc)), &r.approved)
	case 'w', 'W':
		if s.offer.wErr != nil {
			fmt.Fprintln(tty, noWiderLine(s.offer.wErr))
			return keyAgain
		}
		return decided(approveAndGrantWith(ctx, tty, o.store, p, []scope.Rule{s.offer.wider}, o, time.Now(), b.exact(ctx, rc)), &r.approved)
	case 'n', 'N':
		if s.offer.netErr != nil {
			fmt.Fprintln(tty, "No network grant is offered for this call ("+present.EscapeText(s.offer.netErr.Error())+").")
			return keyAgain
		}
		return decided(approveAndGrantWith(ctx, tty, o.store, p, []scope.Rule{s.offer.net}, o, time.Now(), b.exact(ctx, rc)), &r.approved)
	case 't', 'T':
		if !s.turnOK {
			fmt.Fprintln(tty, rv.w.noTurn)
			return keyAgain
		}
		n, err := b.approveTurn(ctx, c, s.turn)
		r.approved += n
		if errors.Is(err, errTurnUnseen) {
			return keyRedraw // the call on screen again, its prompt under it
		}
		if err != nil {
			cli.PrintError(tty, err)
			return keyAgain
		}
		return keyDecided
	case 'd', 'D':
		return decided(b.deny(ctx, c, rc), &r.denied)
	case 'v', 'V':
		if b.show(c, rc) {
			s.look = b.secondLook(rc, true)
		}
		return keyAgain
	case 's', 'S':
		r.skipped[rc.key] = true
		fmt.Fprintf(tty, "Skipped %s; it stays pending (%s lists it).\n", present.EscapeText(p.ID), rv.w.lists)
		return keyDecided
	case 'q', 'Q', 3, 4:
		return keyQuit
	}
	fmt.Fprintln(tty, pressLine(s.keys()))
	return keyAgain
}

// pressLine answers a key that is none of keys, the prompt's ("[a]pprove",
// "[g]rant ...": each offers the letter in its brackets), naming only
// those: g or t where the prompt does not offer them is not named.
func pressLine(keys []string) string {
	var letters []string
	for _, k := range keys {
		if len(k) >= 3 && k[0] == '[' && k[2] == ']' {
			letters = append(letters, k[1:2])
		}
	}
	if len(letters) < 2 {
		return "Press " + strings.Join(letters, "") + "."
	}
	return "Press " + strings.Join(letters[:len(letters)-1], ", ") + " or " + letters[len(letters)-1] + "."
}

// reviewLocal is this machine's calls: the state directory, decided with
// the keyring's key.
type reviewLocal struct {
	o *reviewOptions
}

func (b *reviewLocal) words() reviewWords {
	return reviewWords{idle: "Waiting for calls (q to quit)...", waiting: "loopguard: %d call(s) waiting", lists: "loopguard pending",
		noTurn: "t approves a whole turn of ordinary calls; approve this one with a.", every: 1}
}

func (b *reviewLocal) intro(c *console) string {
	return c.pal.bold + wrapText("loopguard review: pending calls appear here as they arrive. a approve, d deny, s skip, v view, q quit; "+
		"g (approve and grant a rule), w (grant a wider rule) and t (approve a whole turn) when the prompt under a call offers them.", c.width()) + c.pal.reset
}

func (b *reviewLocal) queue(_ context.Context, skipped map[string]bool, now time.Time) ([]*reviewCall, []string, error) {
	list, errs := cli.Queue(b.o.store, b.o.filter, skipped, now)
	calls := make([]*reviewCall, len(list))
	for i, p := range list {
		calls[i] = &reviewCall{key: p.ID, p: p}
	}
	var warns []string
	for _, err := range errs {
		warns = append(warns, "warning: "+present.EscapeText(err.Error()))
	}
	return calls, warns, nil
}

func (b *reviewLocal) show(c *console, rc *reviewCall) bool { return showCall(c, b.o.store, rc.p) }
func (b *reviewLocal) shown(*console, *reviewCall, int)     {}
func (b *reviewLocal) pin(rc *reviewCall, now time.Time)    { _ = b.o.store.Pin(rc.key, now) }

func (b *reviewLocal) secondLook(rc *reviewCall, whole bool) []string {
	return secondLook(rc.p, b.o.ge, whole)
}

func (b *reviewLocal) turnOf(rc *reviewCall, calls []*reviewCall) []*reviewCall {
	return turnOf(rc, calls)
}

func (b *reviewLocal) ordinary(calls []*reviewCall) bool {
	return ordinaryTurn(b.o.store, calls, b.o.ge)
}

func (b *reviewLocal) keyLine(c *console, keys []string) string {
	return c.pal.bold + wrapItems(keys, c.width()) + c.pal.reset
}

func (b *reviewLocal) status(rc *reviewCall, more int, now time.Time, width int) string {
	return statusLine(b.o.store, rc.p, more, now, width)
}

func (b *reviewLocal) gone(_ *console, rc *reviewCall, now time.Time) string {
	return gone(b.o.store, rc.key, now)
}

func (b *reviewLocal) open(_ context.Context, rc *reviewCall) (bool, error) {
	cur, err := b.o.store.GetPending(rc.key)
	return err == nil && cur.Status == state.StatusOpen, nil
}

func (b *reviewLocal) approve(ctx context.Context, c *console, rc *reviewCall, look []string) error {
	n := 0 // one key: the human has this call on screen
	if len(look) > 0 {
		n = reviewConfirmLen
	}
	return approve.Run(ctx, &approve.Options{TTY: c.tty, Store: b.o.store, Now: time.Now, IDs: []string{rc.key}, TTL: b.o.ttl, Shown: rc.p.Digest, ShownPlanted: rc.p.Planted,
		ShownPlantedAt: rc.p.PlantedAt, ConfirmLen: n})
}

func (b *reviewLocal) exact(_ context.Context, rc *reviewCall) func(*approve.Minter) (*token.Grant, string, error) {
	now := time.Now()
	return func(m *approve.Minter) (*token.Grant, string, error) {
		next := approve.Next(rc.p, time.Now()) // before the held call runs and its hook is gone
		a, err := approve.Exact(b.o.store, m, rc.p, b.o.ttl, now)
		if err != nil {
			return nil, "", err
		}
		return a, next, nil
	}
}

func (b *reviewLocal) approveTurn(ctx context.Context, c *console, turn []*reviewCall) (int, error) {
	return approveTurn(ctx, c, b.o.store, turn, b.o, time.Now())
}

func (b *reviewLocal) deny(_ context.Context, c *console, rc *reviewCall) error {
	note, err := cli.ReadLine(c.tty, "Reason for the agent (optional; Enter for none): ")
	if err != nil {
		return err
	}
	return approve.DenyRun(&approve.DenyOptions{Out: c.tty, Store: b.o.store, Now: time.Now, IDs: []string{rc.key}, Note: note})
}

// ordinaryTurn reports whether none of calls needs a second look, as t
// shows them (folded parts count as not shown).
func ordinaryTurn(st *state.Store, calls []*reviewCall, ge cli.GrantEnv) bool {
	for _, rc := range calls {
		if len(secondLook(rc.p, ge, renderedWhole(st, rc.p))) > 0 {
			return false
		}
	}
	return true
}

// showCall shows pending call p on the console: its header (the call in
// one line, where it lands, danger lines, warnings, the digest) first,
// then its changes and the call in full. A rendering taller than the
// terminal (a line wider than it counted as the rows cli.Fold cuts it
// into) is paged, and its header repeated in short before the prompt, so
// what the human decides on stays in view. It reports whether all of the call was shown:
// nothing folded, and no page left unread.
func showCall(c *console, st *state.Store, p *state.Pending) bool {
	head, body := cli.RenderParts(st, p, false)
	_, full := cli.RenderParts(st, p, true)
	return showParts(c, p, head, "", body, body == full)
}

// showParts is showCall with the rendering of p given, and says, the block
// of what another machine says about its call: shown dim after the head,
// never marked up as loopguard's own warnings are. whole says whether body
// is the call unfolded; showParts reports whether all of it was shown.
// A terminal whose height cannot be told pages nothing.
func showParts(c *console, p *state.Pending, head, says, body string, whole bool) bool {
	_, rows, err := term.GetSize(c.fd)
	if err != nil {
		rows = 0
	}
	return showIn(c, p, head, says, body, whole, screen{rows: rows, below: callPrompt, again: "; v shows the call again"})
}

// callPrompt is how many rows review keeps under a call for its prompt:
// the keys, the status line, a line or so of offers.
const callPrompt = 5

// screen is the room showIn has for a call: rows, the terminal's height
// (0: not known, nothing paged); above, the rows already written since
// the last key read that must stay in view with the call; below, the
// rows written after it before the next key is read (the prompt); again
// says how to see the call again when its pager is stopped.
type screen struct {
	rows, above, below int
	again              string
}

// showIn is showParts on a screen sc. The call is written whole when it
// fits with what is above and below it; else its head, a first page of its
// body and the pager (pageOn), each line on screen at a key, then its
// header again in short.
func showIn(c *console, p *state.Pending, head, says, body string, whole bool, sc screen) bool {
	rows, width := sc.rows, c.width()
	// Folded here, not by the terminal: no row of the call can pass for
	// a line of its own (cli.Fold), and each line is a row as counted.
	head, says, body = cli.Fold(head, width), cli.Fold(says, width), cli.Fold(body, width)
	headRows := rowsIn(head+says, width)
	if rows > 0 && sc.above+headRows+sc.below+3 > rows {
		// A head taller than the screen (a call's description of 4,000
		// bytes: the seventy-ninth attack run) is paged with the body,
		// uncoloured, so no line of it scrolls away unread.
		body, head, says, headRows = head+says+"\n"+body, "", "", 0
	}
	fmt.Fprint(c.tty, c.pal.colourise(head))
	if says != "" {
		fmt.Fprint(c.tty, c.pal.dim+says+c.pal.reset)
	}
	lines := strings.SplitAfter("\n"+body, "\n")
	bodyRows := rowsIn("\n"+body, width)
	if rows <= 0 || sc.above+headRows+bodyRows+sc.below <= rows {
		fmt.Fprint(c.tty, "\n"+body)
		return whole
	}
	room := max(rows-sc.above-headRows-2, 3)
	first, used := 0, 0
	for first < len(lines) && used+rowsOf(lines[first], width) <= room {
		used += rowsOf(lines[first], width)
		first++
	}
	if first == len(lines) {
		// It fits but for the prompt: its last line waits for a key,
		// so none scrolls away unread.
		first--
	}
	first = max(first, 1)
	for _, l := range lines[:first] {
		fmt.Fprint(c.tty, l)
	}
	if first < len(lines) {
		if c.more(c.tty, fmt.Sprintf("-- more: %d of %d lines shown; Space for more, q to stop --", first, len(lines))) {
			fmt.Fprint(c.tty, "\n")
			n, _ := pageOn(c, c.tty, lines[first:], rows, 1+sc.below, sc.again)
			whole = whole && first+n == len(lines)
		} else {
			fmt.Fprintf(c.tty, "\n(%d more lines not shown%s)\n", len(lines)-first, sc.again)
			whole = false
		}
	}
	n := len(present.PendingDanger(p))
	fmt.Fprintf(c.tty, "%s%s | %d danger line(s), %d warning(s) | digest %.16s...%s\n", c.pal.bold, present.Summary(p), n, len(p.Warnings), present.EscapeText(p.Digest), c.pal.reset)
	return whole
}

// joinIDs is the ids of xs, each followed by a space: a queue's name.
func joinIDs[T any](xs []T, id func(T) string) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString(id(x))
		b.WriteByte(' ')
	}
	return b.String()
}

// ErrDangerRule: no rule is offered for a call with a DANGER line (a grant
// outlives the call); approving it once is.
var ErrDangerRule = errors.New("a call with a DANGER line gets no rule; approve it once")

// OfferedRule is the rule review's g and the console's grant offer for p:
// none for a call with a DANGER line, else NarrowRule.
func OfferedRule(p *state.Pending, ge cli.GrantEnv) (scope.Rule, error) {
	if hasDanger(p) {
		return scope.Rule{}, ErrDangerRule
	}
	return NarrowRule(p, ge)
}

// noRuleLine says on review's terminal why g offers no rule (err, from
// OfferedRule).
func noRuleLine(err error) string {
	if errors.Is(err, ErrDangerRule) {
		return "No rule is offered for a call with a DANGER line; approve it once with a."
	}
	return fmt.Sprintf("No rule is offered for this call (%s); approve it once with a.", present.EscapeText(err.Error()))
}

// NarrowRule is the narrowest rule for p: scope.Narrowest of the call
// as the hook saw it (its cwd and project), pinned with this terminal's
// PATH (scopeCall).
func NarrowRule(p *state.Pending, ge cli.GrantEnv) (scope.Rule, error) {
	c, env, err := scopeCall(p, ge)
	if err != nil {
		return scope.Rule{}, err
	}
	return scope.Narrowest(c, env)
}

// GrantBinding is the session a grant from review binds to, and how to
// say it: Claude Code's calls bind to their project (every session started
// there, so a restart keeps the grant); the other agents' (codex:...,
// gemini:...), whose hooks are not told the project, to their session.
func GrantBinding(p *state.Pending) (string, string) {
	if p.ProjectDir != "" && filepath.IsAbs(p.ProjectDir) && !strings.Contains(p.Session, ":") {
		return token.ProjectSession(p.ProjectDir), "every session of the project " + present.EscapeText(p.ProjectDir)
	}
	return p.Session, present.EscapeText(p.Session) + " only"
}

// approveAndGrantWith approves p once and grants rules (one, or a
// chain's, one per part) to p's session and agent, after one
// confirmation that covers them all; exact makes the exact approval
// (locally, or through Vault for another machine's call) and returns it
// and what happens next. The rules shown are the rules minted.
func approveAndGrantWith(ctx context.Context, tty *os.File, st *state.Store, p *state.Pending, rules []scope.Rule, o *reviewOptions, now time.Time,
	exact func(*approve.Minter) (*token.Grant, string, error)) error {
	if len(rules) == 0 {
		return errors.New("no rule to grant")
	}
	m, err := approve.Load(ctx)
	if err != nil {
		return err
	}
	expiry := now.Add(o.grantTTL).Truncate(time.Second)
	fmt.Fprintf(tty, "\nApprove this call once and grant, as %s, until %s:\n", present.EscapeText(m.Principal), present.FormatTime(expiry))
	for _, rule := range rules {
		fmt.Fprintf(tty, "  %s\n", present.EscapeText(rule.String()))
		switch exe := rule.Executable(); exe {
		case "":
		case "builtin":
			fmt.Fprintf(tty, "      the shell's own builtin, never a program of that name\n")
		default:
			fmt.Fprintf(tty, "      runs %s, and only while the command resolves to it\n", present.EscapeText(exe))
		}
		if c := rule.Capability(); c.Network {
			fmt.Fprintf(tty, "      %s\n", c.NetworkReach())
		}
	}
	session, where := GrantBinding(p)
	fmt.Fprintf(tty, "session: %s\nagent:   %s\n", where, present.EscapeText(p.Agent))
	// A grant outlives the call: it is confirmed with the characters of
	// the digest shown with the call (never a second digest to read).
	if err := cli.ConfirmPrefix(tty, p.Digest, reviewConfirmLen, "approve and grant (the call's digest, shown above)"); err != nil {
		return err
	}
	a, next, err := exact(m)
	if err != nil {
		return err
	}
	var granted []string
	for _, rule := range rules {
		g, err := approve.Grant(st, m, rule, session, p.Agent, expiry, now, state.GrantRecord{Created: now.UTC()})
		if err != nil {
			if len(granted) > 0 {
				err = fmt.Errorf("%w (granted before it: %s)", err, strings.Join(granted, ", "))
			}
			return err
		}
		granted = append(granted, g.ID()+": "+present.EscapeText(g.Scope))
	}
	fmt.Fprintf(tty, "Approved %s (grant %s) and granted %s. %s\n", present.EscapeText(p.ID), a.ID(), strings.Join(granted, ", "), present.EscapeText(next))
	return nil
}

// approveTurn approves every call of one turn after showing them all,
// with one key (review offers t only when none of them needs a second
// look); it returns how many it approved. The key is asked for only once
// every line of every call was on screen (showTurn): else nothing is
// approved (errTurnUnseen).
func approveTurn(ctx context.Context, c *console, st *state.Store, turn []*reviewCall, o *reviewOptions, now time.Time) (int, error) {
	tty := c.tty
	m, err := approve.Load(ctx)
	if err != nil {
		return 0, err
	}
	prompt := fmt.Sprintf("\nApprove these %d calls, each once, for %s, as %s? y approves them all, any other key cancels: ", len(turn), o.ttl, present.EscapeText(m.Principal))
	if i := showTurn(c, st, turn, rowsIn(prompt, c.width())); i > 0 {
		fmt.Fprintf(tty, "Not all of call %d of %d was shown: nothing was approved. Decide the calls one by one, or t shows the turn again.\n", i+1, len(turn))
		return 0, errTurnUnseen
	}
	c.drain()
	if err := confirmKey(ctx, c, prompt); err != nil {
		return 0, err
	}
	n := 0
	for _, rc := range turn {
		p := rc.p
		if cur, err := st.GetPending(p.ID); err != nil || cur.Status != state.StatusOpen {
			fmt.Fprintf(tty, "%s was decided elsewhere meanwhile; left as it is.\n", p.ID)
			continue
		}
		next := approve.Next(p, time.Now()) // before the held call runs and its hook is gone
		g, err := approve.Exact(st, m, p, o.ttl, now)
		if err != nil {
			return n, err
		}
		n++
		fmt.Fprintf(tty, "Approved %s: grant %s. %s\n", present.EscapeText(p.ID), g.ID(), present.EscapeText(next))
	}
	return n, nil
}

// errTurnUnseen: a call of the turn was not shown to its end, and t
// approved nothing.
var errTurnUnseen = errors.New("not all of the turn was shown")

// turnRows is the height a turn is laid out for on a terminal that cannot
// tell its own: t's one key approves only what was on screen, so a turn
// taller than this is paged.
const turnRows = 24

// showTurn shows the calls of turn after the first (on screen already,
// and shown whole: t is offered only then) with tail rows (t's prompt)
// under them. A turn that fits is written whole, as one screen; else each
// call as a call alone is (showIn: one taller than the screen is paged),
// with a stop before a call that would push what is on screen away
// unread. It returns 0 once every line of every call was on screen, else
// the index of the call that was not shown to its end (its pager or a
// stop quit, or a part folded).
func showTurn(c *console, st *state.Store, turn []*reviewCall, tail int) int {
	tty, width := c.tty, c.width()
	_, rows, err := term.GetSize(c.fd)
	if err != nil || rows <= 0 {
		rows = turnRows
	}
	intro := fmt.Sprintf("\nThe %d calls of this turn (the first is shown above):\n", len(turn))
	fmt.Fprint(tty, intro)
	used := rowsIn(intro, width)
	for i := 1; i < len(turn); i++ {
		p := turn[i].p
		head, body := cli.RenderParts(st, p, false)
		_, full := cli.RenderParts(st, p, true)
		whole := body == full
		// Folded as showIn folds them, so that need counts the rows
		// they take.
		head, body = cli.Fold(head, width), cli.Fold(body, width)
		sep := fmt.Sprintf("\n--- call %d of %d ---\n", i+1, len(turn))
		need := rowsIn(sep, width) + rowsIn(head, width) + rowsIn("\n"+body, width)
		if i > 1 && used+need+tail > rows {
			more := c.more(tty, fmt.Sprintf("-- call %d of %d next; Space for more, q to stop --", i+1, len(turn)))
			fmt.Fprint(tty, "\n")
			if !more {
				return i
			}
			used = 0
		}
		fmt.Fprint(tty, sep)
		sc := screen{rows: rows, above: used + rowsIn(sep, width), below: tail, again: "; t shows the turn again"}
		if !showIn(c, p, head, "", body, whole, sc) {
			return i
		}
		_ = st.Pin(p.ID, time.Now())
		used += need // past rows when it was paged: the next call waits for a key
	}
	return 0
}

func printableKey(k byte) rune {
	if k >= 0x20 && k < 0x7f {
		return rune(k)
	}
	return '?'
}
