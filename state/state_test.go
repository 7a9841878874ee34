package state

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/token"
)

// Child-process modes for the race and crash tests.
func TestMain(m *testing.M) {
	switch os.Getenv("LOOPGUARD_STATE_CHILD") {
	case "claim":
		os.Exit(childClaim())
	case "write":
		os.Exit(childWrite())
	}
	os.Exit(m.Run())
}

var testMaster = []byte("0123456789abcdef0123456789abcdef")

func testKeys(t testing.TB) *token.Keys {
	k, err := token.NewKeys(testMaster)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func exactGrant(t testing.TB, k *token.Keys, digest string) *token.Grant {
	g, err := k.Mint(token.Grant{Principal: "alice", Agent: "main", Session: "s1", Tool: "Bash",
		ArgHash: digest, Scope: token.ScopeCall, Expiry: time.Now().Add(time.Hour)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &g
}

func newStore(t *testing.T) *Store {
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpenRefusesUnsafeDirs(t *testing.T) {
	base := t.TempDir()
	loose := filepath.Join(base, "loose")
	os.Mkdir(loose, 0o755)
	os.Chmod(loose, 0o755)
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(real, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for name, dir := range map[string]string{"group-readable": loose, "symlink": link, "file": file, "relative": "rel/dir"} {
		_, err := Open(dir)
		var ue *UnsafeDirError
		if !errors.As(err, &ue) {
			t.Errorf("%s: Open = %v, want UnsafeDirError", name, err)
		}
	}
	// Control: a fresh dir is created 0700 and accepted.
	fresh := filepath.Join(base, "a", "fresh")
	if _, err := Open(fresh); err != nil {
		t.Fatalf("fresh dir: %v", err)
	}
	fi, _ := os.Stat(fresh)
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("fresh dir mode %v", fi.Mode())
	}
}

func TestGrantRoundTripAndClaim(t *testing.T) {
	s := newStore(t)
	k := testKeys(t)
	d := token.DigestOf([]byte("call"))
	g := exactGrant(t, k, d)
	p, err := s.PutGrant(g, GrantRecord{CallDigest: d})
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("grant file mode %v", fi.Mode())
	}
	gf, err := s.ExactGrant("s1", "main", "Bash", d)
	if err != nil || gf.Err != nil || gf.Grant.String() != g.String() {
		t.Fatalf("ExactGrant: %v %v", err, gf.Err)
	}
	if _, err := s.ExactGrant("s1", "main", "Bash", token.DigestOf([]byte("other"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("other digest: %v", err)
	}
	if err := s.ClaimExact("s1", "main", "Bash", d); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimExact("s1", "main", "Bash", d); !errors.Is(err, ErrClaimed) {
		t.Errorf("second claim: %v", err)
	}
	if !s.Consumed("s1", "main", "Bash", d) {
		t.Error("not marked consumed")
	}
	if _, err := s.ExactGrant("s1", "main", "Bash", d); !errors.Is(err, ErrNotFound) {
		t.Errorf("consumed grant still found: %v", err)
	}
}

func TestCorruptGrantIsNeverValid(t *testing.T) {
	s := newStore(t)
	k := testKeys(t)
	d := token.DigestOf([]byte("call"))
	p, _ := s.PutGrant(exactGrant(t, k, d), GrantRecord{})
	good, _ := os.ReadFile(p)
	for name, data := range map[string][]byte{
		"truncated":     good[:len(good)/2],
		"empty":         {},
		"extra field":   []byte(strings.Replace(string(good), `"v":1`, `"v":1,"x":2`, 1)),
		"trailing":      append(append([]byte{}, good...), `{}`...),
		"bad token":     []byte(strings.Replace(string(good), "lg1.", "lg1.x", 1)),
		"wrong version": []byte(strings.Replace(string(good), `"v":1`, `"v":2`, 1)),
	} {
		os.WriteFile(p, data, 0o600)
		gf, err := s.ExactGrant("s1", "main", "Bash", d)
		if err != nil || gf.Grant != nil || !errors.Is(gf.Err, ErrCorrupt) {
			t.Errorf("%s: grant=%v err=%v gf.Err=%v", name, gf.Grant, err, gf.Err)
		}
	}
	// A symlinked grant file is refused.
	os.Remove(p)
	other := filepath.Join(t.TempDir(), "g")
	os.WriteFile(other, good, 0o600)
	os.Symlink(other, p)
	if gf, _ := s.ExactGrant("s1", "main", "Bash", d); gf.Grant != nil {
		t.Error("followed a symlinked grant file")
	}
}

func TestPendingIdempotent(t *testing.T) {
	s := newStore(t)
	d := token.DigestOf([]byte("x"))
	id := PendingID("s1", "main", "Bash", d)
	if id != PendingID("s1", "main", "Bash", d) || id == PendingID("s2", "main", "Bash", d) {
		t.Fatal("pending id not a function of the call")
	}
	now := time.Now()
	p := &Pending{ID: id, Created: now, Seen: now, Session: "s1", Agent: "main", Tool: "Bash", Digest: d, Descriptor: []byte(`{}`), Reason: "no_grant"}
	if err := s.PutPending(p); err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(id, StatusDenied, "alice", "", now); err != nil {
		t.Fatal(err)
	}
	// A retry of the same call does not reopen a denied record.
	p2 := &Pending{ID: id, Created: now.Add(time.Minute), Seen: now.Add(time.Minute), Session: "s1", Agent: "main", Tool: "Bash", Digest: d, Descriptor: []byte(`{}`)}
	if err := s.PutPending(p2); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetPending(id)
	if err != nil || got.Status != StatusDenied || !got.Seen.Equal(p2.Seen) {
		t.Fatalf("got %+v, %v", got, err)
	}
	// An approved call that comes back (its approval used, expired or
	// revoked) needs a decision again.
	d2 := token.DigestOf([]byte("y"))
	id2 := PendingID("s1", "main", "Bash", d2)
	s.PutPending(&Pending{ID: id2, Seen: now, Session: "s1", Agent: "main", Tool: "Bash", Digest: d2, Descriptor: []byte(`{}`)})
	s.Decide(id2, StatusApproved, "alice", "g1", now)
	back := &Pending{ID: id2, Seen: now.Add(time.Hour), Session: "s1", Agent: "main", Tool: "Bash", Digest: d2, Descriptor: []byte(`{}`), Reason: "approval_consumed"}
	if err := s.PutPending(back); err != nil || back.Status != StatusOpen || back.Grant != "" || back.Reason != "approval_consumed" {
		t.Fatalf("approved call back: %+v %v", back, err)
	}
	list, errs := s.ListPending()
	if len(list) != 2 || len(errs) != 0 {
		t.Fatalf("list %d errs %v", len(list), errs)
	}
	if _, err := s.GetPending("../../x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("path-like id: %v", err)
	}
}

// childClaim plays every round: it waits for the round's go file, then races
// to claim that round's grant and prints the outcome.
func childClaim() int {
	s := &Store{Dir: os.Getenv("LOOPGUARD_STATE_DIR")}
	rounds, _ := strconv.Atoi(os.Getenv("LOOPGUARD_ROUNDS"))
	for r := 0; r < rounds; r++ {
		gofile := filepath.Join(s.Dir, "go-"+strconv.Itoa(r))
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Microsecond) {
			if _, err := os.Stat(gofile); err == nil {
				break
			}
			if time.Now().After(deadline) {
				fmt.Println("error: timed out waiting for", gofile)
				return 1
			}
		}
		err := s.ClaimExact("s1", "main", "Bash", token.DigestOf([]byte("round"+strconv.Itoa(r))))
		switch {
		case err == nil:
			fmt.Println(r, "won")
		case errors.Is(err, ErrClaimed):
			fmt.Println(r, "lost")
		default:
			fmt.Println("error:", err)
			return 1
		}
	}
	return 0
}

// 16 separate processes race for one single-use grant, round after round:
// exactly one wins each round.
func TestClaimRaceAcrossProcesses(t *testing.T) {
	rounds, procs := 100, 16
	if testing.Short() {
		rounds = 10
	}
	k := testKeys(t)
	s := newStore(t)
	lines := make([]*bufio.Scanner, procs)
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), "LOOPGUARD_STATE_CHILD=claim", "LOOPGUARD_STATE_DIR="+s.Dir, "LOOPGUARD_ROUNDS="+strconv.Itoa(rounds))
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		lines[i] = bufio.NewScanner(out)
		cmds[i] = c
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	for r := 0; r < rounds; r++ {
		if _, err := s.PutGrant(exactGrant(t, k, token.DigestOf([]byte("round"+strconv.Itoa(r)))), GrantRecord{}); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(s.Dir, "go-"+strconv.Itoa(r)), nil, 0o600)
		won := 0
		for i := range lines {
			if !lines[i].Scan() {
				t.Fatalf("round %d: child %d ended early", r, i)
			}
			switch line := lines[i].Text(); line {
			case strconv.Itoa(r) + " won":
				won++
			case strconv.Itoa(r) + " lost":
			default:
				t.Fatalf("round %d child %d: %q", r, i, line)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners", r, won)
		}
	}
}

// childWrite writes grants until killed.
func childWrite() int {
	s := &Store{Dir: os.Getenv("LOOPGUARD_STATE_DIR")}
	k, _ := token.NewKeys(testMaster)
	for i := 0; ; i++ {
		d := token.DigestOf([]byte(strconv.Itoa(i)))
		g, _ := k.Mint(token.Grant{Principal: "alice", Agent: "main", Session: "s1", Tool: "Bash",
			ArgHash: d, Scope: token.ScopeCall, Expiry: time.Now().Add(time.Hour)}, time.Now())
		if _, err := s.PutGrant(&g, GrantRecord{CallDigest: strings.Repeat("x", 1000)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i == 0 {
			fmt.Println("writing")
		}
	}
}

func TestCrashMidWriteLeavesNoInvalidGrant(t *testing.T) {
	k := testKeys(t)
	for round := 0; round < 20; round++ {
		s := newStore(t)
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), "LOOPGUARD_STATE_CHILD=write", "LOOPGUARD_STATE_DIR="+s.Dir)
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if !bufio.NewScanner(out).Scan() {
			t.Fatal("writer died before writing")
		}
		time.Sleep(time.Duration(1+round*3) * time.Millisecond)
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		all, err := s.AllGrants()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 {
			t.Fatalf("round %d: the writer wrote nothing before the kill", round)
		}
		for _, gf := range all {
			if gf.Err != nil {
				t.Fatalf("round %d: %s listed but invalid: %v", round, gf.Path, gf.Err)
			}
			if err := k.Verify(gf.Grant, token.Call{Session: "s1", Agent: "main", Tool: "Bash", Digest: gf.Grant.ArgHash}, time.Now()); err != nil {
				t.Fatalf("round %d: %s does not verify: %v", round, gf.Path, err)
			}
		}
	}
}

// A pending record keeps its call's exact bytes beside it; a record whose
// call is missing is corrupt, never shown as an empty call.
func TestPendingCallBytes(t *testing.T) {
	s := newStore(t)
	call := []byte(`{"input":{"to":"vendor\u003e"},"tool":"x"}`)
	d := token.DigestOf(call)
	id := PendingID("s1", "main", "x", d)
	now := time.Now()
	if err := s.PutPending(&Pending{ID: id, Seen: now, Session: "s1", Agent: "main", Tool: "x", Digest: d, Descriptor: call}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetPending(id)
	if err != nil || string(got.Descriptor) != string(call) || token.DigestOf(got.Descriptor) != got.Digest {
		t.Fatalf("call bytes changed: %q %v", got.Descriptor, err)
	}
	if meta, _ := os.ReadFile(filepath.Join(s.Dir, "pending", id+".json")); strings.Contains(string(meta), "vendor") {
		t.Errorf("the record repeats the call: %s", meta)
	}
	os.Remove(filepath.Join(s.Dir, "pending", id+".call"))
	if _, err := s.GetPending(id); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("record without its call: %v", err)
	}
}

func TestPrune(t *testing.T) {
	s := newStore(t)
	k := testKeys(t)
	now := time.Now()
	live, err := k.Mint(token.Grant{Principal: "alice", Agent: "main", Session: "s1", Tool: "Bash",
		ArgHash: token.DigestOf([]byte("live")), Scope: token.ScopeCall, Expiry: now.Add(5 * time.Hour)}, now)
	if err != nil {
		t.Fatal(err)
	}
	s.PutGrant(&live, GrantRecord{})
	gone, err := k.Mint(token.Grant{Principal: "alice", Agent: "main", Session: "s1", Tool: "Bash",
		ArgHash: token.DigestOf([]byte("old")), Scope: token.ScopeCall, Expiry: now.Add(time.Minute)}, now)
	if err != nil {
		t.Fatal(err)
	}
	s.PutGrant(&gone, GrantRecord{})
	used := exactGrant(t, k, token.DigestOf([]byte("used")))
	s.PutGrant(used, GrantRecord{})
	s.ClaimExact("s1", "main", "Bash", used.ArgHash)
	d := token.DigestOf([]byte("p"))
	id := PendingID("s1", "main", "Bash", d)
	s.PutPending(&Pending{ID: id, Seen: now, Session: "s1", Agent: "main", Tool: "Bash", Digest: d, Descriptor: []byte("{}")})
	fresh := token.DigestOf([]byte("fresh"))
	freshID := PendingID("s1", "main", "Bash", fresh)

	// Two hours later, with a one-hour cut-off: the expired grant, the
	// consumed one and the stale pending record go; the live grant and a
	// pending record seen just now stay.
	later := now.Add(2 * time.Hour)
	for _, p := range []string{s.consumedPath("s1", "main", "Bash", used.ArgHash),
		filepath.Join(s.Dir, "pending", id+".json"), filepath.Join(s.Dir, "pending", id+".call")} {
		os.Chtimes(p, now, now)
	}
	s.PutPending(&Pending{ID: freshID, Seen: later, Session: "s1", Agent: "main", Tool: "Bash", Digest: fresh, Descriptor: []byte("{}")})
	c, err := s.Prune(later, later.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if c.ExpiredGrants != 1 || c.Consumed != 1 || c.Pending != 1 {
		t.Fatalf("pruned %+v", c)
	}
	if gf, err := s.ExactGrant("s1", "main", "Bash", live.ArgHash); err != nil || gf.Err != nil {
		t.Errorf("live grant pruned: %v %v", err, gf.Err)
	}
	if _, err := s.GetPending(freshID); err != nil {
		t.Errorf("fresh pending record pruned: %v", err)
	}
	if _, err := s.GetPending(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("stale pending record kept: %v", err)
	}
}
