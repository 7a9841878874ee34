//go:build linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/policy"
)

// shell runs script with bash through the launcher under c, as the jail's
// user, in the project; setup, when not nil, changes the launcher's
// command first.
func (j *jail) shell(t *testing.T, c policy.Capability, script string, setup func(*exec.Cmd)) (string, int) {
	t.Helper()
	s := Spec{Cap: c, Project: j.project, Cwd: j.project, Exe: "/bin/bash", Argv: []string{"bash", "-c", script}}
	cmd := j.command(append([]string{launcherName}, s.Args()[1:]...)...)
	cmd.Env = append([]string{"LG_CONFINE_LAUNCH=1"}, cmd.Env...)
	if setup != nil {
		setup(cmd)
	}
	return combined(t, cmd)
}

// outside starts argv unconfined as the jail's user, a process of its
// own outside any launch, and returns it; the test's end kills it.
func (j *jail) outside(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = j.env
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// procState is the state letter of pid (R, S, T...).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "gone"
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[0]
}

// TestJailOwnProc: with namespaces of its own, every process of the jail
// reads its own /proc entries (a shell's children too, not only the
// program the launcher started), ps works and shows the jail's processes
// alone, Go's cgroup-aware GOMAXPROCS and a JVM start. With the filter
// alone (user namespaces refused) the program reads its own /proc/self
// and its children are refused theirs, and ps sees nothing: the host's
// /proc shows every process of the machine, so the jail is not given it.
// Controls: the same ps, unconfined, shows a process of the same user's
// outside the jail; the program's own /proc/self in both modes.
func TestJailOwnProc(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		marker := "7.4242"
		sib := j.outside(t, "sleep", marker)
		time.Sleep(50 * time.Millisecond)
		ctl := exec.Command("ps", "-eo", "args=")
		if out, err := ctl.Output(); err != nil || !strings.Contains(string(out), "sleep "+marker) {
			t.Fatalf("control: ps outside the jail does not show the sleep: %v %s", err, out)
		}
		out, code := j.shell(t, projectWrite, "ps -eo pid=,args=", nil)
		if j.ns {
			if code != 0 || strings.Contains(out, marker) || !strings.Contains(out, "ps -eo pid=,args=") {
				t.Errorf("ps in the jail: %d\n%s", code, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if !strings.Contains(line, stage2Flag) && !strings.Contains(line, "ps -eo") {
					t.Errorf("ps in the jail shows a process not of the jail: %s", line)
				}
			}
		} else if code == 0 || strings.Contains(out, marker) {
			t.Errorf("ps with the filter alone: %d\n%s", code, out)
		}
		// The program's own /proc/self, in both modes (control).
		out, code = j.shell(t, projectWrite, "read -r l < /proc/self/status; echo \"$l\"", nil)
		checkProbe(t, []string{"the program's own /proc/self/status (control)"}, strings.Replace(out, "Name:\tbash", "ok", 1), code, true)
		for _, script := range []string{"bash -c 'cat /proc/self/status' | grep -x 'Name:.cat'", "sh -c 'ls /proc/$$/fd' | grep -x 0"} {
			out, code = j.shell(t, projectWrite, script, nil)
			if (code == 0) != j.ns {
				t.Errorf("%s: %d %s", script, code, out)
			}
		}
		// Signals: the jail's own processes (control), not one outside. A
		// stop lands asynchronously: on a loaded machine the state read
		// right after kill can still say running.
		out, code = j.shell(t, projectWrite, `sleep 60 & p=$!; kill -STOP $p && for i in 1 2 3 4 5 6 7 8 9 10; do grep -q '^State:.T' /proc/$p/status && break; sleep 0.2; done; grep '^State' /proc/$p/status; kill -KILL $p`, nil)
		if j.ns && (code != 0 || !strings.Contains(out, "stopped")) {
			t.Errorf("kill -STOP of a process of the jail (control): %d %s", code, out)
		}
		if !j.ns && code != 0 {
			t.Errorf("kill -STOP of a process of the jail (control): %d %s", code, out)
		}
		for _, pid := range []int{sib.Process.Pid, os.Getpid()} {
			out, code = j.shell(t, projectWrite, fmt.Sprintf("kill -STOP %d", pid), nil)
			if code == 0 || procState(pid) == "T" {
				t.Errorf("kill -STOP %d from the jail: %d %s, now %s", pid, code, out, procState(pid))
			}
		}
	})
}

