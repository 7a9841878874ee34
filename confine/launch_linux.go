//go:build linux

package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/policy"
)

// A launch has two stages. The first (run) stays outside the jail: it
// makes the plan, starts the second, waits for it, and when it has
// exited, kills every process the program left behind (the launcher is
// their sub-reaper: a setsid daemon or a double fork comes back to it),
// removes the launch's own temp directory and sweeps what the program
// created in the project. The second (stage2) is the launcher's own
// binary again: for a capability that writes, where the kernel lets an
// unprivileged user make a user namespace, in user, mount, IPC and PID
// namespaces of its own, where it makes everything outside the write set
// read-only by mounts (so not even a mode, owner, time or extended
// attribute changes there, which Landlock does not cover) and mounts the
// PID namespace's own /proc. It restricts itself, starts the program and
// stays as the namespace's init (init_linux.go): when it exits, the
// kernel kills every process left in the namespace. Otherwise
// (read-only, or namespaces refused: Claude Code's sandbox, Ubuntu
// 24.04's AppArmor default) there is no second Go process: the first
// stage forks a child that restricts itself by system calls alone and
// execs the program (fork_linux.go), whose filter sends every such
// change to the first stage (the broker: made in the write set, refused
// elsewhere; brokermode_linux.go) or refuses it, and whose descendants
// the first stage stops and kills when it has exited (stopTree). Either
// way the call runs in a cgroup of its own where the user may make one
// (cgroup_linux.go), and its tasks are bounded (tasks_linux.go).

// noNamespaces: the launcher never asks for namespaces (a test shows
// the filter holding alone, as where they are refused).
var noNamespaces bool

// noBroker: the launch runs without the broker, in either mode (a test
// measures what it costs, and shows the sweep, the second layer, alone).
var noBroker bool

// launch is what the first stage hands the second, on descriptor 3.
type launch struct {
	Spec Spec
	Plan Plan
	// NS: the second stage is in user, mount, IPC and PID namespaces of
	// its own.
	NS bool
	// PidsMax: the call's cgroup bounds its tasks.
	PidsMax bool
	// OwnNet: with NS, the second stage is in a network namespace of its
	// own too (a capability without the network).
	OwnNet bool
	// Places are the guard's own paths, core.hooksPath's directories in
	// them: the second stage's broker judges names by them.
	Places policy.Places
}

