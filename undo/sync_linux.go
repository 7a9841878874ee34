//go:build linux

package undo

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
)

// syncTimeout bounds a record's wait for the watcher's answer; past it
// the record walks the whole project.
var syncTimeout = 250 * time.Millisecond

// errNoWatcher: no watcher answered (none runs, or none in time).
var errNoWatcher = errors.New("no watcher answered")

// answer is the watcher's answer to one request.
type answer struct {
	since, id string
	full      bool
	changed   map[string]bool
}

// watching reports whether a watcher holds the store's lock.
func (s *Store) watching() bool { return s.locked(watchLockName) }

// locked reports whether a process holds the store's lock name.
func (s *Store) locked(name string) bool {
	f, err := os.OpenFile(filepath.Join(s.Dir, name), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := flock(f, unix.LOCK_SH|unix.LOCK_NB); err == nil {
		return false
	}
	return true
}

// sync asks the project's watcher what changed since its last answer.
func (s *Store) sync() (*answer, error) {
	if !s.watching() {
		return nil, errNoWatcher
	}
	dir, err := unix.Open(filepath.Join(s.Dir, watchDirName), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errNoWatcher // starting: not listening yet
	}
	defer unix.Close(dir)
	var r [8]byte
	_, _ = rand.Read(r[:])
	// Made and opened under another name, then renamed to its request
	// name: the watcher, told of the rename, finds it open for reading.
	tmp, name := "tmp-"+hex.EncodeToString(r[:]), "req-"+hex.EncodeToString(r[:])
	if err := unix.Mkfifoat(dir, tmp, 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoWatcher, err)
	}
	fd, err := unix.Openat(dir, tmp, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return nil, fmt.Errorf("%w: %v", errNoWatcher, err)
	}
	defer unix.Close(fd)
	if err := unix.Renameat(dir, tmp, dir, name); err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return nil, fmt.Errorf("%w: %v", errNoWatcher, err)
	}
	defer unix.Unlinkat(dir, name, 0)
	deadline := time.Now().Add(syncTimeout)
	var out []byte
	buf := make([]byte, 16<<10)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, errNoWatcher
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, int(left/time.Millisecond)+1); err != nil && !errors.Is(err, unix.EINTR) {
			return nil, err
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break // the watcher wrote its answer and closed
		}
		if out = append(out, buf[:n]...); len(out) > maxAnswer+4096 {
			return nil, errors.New("the watcher's answer is too long")
		}
	}
	return parseAnswer(out)
}

// parseAnswer reads an answer (watchd_linux.go's answer writes it).
func parseAnswer(b []byte) (*answer, error) {
	bad := errors.New("the watcher's answer is malformed")
	rest, ok := bytes.CutPrefix(b, []byte(answerMagic))
	if !ok || !bytes.HasSuffix(rest, []byte(answerEnd)) {
		return nil, bad
	}
	rest = rest[:len(rest)-len(answerEnd)]
	a := &answer{}
	var size string
	rest, ok = cutFields(rest, &a.since, &a.id, &size)
	if !ok || a.since == "" || a.id == "" {
		return nil, bad
	}
	if n, err := strconv.Atoi(size); err != nil || n != len(rest) {
		return nil, bad
	}
	switch {
	case bytes.Equal(rest, []byte("full\n")):
		a.full = true
	case bytes.HasPrefix(rest, []byte("changed\n")):
		a.changed = map[string]bool{}
		for _, p := range strings.Split(string(rest[len("changed\n"):]), "\x00") {
			if p == "" {
				continue
			}
			if !validRel(p) {
				return nil, bad
			}
			a.changed[p] = true
		}
	default:
		return nil, bad
	}
	return a, nil
}

// cutFields cuts from b one line "NAME VALUE" per field, in order, and
// sets each field to its VALUE; ok is false when a line or its space is
// missing.
func cutFields(b []byte, fields ...*string) (rest []byte, ok bool) {
	for _, f := range fields {
		line, tail, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			return nil, false
		}
		_, v, ok := strings.Cut(string(line), " ")
		if !ok {
			return nil, false
		}
		*f, b = v, tail
	}
	return b, true
}

// The chain: a record that took its after-state from the watcher keeps,
// in its directory's "sync" file, that answer's id, the skip set it
// listed with, whether its before-state was clean (no file whose content
// it did not read itself, none changed within 2 s of it), and its files
// with more than one name.
type chain struct {
	after string
	skip  string
	clean bool
	multi []string
}

const chainMagic = "loopguard-undo-sync 1\n"

func (s *Store) writeChain(id string, c chain) error {
	var b strings.Builder
	b.WriteString(chainMagic)
	clean := 0
	if c.clean {
		clean = 1
	}
	fmt.Fprintf(&b, "after %s\nskip %s\nclean %d\n", c.after, c.skip, clean)
	for _, m := range c.multi {
		b.WriteString(m)
		b.WriteByte(0)
	}
	return s.writeNew(filepath.Join(s.recordDir(id), "sync"), func(w io.Writer) error {
		_, err := w.Write([]byte(b.String()))
		return err
	})
}