// TestJailProcRuntimes: programs that read /proc to size themselves, run
// as a child of the jail's shell: a Go program (its GOMAXPROCS reads
// /proc/self/cgroup and mountinfo) and a JVM where one is installed.
func TestJailProcRuntimes(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		dir := t.TempDir()
		src := "package main\n\nimport (\n\t\"fmt\"\n\t\"runtime\"\n)\n\nfunc main() { fmt.Println(\"GOMAXPROCS\", runtime.GOMAXPROCS(0)) }\n"
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		gmp := filepath.Join(j.project, "gmp")
		build := exec.Command("go", "build", "-o", gmp, "main.go")
		build.Dir = dir
		build.Env = append(os.Environ(), "GO111MODULE=off", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Skipf("cannot build the Go program: %v %s", err, out)
		}
		_ = os.Chown(gmp, nobody, nobody)
		out, code := j.shell(t, projectWrite, "sh -c ./gmp", nil)
		if code != 0 || !strings.HasPrefix(out, "GOMAXPROCS ") {
			t.Errorf("Go program in the jail: %d %s", code, out)
		}
		java, err := exec.LookPath("java")
		if err != nil {
			t.Log("no JVM installed: not tried")
			return
		}
		out, code = j.shell(t, projectWrite, fmt.Sprintf("sh -c '%s -XshowSettings:system -version' 2>&1", java), nil)
		if code != 0 || !strings.Contains(out, "version") {
			t.Errorf("JVM in the jail: %d %s", code, out)
		}
	})
}

// userProcs lists the processes whose command line holds marker.
func userProcs(marker string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, pid)
		}
	}
	return out
}

// TestJailLeavesNothingRunning: a setsid daemon, a double fork and a fork
// bomb started by a call are gone when it returns; the bomb is bounded
// while it runs (the same user can still start a process outside the
// jail) and ends with the call. Controls: each call's ordinary output is
// there, and a call after the bomb runs.
func TestJailLeavesNothingRunning(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) { leavesNothingRunning(t, j, nil) })
}

func leavesNothingRunning(t *testing.T, j *jail, setup func(*exec.Cmd)) {
	late := filepath.Join(j.project, "docs")
	out, code := j.shell(t, projectWrite, `setsid sh -c 'sleep 2; echo late > docs/late1; sleep 1.1001' & (sh -c 'sleep 2; echo late > docs/late2; sleep 1.1002' &); echo called`, setup)
	if code != 0 || out != "called" {
		t.Errorf("daemon and double fork: the call's own output (control): %d %q", code, out)
	}
	if p := append(userProcs("1.1001"), userProcs("1.1002")...); len(p) != 0 {
		t.Errorf("processes of the call left running: %v", p)
	}
	time.Sleep(2500 * time.Millisecond)
	for _, f := range []string{"late1", "late2"} {
		if _, err := os.Stat(filepath.Join(late, f)); err == nil {
			t.Errorf("a process of the call wrote docs/%s after it returned", f)
		}
	}
	// The bomb: every shell of it carries the marker on its command line.
	// Now and then (about one run in six, quiet machine or not) it dies
	// out before it grows: a bomb that never grew tests no bound, so it
	// is started again, three times at most.
	const bombMarker = "bomb-4242"
	for try := 1; ; try++ {
		r := bomb(t, j, setup, bombMarker)
		p, aliveErr, out, code, took := r.peak, r.alive, r.out, r.code, r.took
		t.Logf("bomb (try %d): peak %d tasks of the user's seen (%d before it), call took %v", try, p, r.before, took)
		if !strings.HasSuffix(out, "returned") {
			t.Errorf("fork bomb: the call's output: %d %q", code, out)
		}
		if p-r.before < 100 {
			if try < 3 {
				continue
			}
			t.Errorf("the bomb never grew in %d tries (%d processes): not a test of the bound", try, p)
		}
		if p > int(jailTasks())+r.before+100 {
			t.Errorf("the bomb grew past the bound: %d processes", p)
		}
		if aliveErr == errNotTried {
			t.Error("no process was tried outside the jail during the bomb")
		} else if aliveErr != nil {
			t.Errorf("the same user could not start a process outside the jail during the bomb: %v", aliveErr)
		}
		break
	}
	time.Sleep(100 * time.Millisecond)
	if left := userProcs(bombMarker); len(left) != 0 {
		t.Errorf("%d processes of the bomb left running", len(left))
	}
	out, code = j.shell(t, projectWrite, "echo after", setup)
	if code != 0 || out != "after" {
		t.Errorf("a call after the bomb (control): %d %q", code, out)
	}
}

