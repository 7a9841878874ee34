package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	testKey  = bytes.Repeat([]byte{0x5a}, SealKeySize)
	otherKey = bytes.Repeat([]byte{0xa5}, SealKeySize)
)

// newLog returns a log sealed while empty, as loopguard init leaves it.
func newLog(t testing.TB) *Log {
	t.Helper()
	l := Open(filepath.Join(t.TempDir(), "audit"))
	if err := l.Seal(testKey); err != nil {
		t.Fatal(err)
	}
	return l
}

func entry(i int) Entry {
	return Entry{
		Event: "PreToolUse", Session: "3f6c1b0e-0000-4000-8000-000000000001", Agent: "main",
		Tool: "Bash", Digest: fmt.Sprintf("%064x", i), Decision: "deny",
		Reason: "no_grant", Detail: "n=" + strconv.Itoa(i),
	}
}

func appendN(t testing.TB, l *Log, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if err := l.Append(entry(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func logLines(t *testing.T, l *Log) [][]byte {
	t.Helper()
	b, err := os.ReadFile(l.path(logName))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func writeLines(t *testing.T, l *Log, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(l.path(logName), bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustVerify(t *testing.T, l *Log, key []byte) Report {
	t.Helper()
	rep, err := l.Verify(key)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestAppendBuildsChain(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 5)
	lines := logLines(t, l)
	if len(lines) != 5 {
		t.Fatalf("got %d lines, want 5", len(lines))
	}
	prev := zeroHash
	for i, line := range lines {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		if e.Seq != i+1 || e.Prev != prev {
			t.Errorf("line %d: seq %d prev %s, want seq %d prev %s", i+1, e.Seq, e.Prev, i+1, prev)
		}
		if e.Time.IsZero() || e.Time.Location() != time.UTC {
			t.Errorf("line %d: time %v not set in UTC", i+1, e.Time)
		}
		if !bytes.HasPrefix(line, []byte(`{"seq":`)) {
			t.Errorf("line %d does not start with seq: %s", i+1, line)
		}
		sum := sha256.Sum256(bytes.TrimSuffix(line, []byte("\n")))
		prev = fmt.Sprintf("%x", sum)
	}
	rep := mustVerify(t, l, testKey)
	if !rep.OK() || rep.Entries != 5 || rep.SealedSeq != 0 || rep.Unsealed != 5 || !rep.Resealed || rep.ResealedSeq != 5 {
		t.Fatalf("first verify: %+v", rep)
	}
	rep = mustVerify(t, l, testKey)
	if !rep.OK() || rep.SealedSeq != 5 || rep.Unsealed != 0 || rep.Resealed {
		t.Fatalf("second verify: %+v", rep)
	}
}

func TestFilePermissions(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 1)
	fi, err := os.Stat(l.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
	}
	for _, name := range []string{logName, headName, lockName} {
		fi, err := os.Stat(l.path(name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
}

// Each row tampers with a log of 10 entries sealed at seq 10 (or at sealAt)
// and lists the problems Verify must report. The first row is the control.
func TestVerifyDetectsTampering(t *testing.T) {
	type want struct {
		kind string
		seq  int
		msg  string
	}
	editField := func(line []byte) []byte {
		return bytes.Replace(line, []byte(`"decision":"deny"`), []byte(`"decision":"allow"`), 1)
	}
	cases := []struct {
		name     string
		sealAt   int // 0: 10
		tamper   func(t *testing.T, l *Log, lines [][]byte) [][]byte
		want     []want
		unsealed int
	}{
		{name: "untouched (control)", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte { return lines }},
		{name: "untouched with unsealed entries (control)", sealAt: 7, unsealed: 3,
			tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte { return lines }},
		{name: "edited field", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			lines[3] = editField(lines[3])
			return lines
		}, want: []want{{KindEdited, 4, "edited entry at seq 4 (line 4)"}}},
		{name: "edited last sealed entry", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			lines[9] = editField(lines[9])
			return lines
		}, want: []want{{KindEdited, 10, "edited entry at seq 10 (line 10)"}}},
		{name: "edited first entry", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			lines[0] = editField(lines[0])
			return lines
		}, want: []want{{KindEdited, 1, "edited entry at seq 1 (line 1)"}}},
		{name: "edited then chain rebuilt without the key", tamper: func(t *testing.T, _ *Log, lines [][]byte) [][]byte {
			lines[3] = editField(lines[3])
			return rechain(t, lines)
		}, want: []want{{KindEdited, 10, "edited entry at seq 10 (line 10)"}}},
		{name: "malformed line", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			lines[4] = []byte("not json\n")
			return lines
		}, want: []want{{KindMalformed, 5, "malformed entry at line 5"}}},
		{name: "deleted entry", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			return append(lines[:4:4], lines[5:]...)
		}, want: []want{{KindDeleted, 6, "deleted or reordered entry before seq 6"}}},
		{name: "deleted first entry", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			return lines[1:]
		}, want: []want{{KindDeleted, 2, "deleted or reordered entry before seq 2"}}},
		{name: "deleted entries after the seal", sealAt: 5, unsealed: 3, tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			return append(lines[:6:6], lines[8:]...)
		}, want: []want{{KindDeleted, 9, "deleted or reordered entry before seq 9"}}},
		{name: "swapped entries", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			lines[2], lines[3] = lines[3], lines[2]
			return lines
		}, want: []want{
			{KindDeleted, 4, "deleted or reordered entry before seq 4"},
			{KindDeleted, 3, "seq 3 appears again, or out of order, at line 4"},
		}},
		{name: "duplicated entry", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			return append(lines[:5:5], append([][]byte{lines[4]}, lines[5:]...)...)
		}, want: []want{{KindDeleted, 5, "seq 5 appears again"}}},
		{name: "truncated before the seal", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			return lines[:6]
		}, want: []want{{KindTruncated, 10, "truncated: log ends at seq 6 but the sealed head is at seq 10"}}},
		{name: "truncated to nothing", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			return nil
		}, want: []want{{KindTruncated, 10, "truncated: log ends at seq 0 but the sealed head is at seq 10"}}},
		{name: "cut mid-line", tamper: func(_ *testing.T, _ *Log, lines [][]byte) [][]byte {
			lines[9] = lines[9][:20]
			return lines
		}, want: []want{
			{KindMalformed, 10, "incomplete last line 10"},
			{KindTruncated, 10, "truncated: log ends at seq 9 but the sealed head is at seq 10"},
		}},
		{name: "forged head without the key", tamper: func(t *testing.T, l *Log, lines [][]byte) [][]byte {
			// Claim the log was sealed only at seq 6, to cut entries 7-10.
			forgeHead(t, l, otherKey, lines[:6])
			return lines[:6]
		}, want: []want{{KindHeadMACInvalid, 0, "head MAC invalid"}}, unsealed: 6},
		{name: "head fields edited, MAC kept", tamper: func(t *testing.T, l *Log, lines [][]byte) [][]byte {
			b, _ := os.ReadFile(l.path(headName))
			b = bytes.Replace(b, []byte(`"seq":10`), []byte(`"seq":9`), 1)
			os.WriteFile(l.path(headName), b, 0o600)
			return lines
		}, want: []want{{KindHeadMACInvalid, 0, "head MAC invalid"}}, unsealed: 10},
		{name: "head deleted", tamper: func(t *testing.T, l *Log, lines [][]byte) [][]byte {
			os.Remove(l.path(headName))
			return lines
		}, want: []want{{KindHeadMissing, 0, "head missing: none of the 10 entries is sealed"}}, unsealed: 10},
		{name: "head garbage", tamper: func(t *testing.T, l *Log, lines [][]byte) [][]byte {
			os.WriteFile(l.path(headName), []byte(`{"seq":10}`), 0o600)
			return lines
		}, want: []want{{KindHeadMalformed, 0, "head malformed"}}, unsealed: 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t)
			sealAt := tc.sealAt
			if sealAt == 0 {
				sealAt = 10
			}
			appendN(t, l, 1, sealAt)
			if err := l.Seal(testKey); err != nil {
				t.Fatal(err)
			}
			appendN(t, l, sealAt+1, 10-sealAt)
			lines := logLines(t, l)
			writeLines(t, l, tc.tamper(t, l, lines))
			headBefore, _ := os.ReadFile(l.path(headName))

			rep := mustVerify(t, l, testKey)
			if len(rep.Problems) != len(tc.want) {
				t.Fatalf("got %d problems, want %d: %+v", len(rep.Problems), len(tc.want), rep.Problems)
			}
			for i, w := range tc.want {
				p := rep.Problems[i]
				if p.Kind != w.kind || p.Seq != w.seq || !strings.Contains(p.Msg, w.msg) {
					t.Errorf("problem %d = %+v, want kind %s seq %d msg containing %q", i, p, w.kind, w.seq, w.msg)
				}
			}
			if rep.Unsealed != tc.unsealed {
				t.Errorf("unsealed = %d, want %d", rep.Unsealed, tc.unsealed)
			}
			headAfter, _ := os.ReadFile(l.path(headName))
			if len(tc.want) > 0 {
				if rep.Resealed || !bytes.Equal(headBefore, headAfter) {
					t.Errorf("verify resealed a tampered log")
				}
				// Whatever Seal makes of it, the damage stays visible.
				_ = l.Seal(testKey)
				if rep := mustVerify(t, l, testKey); rep.OK() {
					t.Errorf("after Seal, verify passes: %+v", rep)
				}
			} else if rep.Resealed != (tc.unsealed > 0) {
				t.Errorf("resealed = %v with %d unsealed entries", rep.Resealed, tc.unsealed)
			}
		})
	}
}

