package loopguard

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// The default install, on the real client: a Bash call is held, `loopguard
// review` approves it with a, 4 digest characters and Enter, and it runs in
// the same turn with no retry; a second call is approved and granted from
// review (g), and the next matching call runs without a decision, also
// after a restart of the client (a new session in the same project). Each
// approval costs the model no extra request.
func TestReviewDefaultFlowRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The default install: init without --wait holds calls for review.
	if _, err := e.g.Run(e.ctx, e.Dir, "init", "--project", "--no-jail"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	cmd := e.g.Command(ctx, e.g.Home, "review")
	tm, err := startOnPTY(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tm.close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if _, err := tm.waitFor(ctx, "Waiting for calls"); err != nil {
		t.Fatal(err)
	}
	typed := 0
	key := func(s string) error { typed += len(s); return tm.write(s) }
	// nth waits until the screen shows s n times and returns the screen.
	nth := func(s string, n int) (string, error) {
		sc, err := tm.waitUntil(ctx, fmt.Sprintf("%q %d times", s, n), func(sc string) bool { return strings.Count(sc, s) >= n })
		if err != nil {
			err = fmt.Errorf("%q did not appear %d times: %w\n%s", s, n, err, sc)
		}
		return sc, err
	}
	// prompt waits for the n-th key line and the prompt after it (keys
	// typed before a prompt is drawn are thrown away) and returns the
	// screen.
	prompt := func(n int) (string, error) {
		sc, err := tm.waitUntil(ctx, fmt.Sprintf("prompt %d", n), func(sc string) bool {
			i := nthIndex(sc, "[q]uit", n)
			return i >= 0 && strings.Contains(sc[i:], " > ")
		})
		if err != nil {
			err = fmt.Errorf("prompt %d did not appear: %w\n%s", n, err, sc)
		}
		return sc, err
	}
	digestRE := regexp.MustCompile(`digest:\s+([0-9a-f]{64})`)
	lastDigest := func(sc string) string {
		m := digestRE.FindAllStringSubmatch(sc, -1)
		if len(m) == 0 {
			return ""
		}
		return m[len(m)-1][1]
	}
	var perApproval []int
	human := make(chan error, 1)
	go func() {
		human <- func() error {
			// First call: approve once.
			if _, err := nth("HELD: the agent waits", 1); err != nil {
				return err
			}
			sc, err := prompt(1)
			if err != nil {
				return err
			}
			// An ordinary call: one key approves it (the terminal is the
			// human's; the agent cannot type there).
			if strings.Contains(sc, "SECOND LOOK") || lastDigest(sc) == "" {
				return fmt.Errorf("the first call is not shown as an ordinary call:\n%s", sc)
			}
			before := typed
			if err := key("a"); err != nil {
				return err
			}
			if _, err := nth("The held call runs now.", 1); err != nil {
				return err
			}
			perApproval = append(perApproval, typed-before)
			// Second call: approve and grant the narrowest rule.
			if _, err := nth("HELD: the agent waits", 2); err != nil {
				return err
			}
			if _, err := nth("[g]rant Bash(ls -a)@", 1); err != nil {
				return err
			}
			if _, err := prompt(2); err != nil {
				return err
			}
			before = typed
			if err := key("g"); err != nil {
				return err
			}
			sc, err = nth("Type the first 4 characters of the digest to approve and grant", 1)
			if err != nil {
				return err
			}
			if err := key(lastDigest(sc)[:4] + "\r"); err != nil {
				return err
			}
			if _, err := nth("The held call runs now.", 2); err != nil {
				return err
			}
			perApproval = append(perApproval, typed-before)
			return nil
		}()
	}()
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_rv1", "echo held >> runs.txt")),
		claudetest.Tools(bash("toolu_rv2", "ls -a")),
		claudetest.Tools(bash("toolu_rv3", "ls -a")), // covered by the grant
		claudetest.Text("done"),
	}}, nil)
	if err := <-human; err != nil {
		t.Fatalf("the human at review: %v", err)
	}
	wantRan(t, api, "toolu_rv1")
	wantRan(t, api, "toolu_rv2")
	wantRan(t, api, "toolu_rv3")
	if got := e.read("runs.txt"); got != "held\n" {
		t.Errorf("runs.txt = %q; want the held call to have run once", got)
	}
	// One request per scripted turn: no retry turn for any approval.
	if n := len(api.Requests()); n != 4 {
		t.Errorf("the model was asked %d times; want 4 (no retries)", n)
	}
	// One key approves an ordinary call; approve-and-grant asks for the
	// digest shown (g, 4 characters, Enter).
	if len(perApproval) != 2 || perApproval[0] != 1 || perApproval[1] > 6 {
		t.Errorf("keystrokes per approval in review: %v; want 1, then at most 6", perApproval)
	}
	t.Logf("keystrokes per approval in review: %v; model requests: %d for 3 calls (2 decisions)", perApproval, len(api.Requests()))
	last, err := e.g.LastDecision(e.ctx, "PreToolUse")
	if err != nil || last.Reason != "scoped_grant" {
		t.Errorf("the third call was not allowed by the grant: %+v %v", last, err)
	}

	// A restart: a new client process and session in the same project.
	// The grant (bound to the project) covers the call; nothing is held.
	first := last.Session
	api2, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_rv4", "ls -a")),
		claudetest.Text("done"),
	}}, nil, "--session-id", sessionID(t))
	wantRan(t, api2, "toolu_rv4")
	last, err = e.g.LastDecision(e.ctx, "PreToolUse")
	if err != nil || last.Reason != "scoped_grant" || last.Session == first {
		t.Errorf("after the restart (session %s before): %+v %v", first, last, err)
	}
	if n := len(api2.Requests()); n != 2 {
		t.Errorf("after the restart the model was asked %d times; want 2", n)
	}
}

// nthIndex is the index of the n-th occurrence of sub in s, -1 if fewer.
func nthIndex(s, sub string, n int) int {
	at := -1
	for ; n > 0; n-- {
		i := strings.Index(s[at+1:], sub)
		if i < 0 {
			return -1
		}
		at += 1 + i
	}
	return at
}
