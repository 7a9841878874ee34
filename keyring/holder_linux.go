//go:build linux

package keyring

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	dbus "github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
)

// LoadHeld returns the key and the anchor of the state directory dir from
// its holder; ok is false when no holder answers (none runs, another
// user's socket, a holder that does not answer within holderWait, a bad
// answer): the caller then reads the keyring.
//
// A holder of this user that takes the connection but does not answer in
// time (stopped, hung) has its socket removed, if it is still the one
// connected to: a holder that can answer ends within a second of that
// (its socket gone) and the next read starts another, and one that cannot
// keeps its lock, so that none starts and the calls after read the
// keyring without waiting for it each time.
func LoadHeld(ctx context.Context, dir string) (key []byte, anchor string, ok bool) {
	var before unix.Stat_t
	sock := holderSocket(dir)
	if sock == "" || unix.Lstat(sock, &before) != nil {
		return nil, "", false
	}
	c, err := dialHolder(ctx, sock)
	if err != nil {
		return nil, "", false
	}
	defer c.Close()
	if _, err := c.Write([]byte{reqKey}); err != nil {
		return nil, "", false
	}
	b, err := io.ReadAll(io.LimitReader(c, int64(len(holdMagic)+4+KeySize+maxAnchorLen)+1))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			var now unix.Stat_t
			if unix.Lstat(sock, &now) == nil && now.Ino == before.Ino && now.Dev == before.Dev {
				_ = os.Remove(sock)
			}
		}
		return nil, "", false
	}
	defer clear(b)
	key, anchor, err = decodeHeld(b)
	return key, anchor, err == nil
}

// dialHolder connects to the holder on sock (holderSocket), within
// holderWait and ctx, and checks that it runs as this user.
func dialHolder(ctx context.Context, sock string) (*net.UnixConn, error) {
	ctx, cancel := context.WithTimeout(ctx, holderWait)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, err
	}
	c := nc.(*net.UnixConn)
	if uid, err := peerUID(c); err != nil || uid != os.Geteuid() {
		c.Close()
		return nil, fmt.Errorf("the holder's socket %s is not this user's process's", sock)
	}
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	return c, nil
}

// peerUID is the uid of the process at the other end of c, as the kernel
// recorded it when the connection was made (SO_PEERCRED).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) { cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return -1, err
	}
	if serr != nil {
		return -1, serr
	}
	return int(cred.Uid), nil
}

