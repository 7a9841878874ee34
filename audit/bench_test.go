package audit

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// bigLog writes a sealed log of n entries into dir directly (no fsync per
// line), as fast as the chain allows.
func bigLog(b *testing.B, dir string, n int) *Log {
	b.Helper()
	l := Open(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(l.path(logName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	p := startPoint
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		e := entry(i)
		e.Seq, e.Prev, e.Time = i, p.Hash, t0.Add(time.Duration(i)*time.Millisecond)
		line, err := encodeEntry(e)
		if err != nil {
			b.Fatal(err)
		}
		w.Write(line)
		w.WriteByte('\n')
		p = point{Seq: i, Hash: hashLine(line), Size: p.Size + int64(len(line)) + 1}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	// Flush it to disk now, or the first fsync of the benchmark pays for it.
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := l.writeHead(testKey, p); err != nil {
		b.Fatal(err)
	}
	return l
}

// The hook appends on every call, so Append must cost the same with a log of
// a million lines as with none. Compare the ns/op of the two sizes.
//
//	go test -run '^$' -bench . -benchtime 2000x ./audit/
func BenchmarkAppend(b *testing.B) { benchSizes(b, false) }

// The allow path appends and then seals.
func BenchmarkAppendSeal(b *testing.B) { benchSizes(b, true) }

// benchSizes appends (and with seal, seals) on a log of no lines and on
// one of a million.
func benchSizes(b *testing.B, seal bool) {
	for _, n := range []int{0, 1_000_000} {
		l := benchLog(b, n)
		b.Run("lines="+strconv.Itoa(n), func(b *testing.B) {
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := l.Append(entry(i)); err != nil {
					b.Fatal(err)
				}
				if !seal {
					continue
				}
				if err := l.Seal(testKey); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchLog generates the log once, in the parent benchmark's temp dir; each
// call of the sub-benchmark appends to it (that only makes it bigger).
func benchLog(b *testing.B, n int) *Log {
	b.Helper()
	return bigLog(b, filepath.Join(b.TempDir(), "audit"), n)
}

// Verify reads everything; this is the figure for `loopguard audit verify`.
func BenchmarkVerify(b *testing.B) {
	l := benchLog(b, 1_000_000)
	b.Run("lines=1000000", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rep, err := l.Verify(testKey)
			if err != nil || !rep.OK() {
				b.Fatal(err, rep.Problems)
			}
		}
	})
}
