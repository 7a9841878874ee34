package main

import (
	"bytes"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/state"
)

// The texts of issue #38's rough messages, pinned.

// runCLI runs the command line args through the root command as Main
// does, and returns what it printed as its error.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	root := newRootCmd()
	root.SetArgs(args)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.Execute()
	if err == nil {
		t.Fatalf("%v: no error", args)
	}
	var b bytes.Buffer
	cli.PrintError(&b, err)
	return b.String()
}

// TestPendingIDMissing: approve, deny and show without an id say what the
// id is and where it comes from, not cobra's bare "requires at least 1
// arg(s)". Control: with an id, the argument check passes (the command
// then fails on what it does, not on its arguments).
func TestPendingIDMissing(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, verb := range []string{"approve", "deny", "show"} {
		got := runCLI(t, verb)
		want := "loopguard: error: " + verb + " needs the id of a pending call (or a unique prefix of it)\n" +
			"loopguard: hint: `loopguard pending` lists the calls waiting, with their ids; then: loopguard " + verb + " k3v9"
		if !strings.HasPrefix(got, want) || !strings.Contains(got, "loopguard: hint: or keep `loopguard review` open") {
			t.Errorf("%s without an id:\n%s\nwant it to start with:\n%s", verb, got, want)
		}
		if strings.Contains(got, "requires") || strings.Contains(got, "arg(s)") {
			t.Errorf("%s: cobra's bare text: %s", verb, got)
		}
	}
	if got := runCLI(t, "show", "k3v9", "q7de"); !strings.Contains(got, "accepts at most 1 arg") {
		t.Errorf("show with two ids: %s", got)
	}
	for _, verb := range []string{"deny", "show"} {
		if got := runCLI(t, verb, "k3v9"); strings.Contains(got, "needs the id") {
			t.Errorf("control: %s with an id refused its arguments: %s", verb, got)
		}
	}
}

// TestServePortTaken: serve on a taken port says so and names --listen
// with the next port, and the console a running serve already is.
// Control: a free port listens.
func TestServePortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback: %v", err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	_, _, _, err = serveListen(serveOptions{listen: addr})
	var b bytes.Buffer
	cli.PrintError(&b, err)
	want := "loopguard: error: " + addr + " is taken: another program, or another loopguard serve, listens there\n" +
		"loopguard: hint: if it is a loopguard serve, the console is up already: open http://localhost:" + port + "\n" +
		"loopguard: hint: else serve on a free port: loopguard serve --listen 127.0.0.1:" + strconv.Itoa(n+1) + "\n"
	if b.String() != want {
		t.Errorf("serve on a taken port:\n%s\nwant:\n%s", b.String(), want)
	}
	ln, _, _, err := serveListen(serveOptions{listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("control: a free port: %v", err)
	}
	ln.Close()
}

// TestWaitOverOneMeaning: "wait over" is what review's WAIT OVER is (the
// hook held the call until its wait ran out and told the agent it did not
// run), in pending --all, show and the console alike; a call whose hook
// went without an answer is "abandoned" (it left review's queue).
func TestWaitOverOneMeaning(t *testing.T) {
	st, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p := &state.Pending{ID: state.PendingID("s", "main", "Bash", strings.Repeat("a", 64)), Status: state.StatusOpen,
		Seen: now.Add(-time.Minute), HolderPID: 1, HeldUntil: now.Add(-time.Second)}
	if got := cli.StatusOf(st, p, now); got != "abandoned" || cli.WaitOver(st, p, now) {
		t.Errorf("a hold whose hook went without a word: %q (review's WAIT OVER %v)", got, cli.WaitOver(st, p, now))
	}
	if err := st.EndWait(p); err != nil {
		t.Fatal(err)
	}
	if got := cli.StatusOf(st, p, now); got != "wait over" || !cli.WaitOver(st, p, now) {
		t.Errorf("a hold that ran out, the agent told: %q (review's WAIT OVER %v)", got, cli.WaitOver(st, p, now))
	}
	// Control: while held, neither.
	p.HeldUntil = now.Add(time.Minute)
	if got := cli.StatusOf(st, p, now); !strings.HasPrefix(got, "held, ") {
		t.Errorf("held: %q", got)
	}
}
