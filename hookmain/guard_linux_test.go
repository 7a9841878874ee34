package hookmain

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/undo"
)

// TestGuardSweepsKilledLaunch: the guard in the project's watcher runs the
// launcher's recovery for a launch of its project whose launcher is gone
// before its sweep, with no hook to run it, and records what it said in
// the audit log. Controls: while the launch's directory is locked (its
// launcher lives) nothing is recovered and the guard keeps running past
// its idle time; another project's record is left; a launcher that
// leaves the record is not run twice a poll for ever; with no launch
// alive the guard ends after its idle time.
func TestGuardSweepsKilledLaunch(t *testing.T) {
	tmp, state := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	proj, other := t.TempDir(), t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	run := filepath.Join(confine.ScratchDirIn(tmp, os.Getuid()), "runs", "run-0123456789abcdef")
	// The launcher's recovery: says what it swept and ends the record, as
	// the real one does; keep=1 leaves it.
	l := filepath.Join(t.TempDir(), "launcher")
	if err := os.WriteFile(l, []byte("#!/bin/sh\necho \"$@\" >> "+ran+"\n[ -n \"$QUIET\" ] || echo 'loopguard: held back out/g'\n[ -n \"$KEEP\" ] || rm -f "+run+"/pending.json\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		b, _ := os.ReadFile(ran)
		return strings.Count(string(b), "\n")
	}
	entries := func() []string {
		var out []string
		ents, _ := filepath.Glob(filepath.Join(state, "audit", "late", "*"))
		for _, p := range ents {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		return out
	}
	type result struct{ took time.Duration }
	start := func(idle, poll time.Duration) chan result {
		done := make(chan result, 1)
		begin := time.Now()
		go func() {
			guard(state, proj, l, guardTimes{idle: idle, poll: poll, recoverWait: time.Minute})
			done <- result{time.Since(begin)}
		}()
		return done
	}
	within := func(d time.Duration, ok func() bool) bool {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if ok() {
				return true
			}
		}
		return ok()
	}

	// Another project's killed launch: left.
	plantRecord(t, tmp, other)
	r := <-start(100*time.Millisecond, 10*time.Millisecond)
	if runs() != 0 || len(entries()) != 0 {
		t.Fatalf("another project's record: the recovery ran %d times, %d entries", runs(), len(entries()))
	}
	if r.took > 5*time.Second {
		t.Errorf("with no live launch the guard ran %v, want its idle time", r.took)
	}

	// The project's launch, its launcher alive: the directory locked.
	plantRecord(t, tmp, proj)
	release := testfs.Lock(t, run)
	done := start(300*time.Millisecond, 10*time.Millisecond)
	time.Sleep(600 * time.Millisecond)
	if runs() != 0 {
		t.Fatalf("the recovery ran for a launch whose launcher lives")
	}
	select {
	case <-done:
		t.Fatal("the guard ended while a launch of its project lived")
	default:
	}
	// The launcher is killed: its lock goes with it.
	release()
	if !within(5*time.Second, func() bool { return runs() == 1 && len(entries()) == 1 }) {
		t.Fatalf("the killed launch: the recovery ran %d times, %d audit entries; want 1 and 1", runs(), len(entries()))
	}
	b, _ := os.ReadFile(ran)
	if want := strings.Join(confine.RecoverArgs(proj, confine.ScratchRoots(tmp, os.Getuid())), " "); strings.TrimSpace(string(b)) != want {
		t.Errorf("the recovery ran as %q, want %q", b, want)
	}
	if e := entries()[0]; !strings.Contains(e, hooks.ReasonKilledSwept) || !strings.Contains(e, `"event":"guard"`) || !strings.Contains(e, "held back out/g") {
		t.Errorf("the audit entry: %s", e)
	}
	<-done
	if n := runs(); n != 1 {
		t.Errorf("the recovery ran %d times for one killed launch", n)
	}

	// A recovery that leaves the record, with a word or without: run
	// again, ever less often.
	for _, quiet := range []string{"", "1"} {
		t.Setenv("KEEP", "1")
		t.Setenv("QUIET", quiet)
		plantRecord(t, tmp, proj)
		before := runs()
		<-start(time.Second, 10*time.Millisecond)
		if n := runs() - before; n < 2 || n > 10 {
			t.Errorf("a recovery that leaves its record (quiet %q) ran %d times in the guard's second, want a few (each wait twice the last)", quiet, n)
		}
	}
}

// TestGuardOutwaitsAHungRecovery: a recovery that does not end (its
// call's code chose what its sweep has to do) is left to run, never
// killed, after recoverWait, and the guard looks on: a later recovery
// sweeps for what the hung one does not hold. Control: the first
// recovery is still running when the second has run.
func TestGuardOutwaitsAHungRecovery(t *testing.T) {
	tmp, state := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	proj, marks := t.TempDir(), t.TempDir()
	l := filepath.Join(t.TempDir(), "launcher")
	// The first run hangs (5 s); the next ones end the record at once.
	body := "#!/bin/sh\nif mkdir " + marks + "/first 2>/dev/null; then sleep 5; touch " + marks + "/first/done; exit; fi\n" +
		"touch " + marks + "/second\nrm -f " + filepath.Join(confine.ScratchDirIn(tmp, os.Getuid()), "runs", "run-0123456789abcdef", "pending.json") + "\n"
	if err := os.WriteFile(l, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	plantRecord(t, tmp, proj)
	done := make(chan struct{})
	go func() {
		guard(state, proj, l, guardTimes{idle: 2 * time.Second, poll: 20 * time.Millisecond, recoverWait: 1200 * time.Millisecond})
		close(done)
	}()
	second := false
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end) && !second; time.Sleep(20 * time.Millisecond) {
		_, err := os.Stat(filepath.Join(marks, "second"))
		second = err == nil
	}
	if !second {
		t.Fatal("the guard waited on a hung recovery and ran no other")
	}
	if _, err := os.Stat(filepath.Join(marks, "first", "done")); err == nil {
		t.Error("control: the first recovery had ended by then: the test shows nothing")
	}
	<-done
}

// TestSessionEndLeavesItToTheGuard: at SessionEnd, a launch of the
// project whose launcher still holds its lock is waited for (up to
// killedWait) and swept once it lets go, unless the project's guard runs,
// which sweeps for it after its exit: then the client's exit is not held.
// Control: without the guard the same launch, let go of after 300 ms, is
// waited for and swept by the hook.
func TestSessionEndLeavesItToTheGuard(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		tmp, state := t.TempDir(), t.TempDir()
		t.Setenv("TMPDIR", tmp)
		t.Setenv("XDG_STATE_HOME", state)
		proj := t.TempDir()
		t.Setenv("CLAUDE_PROJECT_DIR", proj)
		dir := filepath.Join(state, "loopguard")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		ran := filepath.Join(t.TempDir(), "ran")
		l := filepath.Join(t.TempDir(), "launcher")
		if err := os.WriteFile(l, []byte("#!/bin/sh\necho \"$@\" > "+ran+"\necho 'loopguard: held back out/g'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		old := sessionEndLauncher
		sessionEndLauncher = func() string { return l }
		if guarded {
			release, err := undo.HoldGuard(dir, proj)
			if err != nil || release == nil {
				t.Fatalf("HoldGuard: %v", err)
			}
			defer release()
		}
		plantRecord(t, tmp, proj)
		run := filepath.Join(confine.ScratchDirIn(tmp, os.Getuid()), "runs", "run-0123456789abcdef")
		release := testfs.Lock(t, run)
		go func() { time.Sleep(300 * time.Millisecond); release() }()
		payload := `{"session_id":"s1","cwd":"` + proj + `","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}`
		var stderr bytes.Buffer
		if code := Run([]string{"--event", hooks.SessionEnd}, strings.NewReader(payload), &bytes.Buffer{}, &stderr, Options{}); code != 0 {
			t.Fatalf("guarded %v: exit %d: %s", guarded, code, stderr.String())
		}
		sessionEndLauncher = old
		_, err := os.Stat(ran)
		if swept := err == nil; swept == guarded {
			t.Errorf("guarded %v: the hook swept %v; want it to wait and sweep only without the guard", guarded, swept)
		}
	}
}
