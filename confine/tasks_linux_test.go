//go:build linux

package confine

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// threadsUntilEOF is the test binary run with LG_CONFINE_THREADS=N: N
// goroutines each locked to a thread of its own, blocked until stdin ends.
func threadsUntilEOF() {
	n, _ := strconv.Atoi(os.Getenv("LG_CONFINE_THREADS"))
	// "up" once every goroutine holds its thread: under load the oracle
	// read the count before they had started (10 threads, fewer than 11).
	var started sync.WaitGroup
	started.Add(n)
	for range n {
		go func() {
			runtime.LockOSThread()
			started.Done()
			select {}
		}()
	}
	started.Wait()
	os.Stdout.WriteString("up\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// numThreads is num_threads of /proc/PID/stat: the count userTasks took
// before it read the task directory's links, kept here as the oracle.
func numThreads(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	n, err := strconv.ParseUint(f[17], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUserTasks: userTasks counts the threads of a user's processes, each
// process's from its task directory's links, against /proc/PID/stat's
// num_threads. The user (uid 4242) runs nothing else here; the control:
// a process of another user (nobody) is not counted.
func TestUserTasks(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("starts processes as another user: needs root")
	}
	const uid = 4242
	// The test binary where the two users may run it.
	dir, err := os.MkdirTemp("", "lg-tasks-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data, err := os.ReadFile(testBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	self := dir + "/confine.test"
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if n, err := userTasks(uid); err != nil || n != 0 {
		t.Fatalf("before: userTasks(%d) = %d, %v; want 0 (is uid %d in use here?)", uid, n, err, uid)
	}
	as := func(u uint32, name string, args []string, env ...string) *exec.Cmd {
		c := exec.Command(name, args...)
		c.Env = append(os.Environ(), env...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u, Gid: u}}
		return c
	}
	var stops []io.Closer
	var cmds []*exec.Cmd
	defer func() {
		for _, s := range stops {
			s.Close()
		}
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	start := func(c *exec.Cmd) {
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		stops, cmds = append(stops, in), append(cmds, c)
		if c.Args[0] == "cat" {
			return
		}
		buf := make([]byte, 3)
		if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "up\n" {
			t.Fatalf("helper did not start: %q %v", buf, err)
		}
	}
	// Two single-threaded processes and one with 8 threads of its own
	// (and the runtime's), all of uid; one of nobody's.
	start(as(uid, "cat", nil))
	start(as(uid, "cat", nil))
	start(as(uid, self, nil, "LG_CONFINE_THREADS=8"))
	start(as(nobody, self, nil, "LG_CONFINE_THREADS=3"))
	var want uint64
	for _, c := range cmds[:3] {
		want += numThreads(t, c.Process.Pid)
	}
	if want < 2+9 {
		t.Fatalf("the oracle counts %d threads, fewer than started", want)
	}
	got, err := userTasks(uid)
	if err != nil {
		t.Fatal(err)
	}
	// The Go helper may start a thread of its runtime between the two
	// reads: count again once if they differ.
	if got != want {
		want = 0
		for _, c := range cmds[:3] {
			want += numThreads(t, c.Process.Pid)
		}
		got, _ = userTasks(uid)
	}
	if got != want {
		t.Fatalf("userTasks(%d) = %d, /proc/PID/stat's num_threads sum to %d", uid, got, want)
	}
}