// run is the first stage: it returns the program's exit status, or an
// error when the program was not run.
func run(s Spec, e Env, stderr io.Writer) (int, error) {
	// A descriptor the agent's process left open (a socket, a file opened
	// before the ruleset) would reach past the restriction: no child
	// inherits one but the standard three and the redirections.
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return 0, fmt.Errorf("close_range: %w", err)
	}
	// A launch that writes waits for the project before it plans
	// (undo.AwaitProject): its plan is then of the project as the call it
	// waited for left it.
	if err := awaitProject(s, e, stderr); err != nil {
		return 0, err
	}
	plan, err := NewPlan(s, e)
	// What the sweep of an earlier launch, killed before it, found.
	fmt.Fprint(stderr, plan.recovered)
	if err != nil {
		return 0, err
	}
	defer removeRun(plan.RunDir) // after every process of the launch has exited
	// The project as the plan saw it, for the sweep: the directory the
	// call began in, wherever a call of an enclosing project moves it,
	// and never what a link put in its place leads to.
	root := -1
	if plan.Project != "" {
		if root, err = openProject(plan.Project, plan.RootID); err != nil {
			return 0, err
		}
		defer unix.Close(root)
	}
	// Undo (confine/undo_linux.go): what the program can write is
	// recorded before it starts; the after-state, and the project's lock
	// let go, once the sweep below has run.
	rec, err := recordUndo(s, plan, e, stderr)
	if err != nil {
		return 0, err
	}
	defer rec.finish(stderr)
	if rec.waited {
		// Another call took the project between the wait above and the
		// record: the plan is of the project before that call.
		return 0, errors.New("another call took the project while this one was being prepared, and this one waited for it: nothing ran; run it again")
	}
	// The package.json entries the project's hooks run by name
	// (pkgscripts_linux.go).
	var pkgPins []pkgPin
	var workspaces map[string]bool
	if root >= 0 {
		pkgPins = snapshotPkgScripts(plan, root)
		workspaces = workspacesNow(plan)
	}
	// +git: git's configuration and hooks as they are now (gitpin.go).
	var pins pinned
	var refs *gitRefs
	if len(plan.GitPins) > 0 {
		if pins, err = snapshotPins(plan.Project, root, plan.Kept, plan.GitPins); err != nil {
			return 0, err
		}
		// And git's refs and index (gitrefs_linux.go).
		if refs, err = snapshotRefs(s, plan, e, root); err != nil {
			return 0, err
		}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	// Signals the first stage is sent go to the program (a terminal's
	// ^C reaches both; the program's handler decides).
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT)
	defer signal.Stop(sigs)
	// A cgroup of the call's own where the user may make one
	// (cgroup_linux.go).
	cg, err := newCallCgroup()
	if err != nil {
		return 0, err
	}
	if cg != nil {
		defer cg.remove()
	}
	// What the sweep needs, for a later launch's should this launcher be
	// killed before it (pending_linux.go).
	if plan.Project != "" {
		cgDir := ""
		if cg != nil {
			cgDir = cg.dir
		}
		if err := writePending(plan, cgDir, rec, e.Places.StateDir); err != nil {
			return 0, err
		}
	}
	// Namespaces of its own only for a capability that writes: what they
	// give (metadata changes kept to the write set, the top level, System
	// V IPC and /dev/shm of its own) is for a program that writes; a
	// read-only program's metadata changes are the broker's (made in its
	// own TMPDIR and caches alone), and it saves the second stage's
	// process start (fork_linux.go).
	var c child
	ns := !noNamespaces && plan.Project != ""
	var handover []byte
	if ns {
		// The second stage gets the launch as JSON, which cannot carry a
		// name that is not UTF-8 (the encoder writes U+FFFD for it): a
		// held path the second stage never found was not mounted
		// read-only, and the fourteenth attack run's nested .git/config
		// under src/\xff was written. Such a launch runs as one whose
		// namespaces are refused, by the filter and the first stage,
		// which read no hand-over.
		if handover, ns = stage2Handover(s, plan, e, cg); ns {
			c, err = startStage2(handover, plan.Network, cg)
		}
	}
	var broker *topBroker
	if !ns || err != nil {
		// No namespace of its own (not needed, or refused here): the
		// program is forked in this one. The first stage makes the
		// metadata changes the program may make (its own files' modes
		// and times), and under a capability that writes the project
		// new files at its top.
		var theirs *os.File
		if !noBroker {
			if broker, theirs, err = startBroker(plan, e, brokerRole{serve: true}); err != nil {
				return 0, err
			}
		}
		c, err = startJailed(s, plan, cg, theirs, broker)
		if theirs != nil {
			theirs.Close()
		}
		if broker != nil {
			if err != nil {
				_ = broker.close()
				broker = nil
			} else {
				broker.start()
			}
		}
	}
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				_ = unix.Kill(c.pid, sig.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	ws, werr := c.wait()
	close(done)
	if cg != nil {
		if err := cg.kill(); err != nil {
			fmt.Fprintf(stderr, "loopguard: killing what the call left in its cgroup: %v\n", err)
		}
	}
	if !reapedAll() {
		stopTree()
		reapRest()
	}
	if broker != nil {
		if err := broker.close(); err != nil {
			fmt.Fprintf(stderr, "loopguard: %v; the sweep runs all the same\n", err)
		}
	}
	for _, line := range afterCall(plan, e, root, pins, refs, pkgPins, workspaces) {
		fmt.Fprintln(stderr, oneLine(line))
	}
	if werr != nil {
		return 0, werr
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

// afterCall is what the first stage looks at once no process of the call
// is left, from the project's descriptor root (the directory the call
// began in, wherever it is now), and the lines that say what it did: the
// sweep of the project, +git's pins put back, git's state held back and
// its refs and index looked at (gitRefs), the module cache's stat
// directory.
func afterCall(plan Plan, e Env, root int, pins pinned, refs *gitRefs, pkgPins []pkgPin, workspaces map[string]bool) []string {
	held := &holder{p: plan, e: e}
	defer held.close()
	var lines []string
	if plan.Project != "" {
		lines = append(lines, sweep(plan, e, held, root)...)
		lines = append(lines, restorePkgScripts(pkgPins, root, held)...)
		// After the roots' own are put back: a workspace list the call
		// changed names no workspace of its own making.
		lines = append(lines, restorePkgScripts(newWorkspacePins(plan, workspaces, pkgPins), root, held)...)
	}
	if pins.entries != nil {
		lines = append(lines, pins.restore(held)...)
		lines = append(lines, holdGitState(plan.Project, root, plan.Kept, plan.started, held)...)
		lines = append(lines, refs.check(held)...)
	}
	return append(lines, sweepGoStat(plan)...)
}

// child is the launch's one direct child, and how to wait for it.
type child struct {
	pid  int
	wait func() (syscall.WaitStatus, error)
}

// startJailed starts the program without namespaces of its own: a child
// forked from this process restricts itself and execs it (fork_linux.go);
// under the broker, it hands the filter's listener over on broker.
func startJailed(s Spec, plan Plan, cg *callCgroup, broker *os.File, b *topBroker) (child, error) {
	var nproc uint64
	setNproc := cg == nil || !cg.pidsMax
	if setNproc {
		var err error
		if nproc, err = taskLimit(false); err != nil {
			return child{}, err
		}
	}
	o := plan.filter(false, false) // reads the mount table: once a launch
	if b != nil {
		b.mounted = !o.metadata
	}
	f, err := prepareFork(s, plan, o, broker, nproc, setNproc)
	if err != nil {
		return child{}, err
	}
	cgfd := -1
	if cg != nil {
		cgfd = cg.fd
	}
	pid, rd, err := forkJailed(f, cgfd)
	if err == nil && b != nil && f.maker >= 0 {
		b.makerRules, f.maker = f.maker, -1
	}
	f.close()
	if err != nil {
		return child{}, err
	}
	return child{pid: pid, wait: func() (syscall.WaitStatus, error) {
		// The child's report first: the broker (started by now) answers
		// the opens of its redirections.
		ferr := forkResult(s, rd)
		ws, err := waitPid(pid)
		if err != nil {
			return 0, err
		}
		if ferr != nil {
			return 0, ferr
		}
		return ws, nil
	}}, nil
}

// waitPid waits for the child pid to end, again where a signal
// interrupts the wait.
func waitPid(pid int) (syscall.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			return syscall.WaitStatus(ws), err
		}
	}
}

