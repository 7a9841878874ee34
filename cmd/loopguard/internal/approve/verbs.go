package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Options is what approve needs: its flags, terminal, store and
// clock. Review sets Shown and ConfirmLen for the call it has on screen.
type Options struct {
	TTY   *os.File
	Store *state.Store
	Now   func() time.Time
	IDs   []string      // pending ids, resolved
	TTL   time.Duration // --ttl
	// Shown is the digest of the call the review console showed (one ID):
	// it is not shown again, and approved only if unchanged.
	Shown string
	// ShownPlanted is the planted warning the review console showed
	// with it (state.Pending.Planted): the approval is refused when the
	// warning is another now (Exact).
	ShownPlanted string
	// ShownPlantedAt is when ShownPlanted was computed: the approval
	// covers the project as of then (hooks.ApproveWith).
	ShownPlantedAt time.Time
	// ConfirmLen is how many characters of the digest the human types; 0
	// (only with Shown): one key approved the call on screen.
	ConfirmLen int
}

// Run reviews and approves the pending calls o.IDs on o.TTY, one
// after the other. It is shared with the review console, which passes the
// digest of the call it showed (Shown, so the call is not shown again) and a
// shorter confirmation, or none (ConfirmLen 0: one key approved the call on
// screen).
func Run(ctx context.Context, o *Options) error {
	for _, id := range o.IDs {
		if err := approveOne(ctx, o, id, o.Now()); err != nil {
			return err
		}
	}
	return nil
}

// approveOne reviews and approves pending call id as of now.
func approveOne(ctx context.Context, o *Options, id string, now time.Time) error {
	tty, st, shown, confirmLen, ttl := o.TTY, o.Store, o.Shown, o.ConfirmLen, o.TTL
	p, err := st.GetPending(id)
	if err != nil {
		return cli.WithHint(err, "list pending calls with: loopguard pending")
	}
	// A human at tty has it open: no flood of new calls drops it meanwhile.
	_ = st.Pin(id, time.Now())
	if confirmLen <= 0 && shown == "" {
		return errors.New("an approval without a typed confirmation is only for the call review has on screen")
	}
	if shown != "" && p.Digest != shown {
		return cli.WithHint(fmt.Errorf("pending call %s changed since it was shown (digest %.12s, shown %.12s): refusing to approve", id, p.Digest, shown),
			"review it again: loopguard show "+id)
	}
	if shown != "" {
		p.SetPlanted(o.ShownPlanted)
		p.PlantedAt = o.ShownPlantedAt
	} else {
		// What jailed calls and file tools changed, as of now: the
		// approval is refused should it be another by then (Exact).
		hooks.RefreshPlanted(st, p)
	}
	if p.Status == state.StatusApproved {
		fmt.Fprintf(tty, "Note: %s was approved before; approving it again mints a new single-use grant.\n", id)
	}
	if token.DigestOf(p.Descriptor) != p.Digest {
		return fmt.Errorf("%w: pending record %s: its digest does not match its call", state.ErrCorrupt, id)
	}
	// The key (keyring or Vault) is checked before the human types
	// anything, and names who approves.
	m, err := Load(ctx)
	if err != nil {
		return err
	}
	if shown == "" {
		// With the store: a drift shows what changed since the approval.
		// Folded at the terminal's width (cli.Fold): no row of the call
		// passes for a line of its own.
		fmt.Fprint(tty, cli.FoldTo(tty, cli.RenderPending(st, p, false)))
	}
	if confirmLen > 0 {
		if err := Confirm(tty, p, m.Principal, ttl, confirmLen); err != nil {
			return err
		}
	}
	// Said as of now: a held call's hook may be gone a moment after the
	// approval lands, having run it.
	next := Next(p, time.Now())
	g, err := Exact(st, m, p, ttl, now)
	if err != nil {
		return err
	}
	Printed(tty, p.ID, g, next)
	return nil
}

// DenyOptions is what deny needs: its flags, writer, store and clock.
type DenyOptions struct {
	Out   io.Writer
	Store *state.Store
	Now   func() time.Time
	IDs   []string // pending ids, resolved
	Note  string   // --note: shown to the agent
}

// DenyRun refuses the pending calls o.IDs, one after the other.
func DenyRun(o *DenyOptions) error {
	for _, id := range o.IDs {
		if err := denyOne(o, id, o.Now()); err != nil {
			return err
		}
	}
	return nil
}

func denyOne(o *DenyOptions, id string, now time.Time) error {
	out, st, note := o.Out, o.Store, o.Note
	p, err := st.GetPending(id)
	if err != nil {
		return cli.WithHint(err, "list pending calls with: loopguard pending")
	}
	if len(note) > hooks.MaxNote {
		return fmt.Errorf("--note is %d bytes; at most %d", len(note), hooks.MaxNote)
	}
	if err := Deny(st, nil, p, note, now); err != nil {
		return err
	}
	fmt.Fprintf(out, "Denied %s. The agent will be told a human refused it.\n", id)
	return nil
}
