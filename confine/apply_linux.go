//go:build linux

package confine

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/internal/testknobs"
	"github.com/loopguard/loopguard/policy"
)

// ABI is the kernel's Landlock ABI version, 0 when Landlock is off or
// missing.
func ABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// configs are the go-landlock configurations by ABI: the launcher asks for
// exactly what the kernel has (never BestEffort: what is enforced must be
// known).
var configs = map[int]landlock.Config{4: landlock.V4, 5: landlock.V5, 6: landlock.V6, 7: landlock.V7}

// maxKnownABI is the newest ABI the launcher names rights for.
const maxKnownABI = 7

// The rights of each kind of rule (go-landlock's RODirs, ROFiles, RWDirs
// with refer, RWFiles), before they are cut to what the ABI handles.
const (
	accessRead     = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	accessReadFile = llsys.AccessFSExecute | llsys.AccessFSReadFile
	accessWrite    = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar |
		llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo |
		llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSTruncate
	accessRWDir  = accessRead | accessWrite | llsys.AccessFSRefer
	accessRWFile = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSWriteFile | llsys.AccessFSTruncate
	// accessRemove: a bulk directory's (Plan.RemoveDirs): what is in it
	// removed, nothing made, written or moved in or out (no refer).
	accessRemove = llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile
	// accessGoStat: what go needs to write its stat (gostat.go): files
	// made, written, renamed over one another and removed in the one
	// directory; no link, directory or device, nothing moved in.
	accessGoStat = llsys.AccessFSReadFile | llsys.AccessFSReadDir | llsys.AccessFSWriteFile | llsys.AccessFSMakeReg |
		llsys.AccessFSRemoveFile | llsys.AccessFSTruncate
)

// writeDirAccess is what capability c may do in the directories it
// writes (the project's): every right, but under the jail (a call no
// human decided) no link made. The file tools write the project on the
// jail's Edit(**) without a decision too, and the host resolves a path
// when it checks it, then writes: a jailed call running beside them (in
// the background, or a parallel subagent's) that swaps a directory on
// the path for a link to ~/.ssh between the two makes the write land
// there (TestFileToolsThroughASwappedDirectory did, through the real
// client). Without the right to make a link (nor to move one: a link
// renamed into a directory needs the same right there), nothing a jailed
// call does puts one in the project; a call that must (python -m venv,
// ln -s) is refused it, and asks to leave the jail. The private
// directories (the temp, the caches) keep it: no file tool writes there.
func writeDirAccess(c policy.Capability) uint64 {
	if c.Jail {
		return accessRWDir &^ llsys.AccessFSMakeSym
	}
	return accessRWDir
}

// pathRule grants access beneath one path. A private rule's path is
// opened without following a link in its last name and must be a
// directory of the ruleset's owner's (openPrivate); a nofollow rule's is
// opened without following a link in its last name (Plan.NoFollow).
type pathRule struct {
	access   uint64
	path     string
	private  bool
	nofollow bool
	// beneath: the path lies below this directory (the project), and is
	// opened from it without following any link (openat2
	// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS): a concurrent call that
	// replaced a directory the plan saw by a link (to the home) between
	// the plan and the launch gets its rule skipped, never the link's
	// target granted.
	beneath string
	// id: the device and inode the plan's walk read at path
	// (Plan.RuleIDs), zero when it kept none: the rule is added only on
	// that one.
	id [2]uint64
}

// ruleset is a plan as the kernel takes it: the rights it handles and the
// rules that grant some back.
type ruleset struct {
	fs, net, scoped uint64
	rules           []pathRule
	// ports are the TCP ports the program may connect to (the network
	// capability's, 443 by default); it binds none.
	ports []uint16
	owner int
	// root is the plan's Root, opened for a rule only while it is the
	// directory rootID names (the plan's RootID).
	root   string
	rootID [2]uint64
}