// stage2Handover is the launch the second stage reads, and whether it
// carries every byte of it: JSON writes U+FFFD for a string that is not
// UTF-8 (escaped, so that a name holding U+FFFD itself is told apart; a
// name holding the text \ufffd is taken for one too, and its launch
// runs without namespaces).
func stage2Handover(s Spec, plan Plan, e Env, cg *callCgroup) ([]byte, bool) {
	places := e.Places
	places.HooksPaths, places.Imports = plan.hooksPaths, plan.imports
	b, err := json.Marshal(launch{Spec: s, Plan: plan, NS: true, OwnNet: !plan.Network, PidsMax: cg != nil && cg.pidsMax, Places: places})
	if err != nil || bytes.Contains(b, []byte(`\ufffd`)) {
		return nil, false
	}
	return append(b, '\n'), true
}

// startStage2 starts the second stage in user, mount, IPC and PID
// namespaces of its own: a process of its own, the PID namespace's init,
// which makes its mounts and restricts itself before it starts the
// program (init_linux.go).
func startStage2(handover []byte, network bool, cg *callCgroup) (child, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return child{}, err
	}
	defer r.Close()
	uid, gid := os.Getuid(), os.Getgid()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{os.Args[0], Subcommand, stage2Flag},
		Env:        os.Environ(),
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{r},
		// The program dies with the launcher: a launcher killed by the
		// agent's timeout leaves no program running.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if cg != nil {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = cg.fd
	}
	a := cmd.SysProcAttr
	a.Cloneflags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWPID
	if !network {
		// A capability without the network gets a network
		// namespace of its own: its loopback, nothing else.
		a.Cloneflags |= unix.CLONE_NEWNET
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	// The namespace's capabilities would end at the second stage's
	// execve (its user is not root): it keeps the two it needs to
	// make its mounts, and drops them before the program runs
	// (isolate).
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	if !network {
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN) // to bring its loopback up
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return child{}, fmt.Errorf("failed to start the launch: %w", err)
	}
	_, err = w.Write(handover)
	w.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return child{}, fmt.Errorf("failed to hand the launch over: %w", err)
	}
	return child{pid: cmd.Process.Pid, wait: func() (syscall.WaitStatus, error) {
		err := cmd.Wait()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return 0, err
		}
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		return ws, nil
	}}, nil
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
	// Every step below is this thread's (the capabilities isolate drops,
	// the restriction): the one that execs or forks the program.
	runtime.LockOSThread()
	var nproc uint64
	if !l.PidsMax {
		if nproc, err = taskLimit(true); err != nil {
			return err
		}
	}
	if !l.NS {
		return errors.New("a second stage without namespaces of its own")
	}
	if l.OwnNet {
		// Before isolate, which drops the capability it needs.
		if err := loopbackUp(); err != nil {
			dropCapabilities()
			return err
		}
		l.Plan.OwnNet = true
	}
	mounted, err := isolate(&l.Plan)
	if err != nil {
		return err
	}
	// +git's git directories whole: each pin is mounted read-only (or,
	// where the kernel refused the mounts, put back after the call, as
	// before); this stage's broker serves no directory (gitWriteSet).
	l.Plan.WriteDirs = append(l.Plan.WriteDirs, l.Plan.GitDirs...)
	o := l.Plan.filter(true, mounted)
	// Where the mounts hold every protected entry in place, the project
	// is written whole (isolate) and the broker serves no directory.
	// Where they cannot (a protected entry that is a link, which no mount
	// holds: CLAUDE.md -> AGENTS.md; a project past the walk's budget;
	// the kernel refused the mounts), it serves the directories that hold
	// protected entries, the top included, as the first stage's does
	// with the filter alone: new names there, and no protected one
	// removed, renamed or replaced.
	whole := mounted && l.Plan.TopWritable
	o.namesOnly = whole
	var b *topBroker
	var theirs *os.File
	if o.opens && !noBroker {
		// A broker of its own, in the namespaces, for the names the
		// program makes in the project (maker_linux.go): its mounts and
		// Landlock say where.
		l.Plan.hooksPaths, l.Plan.imports = l.Places.HooksPaths, l.Places.Imports
		// /proc is this PID namespace's where ownProc could mount it
		// (this process is its init, pid 1); else the pidfd finds a
		// caller's entry there (procOf).
		self, _ := os.Readlink("/proc/self")
		if b, theirs, err = startBroker(l.Plan, Env{Places: l.Places}, brokerRole{serve: !whole, ownProc: self == "1"}); err != nil {
			return err
		}
		b.mounted = !o.metadata
	}
	return runInit(l.Spec, l.Plan, o, theirs, b, nproc, !l.PidsMax)
}