// errNotTried: no process was tried outside the jail during a bomb.
var errNotTried = errors.New("not tried")

// bombRun is what one fork bomb in the jail showed: the most tasks of the
// jail's user seen while it ran (sampled every 10 ms), what a process of
// the same user started outside the jail meanwhile met (errNotTried if
// the bomb never reached 100 tasks), and the call's output, status and
// time.
type bombRun struct {
	peak int
	// before is the user's tasks before the bomb: others of the same
	// user's (a real client an end-to-end test runs as the same user) are
	// counted in the peak as the bomb's are, and in the bound a launch
	// without namespaces sets.
	before int
	alive  error
	out    string
	code   int
	took   time.Duration
}

// bomb runs a fork bomb in the jail as leavesNothingRunning's call.
func bomb(t *testing.T, j *jail, setup func(*exec.Cmd), marker string) bombRun {
	t.Helper()
	stop := make(chan struct{})
	peak := make(chan int, 1)
	alive := make(chan error, 1)
	before, _ := userTasks(nobody)
	go func() {
		most := 0
		tried := false
		for {
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(10 * time.Millisecond):
			}
			n, _ := userTasks(nobody)
			most = max(most, int(n))
			if n >= before+100 && !tried { // grown (the caller's p < 100 is not)
				tried = true
				c := exec.Command("/bin/sh", "-c", "echo alive")
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
				t0 := time.Now()
				b, err := c.Output()
				if err == nil && string(b) != "alive\n" {
					err = fmt.Errorf("%q", b)
				}
				t.Logf("bomb: a process of the same user outside the jail ran in %v", time.Since(t0))
				alive <- err
			}
		}
	}()
	start := time.Now()
	out, code := j.shell(t, projectWrite, `sh -c 'sleep 4 & s=$!; b() { b | b & }; b; wait $s; : `+marker+`' 2>/dev/null; echo returned`, setup)
	took := time.Since(start)
	close(stop)
	p := <-peak
	aliveErr := errNotTried
	select {
	case aliveErr = <-alive:
	default:
	}
	return bombRun{p, int(before), aliveErr, out, code, took}
}