// newRuleset is plan's ruleset under the kernel's Landlock ABI abi, for a
// launch of capability c (its network's ports).
func newRuleset(plan Plan, c policy.Capability, abi int) (ruleset, error) {
	if abi < MinABI {
		return ruleset{}, fmt.Errorf("the kernel's Landlock ABI is %d; confinement needs %d or later", abi, MinABI)
	}
	abi = min(abi, maxKnownABI)
	cfg := configs[abi]
	rs := ruleset{fs: uint64(cfg.HandledAccessFS), net: uint64(cfg.HandledAccessNet), scoped: uint64(cfg.Scoped), owner: plan.Owner,
		root: plan.Root, rootID: plan.RootID}
	switch {
	case plan.OwnNet || plan.Network && c.AnyPort:
		// TCP is not handled at all: any connection, any listener (with
		// OwnNet, of the launch's own loopback alone; with AnyPort, a
		// +network granted before ports were named, what it meant then).
		rs.net = 0
	case plan.Network && c.Network:
		// TCP connect to the capability's ports alone, every listener
		// refused: Landlock's port rules (ABI 4, which MinABI is).
		rs.ports = c.TCPPorts()
	}
	add := func(paths []string, access uint64, private bool) {
		for _, p := range paths {
			r := pathRule{access: access & rs.fs, path: p, private: private, nofollow: slices.Contains(plan.NoFollow, p), id: plan.RuleIDs[p]}
			if plan.Root != "" && p != plan.Root && isAncestorOrSelf(plan.Root, p) {
				r.beneath = plan.Root
			}
			rs.rules = append(rs.rules, r)
		}
	}
	add(plan.ReadDirs, accessRead, false)
	add(plan.ReadFiles, accessReadFile, false)
	add(plan.ListDirs, llsys.AccessFSReadDir, false)
	add(plan.WriteDirs, writeDirAccess(c), false)
	add(plan.WriteFiles, accessRWFile, false)
	add(plan.RemoveDirs, accessRemove, false)
	add(plan.Private, accessRWDir, true)
	if plan.GoStatDir != "" {
		add([]string{plan.GoStatDir}, accessGoStat, false)
	}
	return rs, nil
}

// apply restricts the calling thread to plan: Landlock first, then the
// socket filter. Only this thread: it is locked to the goroutine that
// execs next, and execve keeps exactly its restrictions (the other threads
// of the Go runtime end there), so the all-threads machinery, which
// signals every thread, is not needed.
func apply(plan Plan, c policy.Capability, o filterOpts) error {
	if testknobs.On(testknobs.NoRuleset) {
		return nil
	}
	rs, err := newRuleset(plan, c, ABI())
	if err != nil {
		return err
	}
	if err := rs.restrict(); err != nil {
		return err
	}
	return installFilter(o)
}

// applyBrokered is apply for a program whose names in the project the
// broker b makes (maker_linux.go): the program's ruleset without the
// rights to make them, the maker's handed to b, and the filter's listener
// sent to b on conn, which it serves from now on (b.start). Under a
// listener above (EBUSY) the filter goes in without the broker, and no
// name is made in the project.
func applyBrokered(plan Plan, c policy.Capability, o filterOpts, conn *os.File, b *topBroker) error {
	rs, err := newRuleset(plan, c, ABI())
	if err != nil {
		return err
	}
	prog, mk, err := rs.buildWithMaker(plan.Project)
	if err != nil {
		return err
	}
	b.makerRules = mk
	b.start() // after makerRules is set: it is the broker's from here
	err = restrictTo(prog)
	unix.Close(prog)
	if err != nil {
		return err
	}
	o.broker = true
	fp, err := fprog(o)
	if err != nil {
		return err
	}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(fp)))
	runtime.KeepAlive(fp)
	switch {
	case e == unix.EBUSY:
		o.broker = false
		return installFilter(o)
	case e != 0:
		return fmt.Errorf("seccomp: %w", e)
	}
	err = unix.Sendmsg(int(conn.Fd()), []byte{0}, unix.UnixRights(int(fd)), nil, 0)
	unix.Close(int(fd))
	if err != nil {
		return fmt.Errorf("handing the filter's listener over: %w", err)
	}
	return nil
}

// restrict builds rs in the kernel and restricts the calling thread to it.
func (rs ruleset) restrict() error {
	fd, err := rs.build()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return restrictTo(fd)
}