// StartHolder starts dir's holder: binary (loopguard-exec) with
// HolderSubcommand, in a session of its own, its standard streams
// /dev/null, with the session bus's address and nothing else of this
// environment. It does not wait; a holder that finds another holding the
// lock exits at once.
func StartHolder(dir, binary string) error {
	if holderSocket(dir) == "" || failedRecently(dir) {
		return nil
	}
	// A process holds the lock: one starting (it reads the keyring before
	// it listens), or one that no longer answers (stopped, hung: the hook
	// that waited for it removed its socket), which keeps it until it
	// ends. A holder started now would exit at once; the hooks read the
	// keyring themselves meanwhile.
	if held, _ := lockHeld(dir); held {
		return nil
	}
	bus := os.Getenv(busEnv)
	if bus == "" {
		return nil
	}
	cmd := exec.Command(binary, HolderSubcommand, "--state", dir)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", busEnv + "=" + bus}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// lockHeld: a process holds dir's holder lock (a probe for it fails);
// no lock file is no holder. err is an error opening the lock file.
func lockHeld(dir string) (bool, error) {
	f, err := os.OpenFile(holderLock(dir), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil, nil
}

// StopHolder stops dir's holder and returns once it has let go of its
// lock, or fails after ctx's deadline (KeyTimeout at most). No holder is
// no error.
func StopHolder(ctx context.Context, dir string) error {
	sock := holderSocket(dir)
	if sock == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, KeyTimeout)
	defer cancel()
	for {
		if c, err := dialHolder(ctx, sock); err == nil {
			_, _ = c.Write([]byte{reqStop})
			_, _ = io.ReadAll(io.LimitReader(c, int64(len(stopMagic))))
			c.Close()
		}
		// Gone once its lock is free: a holder still reading the keyring
		// holds it without a socket yet, and is stopped on the next turn.
		if held, err := lockHeld(dir); err != nil || !held {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the key's holder of %s did not stop: %w", dir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// KeyTimeout bounds a read of the keyring by the holder and a wait for
// the holder to stop.
const KeyTimeout = 5 * time.Second

// HoldMain is the holder's process, HolderSubcommand's: `--state DIR`. It
// returns its exit code: 0 when another holder runs or it served until
// one of its ends, 1 when it could not start (no key, no bus, no socket).
func HoldMain(args []string) int {
	if len(args) != 2 || args[0] != "--state" || !filepath.IsAbs(args[1]) {
		fmt.Fprintln(os.Stderr, "loopguard: "+HolderSubcommand+" --state DIR (absolute)")
		return 2
	}
	// It outlives the hook that started it: nothing that hook was given
	// stays open in it (a pipe would keep its reader waiting).
	_, _ = fsx.CloseInherited()
	// No core dump, and no ptrace by the user's other processes (they
	// need it dumpable): its memory holds the key.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "loopguard: %s: prctl(PR_SET_DUMPABLE): %v\n", HolderSubcommand, err)
		return 1
	}
	if err := hold(args[1], HolderIdle, HolderLife); err != nil {
		if errors.Is(err, errHeld) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "loopguard: %s: %v\n", HolderSubcommand, err)
		// The hook starts no other for a while (failedRecently): where a
		// holder cannot run, a start on every call would cost each one.
		if f, ferr := os.OpenFile(holderFailed(args[1]), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600); ferr == nil {
			_, _ = f.WriteString(err.Error() + "\n")
			f.Close()
		}
		return 1
	}
	return 0
}

// holderFailed is the file a holder that could not start leaves in dir.
func holderFailed(dir string) string { return filepath.Join(dir, "key.failed") }

// failedRetry is how long after a holder failed to start the hook starts
// none.
const failedRetry = time.Hour

// HolderFailure is why the last holder of dir could not start and when,
// ok false when none failed within failedRetry.
func HolderFailure(dir string) (why string, at time.Time, ok bool) {
	fi, ok := lastFailure(dir)
	if !ok || !fi.Mode().IsRegular() {
		return "", time.Time{}, false
	}
	b, _ := fsx.ReadRegular(holderFailed(dir), 4096, fsx.NoFollow)
	return strings.TrimSpace(string(b)), fi.ModTime(), true
}

// failedRecently reports whether a holder of dir failed to start within
// failedRetry.
func failedRecently(dir string) bool {
	_, ok := lastFailure(dir)
	return ok
}

// lastFailure is dir's key.failed, ok when it is younger than failedRetry.
func lastFailure(dir string) (os.FileInfo, bool) {
	fi, err := os.Lstat(holderFailed(dir))
	return fi, err == nil && time.Since(fi.ModTime()) < failedRetry
}

// errHeld: another holder of the directory runs.
var errHeld = errors.New("another holder runs")

// hold is the holder of dir: it takes the lock, watches the Secret
// Service, reads the key and the anchor, and answers on its socket until
// one of its ends (see holder.go).
func hold(dir string, idle, life time.Duration) error {
	unix.Umask(0o077)
	sock := holderSocket(dir)
	if sock == "" {
		return errors.New("the state directory's path is too long for a socket")
	}
	lock, err := os.OpenFile(holderLock(dir), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return errHeld
	}
	// Watch first, then read: a change between the two ends the holder.
	changed, stopWatch, err := watchSecrets()
	if err != nil {
		return err
	}
	defer stopWatch()
	ctx, cancel := context.WithTimeout(context.Background(), KeyTimeout)
	key, anchor, err := LoadWithAnchor(ctx, AnchorAccount(dir))
	cancel()
	if err != nil {
		return err
	}
	if anchor == "" {
		// The hook takes no answer without an anchor (it would check
		// nothing): a directory set up before anchors reads the keyring.
		clear(key)
		return errors.New("the keyring holds no anchor of " + dir + " (loopguard init anchors it)")
	}
	_ = os.Remove(holderFailed(dir))
	answer, free, err := lockedCopy(encodeHeld(key, anchor))
	clear(key)
	if err != nil {
		return err
	}
	defer free()
	// What the read left on the heap (the item's encoding) goes back to
	// the system now, not whenever a collection would run.
	debug.FreeOSMemory()
	// Under the lock a socket left here is a dead holder's.
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return err
	}
	l.SetUnlinkOnClose(false)
	var ours unix.Stat_t
	if err := unix.Lstat(sock, &ours); err != nil {
		l.Close()
		return err
	}
	defer func() {
		// Only the socket this holder made: not one put in its place.
		var st unix.Stat_t
		if unix.Lstat(sock, &st) == nil && st.Ino == ours.Ino && st.Dev == ours.Dev {
			_ = os.Remove(sock)
		}
	}()
	defer l.Close()
	// A change, or a signal to end, closes the listener at once: no
	// connection is accepted after it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	defer signal.Stop(sigs)
	ended := make(chan struct{})
	go func() {
		select {
		case <-changed:
		case <-sigs:
		}
		close(ended)
		l.Close()
	}()
	start, last := time.Now(), time.Now()
	for {
		now := time.Now()
		if now.Sub(last) >= idle || now.Sub(start) >= life {
			return nil
		}
		var st unix.Stat_t
		if unix.Lstat(sock, &st) != nil || st.Ino != ours.Ino || st.Dev != ours.Dev {
			return nil // removed or replaced: whoever did wants no holder here
		}
		_ = l.SetDeadline(now.Add(time.Second))
		c, err := l.AcceptUnix()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			select {
			case <-ended:
				return nil
			default:
				return err
			}
		}
		if serveOne(c, answer, ended) {
			return nil
		}
		last = time.Now()
	}
}

