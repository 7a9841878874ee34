//go:build linux

package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A launch has two stages. The first (run) stays outside the jail: it
// makes the plan, starts the second stage, waits for it, and when it has
// exited, kills every process the program left behind (the launcher is
// their sub-reaper: a setsid daemon or a double fork comes back to it),
// removes the launch's own temp directory and sweeps what the program
// created in the project. The second (stage2) is the launcher's own
// binary again, started in user, mount and IPC namespaces of its own
// where the kernel allows an unprivileged user that: it makes everything
// outside the write set read-only by mounts (so not even a mode, owner,
// time or extended attribute changes there, which Landlock does not
// cover), restricts itself, and execs the program. Where user namespaces
// are refused (Claude Code's sandbox, Ubuntu 24.04's AppArmor default),
// the second stage runs in the first's namespaces and its filter refuses
// every such change instead.

// stage2Flag is the second stage's command line after the subcommand.
const stage2Flag = "--stage2"

// stage2Name is the second stage's argv[0].
const stage2Name = "loopguard-jail"

// IsStage2 reports whether args (the command line after the binary's
// path) start the second stage: a test binary that is its own launcher
// dispatches on it.
func IsStage2(args []string) bool {
	return len(args) >= 2 && args[0] == Subcommand && args[1] == stage2Flag
}

// noNamespaces: the launcher never asks for namespaces (a test shows
// the filter holding alone, as where they are refused).
var noNamespaces bool

// launch is what the first stage hands the second, on descriptor 3.
type launch struct {
	Spec Spec
	Plan Plan
	// NS: the second stage is in user, mount and IPC namespaces of its
	// own.
	NS bool
}

// run is the first stage: it returns the program's exit status, or an
// error when the program was not run.
func run(s Spec, e Env, stderr io.Writer) (int, error) {
	plan, err := NewPlan(s, e)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(plan.RunDir) // after every process of the launch has exited
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	// Signals the first stage is sent go to the program (a terminal's
	// ^C reaches both; the program's handler decides).
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT)
	defer signal.Stop(sigs)
	var cmd *exec.Cmd
	if !noNamespaces {
		cmd, err = startStage2(s, plan, true)
	}
	if noNamespaces || err != nil {
		cmd, err = startStage2(s, plan, false)
	}
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	reapRest()
	if plan.Project != "" {
		for _, line := range sweep(plan, e) {
			fmt.Fprintln(stderr, line)
		}
	}
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return 0, werr
		}
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

// startStage2 starts the second stage, in namespaces of its own if ns.
func startStage2(s Spec, plan Plan, ns bool) (*exec.Cmd, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{stage2Name, Subcommand, stage2Flag},
		Env:        os.Environ(),
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{r},
		// The program dies with the launcher: a launcher killed by the
		// agent's timeout leaves no program running.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if ns {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWIPC
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
		// The namespace's capabilities would end at the second stage's
		// execve (its user is not root): it keeps the two it needs to
		// make its mounts, and drops them before the program runs
		// (isolate).
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("failed to start the launch: %w", err)
	}
	err = json.NewEncoder(w).Encode(launch{Spec: s, Plan: plan, NS: ns})
	w.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("failed to hand the launch over: %w", err)
	}
	return cmd, nil
}

// maxLaunch bounds what the second stage reads of its launch.
const maxLaunch = 64 << 20

// stage2 is the second stage: it returns only when the program was not
// run.
func stage2() error {
	f := os.NewFile(3, "launch")
	if f == nil {
		return errors.New("no launch on descriptor 3")
	}
	var l launch
	err := json.NewDecoder(io.LimitReader(f, maxLaunch)).Decode(&l)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading the launch: %w", err)
	}
	o := filterOpts{network: l.Plan.Network, metadata: true, sysvIPC: l.NS}
	mounted := false
	if l.NS {
		var err error
		if mounted, err = isolate(&l.Plan); err != nil {
			return err
		}
	}
	switch {
	case mounted:
		o.metadata = false
	case l.Plan.Project != "" && sandboxedOutside(l.Plan.Project, l.Plan.SharedTemp):
		// In a sandbox that mounted all else read-only (Claude Code's):
		// project-write's own chmod runs; docs/confinement.md says what
		// it can still reach there.
		o.metadata = false
	}
	return execJailed(l.Spec, l.Plan, o)
}

// reapRest kills and reaps every process left behind: the launcher is
// their sub-reaper, so each orphan of the program is its child. A process
// that forks while it is being killed leaves an orphan that comes back to
// the launcher: it loops until none is left.
func reapRest() {
	for {
		kids := children()
		for _, pid := range kids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.ECHILD) {
				return
			}
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || pid == 0 {
				break
			}
		}
		if len(kids) == 0 {
			// Children not yet listed (being reparented) or zombies
			// already killed: wait for one, blocking.
			var ws unix.WaitStatus
			if _, err := unix.Wait4(-1, &ws, 0, nil); errors.Is(err, unix.ECHILD) {
				return
			}
		}
	}
}

// children are the launcher's living children: those each of its threads
// has (/proc/self/task/TID/children), or, where the kernel does not list
// them, every process whose parent it is.
func children() []int {
	self := os.Getpid()
	var out []int
	tasks, err := os.ReadDir("/proc/self/task")
	listed := false
	if err == nil {
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			listed = true
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					out = append(out, pid)
				}
			}
		}
	}
	if listed {
		return out
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(self) {
			out = append(out, pid)
		}
	}
	return out
}
