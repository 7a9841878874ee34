//go:build linux

package confine

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/policy"
)

// TestBrokerInAnotherPIDNamespace: the first stage makes the files a
// filter-only launch creates at the project's top (broker_linux.go),
// finding where the program's path leads from its /proc entry. Inside
// Claude Code's sandbox the launch runs in a PID namespace that its /proc
// was not mounted for, and /proc/PID was another process, in the
// project's top: `cd src && touch made` made the file at the top. Here
// the launcher runs in a PID namespace of its own with the host's /proc.
// The files land where the program's paths say; the control: one made
// at the top by name is made there.
func TestBrokerInAnotherPIDNamespace(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a PID namespace without its own /proc needs root here")
	}
	j := newJail(t, false)
	cmd := j.launchCmd(policy.JailCapability, "jail-sh", `cd src && touch made && mkdir -p x && cd x && echo y > also && cd ../.. && touch top-made`)
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	out, code := combined(t, cmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, p := range []string{"src/made", "src/x/also", "top-made"} {
		if _, err := os.Lstat(filepath.Join(j.project, p)); err != nil {
			t.Errorf("%s was not made where the program named it: %v", p, err)
		}
	}
	for _, p := range []string{"made", "also"} {
		if _, err := os.Lstat(filepath.Join(j.project, p)); err == nil {
			t.Errorf("%s was made at the project's top", p)
		}
	}
}

// TestProcOfAThread: a notification names the thread that made the call,
// and a Go program makes files from any of its threads: procOf finds a
// thread that does not lead its group (its own /proc entry, whose cwd is
// the process's). The control: the group's leader.
func TestProcOfAThread(t *testing.T) {
	if p, ok := procOf(uint32(os.Getpid())); !ok || p != "/proc/"+strconv.Itoa(os.Getpid()) {
		t.Fatalf("procOf(the leader) = %q, %v (control)", p, ok)
	}
	// A goroutine locked to its thread, never unlocked (the thread ends
	// with it): tried until one runs on a thread that is not the leader.
	var r [2]string
	for range 20 {
		got := make(chan [2]string, 1)
		go func() {
			runtime.LockOSThread()
			tid := unix.Gettid()
			p, ok := procOf(uint32(tid))
			if !ok {
				p = "none"
			}
			got <- [2]string{strconv.Itoa(tid), p}
		}()
		if r = <-got; r[0] != strconv.Itoa(os.Getpid()) {
			break
		}
	}
	if r[0] == strconv.Itoa(os.Getpid()) {
		t.Skip("every goroutine ran on the leader's thread")
	}
	if r[1] != "/proc/"+r[0] {
		t.Errorf("procOf(thread %s) = %s", r[0], r[1])
	}
}

// TestLeavesNothingInAnotherPIDNamespace: the launcher kills what a call
// left (stopTree, reapRest) by the pids /proc lists, which are /proc's
// namespace's: inside Claude Code's sandbox not the launcher's, where a
// jailed call's daemon was not killed and the call waited for it (13.6 s
// for a 12 s daemon, through the real client). Here the launcher runs in
// a PID namespace of its own with the host's /proc, filter-only: a setsid
// daemon and a double fork that would write in 2 s write nothing, and
// the call returns without them. The control: the call's own output.
func TestLeavesNothingInAnotherPIDNamespace(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a PID namespace without its own /proc needs root here")
	}
	j := newJail(t, false)
	cmd := j.launchCmd(policy.JailCapability, "jail-sh", `setsid sh -c 'sleep 2; echo late > src/late1' & (sh -c 'sleep 2; echo late > src/late2' &); echo called > src/called`)
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	out, code := combined(t, cmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(j.project, "src/called")); err != nil {
		t.Fatalf("the call's own write (control): %v", err)
	}
	// Had the launcher waited for them, they would have written by now.
	for _, n := range []string{"late1", "late2"} {
		if _, err := os.Lstat(filepath.Join(j.project, "src", n)); err == nil {
			t.Errorf("%s was written before the call returned: the launcher waited for its daemon", n)
		}
	}
	time.Sleep(3 * time.Second)
	for _, n := range []string{"late1", "late2"} {
		if _, err := os.Lstat(filepath.Join(j.project, "src", n)); err == nil {
			t.Errorf("%s was written after the call returned: its daemon lived on", n)
		}
	}
}

// TestHandOverUnderSignals: a file the broker makes is handed to the
// program by ADDFD, which a signal reaching the broker's thread in the
// middle took back while the program's call returned 0, its stdin (git:
// "unable to write loose object file: Bad file descriptor", once in a
// -race run). Every thread of every process of the launch gets SIGWINCH
// (handled by the Go runtime, so the kernel delivers it) while the
// program makes 3,000 files, each of which must be the file its open
// returned; the control: they are there, and signals were sent.
func TestHandOverUnderSignals(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		cmd := j.launchCmd(projectWrite, "jail-create-many", filepath.Join(j.project, "src/many"), "3000")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		sent := 0
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
				sent += signalTree(cmd.Process.Pid, unix.SIGWINCH)
				time.Sleep(50 * time.Microsecond)
			}
		}
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("namespaces %v: exit status %d after %d signals: %s", j.ns, code, sent, out.String())
		}
		if sent < 100 {
			t.Errorf("namespaces %v: %d signals sent, want at least 100", j.ns, sent)
		}
		names, err := os.ReadDir(filepath.Join(j.project, "src/many"))
		if err != nil || len(names) != 3000 {
			t.Errorf("namespaces %v: %d files made (%v), want 3000", j.ns, len(names), err)
		}
	})
}

// signalTree sends sig to every thread of pid and of its descendants,
// and returns how many it reached.
func signalTree(pid int, sig unix.Signal) int {
	children := map[int][]int{}
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The parent is the second field after the command's ")".
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			if f := strings.Fields(string(b[i+1:])); len(f) > 1 {
				if pp, err := strconv.Atoi(f[1]); err == nil {
					children[pp] = append(children[pp], p)
				}
			}
		}
	}
	sent := 0
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[0]
		todo = append(todo[1:], children[p]...)
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		for _, e := range tasks {
			if tid, err := strconv.Atoi(e.Name()); err == nil && unix.Tgkill(p, tid, sig) == nil {
				sent++
			}
		}
	}
	return sent
}