// rechain recomputes every seq-keeping prev link, as an attacker without the
// key can.
func rechain(t *testing.T, lines [][]byte) [][]byte {
	t.Helper()
	prev := zeroHash
	out := make([][]byte, len(lines))
	for i, line := range lines {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		e.Prev = prev
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		prev = hashLine(b)
		out[i] = append(b, '\n')
	}
	return out
}

// forgeHead writes a head for the end of lines, MACed with key.
func forgeHead(t *testing.T, l *Log, key []byte, lines [][]byte) {
	t.Helper()
	last := bytes.TrimSuffix(lines[len(lines)-1], []byte("\n"))
	seq, _, err := parseLink(last)
	if err != nil {
		t.Fatal(err)
	}
	p := point{Seq: seq, Hash: hashLine(last), Size: int64(len(bytes.Join(lines, nil)))}
	if err := l.writeHead(key, p); err != nil {
		t.Fatal(err)
	}
}

// Cutting entries after the seal is not detectable; Verify must say how many
// entries were exposed to it.
func TestTruncateAfterSealIsCountedAsUnsealed(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 10)
	if err := l.Seal(testKey); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 11, 5)
	lines := logLines(t, l)
	writeLines(t, l, lines[:12])
	rep := mustVerify(t, l, testKey)
	if !rep.OK() || rep.Entries != 12 || rep.SealedSeq != 10 || rep.Unsealed != 2 {
		t.Fatalf("report %+v, want OK, 12 entries, sealed at 10, 2 unsealed", rep)
	}
}

