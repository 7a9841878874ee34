package review

import (
	"errors"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/token"
)

// The review console's rendering of another machine's call (review
// --backend vault), its approval line, an error and the window title,
// with every field of the call and of what the machine says filled with
// control bytes, OSC 52, bidi and zero-width characters (clitest.Attack),
// reaches the terminal escaped: not one raw byte. The other renderings
// are checked in the root command's TestEveryRenderingEscapesEveryField.
func TestConsoleEscapesEveryField(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	now := time.Now()
	for _, h := range clitest.HostilePendings(t, now) {
		p, what := h.P, h.What
		tp := clitest.HostileTeamPending(t, p, now)
		head, says, body := approve.TeamParts(tp)

		// The console: showParts on a terminal stand-in, the approval
		// line, an error.
		f, err := os.CreateTemp(t.TempDir(), "tty")
		if err != nil {
			t.Fatal(err)
		}
		c := &console{tty: f, fd: fdOf(f), pal: paletteFor(f)}
		showParts(c, p, head, says, body, true)
		g := token.Grant{Principal: clitest.Attack, Session: clitest.Attack, Agent: clitest.Attack, Tool: clitest.Attack, ArgHash: p.Digest, Scope: token.ScopeCall, Expiry: now}
		approve.Printed(f, clitest.Attack, &g, "The waiting hook on "+approve.MachineName(tp)+" runs it once.")
		cli.PrintError(f, cli.WithHint(errors.New(clitest.Attack), clitest.Attack))
		(&round{c: c, titles: true}).title(clitest.Attack)
		f.Close()
		out, _ := os.ReadFile(f.Name())
		// The title's own OSC and BEL are loopguard's; what is inside them
		// is checked with the rest.
		title := regexp.MustCompile("\x1b\\]2;([^\a]*)\a")
		if !title.Match(out) {
			t.Fatal("no title was set")
		}
		clitest.TerminalSafe(t, what("review --backend vault"), string(title.ReplaceAll(out, []byte("$1"))))
	}
}
