// Package state keeps loopguard's per-user state on disk: grants (one file per
// token, claimed for single use by rename), pending calls and the last session
// seen per project. Every write is atomic: temp file, fsync, rename, fsync of
// the directory.
package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// Errors callers branch on.
var (
	ErrNotFound = errors.New("not found")
	// ErrClaimed means another process consumed the grant first.
	ErrClaimed = errors.New("grant already consumed")
	// ErrCorrupt marks a file that is partial or not what it should be. It is
	// reported and never treated as valid.
	ErrCorrupt = errors.New("corrupt state file")
)

// UnsafeDirError reports a state directory loopguard refuses to use.
type UnsafeDirError struct {
	Path   string
	Reason string
}

func (e *UnsafeDirError) Error() string {
	return fmt.Sprintf("unsafe state dir %s: %s", e.Path, e.Reason)
}

// Hint tells a person how to fix it.
func (e *UnsafeDirError) Hint() string {
	return "the state dir holds grants; it must be a real directory owned by you with mode 0700\n" +
		"fix it with: chmod 700 " + e.Path + " (or remove it and run: loopguard init)"
}

// DefaultDir is $XDG_STATE_HOME/loopguard, or ~/.local/state/loopguard.
func DefaultDir() (string, error) { return policy.StateDir() }

// Store is the state directory.
type Store struct {
	Dir string
}

// Open opens the state directory at dir, creating it (mode 0700) when
// missing. It refuses a directory that is a symlink, not owned by the user,
// or open to group or others.
func Open(dir string) (*Store, error) {
	if err := platformSupported(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(dir) {
		return nil, &UnsafeDirError{Path: dir, Reason: "not an absolute path"}
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return nil, fmt.Errorf("failed to create state dir: %w", err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("failed to create state dir: %w", err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to stat state dir: %w", err)
	}
	if err := checkDir(dir, fi); err != nil {
		return nil, err
	}
	return &Store{Dir: dir}, nil
}

func checkDir(dir string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &UnsafeDirError{Path: dir, Reason: "it is a symlink"}
	case !fi.IsDir():
		return &UnsafeDirError{Path: dir, Reason: "not a directory"}
	case fi.Mode().Perm()&0o077 != 0:
		return &UnsafeDirError{Path: dir, Reason: fmt.Sprintf("mode %04o lets group or others in", fi.Mode().Perm())}
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Geteuid() {
		return &UnsafeDirError{Path: dir, Reason: fmt.Sprintf("owned by uid %d, not you", uid)}
	}
	return nil
}

// Check re-checks the directory's safety (for doctor).
func (s *Store) Check() error {
	if err := platformSupported(); err != nil {
		return err
	}
	fi, err := os.Lstat(s.Dir)
	if err != nil {
		return fmt.Errorf("failed to stat state dir: %w", err)
	}
	return checkDir(s.Dir, fi)
}

func (s *Store) path(parts ...string) string {
	return filepath.Join(append([]string{s.Dir}, parts...)...)
}

// mkdir makes a subdirectory (and its parents under the store) with 0700.
func (s *Store) mkdir(rel string) error {
	return os.MkdirAll(s.path(rel), 0o700)
}

// tmpPrefix starts the temp files of writeFile (fsx.TempPrefix): readers
// skip them.
const tmpPrefix = fsx.TempPrefix

// writeAtomic writes data to dir/name through a temp file in the same
// directory, fsyncs it, renames it into place and fsyncs the directory. A
// crash leaves either the old file, the new file, or a temp file that every
// reader ignores; never a partial file under the real name.
func writeAtomic(dir, name string, data []byte) error {
	return writeFile(dir, name, data, true)
}

// writeFile is writeAtomic; with durable false it skips both fsyncs, for
// files whose loss in a crash costs at most a retry (notes, the hook's
// pending records); never for grants, claims, a human's decision on a
// pending call or anything else an allow rests on.
func writeFile(dir, name string, data []byte, durable bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	if err := fsx.WriteFile(filepath.Join(dir, name), data, 0o600, durable); err != nil {
		return fmt.Errorf("failed to write %s: %w", name, err)
	}
	return nil
}

func syncDir(dir string) error {
	if err := fsx.SyncDir(dir); err != nil {
		return fmt.Errorf("failed to sync %s: %w", dir, err)
	}
	return nil
}

// listNames returns the names in dir with the given suffix, skipping temp
// files. A missing dir is empty.
func listNames(dir, suffix string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, tmpPrefix) || !strings.HasSuffix(n, suffix) || !e.Type().IsRegular() {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// readFile reads a state file that must be a regular file (not a symlink),
// bounded in size.
func readFile(path string, max int64) ([]byte, error) {
	b, err := fsx.ReadRegular(path, max, fsx.NoFollow)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrNotFound
	case errors.Is(err, fsx.ErrNotRegular), errors.Is(err, fsx.ErrTooLarge):
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return b, err
}

func removeFile(path string) error {
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrNotFound
		}
		return err
	}
	return syncDir(filepath.Dir(path))
}
