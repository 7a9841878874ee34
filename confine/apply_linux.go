//go:build linux

package confine

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/internal/testknobs"
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

// apply restricts the calling thread to plan: Landlock first, then the
// socket filter. Only this thread: it is locked to the goroutine that
// execs next, and execve keeps exactly its restrictions (the other threads
// of the Go runtime end there), so the all-threads machinery, which
// signals every thread, is not needed.
func apply(plan Plan) error {
	if testknobs.On(testknobs.NoRuleset) {
		return nil
	}
	abi := ABI()
	if abi < MinABI {
		return fmt.Errorf("the kernel's Landlock ABI is %d; confinement needs %d or later", abi, MinABI)
	}
	cfg := configs[min(abi, maxKnownABI)]
	rules := []landlock.Rule{}
	if len(plan.ReadDirs) > 0 {
		rules = append(rules, landlock.RODirs(plan.ReadDirs...))
	}
	if len(plan.ReadFiles) > 0 {
		rules = append(rules, landlock.ROFiles(plan.ReadFiles...))
	}
	if len(plan.WriteDirs) > 0 {
		rules = append(rules, landlock.RWDirs(plan.WriteDirs...).WithRefer())
	}
	if len(plan.WriteFiles) > 0 {
		rules = append(rules, landlock.RWFiles(plan.WriteFiles...))
	}
	if len(plan.Private) > 0 {
		fds, err := openPrivate(plan.Private, plan.Owner)
		defer func() {
			for _, fd := range fds {
				_ = unix.Close(fd)
			}
		}()
		if err != nil {
			return err
		}
		paths := make([]string, len(fds))
		for i, fd := range fds {
			paths[i] = fmt.Sprintf("/proc/self/fd/%d", fd)
		}
		rules = append(rules, landlock.RWDirs(paths...).WithRefer())
	}
	if plan.Network {
		// TCP is not handled at all: any connection, any listener.
		cfg.HandledAccessNet = 0
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return installFilter(plan.Network)
}

// openPrivate opens each private directory without following a link in
// its last name and checks what it opened, a directory of uid's (its mode
// is the tool's: Go's cache makes its directories 0755; the scratch
// directory above it is what no one else may enter): the rule is then on
// that directory (its /proc/self/fd name), whatever the path names by the
// time the ruleset is built.
func openPrivate(dirs []string, uid int) ([]int, error) {
	var fds []int
	for _, d := range dirs {
		fd, err := unix.Open(d, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fds, fmt.Errorf("%s is not a directory of this user's (a link, or another's): remove it (%w)", d, err)
		}
		fds = append(fds, fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fds, fmt.Errorf("%s: %w", d, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid {
			return fds, fmt.Errorf("%s is not a directory of this user's (a link, or another's): remove it", d)
		}
	}
	return fds, nil
}

// run applies s and execs its program; it returns only on failure.
func run(s Spec, e Env) error {
	runtime.LockOSThread() // the filter is this thread's; execve keeps it
	plan, err := NewPlan(s, e)
	if err != nil {
		return err
	}
	if err := apply(plan); err != nil {
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
	return syscall.Exec(s.Exe, s.Argv, env)
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
		flags := unix.O_RDONLY
		switch {
		case r.Op == "<>":
			flags = unix.O_RDWR | unix.O_CREAT
		case r.Op == ">" && r.Append:
			flags = unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND
		case r.Op == ">":
			flags = unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC
		}
		fd, err := unix.Open(r.Path, flags|unix.O_CLOEXEC, 0o666)
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

func ownedBy(fi os.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}
