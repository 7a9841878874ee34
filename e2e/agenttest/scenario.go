//go:build unix

package agenttest

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The scenarios every client's package runs, each against one Env of an
// Agent. What a client does differently is an Agent field or an argument,
// so that a reader sees it at the call.

// ShellCallNeedsApproval: without approval a shell call is refused and
// does not run, and the model is told how the user approves; approved from
// a terminal, the identical call runs once; a changed call does not, and
// neither does a second identical retry.
func ShellCallNeedsApproval(e *Env) {
	t := e.T
	t.Helper()
	const cmd = "echo one >> runs.txt"
	api := e.Run(Script{Commands: []string{cmd, "echo two >> runs.txt", cmd, cmd}, Between: e.ApproveAfter(0)})
	WantBlocked(t, api, 0, "no_grant")
	WantBlocked(t, api, 1, "approved_call_changed")
	WantRan(t, api, 2, e.Agent.Refused...)
	WantBlocked(t, api, 3, "approval_consumed")
	e.WantRanOnce()
	if !strings.Contains(api.Output(0), "loopguard approve ") {
		t.Errorf("the model was not told how the user approves: %q", api.Output(0))
	}
}

// WantRan checks that the client's report of call i has none of the words
// that say it did not run.
func WantRan(t *testing.T, api *FakeAPI, i int, refused ...string) {
	t.Helper()
	out := api.Output(i)
	for _, w := range refused {
		if strings.Contains(out, w) {
			t.Errorf("the approved call was not run: %q", out)
			return
		}
	}
}

// WantRanOnce checks that `echo one >> runs.txt`, the approved command,
// ran exactly once in the project.
func (e *Env) WantRanOnce() {
	e.T.Helper()
	if got := e.Read("runs.txt"); got != "one\n" {
		e.T.Errorf("runs.txt = %q; want the approved command to have run exactly once", got)
	}
}

// BlockedWith is a check that the client reported the first call as
// blocked by loopguard with reason.
func BlockedWith(reason string) func(*testing.T, *FakeAPI) {
	return func(t *testing.T, api *FakeAPI) {
		t.Helper()
		WantBlocked(t, api, 0, reason)
	}
}

// HookThatCannotStartBlocks: the registration names a binary that is not
// there (moved, deleted); the call does not run, and blocked checks what
// the client reported.
func HookThatCannotStartBlocks(e *Env, blocked func(*testing.T, *FakeAPI)) {
	t := e.T
	t.Helper()
	b, err := os.ReadFile(e.HooksFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.HooksFile(), []byte(strings.ReplaceAll(string(b), e.G.Bin, e.G.Bin+".gone")), 0o600); err != nil {
		t.Fatal(err)
	}
	api := e.Run(Script{Commands: []string{"echo ran > marker"}})
	blocked(t, api)
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook could not start")
	}
}

// HookThatHangsBlocks: a hook that hangs (another process holds the audit
// log's lock) is cut by loopguard's own deadline, inside the client's
// timeout, and the answer is a deny: the call does not run. The lock is
// free again when it returns.
func HookThatHangsBlocks(e *Env) *FakeAPI {
	t := e.T
	t.Helper()
	unlock := HoldAuditLock(t, e.G.State)
	api := e.Run(Script{Commands: []string{"echo ran > marker"}})
	unlock()
	WantBlocked(t, api, 0, "deadline")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook hung")
	}
	return api
}

// FailsOpenOnHookTimeout pins the host behaviour the deadline guards
// against: with the registration replaced by slow (a hook that sleeps past
// the client's timeout), the client runs the call.
func FailsOpenOnHookTimeout(e *Env, slow string) {
	t := e.T
	t.Helper()
	if err := os.WriteFile(e.HooksFile(), []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Run(Script{Commands: []string{"echo ran > marker"}})
	if !e.Exists("marker") {
		t.Fatalf("%s no longer runs a call whose hook timed out; the fallback and deadline may be revisited", e.Agent.Title)
	}
}

// ApprovalIsBoundToTheDirectory: an approval covers the command only where
// it was approved. The approved text asked again with extra (the client's
// argument that runs it in the directory other) is refused and does not
// run there; asked again as approved, it runs once.
func ApprovalIsBoundToTheDirectory(e *Env, other string, extra map[string]any) {
	t := e.T
	t.Helper()
	const cmd = "echo one >> runs.txt"
	api := e.Run(Script{
		Commands: []string{cmd, cmd, cmd},
		Extra:    []map[string]any{nil, extra, nil},
		Between:  e.ApproveAfter(0),
	})
	WantBlocked(t, api, 0, "no_grant")
	WantBlocked(t, api, 1, "approved_call_changed")
	if _, err := os.Stat(filepath.Join(other, "runs.txt")); err == nil {
		t.Error("the approved command ran in the other directory")
	}
	if got := e.Read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run once where it was approved", got)
	}
}

