//go:build linux

package hookmain

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
)

// TestRecoverAfterFails: the hook's recovery after a call changes nothing
// of the decision it was given when the launcher it starts is missing,
// fails, or outlives the hook's deadline: the call's answer stands, and
// the hook returns before its deadline. Control: a launcher that says
// what it swept has its lines reach the model and the user.
func TestRecoverAfterFails(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	proj := t.TempDir()
	run := filepath.Join(confine.ScratchDirIn(tmp, os.Getuid()), "runs", "run-0123456789abcdef")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	record := `{"Project":"` + base64.StdEncoding.EncodeToString([]byte(proj)) + `"}`
	if err := os.WriteFile(filepath.Join(run, "pending.json"), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
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
		"missing": filepath.Join(t.TempDir(), "nothing-here"),
		"fails":   script("exit 1"),
		"hangs":   script("exec sleep 30"),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		start := time.Now()
		d := recoverAfter(ctx, launcher, call, proj, given)
		cancel()
		if !reflect.DeepEqual(d, given) {
			t.Errorf("a launcher that %s: the decision became %+v, want %+v", name, d, given)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("a launcher that %s: the hook waited %v", name, took)
		}
	}
	d := recoverAfter(context.Background(), script("echo 'loopguard: swept now'"), call, proj, given)
	if !strings.Contains(d.Context, "loopguard: swept now") || d.SystemMessage != "loopguard: swept now" || d.Behavior != given.Behavior {
		t.Errorf("control: a launcher that says what it swept: %+v", d)
	}
}
