package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/state"
)

// Every field of every rendering a reviewer's terminal gets (show,
// approve, review, pending, the errors; team pending and team approve in
// the team package, review --backend vault's console in the review
// package), filled with control bytes, OSC 52, bidi and
// zero-width characters, reaches the terminal escaped: not one raw byte.
func TestEveryRenderingEscapesEveryField(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	now := time.Now()
	for _, h := range clitest.HostilePendings(t, now) {
		p, what := h.P, h.What

		// show, approve, review: the one rendering, both lengths.
		clitest.TerminalSafe(t, what("show"), cli.RenderPending(nil, p, false))
		clitest.TerminalSafe(t, what("show --full"), cli.RenderPending(nil, p, true))

		// pending: the table and --json.
		dir := t.TempDir()
		os.Chmod(dir, 0o700)
		st, err := state.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		stored := *p
		stored.ID = state.PendingID(p.Session, p.Agent, p.Tool, p.Digest)
		stored.Status = state.StatusOpen
		if err := st.PutPending(&stored); err != nil {
			t.Fatal(err)
		}
		for _, asJSON := range []bool{false, true} {
			var out, errOut bytes.Buffer
			if err := pendingRun(&pendingOptions{out: &out, errOut: &errOut, store: st, now: func() time.Time { return now }, json: asJSON, all: true}); err != nil {
				t.Fatal(err)
			}
			clitest.TerminalSafe(t, what("pending"), out.String()+errOut.String())
		}

	}
}
