//go:build unix

package team

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

// team approve's rendering of another machine's call and team pending's
// table, every field of the call and of what the machine says filled
// with control bytes, OSC 52, bidi and zero-width characters
// (clitest.Attack), reach the terminal escaped: not one raw byte. The
// other renderings are checked in the root command's
// TestEveryRenderingEscapesEveryField.
func TestTeamEscapesEveryField(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	now := time.Now()
	for _, h := range clitest.HostilePendings(t, now) {
		p, what := h.P, h.What
		// The team: a record as TeamGet returns it, with every field of
		// what the machine says hostile too.
		tp := clitest.HostileTeamPending(t, p, now)
		head, says, body := approve.TeamParts(tp)
		clitest.TerminalSafe(t, what("team approve"), head+says+"\n"+body)
		var tbl bytes.Buffer
		bad := vault.TeamPending{Key: clitest.Attack, Err: errors.New(clitest.Attack)}
		if err := teamTable(&tbl, []vault.TeamPending{*tp, bad}, now); err != nil {
			t.Fatal(err)
		}
		clitest.TerminalSafe(t, what("team pending"), tbl.String())
	}
}
