package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/token"
)

// File names inside the audit directory.
const (
	logName  = "log.jsonl"
	tailName = "tail" // written by older versions; set aside by Restart, never read
	headName = "head"
	lockName = "lock"
)

const (
	// MaxLineSize bounds one entry's line, newline included. Append never
	// writes more (fields are cut to maxField and maxDetail bytes first, and
	// even fully escaped they fit); readers treat a longer line as malformed.
	MaxLineSize = 64 << 10

	maxField  = 256
	maxDetail = 4096
	// maxTold bounds what the model was told (the reason text): with the
	// detail and a passkey's proof, fully escaped, a line stays under
	// MaxLineSize.
	maxTold = 2048
	// maxStateFile bounds the head file.
	maxStateFile = 4 << 10
	// smallRead is the first guess at the length of a line read backwards.
	smallRead = 4 << 10
	truncMark = "...[truncated]"
)

// zeroHash is the "prev" of the first entry.
var zeroHash = hex.EncodeToString(make([]byte, sha256.Size))

var (
	// ErrCorrupt means the log cannot be extended or read because an entry
	// is malformed (edited by hand, or a line longer than MaxLineSize).
	ErrCorrupt = errors.New("audit log is corrupt")
	// ErrTampered means Seal refused to seal: the head or the sealed part of
	// the log was changed outside loopguard. Run Verify for the details.
	ErrTampered = errors.New("audit log was changed outside loopguard")
	// ErrNoHead means the log has entries but no sealed head, so Seal has
	// nothing to check the log against and refuses to vouch for it.
	ErrNoHead = errors.New("audit log has entries but no sealed head")
)

// Entry is one audit record. Seq and Prev are filled in by Append.
type Entry struct {
	Seq       int       `json:"seq"`
	Time      time.Time `json:"time"`
	Prev      string    `json:"prev"`
	Event     string    `json:"event"` // PreToolUse, PermissionRequest, PostToolUse, cli
	Session   string    `json:"session,omitempty"`
	Agent     string    `json:"agent,omitempty"` // "main" or agent_id
	AgentType string    `json:"agent_type,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	Digest    string    `json:"digest,omitempty"`
	Decision  string    `json:"decision"`         // allow, deny, ask, abstain, alarm, approve, grant, revoke, ...
	Reason    string    `json:"reason,omitempty"` // stable reason code
	Grant     string    `json:"grant,omitempty"`  // grant id
	Pending   string    `json:"pending,omitempty"`
	Principal string    `json:"principal,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	Summary   string    `json:"summary,omitempty"` // the call in one escaped line (command, path or URL)
	// A decision signed with a passkey (loopguard serve): the credential
	// id, the statement signed (what was decided) and the WebAuthn
	// assertion over it, so the signature can be checked later with the
	// passkey's public key alone (package console).
	Passkey   string `json:"passkey,omitempty"`
	Signed    string `json:"signed,omitempty"`
	Assertion string `json:"assertion,omitempty"`
	// Told is what the hook told the model: a deny's or an ask's reason, or
	// the context beside an allowed call's result.
	Told string `json:"told,omitempty"`
}

// Log is the audit log in one directory. It is safe for concurrent use by
// goroutines and by processes.
type Log struct {
	dir string
	mu  sync.Mutex // serialises this process's users; the file lock does the rest
}

// Open returns the log kept in dir (normally <state dir>/audit). Nothing is
// touched until the first Append or Seal, which create dir with mode 0700;
// every file in it is created with mode 0600.
func Open(dir string) *Log { return &Log{dir: dir} }

// Dir returns the directory the log lives in.
func (l *Log) Dir() string { return l.dir }

func (l *Log) path(name string) string { return filepath.Join(l.dir, name) }

