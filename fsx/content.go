package fsx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MaxContentSize bounds the files ContentDigest reads (a toolchain binary
// is tens of megabytes; rustup's proxies about 15).
const MaxContentSize = 1 << 30

// Identity is what the kernel says about a file without reading it: a
// cached digest is reused only while every field is unchanged. ctime is
// in it because no unprivileged call can set it: a same-size replacement
// written in place with its mtime reset still moves the ctime.
type Identity struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
	Mode  uint32 `json:"mode"`
}

// ErrChangedWhileRead is a file that changed while its digest was taken.
var ErrChangedWhileRead = errors.New("file changed while it was read")

// StatIdentity returns the identity of the file at p (symlinks followed).
func StatIdentity(p string) (Identity, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return Identity{}, err
	}
	return identityOf(fi)
}

// ContentDigest returns the SHA-256 (hex) of the regular file at p and the
// identity it had while read; a file that changed during the read is an
// error, never a digest of a mix. Opening never blocks: a FIFO put where a
// pinned executable was is refused at once, not read until the hook's
// deadline.
func ContentDigest(p string) (string, Identity, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", Identity{}, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return "", Identity{}, err
	}
	if !before.Mode().IsRegular() {
		return "", Identity{}, fmt.Errorf("%s is not a regular file", p)
	}
	if before.Size() > MaxContentSize {
		return "", Identity{}, fmt.Errorf("%s is larger than %d bytes", p, MaxContentSize)
	}
	id, err := identityOf(before)
	if err != nil {
		return "", Identity{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, MaxContentSize+1)); err != nil {
		return "", Identity{}, fmt.Errorf("failed to read %s: %w", p, err)
	}
	after, err := f.Stat()
	if err != nil {
		return "", Identity{}, err
	}
	if id2, err := identityOf(after); err != nil || id2 != id {
		return "", Identity{}, fmt.Errorf("%s: %w", p, ErrChangedWhileRead)
	}
	return hex.EncodeToString(h.Sum(nil)), id, nil
}

// UserWritable reports whether p (a clean absolute path) could be changed
// without root: it or a directory above it is owned by another user than
// root, or writable by its group or by others. A root-owned toolchain
// (/usr/bin) is not; ~/.cargo/bin, ~/go/bin, a Homebrew prefix owned by the
// user, or anything under /tmp is. A p that does not exist is judged by its
// directory (who could create it); any other error counts as writable.
// Root itself is out of the threat model: an agent running as root can
// change any file.
func UserWritable(p string) bool {
	for d := filepath.Clean(p); ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) && d == filepath.Clean(p) {
			continue
		}
		if err != nil || !ownedByRootOnly(fi) {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}