// lockedCopy moves b (cleared after) into memory of its own that is never
// swapped out (mlock) nor written to a core dump (MADV_DONTDUMP), as the
// Secret Service keeps its secrets; free clears and unmaps it.
func lockedCopy(b []byte) (locked []byte, free func(), err error) {
	defer clear(b)
	size := (len(b) + os.Getpagesize() - 1) / os.Getpagesize() * os.Getpagesize()
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.Mlock(m); err != nil {
		_ = unix.Munmap(m)
		return nil, nil, fmt.Errorf("mlock: %w", err)
	}
	if err := unix.Madvise(m, unix.MADV_DONTDUMP); err != nil {
		_ = unix.Munmap(m)
		return nil, nil, fmt.Errorf("madvise: %w", err)
	}
	n := copy(m, b)
	return m[:n], func() { clear(m); _ = unix.Munmap(m) }, nil
}

// serveOne answers one connection; stop says it asked the holder to stop.
// Once ended is closed it answers no key.
func serveOne(c *net.UnixConn, answer []byte, ended <-chan struct{}) (stop bool) {
	defer c.Close()
	if uid, err := peerUID(c); err != nil || uid != os.Geteuid() {
		return false
	}
	_ = c.SetDeadline(time.Now().Add(holderWait))
	var req [1]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return false
	}
	switch req[0] {
	case reqKey:
		select {
		case <-ended:
			return true
		default:
		}
		_, _ = c.Write(answer)
		return false
	case reqStop:
		_, _ = c.Write([]byte(stopMagic))
		return true
	}
	return false
}

// watchSecrets subscribes, on a connection of its own to the session bus,
// to every signal by which the Secret Service tells of a change (an item
// created, changed or deleted; a collection created, changed, deleted,
// locked or unlocked; the service's owner gone or replaced). changed is
// closed at the first, or when the connection ends.
func watchSecrets() (changed <-chan struct{}, stop func(), err error) {
	addr, err := checkBus(context.Background())
	if err != nil {
		return nil, nil, err
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, nil, err
	}
	matches := [][]dbus.MatchOption{
		{dbus.WithMatchInterface(ssCollection)},
		{dbus.WithMatchInterface(ssService)},
		{dbus.WithMatchInterface("org.freedesktop.DBus.Properties"), dbus.WithMatchMember("PropertiesChanged"), dbus.WithMatchPathNamespace(ssPath)},
		{dbus.WithMatchSender(busName), dbus.WithMatchInterface(busName), dbus.WithMatchMember("NameOwnerChanged"), dbus.WithMatchArg(0, ssName)},
	}
	for _, m := range matches {
		if err := conn.AddMatchSignal(m...); err != nil {
			conn.Close()
			return nil, nil, err
		}
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range ch {
			if isSecretsChange(s) {
				return
			}
		}
	}()
	return done, func() { conn.Close() }, nil
}

// isSecretsChange reports whether s is one of the signals watchSecrets
// subscribed to (the bus also sends every connection NameAcquired).
func isSecretsChange(s *dbus.Signal) bool {
	if s == nil {
		return false
	}
	switch s.Name {
	case busName + ".NameOwnerChanged":
		return len(s.Body) > 0 && s.Body[0] == ssName
	case "org.freedesktop.DBus.Properties.PropertiesChanged":
		return true
	}
	iface := s.Name[:max(0, len(s.Name)-len(memberOf(s.Name))-1)]
	return iface == ssCollection || iface == ssService
}

// memberOf is the member of a signal's full name (interface.member).
func memberOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			return name[i+1:]
		}
	}
	return name
}
