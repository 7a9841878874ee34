package fsx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Errors of ReadRegular besides the open's own (fs.ErrNotExist...).
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

// ReadRegular reads the regular file at path, at most max bytes, opening it
// with flag added (syscall.O_NOFOLLOW, say). Opening never blocks, so a
// FIFO or device someone put there is refused (ErrNotRegular) instead of
// hanging the reader; a file over max is ErrTooLarge, also when it grows
// while it is read.
func ReadRegular(path string, max int64, flag int) ([]byte, error) {
	f, fi, err := openRegular(path, flag)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%w: %s is %d bytes, over %d", ErrTooLarge, path, fi.Size(), max)
	}
	// Read as os.ReadFile does, into a buffer of the size the file has
	// (a manifest of 1.5 MB: one allocation, not twenty).
	b := make([]byte, 0, fi.Size()+1)
	PrefaultSlice(b)
	r := io.LimitReader(f, max+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s grew over %d bytes", ErrTooLarge, path, max)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// OpenDir opens the directory at path to list it. Opening never blocks: a
// FIFO or a device put where a directory was expected is refused at once
// (ENOTDIR), where os.Open would wait for a writer. Every listing of a
// directory the agent can write goes through it (the seventy-first attack
// run hung the hook on its own standard output through a link).
func OpenDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|dirFlags, 0)
}

// ReadPrefix is at most max bytes from the start of the regular file at
// path (a longer file is cut, not refused: ReadRegular refuses it),
// opened with flag added and never blocking, as ReadRegular's.
func ReadPrefix(path string, max int64, flag int) ([]byte, error) {
	f, _, err := openRegular(path, flag)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// openRegular opens the regular file at path without blocking (flag
// added), or says what it is instead.
func openRegular(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s is a %s", ErrNotRegular, path, fi.Mode().Type())
	}
	return f, fi, nil
}
