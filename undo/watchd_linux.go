//go:build linux

package undo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The project's watcher (`loopguard-exec undo-watch`): a process of the
// user's own, outside any sandbox and any jail, that hears through
// inotify every change below the project between calls, so that a record
// looks again only at what changed since the last one instead of walking
// the whole project (a call that writes nothing, in a project nothing
// changed in, then costs a round trip to the watcher).
//
// The hook starts it (StartWatching) when it lets a confined call that
// can write the project run; it runs until it has been asked nothing for
// WatchIdle, or the project is gone. One per project: it holds the
// store's watch.lock while it runs.
//
// The launcher asks it over a FIFO it makes in the store's watch/
// directory (opened for reading, then renamed to its request name), which
// the watcher watches with the same inotify instance as the project: the
// rename is queued after every change made before it, so by the time the
// watcher reads it, it has heard them all.
// Each answer names what changed since the answer before it (every path
// an event named, or "full": the watch did not hold), and carries its own
// id and its predecessor's: a record vouches for the project from an
// answer only when that answer follows, with nothing between, the one the
// last record took its after-state from (sync.go). Anything else (no
// watcher, no answer in time, another answer between) is a walk of the
// whole project, as without a watcher.

// WatchSubcommand is the launcher's subcommand that runs the watcher.
const WatchSubcommand = "undo-watch"

// WatchIdle: the watcher exits after this long without a request.
const WatchIdle = 30 * time.Minute

const (
	watchLockName = "watch.lock"
	// guardLockName: the guard of the project's launches runs (WatchMain).
	guardLockName = "guard.lock"
	watchDirName  = "watch"
	// watchFailedName: the watcher could not watch the project (too many
	// directories for the user's inotify watches); the hook does not
	// start it again for watchRetry.
	watchFailedName = "watch.failed"
	watchRetry      = time.Hour
	answerMagic     = "loopguard-undo-watch 1\n"
	answerEnd       = "end\n"
	// maxAnswer bounds an answer (a pipe holds 64 KiB): more changed
	// paths than fit are answered "full".
	maxAnswer = 48 << 10
)

// daemon is the watcher's state.
type daemon struct {
	s      *Store
	root   string // the project, as the store names it
	fd     int    // the inotify instance
	wds    map[int32]string
	reqWd  int32
	reqDir int // the watch/ directory, for the answers
	mounts int // /proc/self/mountinfo, which poll says changed (mountsChanged)
	epoch  string
	seq    uint64
	dirty  map[string]bool
	// dirtySize is what dirty's paths take in an answer; past maxAnswer
	// the answer is full and dirty is let go (mark).
	dirtySize int
	full      bool
	// blind: a directory below the project could not be watched (not
	// readable): every answer is "full" until a rescan watches them all.
	blind    bool
	idle     time.Duration
	maxWatch int // refuse more watches than this (0: the kernel's bound alone)
}

// Watch runs the watcher of project's store beside stateDir until ctx is
// done, it has been asked nothing for WatchIdle, or the project is gone.
// Another watcher of the same project running is not an error: this one
// returns at once; so does one that failed to watch the project less than
// watchRetry ago. It takes at most half of the user's inotify watches
// (watchBound): a project with more directories is walked, as without
// it, and the user's editor and build tools keep the rest of theirs.
func Watch(ctx context.Context, stateDir, project string) error {
	if s, err := Open(stateDir, project); err == nil {
		if _, failed := s.failedRecently(); failed {
			return nil // not again before watchRetry (StartWatching starts the guard alone)
		}
	}
	return watch(ctx, stateDir, project, WatchIdle, watchBound(maxUserWatches))
}

// maxUserWatches is the kernel's bound of a user's inotify watches.
const maxUserWatches = "/proc/sys/fs/inotify/max_user_watches"

// watchBound is half the bound the file limit holds; 0 (the kernel's
// bound alone) where it cannot be read.
func watchBound(limit string) int {
	b, err := os.ReadFile(limit)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 2 {
		return 0
	}
	return n / 2
}

