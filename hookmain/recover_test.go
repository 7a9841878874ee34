//go:build linux

package hookmain

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/hooks"
)

// TestRecoverAfterFails: the hook's recovery after a call changes nothing
// of the decision it was given when the launcher it starts fails silently;
// one that cannot be started, or outlives the hook's deadline, is said
// beside the call's answer, and the latter is left to finish, never
// killed. Control: a launcher that says what it swept has its lines reach
// the model and the user.
func TestRecoverAfterFails(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	proj := t.TempDir()
	plantRecord(t, tmp, proj)
	script := func(body string) string {
		p := filepath.Join(t.TempDir(), "launcher")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	call := &hooks.Call{Event: hooks.PostToolUse, ToolName: "Bash"}
	given := hooks.Decision{Behavior: hooks.Abstain, Reason: hooks.ReasonRan, Context: "the jail's note"}
	for name, launcher := range map[string]string{
		"fails": script("exit 1"),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		d := recoverAfter(ctx, launcher, call, proj, given)
		cancel()
		if !reflect.DeepEqual(d, given) {
			t.Errorf("a launcher that %s: the decision became %+v, want %+v", name, d, given)
		}
	}
	// One that cannot be started: said, for the model and the user (the
	// next launch sweeps).
	d := recoverAfter(context.Background(), filepath.Join(t.TempDir(), "nothing-here"), call, proj, given)
	if !strings.Contains(d.SystemMessage, "could not be started") || !strings.Contains(d.Context, "the jail's note") || d.Behavior != given.Behavior {
		t.Errorf("a missing launcher: %+v", d)
	}
	// One that outlasts the hook's deadline is answered for at the
	// deadline and left to finish, never killed: a sweep cut short leaves
	// what the call made in the project (the seventy-third attack run).
	finished := filepath.Join(t.TempDir(), "finished")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	start := time.Now()
	d = recoverAfter(ctx, script("echo 'loopguard: sweeping'; sleep 2; echo done > "+finished), call, proj, given)
	cancel()
	took := time.Since(start)
	if !strings.Contains(d.SystemMessage, "loopguard: sweeping") || !strings.Contains(d.SystemMessage, "still running") {
		t.Errorf("a recovery past the deadline: %q, want what it said so far and that it is still running", d.SystemMessage)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(finished); err == nil {
			break
		}
	}
	if _, err := os.Stat(finished); err != nil {
		t.Errorf("the recovery did not finish after the hook answered (it took %v to answer): it was killed", took)
	}
	d = recoverAfter(context.Background(), script("echo 'loopguard: swept now'"), call, proj, given)
	if !strings.Contains(d.Context, "loopguard: swept now") || d.SystemMessage != "loopguard: swept now" || d.Behavior != given.Behavior {
		t.Errorf("control: a launcher that says what it swept: %+v", d)
	}
}