func (s *Store) readChain(id string) (chain, bool) {
	b, err := os.ReadFile(filepath.Join(s.recordDir(id), "sync"))
	if err != nil {
		return chain{}, false
	}
	rest, ok := bytes.CutPrefix(b, []byte(chainMagic))
	if !ok {
		return chain{}, false
	}
	var c chain
	var clean string
	if rest, ok = cutFields(rest, &c.after, &c.skip, &clean); !ok {
		return chain{}, false
	}
	c.clean = clean == "1"
	for _, m := range strings.Split(string(rest), "\x00") {
		if m != "" {
			if !validRel(m) {
				return chain{}, false
			}
			c.multi = append(c.multi, m)
		}
	}
	return c, c.after != ""
}

// skipKey names a skip set.
func skipKey(skip map[string]bool) string {
	keys := make([]string, 0, len(skip))
	for k, v := range skip {
		if v {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	h := sha256.Sum256([]byte(strings.Join(keys, "\x00")))
	return hex.EncodeToString(h[:16])
}

// WatchState says whether the project's watcher runs and, when it does
// not, why it last could not watch the project ("" when it did not fail,
// or when it is tried again: watchRetry after it failed).
func (s *Store) WatchState() (running bool, failed string) {
	if s.watching() {
		return true, ""
	}
	failed, _ = s.failedRecently()
	return false, failed
}

// failedRecently reports whether the watcher failed to watch the project
// less than watchRetry ago (watch.failed), and its first line: why.
func (s *Store) failedRecently() (why string, ok bool) {
	f, err := os.OpenFile(filepath.Join(s.Dir, watchFailedName), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || time.Since(fi.ModTime()) >= watchRetry {
		return "", false
	}
	b := make([]byte, 1024)
	n, _ := io.ReadFull(f, b)
	why, _, _ = strings.Cut(string(b[:n]), "\n")
	return why, true
}

// guardEnv are the variables the watcher's process gets from the hook
// that starts it, each where it is an absolute path: TMPDIR, under which
// the launches keep their records, and those the launcher's recovery of a
// killed launch reads its places from (confine.envFrom: the home, the
// state and configuration directories, the agents' and Go's). Without
// them the eighty-fifth attack run found the guard's recovery with no
// state directory: what it held back it renamed beside itself in the
// project instead of moving it into held/.
var guardEnv = []string{"TMPDIR", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GOPATH", "GOMODCACHE"}

// StartWatching starts the watcher of project (launcher: the binary with
// the WatchSubcommand) unless one runs, or one failed to watch the
// project within the last hour, and a guard of the project's launches
// runs (the watcher's process is that guard too: WatchMain). It does not
// wait: the process runs on in a session of its own, its standard
// streams /dev/null, with the PATH below and the caller's guardEnv.
func StartWatching(stateDir, project, launcher string) error {
	s, err := Open(stateDir, project)
	if err != nil {
		return err
	}
	// No record is taken of a project that holds the home directory (the
	// launcher refuses it): nothing to watch there.
	if home, err := os.UserHomeDir(); project == "/" || err == nil && fsx.Within(home, project) {
		return nil
	}
	_, failed := s.failedRecently()
	if (failed || s.watching()) && s.locked(guardLockName) {
		return nil
	}
	cmd := exec.Command(launcher, WatchSubcommand, "--state", stateDir, "--project", project)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for _, k := range guardEnv {
		if v := os.Getenv(k); filepath.IsAbs(v) {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// WatchMain is the WatchSubcommand: `undo-watch --state DIR --project
// DIR`. It runs the project's watcher (Watch) and, beside it, guard: the
// guard of the project's launches (package hookmain's, which sweeps for a
// launch killed before its own sweep), under the store's guard.lock, so
// that one runs a project; it returns when both are done. A watcher that
// cannot watch the project (it failed within the last hour, or fails
// now) leaves the guard to run alone.
func WatchMain(args []string, guard func(stateDir, project string)) int {
	var state, project string
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--state":
			state = args[i+1]
		case "--project":
			project = args[i+1]
		}
	}
	if state == "" || project == "" || len(args) != 4 {
		fmt.Fprintln(os.Stderr, "loopguard: undo-watch --state DIR --project DIR")
		return 2
	}
	// It outlives the launch or hook that started it: nothing that
	// process was given stays open in it (a pipe would keep its reader
	// waiting).
	_, _ = fsx.CloseInherited()
	var guarding sync.WaitGroup
	if guard != nil {
		release, err := HoldGuard(state, project)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loopguard: undo-watch: the guard: %v\n", err)
		}
		if release != nil {
			guarding.Go(func() {
				defer release()
				guard(state, project)
			})
		}
	}
	err := Watch(context.Background(), state, project)
	guarding.Wait()
	if err != nil {
		fmt.Fprintf(os.Stderr, "loopguard: undo-watch: %v\n", err)
		return 1
	}
	return 0
}

// Guarded reports whether the guard of project's launches runs (a process
// holds its store's guard.lock).
func Guarded(stateDir, project string) bool {
	s, err := Open(stateDir, project)
	return err == nil && s.locked(guardLockName)
}

// HoldGuard takes the guard.lock of project's store, made if need be:
// release lets go of it; nil (and no error) when another process holds
// it.
func HoldGuard(stateDir, project string) (release func(), err error) {
	s, err := Open(stateDir, project)
	if err != nil {
		return nil, err
	}
	return s.hold(guardLockName)
}

// hold takes the store's lock name (the store made if need be) for as
// long as the process runs or until release: nil (and no error) when
// another process holds it.
func (s *Store) hold(name string) (release func(), err error) {
	if err := s.create(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, name), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