// point is a position in the chain: the entry with sequence number Seq, whose
// line hashes to Hash and ends (newline included) at byte Size of the log.
// The zero point (before the first entry) is {0, zeroHash, 0}.
type point struct {
	Seq  int    `json:"seq"`
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

var startPoint = point{Seq: 0, Hash: zeroHash, Size: 0}

func (p point) valid() bool {
	return p.Seq >= 0 && p.Size >= 0 && token.IsDigest(p.Hash) &&
		(p.Seq == 0) == (p.Size == 0) && (p.Seq != 0 || p.Hash == zeroHash)
}

func hashLine(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Append adds e to the log, filling in Seq and Prev (and Time, if zero), and
// makes it durable (fsync) before it returns. It needs no key and costs the
// same whatever the size of the log: it reads the previous entry's hash from
// the log's last line only.
func (l *Log) Append(e Entry) error {
	return l.appending(func(f *os.File, cur point) error { _, err := l.appendLocked(f, cur, e, true); return err })
}

// AppendNoSync is Append without the fsync, for entries whose loss in a
// power cut costs nothing but a retry (the hook's denies and abstentions):
// the page cache writes them out moments later, a crash can only lose the
// last few of them (never a sealed one: Seal makes the log durable before it
// writes the head) or leave the last line torn, which the next append cuts
// off.
func (l *Log) AppendNoSync(e Entry) error {
	return l.appending(func(f *os.File, cur point) error { _, err := l.appendLocked(f, cur, e, false); return err })
}

// exclusive runs fn holding the log's lock, within this process and across
// processes.
func (l *Log) exclusive(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// appending runs fn holding the lock, with the log open for appending and
// its current end. Late entries (AppendLate) go in first.
func (l *Log) appending(fn func(f *os.File, cur point) error) error {
	return l.exclusive(func() error {
		f, err := l.openAppend()
		if err != nil {
			return err
		}
		defer f.Close()
		cur, err := l.current(f)
		if err != nil {
			return err
		}
		if cur, err = l.drainLate(f, cur); err != nil {
			return err
		}
		return fn(f, cur)
	})
}

// lateDir holds entries written without the lock (AppendLate).
const lateDir = "late"

// maxLateFile bounds one late entry's file.
const maxLateFile = MaxLineSize

// AppendLate records e without taking the log's lock, for a decision made
// while the lock cannot be had (the hook's own deadline, when what it waits
// for may be the lock): e is written to a file of its own, atomically, and
// the next Append or AppendNoSync, under the lock, moves it into the chain
// in the order late entries were written. Until then it is not in the log
// nor covered by the sealed head; Verify counts it.
func (l *Log) AppendLate(e Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	line, err := encodeEntry(e)
	if err != nil {
		return err
	}
	dir := l.path(lateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	name := fmt.Sprintf("%020d-%d.json", e.Time.UnixNano(), os.Getpid())
	return fsx.WriteFile(filepath.Join(dir, name), line, 0o600, true)
}

// Drain moves the late entries into the log now (Append does it too).
func (l *Log) Drain() error {
	if l.LateEntries() == 0 {
		return nil
	}
	return l.appending(func(*os.File, point) error { return nil })
}

// LateEntries counts the late entries not yet moved into the log.
func (l *Log) LateEntries() int {
	ents, _ := os.ReadDir(l.path(lateDir))
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}

// drainLate moves the late entries into the log after cur, oldest first,
// and returns the new end. An entry that cannot be read is kept in the
// log as what it is (a late entry that did not decode), never dropped
// silently. Call with the lock held.
func (l *Log) drainLate(f *os.File, cur point) (point, error) {
	dir := l.path(lateDir)
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return cur, nil
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		var e Entry
		b, err := fsx.ReadRegular(p, maxLateFile, noFollow)
		if err == nil {
			err = json.Unmarshal(b, &e)
		}
		if err != nil {
			e = Entry{Event: "late", Decision: "unreadable", Detail: "a late audit entry (" + n + ") could not be read: " + err.Error()}
		}
		if cur, err = l.appendLocked(f, cur, e, false); err != nil {
			return cur, err
		}
		if err := os.Remove(p); err != nil {
			return cur, fmt.Errorf("failed to remove a moved late audit entry: %w", err)
		}
	}
	return cur, nil
}

// Sync makes every entry appended so far durable (fsync of the log).
func (l *Log) Sync() error {
	f, err := os.OpenFile(l.path(logName), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return fmt.Errorf("failed to open audit log: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("failed to sync audit log: %w", err)
	}
	return nil
}

// appendLocked writes e after cur, and fsyncs the log if durable. It
// returns the new end of the chain.
func (l *Log) appendLocked(f *os.File, cur point, e Entry, durable bool) (point, error) {
	e.Seq = cur.Seq + 1
	e.Prev = cur.Hash
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	line, err := encodeEntry(e)
	if err != nil {
		return cur, err
	}
	// One write of the whole line. If it fails half way, the next Append
	// cuts the torn bytes off (see recoverTail).
	if _, err := f.Write(append(line, '\n')); err != nil {
		return cur, fmt.Errorf("failed to append to audit log: %w", err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return cur, fmt.Errorf("failed to sync audit log: %w", err)
		}
	}
	return point{Seq: e.Seq, Hash: hashLine(line), Size: cur.Size + int64(len(line)) + 1}, nil
}

// openAppend opens the log for appending (and reading back its end),
// creating it. A symlink is refused.
func (l *Log) openAppend() (*os.File, error) {
	f, err := os.OpenFile(l.path(logName), os.O_RDWR|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("failed to open audit log: %w", err)
	}
	return f, nil
}

// lock takes the exclusive lock shared by every process using this log,
// creating the directory on first use. The returned function releases it.
func (l *Log) lock() (func(), error) {
	open := func() (*os.File, error) {
		return os.OpenFile(l.path(lockName), os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	}
	f, err := open()
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(l.dir, 0o700); err != nil {
			return nil, fmt.Errorf("failed to create audit directory: %w", err)
		}
		f, err = open()
	}
	if err != nil {
		return nil, fmt.Errorf("failed to open audit lock: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("failed to lock audit log: %w", err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// current returns the last point of the chain in f, read from its last line
// (one read of at most a few KB from the end, whatever the size of the log).
// Older versions kept it in a "tail" file too, rewritten through a temp file
// and a rename on every append; on ext4 that rename-over cost about 1 ms (it
// starts writeback of the new file), twenty times the append itself, so the
// log's own last line is the only record. Call with the lock held.
func (l *Log) current(f *os.File) (point, error) {
	fi, err := f.Stat()
	if err != nil {
		return point{}, fmt.Errorf("failed to stat audit log: %w", err)
	}
	size := fi.Size()
	if size == 0 {
		return startPoint, nil
	}
	return recoverTail(f, size)
}

// recoverTail finds the last entry of f by reading backwards from the end
// (at most two lines' worth of bytes). Bytes after the last newline are a
// line torn by a crash during Append; they were never acknowledged and are
// cut off, so the chain continues from the last complete line. Call with the
// lock held.
func recoverTail(f *os.File, size int64) (point, error) {
	end, line, lineErr, err := lastLine(f, size)
	if err != nil {
		return point{}, err
	}
	if end < size {
		if err := f.Truncate(end); err != nil {
			return point{}, fmt.Errorf("failed to cut torn line off audit log: %w", err)
		}
	}
	if end == 0 {
		return startPoint, nil
	}
	if lineErr != nil {
		return point{}, lineErr
	}
	seq, _, err := parseLink(line)
	if err != nil {
		return point{}, fmt.Errorf("last entry: %w", err)
	}
	return point{Seq: seq, Hash: hashLine(line), Size: end}, nil
}

// lastLine is lastNewline (end, err) and the line that ends there
// (lineEndingAt: line, lineErr). The bytes lastNewline read hold the
// whole line most of the time (it is shorter than the read): then it is
// not read a second time.
func lastLine(r io.ReaderAt, size int64) (end int64, line []byte, lineErr, err error) {
	end, tail, tailAt, err := lastNewlineIn(r, size)
	if err != nil || end == 0 {
		return end, nil, nil, err
	}
	if line, ok := lineIn(tail, tailAt, end); ok {
		return end, line, nil, nil
	}
	line, lineErr = lineEndingAt(r, end)
	return end, line, lineErr, nil
}

// lineIn is lineEndingAt(r, end) taken from buf, the bytes of r from
// offset at, when buf holds the newline at end-1 and the whole line before
// it (the newline before it, or the start of r). ok is false otherwise.
func lineIn(buf []byte, at, end int64) (line []byte, ok bool) {
	nl := end - 1 - at
	if nl < 0 || nl >= int64(len(buf)) || buf[nl] != '\n' {
		return nil, false
	}
	b := buf[:nl]
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 || at == 0 {
		return b[i+1:], true
	}
	return nil, false
}

// lastNewline returns the offset just after the last newline in the first
// size bytes of r, or 0 if there is none.
func lastNewline(r io.ReaderAt, size int64) (int64, error) {
	end, _, _, err := lastNewlineIn(r, size)
	return end, err
}

// lastNewlineIn is lastNewline, with the bytes it read last and their
// offset in r.
func lastNewlineIn(r io.ReaderAt, size int64) (end int64, buf []byte, at int64, err error) {
	for _, n := range []int64{smallRead, MaxLineSize} {
		start := max(0, size-n)
		buf = make([]byte, size-start)
		if _, err := r.ReadAt(buf, start); err != nil {
			return 0, nil, 0, fmt.Errorf("failed to read audit log: %w", err)
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return start + int64(i) + 1, buf, start, nil
		}
		if start == 0 {
			return 0, buf, 0, nil
		}
	}
	return 0, nil, 0, fmt.Errorf("last line is longer than %d bytes: %w", MaxLineSize, ErrCorrupt)
}

// lineEndingAt returns the line whose newline is the byte before end,
// without the newline.
func lineEndingAt(r io.ReaderAt, end int64) ([]byte, error) {
	if end <= 0 {
		return nil, fmt.Errorf("no line ends at offset %d: %w", end, ErrCorrupt)
	}
	// Most lines are short: try a small read before a full one.
	for _, n := range []int64{smallRead, MaxLineSize + 1} {
		start := max(0, end-n)
		buf := make([]byte, end-start)
		if _, err := r.ReadAt(buf, start); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("audit log is shorter than %d bytes: %w", end, ErrTampered)
			}
			return nil, fmt.Errorf("failed to read audit log: %w", err)
		}
		if buf[len(buf)-1] != '\n' {
			return nil, fmt.Errorf("no line ends at offset %d: %w", end, ErrTampered)
		}
		buf = buf[:len(buf)-1]
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 || start == 0 {
			return buf[i+1:], nil
		}
	}
	return nil, fmt.Errorf("line ending at offset %d is longer than %d bytes: %w", end, MaxLineSize, ErrCorrupt)
}

// link is the part of an entry the chain needs.
type link struct {
	Seq  *int    `json:"seq"`
	Prev *string `json:"prev"`
}

// parseLink returns an entry line's seq and prev, checking their form.
func parseLink(line []byte) (int, string, error) {
	var k link
	if err := json.Unmarshal(line, &k); err != nil {
		return 0, "", fmt.Errorf("malformed entry: %w", ErrCorrupt)
	}
	if k.Seq == nil || *k.Seq < 1 || k.Prev == nil || !token.IsDigest(*k.Prev) {
		return 0, "", fmt.Errorf("entry without a valid seq and prev: %w", ErrCorrupt)
	}
	return *k.Seq, *k.Prev, nil
}

// encodeEntry renders e as one line (no newline), cutting over-long fields.
func encodeEntry(e Entry) ([]byte, error) {
	for _, s := range []*string{&e.Event, &e.Session, &e.Agent, &e.AgentType, &e.Tool,
		&e.Digest, &e.Decision, &e.Reason, &e.Grant, &e.Pending, &e.Principal, &e.Mode} {
		*s = clip(*s, maxField)
	}
	e.Detail = clip(e.Detail, maxDetail)
	for _, s := range []*string{&e.Passkey, &e.Signed, &e.Assertion} {
		*s = clip(*s, maxDetail) // a cut proof fails to verify: never longer than the console signs
	}
	e.Told = clip(e.Told, maxTold)
	line, err := marshalEntry(e)
	if err != nil {
		return nil, fmt.Errorf("failed to encode audit entry: %w", err)
	}
	if len(line)+1 > MaxLineSize { // cannot happen with the limits above
		return nil, fmt.Errorf("audit entry of %d bytes is too long", len(line))
	}
	return line, nil
}

// marshalEntry is json.Marshal(e), byte for byte, written out by hand: the
// first json.Marshal of a type in a process builds its encoder by
// reflection, 0.1 to 0.3 ms of every hook call that appends
// (TestMarshalEntryMatchesJSON holds it to json.Marshal).
func marshalEntry(e Entry) ([]byte, error) {
	t, err := e.Time.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 192+len(e.Detail)+len(e.Summary)+len(e.Passkey)+len(e.Signed)+len(e.Assertion)+len(e.Told))
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, int64(e.Seq), 10)
	b = append(b, `,"time":`...)
	b = append(b, t...)
	for _, f := range [...]struct {
		name, v   string
		omitEmpty bool
	}{
		{"prev", e.Prev, false}, {"event", e.Event, false}, {"session", e.Session, true},
		{"agent", e.Agent, true}, {"agent_type", e.AgentType, true}, {"tool", e.Tool, true},
		{"digest", e.Digest, true}, {"decision", e.Decision, false}, {"reason", e.Reason, true},
		{"grant", e.Grant, true}, {"pending", e.Pending, true}, {"principal", e.Principal, true},
		{"mode", e.Mode, true}, {"detail", e.Detail, true}, {"summary", e.Summary, true},
		{"passkey", e.Passkey, true}, {"signed", e.Signed, true}, {"assertion", e.Assertion, true}, {"told", e.Told, true},
	} {
		if f.omitEmpty && f.v == "" {
			continue
		}
		b = append(b, ',', '"')
		b = append(b, f.name...)
		b = append(b, '"', ':')
		b = appendJSONString(b, f.v)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as encoding/json writes a string: HTML
// characters, control characters, U+2028 and U+2029 escaped, invalid UTF-8
// as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(truncMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncMark
}

// readSmall reads a state file of at most maxStateFile bytes.
func readSmall(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxStateFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(name), maxStateFile)
	}
	return b, nil
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

// writeAtomic writes name through a temp file in the same directory: write,
// fsync, rename, fsync the directory (fsx.WriteFile: a new temp file under a
// random name, so a link planted in the directory is never written through).
func writeAtomic(name string, b []byte) error {
	return fsx.WriteFile(name, b, 0o600, true)
}

// writeHeadFile is writeAtomic for the head; with syncDir false, the
// directory is not fsynced after the rename (the file is, before it).
func writeHeadFile(name string, b []byte, syncDir bool) error {
	if syncDir {
		return writeAtomic(name, b)
	}
	return fsx.WriteFileSynced(name, b, 0o600)
}