// TestJailCgroup: where the launcher's parent cgroup is delegated to the
// user (made so here by root), the call runs in a cgroup of its own below
// it, which is gone when the call returns, and the daemon, double fork
// and bomb are gone as in TestJailLeavesNothingRunning. Its pids.max and
// memory.max are set where the hierarchy has those controllers (on a
// hybrid cgroup v1 machine it does not: RLIMIT_NPROC bounds the bomb).
func TestJailCgroup(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("delegating a cgroup needs root")
	}
	mnt := cgroup2Mount()
	if mnt == "" {
		t.Skip("no cgroup v2 hierarchy mounted")
	}
	bothModes(t, func(t *testing.T, j *jail) {
		parent, err := os.MkdirTemp(mnt, "lg-test-")
		if err != nil {
			t.Skipf("cannot make a cgroup: %v", err)
		}
		agent := filepath.Join(parent, "agent")
		t.Cleanup(func() {
			_ = os.WriteFile(filepath.Join(parent, "cgroup.kill"), []byte("1"), 0)
			time.Sleep(50 * time.Millisecond)
			subs, _ := filepath.Glob(filepath.Join(parent, "*", "cgroup.procs"))
			for _, s := range subs {
				_ = unix.Rmdir(filepath.Dir(s))
			}
			_ = unix.Rmdir(parent)
		})
		ctrls, _ := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
		limits := strings.Contains(string(ctrls), "pids") && strings.Contains(string(ctrls), "memory")
		if limits {
			if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids +memory"), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(agent, 0o755); err != nil {
			t.Fatal(err)
		}
		// Delegation: the directory and its three files to the user.
		for _, d := range []string{parent, agent} {
			for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
				if err := os.Chown(filepath.Join(d, f), nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
		}
		fd, err := unix.Open(agent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		inAgent := func(cmd *exec.Cmd) {
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = fd
		}
		rel := strings.TrimPrefix(parent, mnt)
		out, code := j.shell(t, projectWrite, `while IFS= read -r l; do echo "$l"; case $l in 0::*) p=${l#0::};; esac; done < /proc/self/cgroup; cat "`+mnt+`$p/pids.max" 2>/dev/null || echo no-pids-max`, inAgent)
		if code != 0 || !strings.Contains(out, "0::"+rel+"/"+cgroupPrefix) {
			t.Fatalf("the call's cgroup: %d %s", code, out)
		}
		if limits && !strings.Contains(out, strconv.FormatUint(jailTasks(), 10)) {
			t.Errorf("pids.max of the call's cgroup: %s", out)
		}
		// Control: without the delegated cgroup, the call stays in the
		// launcher's.
		out, _ = j.shell(t, projectWrite, `while IFS= read -r l; do echo "$l"; done < /proc/self/cgroup`, nil)
		if strings.Contains(out, cgroupPrefix) {
			t.Errorf("a call with no cgroup to make made one: %s", out)
		}
		leavesNothingRunning(t, j, inAgent)
		if left, _ := filepath.Glob(filepath.Join(parent, cgroupPrefix+"*")); len(left) != 0 {
			t.Errorf("the calls' cgroups are left: %v", left)
		}
	})
}

// TestJailInitSurvivesSignals: a program may signal its namespace's init
// (pid 1: the same user, inside its Landlock domain), and the Go runtime
// ends on an abort, a trap or a bad system call it is sent unless it
// asked for them: the thirty-first attack run's kill -ABRT 1 ended the
// call at once, with init's stack on its output. Init takes them and
// does nothing. Without namespaces pid 1 is not the call's, and the
// signals are refused. The control: the call's own output after them.
func TestJailInitSurvivesSignals(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		out, code := j.shell(t, projectWrite, `for s in ABRT TRAP SYS ILL BUS FPE SEGV STKFLT XCPU XFSZ PIPE USR1 USR2 ALRM; do kill -$s 1 2>/dev/null; done; sleep 0.3; echo alive`, nil)
		if code != 0 || out != "alive" {
			t.Errorf("namespaces %v: the call after its signals to pid 1: exit %d, %q", j.ns, code, out)
		}
	})
}

// TestStage2DropsCapabilitiesEverywhere: the second stage, in user
// namespaces of its own, ends the capabilities they gave it on every
// thread, not only the one that runs the program: its broker answers the
// program's calls from the runtime's other threads, which kept
// CAP_SYS_ADMIN there (the fifty-fifth attack run). Run with the
// launcher as make build builds it (no cgo: a binary with cgo cannot
// change every thread's), as the jail's user; the program reads every
// thread of its PID namespace's init, the second stage. Control: the
// launch ran in namespaces of its own, and /proc shows the threads.
func TestStage2DropsCapabilitiesEverywhere(t *testing.T) {
	if !namespacesAllowed() {
		t.Skip("user namespaces are refused to an unprivileged user here")
	}
	j := newJail(t, true)
	bin := filepath.Join(filepath.Dir(j.bin), "loopguard-confine")
	build := exec.Command("go", "build", "-o", bin, "./cmd/loopguard-confine")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the launcher: %v %s", err, out)
	}
	_ = os.Chown(bin, nobody, nobody)
	k := *j
	k.bin = bin
	script := `cat /proc/self/uid_map; for s in /proc/1/task/*/status; do grep -E '^Cap(Eff|Prm|Inh|Amb|Bnd)' "$s" | tr '\n' ' '; echo; done`
	out, code := combined(t, k.specCmd(Spec{Cap: projectWrite, Project: j.project, Cwd: j.project, Exe: "/bin/sh", Argv: []string{"sh", "-c", script}}))
	threads := strings.Count(out, "CapEff")
	if code != 0 || threads < 2 || strings.HasPrefix(out, "0 0 4294967295") {
		t.Fatalf("the second stage's threads (control: namespaces of its own, more than one thread): exit %d, %d threads: %q", code, threads, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "CapEff") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "0000") && strings.Trim(f, "0") != "" {
				t.Errorf("a thread of the second stage holds capabilities: %s", line)
				break
			}
		}
	}
}