func TestSealRefusesTamperedLog(t *testing.T) {
	t.Run("sealed entry edited", func(t *testing.T) {
		l := newLog(t)
		appendN(t, l, 1, 5)
		if err := l.Seal(testKey); err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 6, 2)
		lines := logLines(t, l)
		lines[4] = bytes.Replace(lines[4], []byte(`"deny"`), []byte(`"DENY"`), 1)
		writeLines(t, l, rechain(t, lines))
		if err := l.Seal(testKey); !errors.Is(err, ErrTampered) {
			t.Fatalf("Seal = %v, want ErrTampered", err)
		}
	})
	t.Run("truncated below the head", func(t *testing.T) {
		l := newLog(t)
		appendN(t, l, 1, 5)
		if err := l.Seal(testKey); err != nil {
			t.Fatal(err)
		}
		writeLines(t, l, logLines(t, l)[:3])
		if err := l.Seal(testKey); !errors.Is(err, ErrTampered) {
			t.Fatalf("Seal = %v, want ErrTampered", err)
		}
		// Appending still works (the hook must not stop) and Verify
		// still reports the cut.
		appendN(t, l, 6, 4)
		rep := mustVerify(t, l, testKey)
		if rep.OK() {
			t.Fatalf("verify passed after a cut below the head: %+v", rep)
		}
	})
	t.Run("head forged", func(t *testing.T) {
		l := newLog(t)
		appendN(t, l, 1, 5)
		forgeHead(t, l, otherKey, logLines(t, l))
		if err := l.Seal(testKey); !errors.Is(err, ErrTampered) {
			t.Fatalf("Seal = %v, want ErrTampered", err)
		}
	})
	t.Run("head deleted", func(t *testing.T) {
		l := newLog(t)
		appendN(t, l, 1, 5)
		os.Remove(l.path(headName))
		if err := l.Seal(testKey); !errors.Is(err, ErrNoHead) {
			t.Fatalf("Seal = %v, want ErrNoHead", err)
		}
	})
	t.Run("control: untouched", func(t *testing.T) {
		l := newLog(t)
		appendN(t, l, 1, 5)
		if err := l.Seal(testKey); err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 6, 2)
		if err := l.Seal(testKey); err != nil {
			t.Fatal(err)
		}
		if rep := mustVerify(t, l, testKey); !rep.OK() || rep.SealedSeq != 7 || rep.Unsealed != 0 {
			t.Fatalf("report %+v", rep)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		l := newLog(t)
		appendN(t, l, 1, 2)
		if err := l.Seal(otherKey); !errors.Is(err, ErrTampered) {
			t.Fatalf("Seal with another key = %v, want ErrTampered", err)
		}
		if err := l.Seal(testKey[:16]); err == nil {
			t.Fatal("Seal accepted a short key")
		}
	})
}

