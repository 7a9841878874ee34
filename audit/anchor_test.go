package audit

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// anchored returns a log with an identity and n sealed entries, and the
// anchor of its head.
func anchored(t *testing.T, n int) (*Log, string) {
	t.Helper()
	l := newLog(t)
	if _, err := l.NewID(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1, n)
	if err := l.Seal(testKey); err != nil {
		t.Fatal(err)
	}
	rec, err := l.Anchor(testKey)
	if err != nil {
		t.Fatal(err)
	}
	return l, rec
}

func wantLost(t *testing.T, what string, err error, why string) {
	t.Helper()
	var le *LostError
	if !errors.As(err, &le) || !errors.Is(err, ErrStateLost) || le.Reason() != ReasonStateLost || !strings.Contains(le.Why, why) {
		t.Errorf("%s: CheckAnchor = %v, want a LostError saying %q", what, err, why)
	}
}

// TestAnchorKeepsTheDirectory: the anchor names the state directory's
// identity and a sealed line of its log. The control (the directory as
// anchored, and as it grew since) passes; a directory removed and made
// again, another one in its place, one rolled back to an older copy, and a
// record made under another key or edited, each fail as lost.
func TestAnchorKeepsTheDirectory(t *testing.T) {
	l, rec := anchored(t, 3)
	info, err := l.CheckAnchor(testKey, rec)
	if err != nil || info.Seq != 3 {
		t.Fatalf("control: %+v %v", info, err)
	}
	// Grown since: still the same directory.
	appendN(t, l, 4, 2)
	if _, err := l.CheckAnchor(testKey, rec); err != nil {
		t.Fatalf("control, grown: %v", err)
	}
	if !l.Kept() {
		t.Error("Kept: false for a set-up directory")
	}

	// Rolled back: a copy of the directory taken before the anchored seal,
	// put back (its own head and seal verify: only the anchor can tell).
	r, _ := anchored(t, 1)
	older := filepath.Join(t.TempDir(), "audit")
	cpDir(t, r.dir, older)
	appendN(t, r, 2, 2)
	if err := r.Seal(testKey); err != nil {
		t.Fatal(err)
	}
	later, err := r.Anchor(testKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CheckAnchor(testKey, later); err != nil {
		t.Fatalf("control, before the roll-back: %v", err)
	}
	if rep, err := Open(older).Verify(testKey); err != nil || !rep.OK() {
		t.Fatalf("the older copy does not verify on its own: %+v %v", rep, err)
	}
	_, err = Open(older).CheckAnchor(testKey, later)
	wantLost(t, "rolled back", err, "restored from an older copy")

	// Replaced: another state directory, with its own identity.
	l3, _ := anchored(t, 5)
	wantLost(t, "replaced", checkAs(t, l3, rec), "it was replaced")

	// Removed and made again by the hook: no identity, no head.
	gone := Open(filepath.Join(t.TempDir(), "audit"))
	appendN(t, gone, 1, 2)
	if gone.Kept() {
		t.Error("Kept: true for a directory the hook made again")
	}
	_, err = gone.CheckAnchor(testKey, rec)
	wantLost(t, "removed", err, "it was removed")

	// Another key, or an edited record.
	_, err = l.CheckAnchor(otherKey, rec)
	wantLost(t, "other key", err, "not made under this key")
	_, err = l.CheckAnchor(testKey, strings.Replace(rec, `"seq":3`, `"seq":2`, 1))
	wantLost(t, "edited", err, "not made under this key")
	_, err = l.CheckAnchor(testKey, "{}")
	wantLost(t, "malformed", err, "not a valid record")
}

// checkAs checks rec against a copy of the directory of other, put in
// place of the anchored one (the keyring's anchor stays; the directory is
// what changed).
func checkAs(t *testing.T, other *Log, rec string) error {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "audit")
	cpDir(t, other.dir, dir)
	_, err := Open(dir).CheckAnchor(testKey, rec)
	return err
}

func cpDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

// TestStartAnchorHoldsForAnyLog: the anchor of a chain's start, written
// before a restart, names the identity only: the old log and the new one
// both hold it.
func TestStartAnchorHoldsForAnyLog(t *testing.T) {
	l, _ := anchored(t, 2)
	id, _ := l.ID()
	start, err := StartAnchor(testKey, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.CheckAnchor(testKey, start); err != nil {
		t.Fatalf("before the restart: %v", err)
	}
	if _, err := l.Restart(testKey); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CheckAnchor(testKey, start); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if got, _ := l.ID(); got != id {
		t.Errorf("the restart changed the identity: %s, was %s", got, id)
	}
	// A fresh identity is another directory for the old anchor.
	if _, err := l.NewID(); err != nil {
		t.Fatal(err)
	}
	_, err = l.CheckAnchor(testKey, start)
	wantLost(t, "new identity", err, "it was replaced")
}