// restrictTo restricts the calling thread to the ruleset fd.
func restrictTo(fd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// addRules adds rs's rules to the ruleset fd; with a maker (mk >= 0,
// maker_linux.go), without the rights to make a name or write a file at
// or below project (makerRights), and each rule to mk as it is.
func (rs ruleset) addRules(fd, mk int, project string) error {
	var err error
	roots := map[string]int{}
	defer func() {
		for _, fd := range roots {
			_ = unix.Close(fd)
		}
	}()
	for _, r := range rs.rules {
		var pfd int
		flags := unix.O_PATH | unix.O_CLOEXEC
		// A nofollow rule of a file (no right to list): one that is not
		// a regular file now, or is gone, gets no rule (the enclosing
		// repository's .gitignore made a link to a key since the plan).
		file := r.nofollow && r.access&llsys.AccessFSReadDir == 0
		if r.nofollow {
			flags |= unix.O_NOFOLLOW
			if !file {
				flags |= unix.O_DIRECTORY
			}
		}
		switch {
		case r.private:
			pfd, err = openPrivate(r.path, rs.owner)
		case r.beneath != "":
			root, ok := roots[r.beneath]
			if !ok {
				if root, err = rs.openRoot(r.beneath); err != nil {
					return fmt.Errorf("landlock: %w", err)
				}
				roots[r.beneath] = root
			}
			if pfd, err = openBeneath(root, strings.TrimPrefix(r.path, r.beneath+"/"), unix.O_PATH); err != nil {
				// Gone or made a link since the plan: no rule, and the
				// program gets less, never the link's target.
				continue
			}
			if r.id != ([2]uint64{}) && !sameID(pfd, r.id) {
				// Another directory or file under the name since the walk
				// (a concurrent call renamed one there): no rule, never
				// one on what the walk did not judge.
				_ = unix.Close(pfd)
				continue
			}
		case r.path == rs.root:
			if pfd, err = rs.openRoot(r.path); err != nil {
				err = fmt.Errorf("landlock: %w", err)
			}
		default:
			if pfd, err = unix.Open(r.path, flags, 0); err != nil && file {
				continue
			} else if err != nil {
				err = fmt.Errorf("landlock: %s: %w", r.path, err)
			} else if file && !regularFd(pfd) {
				_ = unix.Close(pfd)
				continue
			}
		}
		if err != nil {
			return err
		}
		access := r.access
		if mk >= 0 {
			// The maker has every rule as it is (an open for reading
			// and writing needs the read rule too); the program, at or
			// below the project, no right to make a name or to write a
			// file there.
			err = llsys.LandlockAddPathBeneathRule(mk, &llsys.PathBeneathAttr{ParentFd: pfd, AllowedAccess: r.access}, 0)
			if !r.private && isAncestorOrSelf(project, r.path) {
				access &^= makerRights
			}
		}
		if err == nil {
			err = llsys.LandlockAddPathBeneathRule(fd, &llsys.PathBeneathAttr{ParentFd: pfd, AllowedAccess: access}, 0)
		}
		_ = unix.Close(pfd)
		if err != nil {
			return fmt.Errorf("landlock_add_rule %s: %w", r.path, err)
		}
	}
	for _, port := range rs.ports {
		if rs.net&llsys.AccessNetConnectTCP == 0 {
			break // TCP not handled: every port already
		}
		if err := llsys.LandlockAddNetPortRule(fd, &llsys.NetPortAttr{AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
			return fmt.Errorf("landlock_add_rule port %d: %w", port, err)
		}
	}
	return nil
}

// regularFd reports whether fd is a regular file.
func regularFd(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}

// sameID reports whether fd is the file whose device and inode are id.
func sameID(fd int, id [2]uint64) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && [2]uint64{st.Dev, st.Ino} == id
}

// openRoot opens dir, a rule's path or the directory rules below it are
// opened from: the plan's Root only while it is the directory the plan
// saw (a link put in its place by a call of an enclosing project would
// make the rules the home's), any other as it is.
func (rs ruleset) openRoot(dir string) (int, error) {
	id := rs.rootID
	if dir != rs.root {
		id = [2]uint64{}
	}
	fd, err := openProject(dir, id)
	if err != nil && !errors.Is(err, errMoved) {
		err = fmt.Errorf("%s: %w", dir, err)
	}
	return fd, err
}

// openPrivate opens a private directory without following a link in its
// last name and checks what it opened, a directory of uid's (its mode is
// the tool's: Go's cache makes its directories 0755; the scratch
// directory above it is what no one else may enter): the rule is then on
// that directory, whatever the path names by the time the ruleset is
// built.
func openPrivate(d string, uid int) (int, error) {
	fd, err := unix.Open(d, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("%s is not a directory of this user's (a link, or another's): remove it (%w)", d, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("%s: %w", d, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("%s is not a directory of this user's (a link, or another's): remove it", d)
	}
	return fd, nil
}

// prepareJailed applies plan and the filter o to this thread, makes s's
// redirections under them and enters s's directory: what runInit does
// before the program runs (without namespaces, forkJailed's child does
// the same by system calls alone).
func prepareJailed(s Spec, plan Plan, o filterOpts, conn *os.File, b *topBroker) error {
	runtime.LockOSThread() // the filter is this thread's; execve and fork keep it
	// +network to named ports: Landlock holds TCP to them, the filter
	// keeps every other IP protocol (SCTP, Multipath TCP) out.
	o.tcpUDP = plan.Network && !plan.OwnNet && !s.Cap.AnyPort
	if b != nil {
		err := applyBrokered(plan, s.Cap, o, conn, b)
		conn.Close()
		if err != nil {
			return err
		}
	} else if err := apply(plan, s.Cap, o); err != nil {
		return err
	}
	// A descriptor the agent's process left open (a socket, a file opened
	// before the ruleset) would reach past it: the program gets only its
	// standard three and the command's own redirections.
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close_range: %w", err)
	}
	if err := redirect(s.Redirects); err != nil {
		return err
	}
	if err := os.Chdir(s.Cwd); err != nil {
		return fmt.Errorf("failed to enter %s: %w", s.Cwd, err)
	}
	return nil
}

// jailEnv is the program's environment: the launcher's, less what the
// capability drops, with the plan's own variables set.
func jailEnv(plan Plan) []string {
	env := os.Environ()
	if !testknobs.On(testknobs.NoRuleset) { // the knob turns the whole confinement off
		env = slices.DeleteFunc(env, func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			return !plan.KeepsEnv(k)
		})
	}
	for k, v := range plan.Env {
		env = setEnv(env, k, v)
	}
	return env
}

// redirect performs the redirections in order, as bash would have, but
// under the restriction: a file the capability does not allow is refused
// by the kernel.
func redirect(rs []Redirect) error {
	for _, r := range rs {
		switch r.Op {
		case "close":
			_ = unix.Close(r.Fd)
			continue
		case "dup":
			if err := unix.Dup3(r.Dup, r.Fd, 0); err != nil && r.Dup != r.Fd {
				return fmt.Errorf("%d>&%d: %w", r.Fd, r.Dup, err)
			}
			continue
		}
		fd, err := unix.Open(r.Path, r.openFlags()|unix.O_CLOEXEC, 0o666)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Path, err)
		}
		if fd != r.Fd {
			if err := unix.Dup3(fd, r.Fd, 0); err != nil {
				return fmt.Errorf("%s: %w", r.Path, err)
			}
			_ = unix.Close(fd)
		} else if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("%s: %w", r.Path, err)
		}
	}
	return nil
}

// openFlags are the flags a file redirection opens its file with.
func (r Redirect) openFlags() int {
	switch {
	case r.Op == "<>":
		return unix.O_RDWR | unix.O_CREAT
	case r.Op == ">" && r.Append:
		return unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND
	case r.Op == ">":
		return unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC
	}
	return unix.O_RDONLY
}

func setEnv(env []string, k, v string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) > len(k) && kv[:len(k)+1] == k+"=" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, k+"="+v)
}

// changeTime is fi's change time (ctime), in nanoseconds.
func changeTime(fi os.FileInfo) int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi.ModTime().UnixNano()
	}
	return st.Ctim.Nano()
}

func ownedBy(fi os.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}