// filter is the filter a launch of p applies: in IPC namespaces of its
// own (ipcNS) System V IPC is its own; where its mounts keep every change
// of mode, owner, times and extended attributes to its write set
// (mounted), or inside a sandbox that mounted all else read-only
// (Claude Code's is not one: docs/confinement.md says what it could
// still reach), project-write's own such changes run; otherwise the
// filter refuses them. A launch that writes the project sends its
// opens to the broker too, where it has one (opens).
func (p Plan) filter(ipcNS, mounted bool) filterOpts {
	o := filterOpts{network: p.Network || p.OwnNet, metadata: true, sysvIPC: ipcNS, opens: p.Project != ""}
	// A protected entry in a bulk directory is not mounted (RemoveDirs):
	// the mounts do not keep every such change to the write set then.
	if mounted && len(p.RemoveDirs) == 0 || p.Project != "" && sandboxedOutside(p.Project, p.SharedTemp) {
		o.metadata = false
	}
	return o
}

// reapedAll reaps every child that has ended and reports whether no
// child is left, without reading /proc: the common end of a call, whose
// program left nothing behind (or whose cgroup.kill ended all of it).
// The launcher is every orphan's sub-reaper, and a process reparents its
// children before it can be reaped, so a launcher without children has
// no descendant left either. A child still running, or one that has not
// ended yet, leaves it to stopTree and reapRest.
func reapedAll() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
			continue
		case errors.Is(err, unix.ECHILD):
			return true
		case err != nil || pid == 0:
			return false
		}
	}
}

