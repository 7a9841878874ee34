package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/present"
)

// approved_call_changed is only for a call that plausibly retries the
// approved one; an unrelated call after an approval gets the ordinary
// reason. Each row's control is a retry with one argument changed.
func TestChangedOnlyForRetries(t *testing.T) {
	h := newHarness(t)
	bash := h.fixture("pretooluse-bash.json") // echo hello > greeting.txt
	approved := h.decide(bash)
	h.approve(approved)
	setCmd := func(cmd string) map[string]any {
		return withInput(bash, "command", cmd)
	}
	for _, cmd := range []string{"ls -l", "git status", "go test ./..."} {
		d := h.decide(setCmd(cmd))
		expect(t, "unrelated "+cmd, d, Deny, ReasonNoGrant)
		if strings.Contains(d.Message, approved.Pending) {
			t.Errorf("%s: the deny names the approved call: %q", cmd, d.Message)
		}
	}
	// Control: the same program with another argument is a retry, and the
	// reason names what was approved.
	d := h.decide(setCmd("echo hello > greeting2.txt"))
	expect(t, "changed argument", d, Deny, ReasonCallChanged)
	if !strings.Contains(d.Message, "pending "+approved.Pending) || !strings.Contains(d.Message, "echo hello > greeting.txt") {
		t.Errorf("the reason does not name the approved call: %q", d.Message)
	}
	if p, err := h.Store.GetPending(d.Pending); err != nil || p.Approved != approved.Pending {
		t.Errorf("the pending record does not link the approved call: %v %+v", err, p)
	}

	// The approval keeps what it resembles: with its pending record gone
	// (pruned, or rewritten), a retry is still told apart from an
	// unrelated call.
	if err := h.Store.RemovePending(approved.Pending); err != nil {
		t.Fatal(err)
	}
	expect(t, "retry, record gone", h.decide(setCmd("echo hello > greeting3.txt")), Deny, ReasonCallChanged)
	expect(t, "unrelated, record gone", h.decide(setCmd("git log")), Deny, ReasonNoGrant)

	// File tools: another file is unrelated; the same file is a retry.
	edit := h.fixture("pretooluse-edit.json")
	target := input(edit)["file_path"].(string)
	os.WriteFile(target, []byte("func main() { foo() }\n"), 0o644)
	other := filepath.Join(filepath.Dir(target), "other.go")
	os.WriteFile(other, []byte("func main() { foo() }\n"), 0o644)
	h.approve(h.decide(edit))
	expect(t, "edit of another file", h.decide(withInput(edit, "file_path", other)), Deny, ReasonNoGrant)
	expect(t, "control: the same file, another edit", h.decide(withInput(edit, "new_string", "baz()")), Deny, ReasonCallChanged)
	expect(t, "control: the approved edit", h.decide(edit), Allow, ReasonExactGrant)
}

// Each reason's first line is true of it: a used approval's retry is not
// "held for a human's approval" as if never approved.
func TestFirstLineTrueForReason(t *testing.T) {
	h := newHarness(t)
	call := h.fixture("pretooluse-bash.json")
	d := h.decide(call)
	first, _, _ := strings.Cut(d.Message, "\n")
	if !strings.Contains(first, "no_grant: held for a human's approval") { // control
		t.Errorf("no_grant first line: %q", first)
	}
	h.approve(d)
	expect(t, "approved", h.decide(call), Allow, ReasonExactGrant)
	d = h.decide(call)
	expect(t, "used", d, Deny, ReasonConsumed)
	first, _, _ = strings.Cut(d.Message, "\n")
	if strings.Contains(first, "held for a human's approval") || !strings.Contains(first, "already used") ||
		!strings.Contains(first, "loopguard review") || !strings.Contains(first, d.Pending) {
		t.Errorf("approval_consumed first line: %q", first)
	}
	for _, r := range []string{ReasonConsumed, ReasonExpired, ReasonCallChanged, ReasonTargetDrift} {
		if l := heldLine(r, "x", false); strings.Contains(l, "held for a human's approval") || !strings.HasPrefix(l, "loopguard: "+r+": ") {
			t.Errorf("%s: %q", r, l)
		}
	}
}

// A drift links the approved call, whose approval kept the file as it was:
// review can show what changed since.
func TestDriftLinksApproval(t *testing.T) {
	h := newHarness(t)
	call := h.fixture("pretooluse-edit.json")
	target := input(call)["file_path"].(string)
	os.WriteFile(target, []byte("func foo() {} // v7\n"), 0o644)
	first := h.decide(call)
	h.approve(first)
	snap, err := h.Store.Snapshot(first.Pending)
	if err != nil || string(snap) != "func foo() {} // v7\n" {
		t.Fatalf("no snapshot of the approved file: %q %v", snap, err)
	}
	os.WriteFile(target, []byte("func foo() {} // v8\n"), 0o644)
	d := h.decide(call)
	expect(t, "drift", d, Deny, ReasonTargetDrift)
	p, err := h.Store.GetPending(d.Pending)
	if err != nil || p.Approved != first.Pending {
		t.Fatalf("drift does not link the approval: %v %+v", err, p)
	}
	if got := present.DriftChanges(p.Descriptor, snap, false); !strings.Contains(got, "-func foo() {} // v7\n+func foo() {} // v8\n") {
		t.Errorf("drift diff:\n%s", got)
	}
}

// A held file call keeps the file as the call recorded it, what the human
// is shown the edit against should the file change before they decide
// (present.Changes; the eighty-fourth attack run); the retry of a held
// call keeps the copy it has, and a call that makes a file keeps none.
func TestHeldCallKeepsItsFile(t *testing.T) {
	h := newHarness(t)
	call := h.fixture("pretooluse-edit.json")
	target := input(call)["file_path"].(string)
	os.WriteFile(target, []byte("func foo() {} // v7\n"), 0o644)
	d := h.decide(call)
	expect(t, "held", d, Deny, ReasonNoGrant)
	snap, err := h.Store.Snapshot(d.Pending)
	if err != nil || string(snap) != "func foo() {} // v7\n" {
		t.Fatalf("no copy of the held call's file: %q %v", snap, err)
	}
	os.WriteFile(target, []byte("func foo() {} // v8\n"), 0o644)
	p, err := h.Store.GetPending(d.Pending)
	if err != nil {
		t.Fatal(err)
	}
	if got := present.Changes(p.Descriptor, false, present.Client{}, snap); !strings.Contains(got, "-func foo() {} // v7\n") || strings.Contains(got, "v8") {
		t.Errorf("the held call is not shown against its kept file:\n%s", got)
	}
	os.WriteFile(target, []byte("func foo() {} // v7\n"), 0o644)
	expect(t, "the same call again", h.decide(call), Deny, ReasonNoGrant)
	if again, _ := h.Store.Snapshot(d.Pending); string(again) != string(snap) {
		t.Errorf("the copy changed with the retry: %q", again)
	}
	os.Remove(target)
	absent := h.decide(call)
	if _, err := h.Store.Snapshot(absent.Pending); err == nil {
		t.Error("a copy kept for a call whose file did not exist")
	}
}
