package review

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/undo"
)

// TestReviewPlantedChangedPTY: a file the agent's file tools wrote in the
// held call's project after review showed the call (the eighty-sixth
// attack run's Makefile, rewritten after make was shown) makes the
// approval refused, and review shows the call again with the file named;
// the same keys then approve it (control).
func TestReviewPlantedChangedPTY(t *testing.T) {
	h := clitest.NewHarness(t)
	scr := h.StartWaiting()
	held := h.Hold(clitest.BashCall("s-planted", "rm -rf /var/tmp/x", "toolu_1"))
	id := scr.Expect(t, `pending ([a-z2-7]+) \(`)[1]
	digest := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, ` > `)
	h.Key("a")
	scr.Expect(t, `Type the first 4 characters of the digest to approve`)
	// The harness's hook names /tmp the project (CLAUDE_PROJECT_DIR).
	st, err := undo.Open(filepath.Join(h.Home, "state", "loopguard"), "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.NoteWrite("Write", "/tmp/Makefile", time.Now()); err != nil {
		t.Fatal(err)
	}
	h.Key(digest[:4] + "\r")
	scr.Expect(t, `changed in the project of pending call `+id+` is not what was shown with it`)
	scr.Expect(t, `showing it again`)
	scr.Expect(t, `file tools wrote these files so far`)
	scr.Expect(t, `Makefile`)
	scr.Expect(t, ` > `)
	h.Key("a")
	scr.Expect(t, `Type the first 4 characters of the digest to approve`)
	h.Key(digest[:4] + "\r")
	scr.Expect(t, `Approved `+id+`: grant`)
	clitest.WantAllowed(t, held, "the call shown again")
	h.Quit(`Review ended: 1 approved, 0 denied, 0 skipped`)
}

// TestReviewApprovalDatedWhenShownPTY: the eighty-eighth attack run
// rewrote, while the human read the call in review, a Makefile its
// warning named already: the words on screen did not change, review
// neither redrew nor refused, and the approval, dated at the keypress,
// ran the new Makefile. An approval covers the project as of when the
// warning on screen was computed: the held hook, given the approval,
// holds the call again and review shows it again; denied, the hook says
// so. (TestReviewPlantedChangedPTY is the control: nothing written after
// the call is shown, the approval runs it.)
func TestReviewApprovalDatedWhenShownPTY(t *testing.T) {
	h := clitest.NewHarness(t)
	// The harness's hook names /tmp the project (CLAUDE_PROJECT_DIR).
	st, err := undo.Open(filepath.Join(h.Home, "state", "loopguard"), "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.NoteWrite("Write", "/tmp/Makefile", time.Now()); err != nil {
		t.Fatal(err)
	}
	scr := h.StartWaiting()
	held := h.Hold(clitest.BashCall("s-dated", "rm -rf /var/tmp/x", "toolu_1"))
	id := scr.Expect(t, `pending ([a-z2-7]+) \(`)[1]
	digest := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, `file tools wrote these files so far`)
	scr.Expect(t, ` > `)
	// While the human reads: the same words.
	time.Sleep(20 * time.Millisecond)
	if err := st.NoteWrite("Write", "/tmp/Makefile", time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	h.Key("a")
	scr.Expect(t, `Type the first 4 characters of the digest to approve`)
	h.Key(digest[:4] + "\r")
	scr.Expect(t, `Approved `+id+`: grant`)
	scr.Expect(t, `pending `+id+` \(`)
	scr.Expect(t, ` > `)
	h.Key("d")
	scr.Expect(t, `Reason for the agent \(optional; Enter for none\):`)
	h.Key("\r")
	scr.Expect(t, `Denied `+id)
	clitest.WantRefused(t, held, "the call approved after its project changed unseen")
	h.Quit(`Review ended: 1 approved, 1 denied, 0 skipped`)
}
