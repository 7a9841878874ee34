package hookmain

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
)

// TestSessionEndSweeps: at SessionEnd the hook runs the launcher's
// recovery for the session's project when a launch there was killed before
// its sweep (its record in a scratch directory, its directory unlocked),
// and records what the recovery said in the audit log. It never fails the
// client: a payload that is not SessionEnd's, or no launch to recover,
// exits 0 with nothing recorded (controls: the same project with a killed
// launch's record is recovered; another project's record is not).
func TestSessionEndSweeps(t *testing.T) {
	tmp, state := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_STATE_HOME", state)
	proj, other := t.TempDir(), t.TempDir()
	t.Setenv("CLAUDE_PROJECT_DIR", proj)
	if err := os.MkdirAll(filepath.Join(state, "loopguard"), 0o700); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "ran")
	l := filepath.Join(t.TempDir(), "launcher")
	if err := os.WriteFile(l, []byte("#!/bin/sh\necho \"$@\" > "+ran+"\necho 'loopguard: held back out/g'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := sessionEndLauncher
	sessionEndLauncher = func() string { return l }
	t.Cleanup(func() { sessionEndLauncher = old })
	payload := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"` + proj + `","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}`
	end := func(payload string) (int, string) {
		var stderr bytes.Buffer
		code := Run([]string{"--event", hooks.SessionEnd}, strings.NewReader(payload), &bytes.Buffer{}, &stderr, Options{})
		return code, stderr.String()
	}
	swept := func() []audit.Entry {
		var out []audit.Entry
		ents, _ := filepath.Glob(filepath.Join(state, "loopguard", "audit", "late", "*"))
		for _, p := range ents {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), hooks.ReasonKilledSwept) {
				out = append(out, audit.Entry{Detail: string(b)})
			}
		}
		return out
	}
	for name, p := range map[string]string{
		"not JSON":         "{",
		"another event":    strings.Replace(payload, `"SessionEnd"`, `"PostToolUse"`, 1),
		"no record at all": payload,
	} {
		if code, _ := end(p); code != 0 {
			t.Errorf("%s: exit %d, want 0", name, code)
		}
	}
	plantRecord(t, tmp, other)
	if code, _ := end(payload); code != 0 {
		t.Errorf("another project's record: exit %d", code)
	}
	if _, err := os.Stat(ran); err == nil || len(swept()) != 0 {
		t.Fatalf("the hook recovered another project's launch, or recorded a sweep with nothing to recover (ran: %v, entries %d)", err == nil, len(swept()))
	}
	plantRecord(t, tmp, proj)
	code, stderr := end(payload)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (stderr %q)", code, stderr)
	}
	args, err := os.ReadFile(ran)
	if err != nil {
		t.Fatalf("control: the launcher's recovery did not run for the session's project (stderr %q)", stderr)
	}
	if want := strings.Join(confine.RecoverArgs(proj, confine.ScratchRoots(tmp, os.Getuid())), " "); strings.TrimSpace(string(args)) != want {
		t.Errorf("the recovery ran as %q, want %q", args, want)
	}
	got := swept()
	if len(got) != 1 || !strings.Contains(got[0].Detail, "held back out/g") || !strings.Contains(got[0].Detail, `"session":"s1"`) {
		t.Errorf("the audit log's late entries: %+v, want one %s entry of session s1 with what the recovery said", got, hooks.ReasonKilledSwept)
	}
}

// plantRecord leaves, in the scratch directory under tmp, the record of a
// launch of project that no launcher locks: a launch killed before its
// sweep.
func plantRecord(t *testing.T, tmp, project string) {
	t.Helper()
	run := filepath.Join(confine.ScratchDirIn(tmp, os.Getuid()), "runs", "run-0123456789abcdef")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"Project":"` + base64.StdEncoding.EncodeToString([]byte(project)) + `"}`
	if err := os.WriteFile(filepath.Join(run, "pending.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
}
