// Package notify tells the human that a call is held for their decision:
// a desktop notification over the session bus (org.freedesktop.Notifications,
// spoken to directly with godbus: no notify-send, no exec) and the command
// the user names in the config (tmux display-message, a phone push script).
//
// The hook fires both when it holds a call, in the background, each within
// a short deadline; a failure is reported to the caller (who logs it) and
// never changes the decision. The call's text is chosen by the agent: the
// command gets it only through environment variables and stdin, never in
// its argv or a shell string, and every text is escaped for the terminal
// (present.EscapeText) before it gets here.
//
// The package is silent: it returns errors, never prints.
package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	dbus "github.com/godbus/dbus/v5"
)

// Deadline bounds each notification: a desktop server that does not answer
// or a command that hangs is abandoned (the command is killed) after it.
const Deadline = 5 * time.Second

// ErrUnavailable is a desktop without a notification service (no session
// bus, or nothing serves org.freedesktop.Notifications on it): nothing to
// tell, not a failure worth logging on every held call.
var ErrUnavailable = errors.New("no desktop notification service")

// Note is what the human is told about one held call. Every field is
// escaped text (no control characters).
type Note struct {
	ID        string // the pending id
	Prefix    string // the shortest id prefix review and approve accept
	Tool      string
	Summary   string // the call in one line, escaped
	Reason    string // the reason code
	Session   string
	Project   string
	HeldUntil time.Time
}

// Title is the notification's one line.
func (n Note) Title() string {
	return fmt.Sprintf("loopguard: %s call held for you (%s)", n.Tool, n.Prefix)
}

// Text is the note as lines of plain text.
func (n Note) Text() string {
	left := time.Until(n.HeldUntil).Round(time.Second)
	return fmt.Sprintf("%s\n%s\nloopguard review (or loopguard approve %s), %s left\n", n.Title(), n.Summary, n.Prefix, left)
}

// Env is the note as environment variables for the notify command.
func (n Note) Env() []string {
	return []string{
		"LOOPGUARD_PENDING_ID=" + n.ID,
		"LOOPGUARD_PENDING_PREFIX=" + n.Prefix,
		"LOOPGUARD_TOOL=" + n.Tool,
		"LOOPGUARD_SUMMARY=" + n.Summary,
		"LOOPGUARD_REASON=" + n.Reason,
		"LOOPGUARD_SESSION=" + n.Session,
		"LOOPGUARD_PROJECT=" + n.Project,
		"LOOPGUARD_HELD_UNTIL=" + n.HeldUntil.UTC().Format(time.RFC3339),
		"LOOPGUARD_TITLE=" + n.Title(),
	}
}

// Notifier is how one machine tells its human. The zero value tells no one.
type Notifier struct {
	// Bus returns the session bus address for the desktop notification;
	// nil: no desktop notification.
	Bus func(ctx context.Context) (string, error)
	// Command is run with the note in its environment and on stdin; empty:
	// none.
	Command []string
	// Deadline bounds each notification (Deadline when zero).
	Deadline time.Duration
}

// Fire starts every notification in the background and returns at once.
// done is closed when all of them ended (each within the deadline); every
// failure is passed to failed, from its own goroutine.
func (nf Notifier) Fire(n Note, failed func(what string, err error)) (done <-chan struct{}) {
	d := nf.Deadline
	if d <= 0 {
		d = Deadline
	}
	var wg sync.WaitGroup
	run := func(what string, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			if err := f(ctx); err != nil && failed != nil {
				failed(what, err)
			}
		}()
	}
	if nf.Bus != nil {
		run("desktop", func(ctx context.Context) error {
			addr, err := nf.Bus(ctx)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
			_, err = Desktop(ctx, addr, n)
			return err
		})
	}
	if len(nf.Command) > 0 {
		run("command", func(ctx context.Context) error { return RunCommand(ctx, nf.Command, n) })
	}
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	return ch
}

// The freedesktop notification service.
const (
	dbusName  = "org.freedesktop.Notifications"
	dbusPath  = "/org/freedesktop/Notifications"
	dbusIface = "org.freedesktop.Notifications"
)

// Desktop shows n through the notification server on the session bus at
// addr and returns the id the server gave it.
func Desktop(ctx context.Context, addr string, n Note) (uint32, error) {
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("failed to connect to the session bus: %w", err)
	}
	defer conn.Close()
	obj := conn.Object(dbusName, dbusPath)
	body := n.Summary + "\nloopguard review (or loopguard approve " + n.Prefix + ")"
	var caps []string
	if err := obj.CallWithContext(ctx, dbusIface+".GetCapabilities", 0).Store(&caps); err != nil {
		var de dbus.Error
		if errors.As(err, &de) && (de.Name == "org.freedesktop.DBus.Error.ServiceUnknown" || de.Name == "org.freedesktop.DBus.Error.NameHasNoOwner" ||
			strings.HasPrefix(de.Name, "org.freedesktop.DBus.Error.Spawn")) {
			return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return 0, fmt.Errorf("the desktop notification server did not answer: %w", err)
	}
	for _, c := range caps {
		if c == "body-markup" {
			body = markupEscape(body)
		}
	}
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2)), "category": dbus.MakeVariant("im.received")}
	var id uint32
	err = obj.CallWithContext(ctx, dbusIface+".Notify", 0,
		"loopguard", uint32(0), "dialog-warning", n.Title(), body, []string{}, hints, int32(0)).Store(&id)
	if err != nil {
		return 0, fmt.Errorf("the desktop notification failed: %w", err)
	}
	return id, nil
}

// markupEscape escapes text for a server that reads the body as markup.
func markupEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&apos;", `"`, "&quot;").Replace(s)
}

// RunCommand runs argv (no shell: argv[0] is the program) with the note in
// LOOPGUARD_* environment variables and its text on stdin, in its own
// process group, killed with that group when ctx ends.
func RunCommand(ctx context.Context, argv []string, n Note) error {
	if len(argv) == 0 {
		return errors.New("empty notify command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), n.Env()...)
	cmd.Stdin = strings.NewReader(n.Text())
	cmd.Stdout, cmd.Stderr = nil, nil // /dev/null: the hook's stdout is its answer
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("failed to start the notify command %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("the notify command %s failed: %w", argv[0], err)
		}
		return nil
	case <-ctx.Done():
		kill(cmd)
		<-done
		return fmt.Errorf("the notify command %s did not finish within its deadline; killed", argv[0])
	}
}