func TestRekey(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 3)
	if err := l.Rekey(otherKey, otherKey); !errors.Is(err, ErrTampered) {
		t.Fatalf("Rekey from the wrong key = %v, want ErrTampered", err)
	}
	if err := l.Rekey(testKey, otherKey); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, l, testKey); rep.OK() || rep.Problems[0].Kind != KindHeadMACInvalid {
		t.Fatalf("old key still verifies: %+v", rep)
	}
	if rep := mustVerify(t, l, otherKey); !rep.OK() || rep.SealedSeq != 3 {
		t.Fatalf("new key: %+v", rep)
	}
}

// A "tail" file left by an older version, pointing behind the log (as after
// a crash between its two writes), is not read: Append continues the chain
// from the log's last line.
func TestAppendIgnoresStaleTail(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 1)
	first := logLines(t, l)[0]
	stale := fmt.Sprintf(`{"seq":1,"hash":%q,"size":%d}`, hashLine(bytes.TrimSuffix(first, []byte("\n"))), len(first))
	appendN(t, l, 2, 3)
	if err := os.WriteFile(l.path(tailName), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 5, 2)
	rep := mustVerify(t, l, testKey)
	if !rep.OK() || rep.Entries != 6 || rep.ResealedSeq != 6 {
		t.Fatalf("report %+v, want 6 intact entries", rep)
	}
}

func TestAppendRecoversMissingOrGarbageTail(t *testing.T) {
	for _, tail := range []string{"", "{", `{"seq":2,"hash":"zz","size":5}`, "\x00\x00\x00"} {
		l := newLog(t)
		appendN(t, l, 1, 3)
		if tail == "" {
			os.Remove(l.path(tailName))
		} else {
			os.WriteFile(l.path(tailName), []byte(tail), 0o600)
		}
		appendN(t, l, 4, 2)
		if rep := mustVerify(t, l, testKey); !rep.OK() || rep.Entries != 5 {
			t.Errorf("tail %q: report %+v", tail, rep)
		}
	}
}