func watch(ctx context.Context, stateDir, project string, idle time.Duration, maxWatch int) error {
	s, err := Open(stateDir, project)
	if err != nil {
		return err
	}
	release, err := s.hold(watchLockName)
	if err != nil || release == nil {
		return err // nil: another watcher
	}
	defer release()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var e [8]byte
	_, _ = rand.Read(e[:])
	d := &daemon{s: s, root: project, fd: fd, wds: map[int32]string{}, epoch: hex.EncodeToString(e[:]),
		dirty: map[string]bool{}, idle: idle, maxWatch: maxWatch, reqDir: -1}
	// A file system mounted on a directory of the project is not heard
	// through that directory's watch, and no event says it came: the
	// mount table is watched too, from before the first watch.
	if d.mounts, err = unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return fmt.Errorf("cannot hear mounts: %w", err)
	}
	defer unix.Close(d.mounts)
	// A watcher that died left its request directory: no request is
	// made where nobody listens (a launcher tries the lock first).
	reqPath := filepath.Join(s.Dir, watchDirName)
	_ = os.RemoveAll(reqPath)
	if err := d.watchTree(""); err != nil {
		_ = os.WriteFile(filepath.Join(s.Dir, watchFailedName), []byte(time.Now().UTC().Format(time.RFC3339)+" "+err.Error()+"\n"), 0o600)
		return err
	}
	_ = os.Remove(filepath.Join(s.Dir, watchFailedName))
	// The request directory is watched before it gets its name: no
	// request can be made in it unheard.
	tmp := filepath.Join(s.Dir, watchDirName+"."+d.epoch)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	if d.reqDir, err = unix.Open(tmp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	defer unix.Close(d.reqDir)
	wd, err := unix.InotifyAddWatch(fd, "/proc/self/fd/"+strconv.Itoa(d.reqDir), unix.IN_MOVED_TO|unix.IN_ONLYDIR)
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	d.reqWd = int32(wd)
	if err := os.Rename(tmp, reqPath); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	defer os.RemoveAll(reqPath)
	return d.loop(ctx)
}

// loop reads events until the watcher is done.
func (d *daemon) loop(ctx context.Context) error {
	buf := make([]byte, 256<<10)
	last := time.Now()
	for {
		if ctx.Err() != nil {
			return nil
		}
		fds := []unix.PollFd{{Fd: int32(d.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 200)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			if time.Since(last) > d.idle || d.storeGone() {
				return nil
			}
			continue
		}
		m, err := unix.Read(d.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		asked, gone := d.events(buf[:m])
		if asked {
			last = time.Now()
		}
		if gone {
			return nil
		}
	}
}

// storeGone: the request directory was removed (with the project's
// store: uninstall, a purge), so no request can reach this watcher again.
// Its watch says nothing of it while the watcher holds the directory
// open (the kernel reports a removed inode only when its last reference
// goes); a removed directory has no links left.
func (d *daemon) storeGone() bool {
	var st unix.Stat_t
	return unix.Fstat(d.reqDir, &st) == nil && st.Nlink == 0
}

// events handles what one read returned; asked: a request was answered;
// gone: the project is gone (or moved), the watcher is done.
func (d *daemon) events(b []byte) (asked, gone bool) {
	rescan := false
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		l := int(binary.NativeEndian.Uint32(b[12:]))
		if len(b) < unix.SizeofInotifyEvent+l {
			d.full = true
			break
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+l], "\x00"))
		b = b[unix.SizeofInotifyEvent+l:]
		if mask&unix.IN_Q_OVERFLOW != 0 {
			d.full = true
			continue
		}
		if wd == d.reqWd {
			if mask&unix.IN_MOVED_TO != 0 && strings.HasPrefix(name, "req-") {
				if d.mountsChanged() {
					// Mounted or unmounted before the request: what
					// a mount covers or uncovers is not heard.
					d.full, rescan = true, true
				}
				if rescan {
					d.rescan()
					rescan = false
				}
				d.answer(name)
				asked = true
			}
			continue
		}
		rel, ok := d.wds[wd]
		if !ok {
			continue
		}
		if mask&unix.IN_IGNORED != 0 {
			delete(d.wds, wd)
			continue
		}
		if rel == "" && mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
			return asked, true
		}
		if mask&unix.IN_MOVE_SELF != 0 {
			// A directory moved: the paths of what it holds changed.
			d.full, rescan = true, true
			continue
		}
		p := rel
		if name != "" {
			p = path.Join(rel, name)
		}
		if p != "" {
			d.mark(p)
		}
		if name == "Cargo.toml" {
			// Whether a target/ beside it is recorded changes.
			d.full = true
		}
		if mask&unix.IN_ISDIR == 0 || name == "" {
			continue
		}
		switch {
		case mask&(unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0:
			d.full, rescan = true, true
		case mask&unix.IN_ATTRIB != 0 && d.blind:
			// A directory's mode changed: one not readable before may
			// be now.
			rescan = true
		case mask&unix.IN_CREATE != 0:
			// What was made in it before its watch was added is named
			// too.
			if err := d.watchTree(p); err != nil {
				// A directory not watched: what changes in it would
				// not be heard, in this answer or any later one.
				d.full, d.blind = true, true
			}
		}
	}
	if rescan {
		d.rescan()
	}
	return asked, false
}

