package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// FollowInterval is how often Follow looks for new entries.
const FollowInterval = 200 * time.Millisecond

// scanLines calls fn for each complete line in r between off and end, with the
// line (no newline; valid only during the call), its start and the offset
// after its newline. A line longer than MaxLineSize is passed as nil with
// tooLong set. It returns the offset after the last complete line: bytes from
// there to end are an unfinished line.
func scanLines(r io.ReaderAt, off, end int64, fn func(line []byte, start, next int64, tooLong bool) error) (int64, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, end-off), MaxLineSize)
	pos := off
	for {
		start := pos
		b, err := br.ReadSlice('\n')
		pos += int64(len(b))
		tooLong := false
		for errors.Is(err, bufio.ErrBufferFull) {
			tooLong = true
			b, err = br.ReadSlice('\n')
			pos += int64(len(b))
		}
		if errors.Is(err, io.EOF) {
			return start, nil
		}
		if err != nil {
			return start, fmt.Errorf("failed to read audit log: %w", err)
		}
		line := b[:len(b)-1]
		if tooLong {
			line = nil
		}
		if err := fn(line, start, pos, tooLong); err != nil {
			return pos, err
		}
	}
}

// LineError reports an entry that cannot be decoded. It wraps ErrCorrupt.
type LineError struct {
	Line int   // 1-based line number, 0 if unknown (Last, Follow)
	Off  int64 // byte offset of the line
}

func (e *LineError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("malformed entry at line %d", e.Line)
	}
	return fmt.Sprintf("malformed entry at byte %d", e.Off)
}

func (e *LineError) Unwrap() error { return ErrCorrupt }

func decode(line []byte, start int64, lineNo int, tooLong bool) (Entry, error) {
	var e Entry
	if tooLong || json.Unmarshal(line, &e) != nil {
		return Entry{}, &LineError{Line: lineNo, Off: start}
	}
	return e, nil
}

// openLog opens the log for reading; a missing log reads as empty.
func (l *Log) openLog() (*os.File, int64, error) {
	f, err := os.OpenFile(l.path(logName), os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("failed to open audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("failed to stat audit log: %w", err)
	}
	return f, fi.Size(), nil
}

// Read calls fn with every entry in order: the raw line (valid only during
// the call) and its decoded form. It stops at the first error, including a
// *LineError for an entry that does not decode.
func (l *Log) Read(fn func(raw []byte, e Entry) error) error {
	f, size, err := l.openLog()
	if f == nil {
		return err
	}
	defer f.Close()
	n := 0
	_, err = scanLines(f, 0, size, func(line []byte, start, _ int64, tooLong bool) error {
		n++
		e, err := decode(line, start, n, tooLong)
		if err != nil {
			return err
		}
		return fn(line, e)
	})
	return err
}

// Last calls fn with the last n entries (all of them if there are fewer),
// reading backwards from the end, so its cost does not depend on the size of
// the log. It returns the offset where they end, for FollowFrom.
func (l *Log) Last(n int, fn func(raw []byte, e Entry) error) (int64, error) {
	f, size, err := l.openLog()
	if f == nil {
		return 0, err
	}
	defer f.Close()
	end, err := lastNewline(f, size)
	if err != nil {
		return 0, err
	}
	start, err := startOfLastLines(f, end, n)
	if err != nil {
		return 0, err
	}
	return scanLines(f, start, end, func(line []byte, off, _ int64, tooLong bool) error {
		e, err := decode(line, off, 0, tooLong)
		if err != nil {
			return err
		}
		return fn(line, e)
	})
}

// startOfLastLines returns the offset of the n-th line from the end of the
// first end bytes of r (which end in a newline, or are empty).
func startOfLastLines(r io.ReaderAt, end int64, n int) (int64, error) {
	if n <= 0 {
		return end, nil
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	pos := end - 1 // skip the final newline
	for pos > 0 {
		from := max(0, pos-chunk)
		b := buf[:pos-from]
		if _, err := r.ReadAt(b, from); err != nil {
			return 0, fmt.Errorf("failed to read audit log: %w", err)
		}
		for {
			i := bytes.LastIndexByte(b, '\n')
			if i < 0 {
				break
			}
			n--
			if n == 0 {
				return from + int64(i) + 1, nil
			}
			b = b[:i]
		}
		pos = from
	}
	return 0, nil
}

// Follow calls fn with every entry, then with each new one as it is
// appended, checking every FollowInterval, until ctx is done (then it returns
// ctx.Err()) or an error occurs.
func (l *Log) Follow(ctx context.Context, fn func(raw []byte, e Entry) error) error {
	return l.FollowFrom(ctx, 0, fn)
}

// FollowFrom is Follow starting at byte offset off (as returned by Last).
// If the log shrinks below what was already read it returns an error
// wrapping ErrTampered.
func (l *Log) FollowFrom(ctx context.Context, off int64, fn func(raw []byte, e Entry) error) error {
	t := time.NewTicker(FollowInterval)
	defer t.Stop()
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for {
		if f == nil {
			var err error
			f, err = os.OpenFile(l.path(logName), os.O_RDONLY|noFollow, 0)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("failed to open audit log: %w", err)
			}
		}
		if f != nil {
			fi, err := f.Stat()
			if err != nil {
				return fmt.Errorf("failed to stat audit log: %w", err)
			}
			if fi.Size() < off {
				return fmt.Errorf("audit log shrank from %d to %d bytes: %w", off, fi.Size(), ErrTampered)
			}
			off, err = scanLines(f, off, fi.Size(), func(line []byte, start, _ int64, tooLong bool) error {
				e, err := decode(line, start, 0, tooLong)
				if err != nil {
					return err
				}
				return fn(line, e)
			})
			if err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
