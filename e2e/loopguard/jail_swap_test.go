//go:build linux

package loopguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/testfs"
)

// TestFileToolsThroughASwappedDirectory: under init's defaults the jail
// grant runs a background Bash call without a decision, and Edit(**) lets
// the file tools write the project without one. The attack: the
// background call swaps src/lnk between the real directory and a link to
// a directory outside the project, again and again for 20 s (the client
// waits for it before it exits), while the agent writes src/lnk/fN.txt
// 30 times. The hook resolves the path when it runs and the client
// writes later; Claude Code 2.1.328 checks again right before it writes,
// and still wrote one of the 30 outside the project (sandbox on) before
// the jail lost the right to make links. What holds now is the kernel:
// the jailed call's every ln -s is refused (it counts the links it made:
// none). The controls: the background call ran its rounds (with the
// sandbox on it did not run at all before PostToolUse waited for its
// ticket's claim: ticket_used), and the writes that found the directory
// landed in the project.
func TestFileToolsThroughASwappedDirectory(t *testing.T) {
	t.Parallel()
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (the jail needs %d)", confine.ABI(), confine.MinABI)
	}
	for _, sandbox := range []bool{true, false} {
		name := "sandbox"
		if !sandbox {
			name = "no sandbox"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			swapWhileWriting(t, sandbox)
		})
	}
}

func swapWhileWriting(t *testing.T, sandbox bool) {
	e := newJailEnv(t, sandbox)
	if err := os.MkdirAll(e.path("src/lnk"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	// Each round: the directory moved aside and a link in its place
	// (counted in links when made), then the directory back (unless the
	// client's write made a new one meanwhile); every round counted in
	// flips.
	flipper := fmt.Sprintf(`cd src && end=$((SECONDS+20)) && while [ $SECONDS -lt $end ]; do rm -rf lnk.real; mv -T lnk lnk.real 2>/dev/null; ln -s %s lnk 2>/dev/null && echo >> links; sleep 0.001; [ -L lnk ] && rm -f lnk; [ -e lnk ] || mv -T lnk.real lnk; sleep 0.003; echo >> flips; done`, shQuote(outside))
	// Project code the agent wrote earlier: an ln -s in the command
	// itself is held before it runs (policy.JailLinks); what the analysis
	// does not read, the kernel decides.
	testfs.Write(t, e.path("tools/flip.sh"), []byte(flipper+"\n"), 0o644)
	turns := []claudetest.Turn{claudetest.Tools(claudetest.Call("toolu_sw0", "Bash", map[string]any{
		"command": "bash tools/flip.sh", "description": "flip", "run_in_background": true}))}
	const writes = 30
	for i := range writes {
		turns = append(turns, claudetest.Tools(writeCall(fmt.Sprintf("toolu_sw%d", i+1), e.path(fmt.Sprintf("src/lnk/f%d.txt", i)), "written\n")))
	}
	turns = append(turns, claudetest.Text("done"))
	api := e.runFor(3*time.Minute, claudetest.Script{Main: turns}, nil)
	wantRan(t, api, "toolu_sw0")
	ok := 0
	for i := range writes {
		if r := result(t, api, fmt.Sprintf("toolu_sw%d", i+1)); !r.IsError {
			ok++
		}
	}
	ents, _ := os.ReadDir(outside)
	count := func(name string) int {
		b, _ := os.ReadFile(e.path(filepath.Join("src", name)))
		return strings.Count(string(b), "\n")
	}
	t.Logf("%d flips, %d links made; %d of %d writes ran; %d files outside", count("flips"), count("links"), ok, writes, len(ents))
	if len(ents) != 0 {
		t.Errorf("a write landed outside the project, through the swapped directory: %v", ents)
	}
	if n := count("links"); n != 0 {
		t.Errorf("the jailed background call made a link in the project %d times", n)
	}
	if count("flips") < 10 {
		t.Errorf("the background call ran %d rounds (control: the attack did not run)", count("flips"))
	}
	if ok == 0 {
		t.Error("no write ran (control: Edit(**) lets the file tools write the project)")
	}
}