// rescan watches the project again from its top (a directory moved):
// each directory's watch gets its path as it is now.
func (d *daemon) rescan() {
	d.wds, d.blind = map[int32]string{}, false
	if err := d.watchTree(""); err != nil {
		d.full, d.blind = true, true
	}
}

// watchTree watches the directory rel (below the project, "" the top) and
// every directory below it, following no link, but .git at the top and
// the regenerable directories, which no record lists; every entry below
// rel is named changed (what was made before its directory was watched).
func (d *daemon) watchTree(rel string) error {
	if rel == ".git" || slices.Contains(Regenerable, path.Base(rel)) {
		return nil
	}
	root, err := unix.Open(d.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	fd := root
	if rel != "" {
		fd, err = unix.Openat2(root, rel, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
				return nil // gone again, or not a directory: its event names it
			}
			return err
		}
	} else {
		fd, err = unix.Openat(root, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
	}
	return d.watchDir(fd, rel, rel != "")
}

// watchDir watches the directory open at fd (rel) and what is below it,
// and closes fd; named: name every entry changed.
func (d *daemon) watchDir(fd int, rel string, named bool) error {
	defer unix.Close(fd)
	t, err := fsType(fd)
	if err != nil {
		return fmt.Errorf("%s: %w", orTop(rel), err)
	}
	if rel != "" && kernelFS[t] != "" {
		// A kernel file system (a chroot's proc or sys), which a record
		// leaves out (kernelFS): nothing in it to hear. A mount or
		// unmount of it makes the answer full.
		return nil
	}
	if d.maxWatch > 0 && len(d.wds) >= d.maxWatch {
		return fmt.Errorf("more than %d directories to watch", d.maxWatch)
	}
	if err := heardWhole(t); err != nil {
		return fmt.Errorf("%s: %w", orTop(rel), err)
	}
	wd, err := unix.InotifyAddWatch(d.fd, "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
	if err != nil {
		return fmt.Errorf("failed to watch %s: %w", orTop(rel), err)
	}
	d.wds[int32(wd)] = rel
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	// One directory's names within a record's bounds (a record of the
	// project refuses more, and this one is answered full).
	paths, err := names(fd, prefix, nil, &listed{})
	if err != nil {
		return err
	}
	slices.Sort(paths)
	for _, p := range paths {
		name := p[len(prefix):]
		if named {
			d.mark(p)
		}
		if rel == "" && name == ".git" || slices.Contains(Regenerable, name) || len(p) > maxRel {
			continue // no record looks into it either
		}
		var st fileStat
		if err := statAt(fd, name, &st); err != nil || st.mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			continue // gone, or no longer a directory: its event names it
		}
		if err != nil {
			d.blind = true // what changes in it would not be heard
			continue
		}
		if err := d.watchDir(cfd, p, named); err != nil {
			return err
		}
	}
	return nil
}

// mark notes that p changed. Once the paths noted would not fit in an
// answer (maxAnswer), the next answer is full, and no more are kept until
// it: a call renaming a file through 100,000 long names had the watcher,
// which runs outside the jail and the call's cgroup, hold 543 MB of them
// (the seventy-seventh attack run).
func (d *daemon) mark(p string) {
	if d.full || d.dirty[p] {
		return
	}
	d.dirtySize += len(p) + 1
	if d.dirtySize > maxAnswer {
		d.full, d.dirty, d.dirtySize = true, map[string]bool{}, 0
		return
	}
	d.dirty[p] = true
}

// answer answers the request FIFO name: what changed since the last
// answer, and starts hearing afresh. An answer that cannot be given (the
// launcher gone, the FIFO full) is lost; the chain of ids then tells the
// next record not to trust the one after it.
func (d *daemon) answer(name string) {
	d.seq++
	var b strings.Builder
	b.WriteString(answerMagic)
	fmt.Fprintf(&b, "since %s:%d\nid %s:%d\n", d.epoch, d.seq-1, d.epoch, d.seq)
	body := ""
	if !d.full && !d.blind {
		paths := make([]string, 0, len(d.dirty))
		size := 0
		for p := range d.dirty {
			paths = append(paths, p)
			size += len(p) + 1
		}
		if size <= maxAnswer {
			slices.Sort(paths)
			body = "changed\n" + strings.Join(paths, "\x00")
			if len(paths) > 0 {
				body += "\x00"
			}
		}
	}
	if body == "" {
		body = "full\n"
	}
	// The body's length: an answer cut short (a pipe the kernel gave one
	// page) is refused whatever the names it ends in.
	fmt.Fprintf(&b, "size %d\n", len(body))
	b.WriteString(body)
	b.WriteString(answerEnd)
	d.dirty, d.dirtySize, d.full = map[string]bool{}, 0, false
	fd, err := unix.Openat(d.reqDir, name, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Unlinkat(d.reqDir, name, 0) // the launcher is gone
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return
	}
	out := []byte(b.String())
	for len(out) > 0 {
		n, err := unix.Write(fd, out)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		out = out[n:]
	}
}

// mountsChanged reports whether the mount table changed since it was
// last asked (the kernel marks /proc/self/mountinfo POLLPRI once for each
// change it has not told); a poll that fails counts as changed.
func (d *daemon) mountsChanged() bool {
	fds := []unix.PollFd{{Fd: int32(d.mounts), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR) != 0
	}
}

// localFS are the file systems every change to which this kernel makes,
// and so inotify hears. On a network or shared one (NFS, SMB, 9p as
// WSL's /mnt/c and virtual machines' shared folders, FUSE as sshfs and
// Docker Desktop's file sharing, Ceph) another machine changes files
// unheard; on an overlay, a change to a layer below it is unheard; /proc
// and /sys change with no event at all. The watcher watches no directory
// on any other: there a record walks.
var localFS = map[uint32]string{
	unix.EXT4_SUPER_MAGIC:     "ext4",
	unix.XFS_SUPER_MAGIC:      "xfs",
	unix.BTRFS_SUPER_MAGIC:    "btrfs",
	unix.TMPFS_MAGIC:          "tmpfs",
	unix.F2FS_SUPER_MAGIC:     "f2fs",
	unix.BCACHEFS_SUPER_MAGIC: "bcachefs",
	0x2fc12fc1:                "zfs",
	unix.REISERFS_SUPER_MAGIC: "reiserfs",
	0x3153464a:                "jfs",
	unix.NILFS_SUPER_MAGIC:    "nilfs2",
	unix.EXFAT_SUPER_MAGIC:    "exfat",
	unix.MSDOS_SUPER_MAGIC:    "vfat",
	0x5346544e:                "ntfs3",
	unix.RAMFS_MAGIC:          "ramfs",
}

// otherFS names the file systems a watcher refuses that users meet most.
var otherFS = map[uint32]string{
	unix.NFS_SUPER_MAGIC:       "NFS",
	unix.SMB_SUPER_MAGIC:       "SMB",
	unix.SMB2_SUPER_MAGIC:      "SMB",
	unix.CIFS_SUPER_MAGIC:      "SMB (cifs)",
	unix.V9FS_MAGIC:            "9p (WSL's Windows drives, a virtual machine's shared folder)",
	unix.FUSE_SUPER_MAGIC:      "FUSE (sshfs, a container's or virtual machine's shared folder)",
	unix.OVERLAYFS_SUPER_MAGIC: "an overlay",
	unix.CEPH_SUPER_MAGIC:      "Ceph",
	unix.AFS_SUPER_MAGIC:       "AFS",
	unix.PROC_SUPER_MAGIC:      "proc",
	unix.SYSFS_MAGIC:           "sysfs",
}

// heardWhole is nil when t, a directory's file system type (fsType), is
// in localFS.
func heardWhole(t uint32) error {
	if _, ok := localFS[t]; ok {
		return nil
	}
	name, ok := otherFS[t]
	if !ok {
		name = fmt.Sprintf("a file system of type %#x", t)
	}
	return fmt.Errorf("it is on %s, whose changes made elsewhere the watcher would not hear", name)
}