// A crash in the middle of the write leaves a line without a newline; it was
// never acknowledged, and the next Append cuts it off.
func TestAppendCutsTornLine(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 3)
	f, err := os.OpenFile(l.path(logName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":4,"time":"2026-`)
	f.Close()
	if rep := mustVerify(t, l, testKey); len(rep.Problems) != 1 || rep.Problems[0].Kind != KindTorn {
		t.Fatalf("torn line not reported as exactly one torn line: %+v", rep)
	}
	appendN(t, l, 4, 1)
	rep := mustVerify(t, l, testKey)
	if !rep.OK() || rep.Entries != 4 {
		t.Fatalf("report %+v, want 4 intact entries", rep)
	}
}

func TestAppendBoundsFields(t *testing.T) {
	l := newLog(t)
	e := entry(1)
	e.Detail = strings.Repeat("\x01é", 100000)
	e.Tool = strings.Repeat("\u202e", 10000)
	e.Session = "a\nb"
	if err := l.Append(e); err != nil {
		t.Fatal(err)
	}
	lines := logLines(t, l)
	if len(lines) != 1 || len(lines[0]) > MaxLineSize {
		t.Fatalf("%d lines, first %d bytes", len(lines), len(lines[0]))
	}
	var got Entry
	if err := json.Unmarshal(lines[0], &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Detail) > maxDetail || !strings.HasSuffix(got.Detail, truncMark) || len(got.Tool) > maxField || got.Session != "a\nb" {
		t.Fatalf("fields not bounded as expected: detail %d, tool %d, session %q", len(got.Detail), len(got.Tool), got.Session)
	}
}

func TestReadLastFollow(t *testing.T) {
	l := newLog(t)
	var n int
	if err := l.Read(func([]byte, Entry) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("Read on empty log: %d, %v", n, err)
	}
	appendN(t, l, 1, 10)
	var seqs []int
	if err := l.Read(func(raw []byte, e Entry) error {
		seqs = append(seqs, e.Seq)
		if !bytes.HasPrefix(raw, []byte("{")) || bytes.HasSuffix(raw, []byte("\n")) {
			t.Errorf("raw line %q", raw)
		}
		return nil
	}); err != nil || fmt.Sprint(seqs) != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("Read: %v, %v", seqs, err)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{3, "[8 9 10]"}, {1, "[10]"}, {0, "[]"}, {50, "[1 2 3 4 5 6 7 8 9 10]"}} {
		seqs = seqs[:0]
		end, err := l.Last(tc.n, func(_ []byte, e Entry) error { seqs = append(seqs, e.Seq); return nil })
		if err != nil || fmt.Sprint(seqs) != tc.want {
			t.Errorf("Last(%d) = %v, %v; want %s", tc.n, seqs, err, tc.want)
		}
		if fi, _ := os.Stat(l.path(logName)); end != fi.Size() {
			t.Errorf("Last(%d) end %d, want %d", tc.n, end, fi.Size())
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan int, 100)
	done := make(chan error, 1)
	end, _ := l.Last(2, func([]byte, Entry) error { return nil })
	go func() {
		done <- l.FollowFrom(ctx, end, func(_ []byte, e Entry) error { got <- e.Seq; return nil })
	}()
	appendN(t, l, 11, 3)
	for want := 11; want <= 13; want++ {
		select {
		case s := <-got:
			if s != want {
				t.Fatalf("Follow got seq %d, want %d", s, want)
			}
		case <-ctx.Done():
			t.Fatal("Follow did not deliver new entries")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow ended with %v", err)
	}
}

func TestReadReportsMalformedLine(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 3)
	lines := logLines(t, l)
	lines[1] = []byte("{oops\n")
	writeLines(t, l, lines)
	var le *LineError
	err := l.Read(func([]byte, Entry) error { return nil })
	if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read = %v, want a LineError at line 2", err)
	}
}

func TestConcurrentAppendGoroutines(t *testing.T) {
	l := newLog(t)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate Log values share only the files, like processes do.
			lw := Open(l.Dir())
			for i := 0; i < each; i++ {
				e := entry(i)
				e.Detail = fmt.Sprintf("w%d-%d", w, i)
				if err := lw.Append(e); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkComplete(t, l, workers, each, "w")
}

// checkComplete verifies the chain and that every worker's entries are there.
func checkComplete(t *testing.T, l *Log, workers, each int, prefix string) {
	t.Helper()
	rep := mustVerify(t, l, testKey)
	if !rep.OK() || rep.Entries != workers*each {
		t.Fatalf("report %+v, want %d intact entries", rep, workers*each)
	}
	seen := map[string]bool{}
	l.Read(func(_ []byte, e Entry) error { seen[e.Detail] = true; return nil })
	for w := 0; w < workers; w++ {
		for i := 0; i < each; i++ {
			if k := fmt.Sprintf("%s%d-%d", prefix, w, i); !seen[k] {
				t.Errorf("entry %s lost", k)
			}
		}
	}
}

const helperEnv = "LOOPGUARD_AUDIT_TEST_APPEND"

// TestHelperAppend is run in child processes by TestConcurrentAppendProcesses.
func TestHelperAppend(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("helper process only")
	}
	parts := strings.SplitN(spec, "|", 3)
	n, _ := strconv.Atoi(parts[1])
	l := Open(parts[2])
	for i := 0; i < n; i++ {
		e := entry(i)
		e.Detail = fmt.Sprintf("p%s-%d", parts[0], i)
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConcurrentAppendProcesses(t *testing.T) {
	l := newLog(t)
	const procs, each = 4, 50
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppend$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d|%d|%s", helperEnv, p, each, l.Dir()))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper %d output:\n%s", p, out.String())
			}
		})
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	checkComplete(t, l, procs, each, "p")
}

// Lines longer than the first backwards read still recover, seal and tail.
func TestLongLinesReadBackwards(t *testing.T) {
	l := newLog(t)
	for i := 1; i <= 3; i++ {
		e := entry(i)
		e.Detail = strings.Repeat("\x01", maxDetail) // escaped to 6 bytes each
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(logLines(t, l)[2]); n <= smallRead {
		t.Fatalf("line of %d bytes does not exercise the long read", n)
	}
	os.Remove(l.path(tailName))
	appendN(t, l, 4, 1)
	os.Remove(l.path(tailName))
	e := entry(5)
	e.Detail = strings.Repeat("\x01", maxDetail)
	if err := l.Append(e); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(testKey); err != nil {
		t.Fatal(err)
	}
	var seqs []int
	if _, err := l.Last(3, func(_ []byte, e Entry) error { seqs = append(seqs, e.Seq); return nil }); err != nil || fmt.Sprint(seqs) != "[3 4 5]" {
		t.Fatalf("Last(3) = %v, %v", seqs, err)
	}
	if rep := mustVerify(t, l, testKey); !rep.OK() || rep.Entries != 5 || rep.SealedSeq != 5 {
		t.Fatalf("report %+v", rep)
	}
}

func TestRestartKeepsOldLogAndStartsSealed(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 1, 4)
	lines := logLines(t, l)
	writeLines(t, l, lines[1:]) // tampered
	if rep := mustVerify(t, l, testKey); rep.OK() {
		t.Fatal("tampering not seen")
	}
	archived, err := l.Restart(testKey)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(archived); err != nil || !bytes.Equal(b, bytes.Join(lines[1:], nil)) {
		t.Fatalf("archived log %s not kept: %v", archived, err)
	}
	if filepath.Dir(archived) != l.Dir() || !strings.HasSuffix(archived, ".jsonl") {
		t.Errorf("archived as %s", archived)
	}
	rep := mustVerify(t, l, testKey)
	if !rep.OK() || rep.Entries != 0 {
		t.Fatalf("new log: %+v", rep)
	}
	appendN(t, l, 1, 2)
	if err := l.Seal(testKey); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, l, testKey); !rep.OK() || rep.Entries != 2 || rep.SealedSeq != 2 {
		t.Fatalf("new log after appends: %+v", rep)
	}
	if _, err := l.Restart(otherKey[:3]); err == nil {
		t.Fatal("Restart accepted a short key")
	}
}

// A symlink planted in the audit directory never redirects a write.
func TestSymlinksAreNotFollowed(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	for _, name := range []string{logName, tailName + ".tmp", headName + ".tmp", lockName} {
		if err := os.WriteFile(victim, nil, 0o600); err != nil { // empty: looks like a fresh log
			t.Fatal(err)
		}
		l := newLog(t)
		appendN(t, l, 1, 1)
		os.Remove(l.path(name))
		if err := os.Symlink(victim, l.path(name)); err != nil {
			t.Fatal(err)
		}
		_ = l.Append(entry(2))
		_ = l.Seal(testKey)
		if b, _ := os.ReadFile(victim); len(b) != 0 {
			t.Fatalf("%s: write went through the symlink: %q", name, b)
		}
	}
	// Control: without the link, both work.
	l := newLog(t)
	appendN(t, l, 1, 1)
	if err := l.Seal(testKey); err != nil {
		t.Fatal(err)
	}
}

const crashHelperEnv = "LOOPGUARD_AUDIT_CRASH_HELPER"

// TestHelperAppendForever appends (without fsync, as the hook's denies do)
// and seals now and then until it is killed.
func TestHelperAppendForever(t *testing.T) {
	dir := os.Getenv(crashHelperEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	l := Open(dir)
	for i := 1; ; i++ {
		e := entry(i)
		e.Detail = strings.Repeat("x", i%maxDetail) // lines of every length, some over a page
		if err := l.AppendNoSync(e); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			if err := l.Seal(testKey); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A writer killed at a random point of an append (or of a seal) leaves a log
// that Verify accepts, or reports with exactly one torn last line and no
// sign of tampering; after the next append it is accepted whole, with every
// complete entry kept.
func TestCrashDuringAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	sawTorn := false
	for round := range 12 {
		l := newLog(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppendForever$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashHelperEnv+"="+l.Dir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it at a point that differs from round to round.
		deadline := time.Now().Add(10 * time.Second)
		for {
			fi, err := os.Stat(l.path(logName))
			if err == nil && fi.Size() > int64(20000+round*7919) {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("the helper wrote nothing")
			}
			time.Sleep(time.Millisecond)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		// Plant what a kill inside write(2) can leave in some rounds: the
		// first part of a line.
		if round%3 == 0 {
			f, err := os.OpenFile(l.path(logName), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(`{"seq":999999,"time":"2026-11-30T11:`)
			f.Close()
		}
		b, err := os.ReadFile(l.path(logName))
		if err != nil {
			t.Fatal(err)
		}
		complete := bytes.Count(b, []byte("\n"))
		rep := mustVerify(t, l, testKey)
		switch {
		case rep.OK():
		case len(rep.Problems) == 1 && rep.Problems[0].Kind == KindTorn:
			sawTorn = true
		default:
			t.Fatalf("round %d: after the kill: %+v", round, rep.Problems)
		}
		if err := l.AppendNoSync(entry(0)); err != nil {
			t.Fatalf("round %d: append after the kill: %v", round, err)
		}
		rep = mustVerify(t, l, testKey)
		if !rep.OK() || rep.Entries != complete+1 {
			t.Fatalf("round %d: after the next append: %d entries (want %d), problems %+v", round, rep.Entries, complete+1, rep.Problems)
		}
	}
	if !sawTorn {
		t.Error("no round left a torn line: the test did not test it")
	}
}