// GrantCat writes README.md ("read me") into the project and grants
// `Bash(cat *)` there.
func (e *Env) GrantCat() {
	t := e.T
	t.Helper()
	e.Write("README.md", "read me\n")
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(cat *)"); err != nil {
		t.Fatal(err)
	}
}

// Write writes a project file.
func (e *Env) Write(name, content string) {
	e.T.Helper()
	if err := os.WriteFile(filepath.Join(e.Dir, name), []byte(content), 0o644); err != nil {
		e.T.Fatal(err)
	}
}

// RunsTheRewrite: the client runs the input a hook's allow gives back.
// Under a scoped grant, `cat $'README.md'` (not plain text) is covered,
// runs as the canonical command loopguard analysed, prints the file, and
// the audit log records that what ran is what was allowed (PostToolUse
// ran_as_approved).
func RunsTheRewrite(e *Env) {
	t := e.T
	t.Helper()
	e.GrantCat()
	api := e.Run(Script{Commands: []string{"cat $'README.md'"}})
	if out := api.Output(0); !strings.Contains(out, "read me") {
		t.Errorf("cat $'README.md' under the grant: %q, want the file printed", out)
	}
	entries, err := e.G.Audit(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range entries {
		got = append(got, x.Event+"/"+x.Reason)
	}
	if !strings.Contains(strings.Join(got, " "), "PreToolUse/scoped_grant PostToolUse/ran_as_approved") {
		t.Errorf("audit %v: want the scoped allow, then PostToolUse ran_as_approved", got)
	}
}

// AddNotes is a patch (apply_patch's format) that adds notes.txt.
const AddNotes = "*** Begin Patch\n*** Add File: notes.txt\n+from the agent\n*** End Patch\n"

// WantPatchApplied checks that the client's report of call i does not say
// loopguard refused it, that the AddNotes patch was applied once, and that
// every pending call is a Write: a patch is reviewed as the Write of the
// file it adds.
func (e *Env) WantPatchApplied(api *FakeAPI, i int) {
	t := e.T
	t.Helper()
	if out := api.Output(i); strings.Contains(out, "loopguard") {
		t.Errorf("the approved patch was not applied: %q", out)
	}
	if got := e.Read("notes.txt"); got != "from the agent\n" {
		t.Errorf("notes.txt = %q; want the approved patch applied once", got)
	}
	p, err := e.G.Pending(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range p {
		if x.Tool != "Write" {
			t.Errorf("pending %+v: the patch should be reviewed as a Write of notes.txt", x)
		}
	}
}

// JailedCallRuns: with init's defaults (the jail grant) a Bash call no
// narrower grant covers runs in the jail without a decision, through the
// agent's input rewrite: its write in the project lands (the control), and
// the write in the home that Python makes, which no analysis of the
// command's words sees, is refused by the kernel. The audit log records the
// call as jailed. e must come from NewJailedEnv.
func JailedCallRuns(e *Env) {
	t := e.T
	t.Helper()
	outside := filepath.Join(e.G.Home, "jailed-outside.txt")
	cmd := `echo in > jailed.txt; python3 -c "open('` + outside + `','w').write('x')"; echo done`
	api := e.Run(Script{Commands: []string{cmd}})
	WantRan(t, api, 0, e.Agent.Refused...)
	if got := e.Read("jailed.txt"); got != "in\n" {
		t.Errorf("jailed.txt = %q; want the jailed call's project write to land (the client reported %q)", got, api.Output(0))
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("the jailed call wrote %s in the home (the client reported %q)", outside, api.Output(0))
	}
	entries, err := e.G.Audit(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	jailed := false
	for _, x := range entries {
		jailed = jailed || (x.Event == "PreToolUse" && x.Reason == "jailed")
	}
	if !jailed {
		t.Errorf("no PreToolUse was decided jailed: %+v", entries)
	}
}

// ApprovedCallHoldsTheProject (the ninety-fifth attack run): under the
// jail grant a call held for leaving the jail, approved exactly, runs
// where the client runs it, through the launcher's as-written form, which
// holds the project while it runs: what it runs has the hold's
// descriptors (50 and above, confine's heldFD) open. Control: the approved call runs and
// prints its output. e must come from NewJailedEnv.
func ApprovedCallHoldsTheProject(e *Env) {
	t := e.T
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the approved call's hold is Linux's")
	}
	const cmd = "git push -q 2>/dev/null; echo approved-ran; ls /proc/self/fd"
	api := e.Run(Script{Commands: []string{cmd, cmd}, Between: e.ApproveAfter(0)})
	WantBlocked(t, api, 0, "leaves_jail")
	WantRan(t, api, 1, e.Agent.Refused...)
	_, fds, ran := strings.Cut(api.Output(1), "approved-ran")
	if !ran {
		t.Fatalf("the approved call did not print its output: %q", api.Output(1))
	}
	if !slices.Contains(strings.Fields(fds), "50") {
		t.Errorf("the approved call ran holding no project (its descriptors: %q)", fds)
	}
}
