//go:build linux

package undo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// keeper keeps a copy of each file of the project undo replaces or
// removes, before it does, in the record's directory (replaced/TIME/,
// the project's paths below it), so that undo loses nothing: a call's
// after-state is the project when its last process exited, and what
// anyone changed in the project while it ran (the human's edits beside a
// long call, or a background one) is counted as the call's; undo of it
// reverted those edits, and removed the files the human made, with no
// copy anywhere (the thirty-fourth attack run). A file that cannot be
// kept (unreadable, larger than MaxFileSize, past MaxRecordBytes
// together) is left as it is, and said.
type keeper struct {
	dir   string // made on first use
	n     int    // files kept
	bytes int64
	done  map[string]bool
}

// newKeeper is the keeper of an undo of record id, now.
func (u *Session) newKeeper(id string, now time.Time) *keeper {
	return &keeper{dir: filepath.Join(u.s.recordDir(id), "replaced", now.UTC().Format("20060102-150405.000")), done: map[string]bool{}}
}

// keep copies the file c, as the plan saw it now, from below root.
func (k *keeper) keep(root int, c Entry) error {
	pfd, err := openParent(root, c.Path)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	fd, err := unix.Openat(pfd, path.Base(c.Path), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	src := os.NewFile(uintptr(fd), c.Path)
	defer src.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	now := Entry{Kind: File, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Dev: st.Dev, Ino: st.Ino}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || !same(&now, &c) {
		return errors.New("changed while undo ran")
	}
	if st.Size > MaxFileSize || k.bytes+st.Size > MaxRecordBytes {
		return fmt.Errorf("too large to keep a copy of (%d bytes; undo keeps %d MiB a file, %d MiB an undo)", st.Size, MaxFileSize>>20, MaxRecordBytes>>20)
	}
	to := filepath.Join(k.dir, filepath.FromSlash(c.Path))
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	// A name no file of the project has: the thirty-eighth attack run's
	// call made a.txt.tmp beside a.txt, so keeping a.txt failed, and
	// undo left the call's a.txt.
	dst, err := os.CreateTemp(filepath.Dir(to), ".loopguard-keep-*")
	if err != nil {
		return err
	}
	tmp := dst.Name()
	_, err = io.Copy(dst, io.LimitReader(src, st.Size))
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, to)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	k.n++
	k.bytes += st.Size
	k.done[c.Path] = true
	return nil
}