// Sync makes what AppendNoSync wrote durable; it fails plainly when there is
// no log, and never creates one.
func TestSync(t *testing.T) {
	l := Open(filepath.Join(t.TempDir(), "audit"))
	if err := l.Sync(); err == nil {
		t.Fatal("Sync of a log that does not exist succeeded")
	}
	if _, err := os.Stat(l.path(logName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Sync created the log: %v", err)
	}
	if err := l.AppendNoSync(entry(1)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestAppendLateWhileLocked: an entry written while another process holds
// the log's lock (the hook's deadline deny, when what it waited for may be
// that lock) does not wait for the lock, and the next append moves it into
// the chain ahead of itself, in the order late entries were written; the
// chain and a new seal verify.
func TestAppendLateWhileLocked(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 0, 2)
	unlock, err := l.lock()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		e1, e2 := entry(10), entry(11)
		e1.Reason, e1.Told = "deadline", "loopguard: deadline: no decision within 5s"
		if err := l.AppendLate(e1); err != nil {
			done <- err
			return
		}
		e2.Time = time.Now().Add(time.Millisecond)
		done <- l.AppendLate(e2)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AppendLate waited for the lock")
	}
	if n := l.LateEntries(); n != 2 {
		t.Fatalf("%d late entries waiting, want 2", n)
	}
	unlock()
	appendN(t, l, 20, 1)
	lines := logLines(t, l)
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	var got []string
	for _, line := range lines {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Detail+"/"+e.Reason)
	}
	if want := "n=0/no_grant n=1/no_grant n=10/deadline n=11/no_grant n=20/no_grant"; strings.Join(got, " ") != want {
		t.Errorf("entries %q, want %q", strings.Join(got, " "), want)
	}
	if !strings.Contains(string(lines[2]), `"told":"loopguard: deadline`) {
		t.Errorf("the late entry lost what the model was told: %s", lines[2])
	}
	if n := l.LateEntries(); n != 0 {
		t.Errorf("%d late entries left after the append", n)
	}
	if err := l.Seal(testKey); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, l, testKey); !rep.OK() {
		t.Errorf("verify: %+v", rep.Problems)
	}
}