// reapRest kills and reaps every process left behind: the launcher is
// their sub-reaper, so each orphan of the program is its child. A process
// that forks while it is being killed leaves an orphan that comes back to
// the launcher: it loops until the kernel says no child is left. It never
// blocks on a child it has not killed: one being reparented, not yet
// listed, is listed and killed on a later round.
func reapRest() {
	for {
		kids := children()
		for _, pid := range kids {
			signalProc(pid, unix.SIGKILL)
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
			// A child not listed yet, or one just killed that has not
			// ended: look again shortly.
			time.Sleep(time.Millisecond)
		}
	}
}

// Pids read from /proc are /proc's: the PID namespace it was mounted for,
// which inside Claude Code's sandbox is not the launcher's (there a
// jailed call's daemon was not killed, and the call waited for it to
// end). They are read in /proc's numbering and signalled in the
// launcher's (signalProc).

// procNS is the launcher's pid in /proc's numbering, and where the
// launcher's own namespace is in an NSpid line (-1: /proc is the
// launcher's own namespace's; -2: cannot tell). Asked once, when the
// launch ends.
var procNS = sync.OnceValues(func() (string, int) {
	self, err := os.Readlink("/proc/self")
	if err != nil || self == strconv.Itoa(os.Getpid()) {
		return strconv.Itoa(os.Getpid()), -1
	}
	ns := nsPids("/proc/self/status")
	if len(ns) == 0 || ns[len(ns)-1] != os.Getpid() {
		return self, -2 // cannot tell: no pid is signalled
	}
	return self, len(ns) - 1
})

// nsPids is the NSpid line of a /proc status file: the task's pid in
// /proc's namespace and in each one below it, its own last.
func nsPids(status string) []int {
	v, ok := procField(status, "NSpid")
	if !ok {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(v) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// signalProc sends sig to the process /proc names pid, by its pid in the
// launcher's namespace; nothing when that cannot be told (never a pid of
// 0 or less, which would name a process group or every process).
func signalProc(pid int, sig unix.Signal) {
	own := pid
	_, ownLevel := procNS()
	switch {
	case ownLevel == -2:
		return
	case ownLevel >= 0:
		ns := nsPids("/proc/" + strconv.Itoa(pid) + "/status")
		if len(ns) <= ownLevel {
			return
		}
		own = ns[ownLevel]
	}
	if own > 0 {
		_ = unix.Kill(own, sig)
	}
}

// children are the launcher's living children, in /proc's numbering:
// those each of its threads has (/proc/self/task/TID/children), or, where
// the kernel does not list them, every process whose parent it is.
func children() []int {
	self, _ := procNS()
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
		if len(f) > 1 && f[1] == self {
			out = append(out, pid)
		}
	}
	return out
}