// TestDrain: Drain moves late entries in without an entry of its own.
func TestDrain(t *testing.T) {
	l := newLog(t)
	appendN(t, l, 0, 1)
	if err := l.AppendLate(entry(5)); err != nil {
		t.Fatal(err)
	}
	if err := l.Drain(); err != nil {
		t.Fatal(err)
	}
	if n := len(logLines(t, l)); n != 2 || l.LateEntries() != 0 {
		t.Errorf("%d lines and %d late entries after Drain, want 2 and 0", n, l.LateEntries())
	}
	if err := l.Drain(); err != nil || len(logLines(t, l)) != 2 {
		t.Errorf("a second Drain changed the log: %v", err)
	}
}

// TestAppendSealedIsAppendThenSeal: AppendSealed leaves the log and head
// byte for byte as Append then Seal do, and where Seal refuses (a tampered
// or missing head, another key) it refuses to seal too, with the entry
// appended all the same: on an untouched log (control) and on each
// tampering of TestSealRefusesTamperedLog.
func TestAppendSealedIsAppendThenSeal(t *testing.T) {
	at := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	timed := func(i int) Entry { e := entry(i); e.Time = at.Add(time.Duration(i) * time.Second); return e }
	cases := []struct {
		name   string
		spoil  func(t *testing.T, l *Log)
		key    []byte
		sealed bool
	}{
		{"control: untouched", func(*testing.T, *Log) {}, testKey, true},
		{"sealed entry edited", func(t *testing.T, l *Log) {
			lines := logLines(t, l)
			lines[2] = bytes.Replace(lines[2], []byte(`"deny"`), []byte(`"DENY"`), 1)
			writeLines(t, l, rechain(t, lines))
		}, testKey, false},
		{"truncated below the head", func(t *testing.T, l *Log) { writeLines(t, l, logLines(t, l)[:2]) }, testKey, false},
		{"head forged", func(t *testing.T, l *Log) { forgeHead(t, l, otherKey, logLines(t, l)) }, testKey, false},
		{"head deleted", func(t *testing.T, l *Log) { os.Remove(l.path(headName)) }, testKey, false},
		{"another key", func(*testing.T, *Log) {}, otherKey, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := [2]*Log{newLog(t), newLog(t)}
			for _, l := range logs {
				for i := 1; i <= 4; i++ {
					if err := l.Append(timed(i)); err != nil {
						t.Fatal(err)
					}
				}
				if err := l.Seal(testKey); err != nil {
					t.Fatal(err)
				}
				c.spoil(t, l)
			}
			if err := logs[0].Append(timed(5)); err != nil {
				t.Fatal(err)
			}
			serr := logs[0].Seal(c.key)
			sealed, err := logs[1].AppendSealed(timed(5), c.key)
			if err != nil {
				t.Fatalf("AppendSealed: %v", err)
			}
			if sealed != c.sealed || (serr == nil) != c.sealed {
				t.Fatalf("AppendSealed sealed %v, Seal after Append %v; want sealed %v", sealed, serr, c.sealed)
			}
			for _, name := range []string{logName, headName} {
				a, aerr := os.ReadFile(logs[0].path(name))
				b, berr := os.ReadFile(logs[1].path(name))
				if !bytes.Equal(a, b) || (aerr == nil) != (berr == nil) {
					t.Fatalf("%s differs:\nAppend, Seal: %s (%v)\nAppendSealed: %s (%v)", name, a, aerr, b, berr)
				}
			}
			if !bytes.Contains(logLines(t, logs[1])[len(logLines(t, logs[1]))-1], []byte(`"n=5"`)) {
				t.Fatal("the entry is not the log's last line")
			}
			if c.sealed {
				if rep := mustVerify(t, logs[1], testKey); !rep.OK() || rep.SealedSeq != 5 || rep.Unsealed != 0 {
					t.Fatalf("report %+v", rep)
				}
			}
		})
	}
	if _, err := newLog(t).AppendSealed(entry(1), testKey[:16]); err == nil {
		t.Fatal("AppendSealed accepted a short key")
	}
}
