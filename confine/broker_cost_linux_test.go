//go:build linux

package confine

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
)

// TestBrokerCost (LG_MEASURE_BROKER=1): interleaved launches, with the
// broker and without, in both modes (with namespaces the broker is the
// second stage's, for names alone).
func TestBrokerCost(t *testing.T) {
	if os.Getenv("LG_MEASURE_BROKER") != "1" {
		t.Skip("a measurement")
	}
	bothModes(t, brokerCost)
}

func brokerCost(t *testing.T, j *jail) {
	base := j.env
	loop := `i=0; while [ $i -lt 1000 ]; do : > "$TMPDIR/f$i"; i=$((i+1)); done`
	rm := `mkdir "$TMPDIR/d" && cd "$TMPDIR/d" && ` + loop + ` && cd / && rm -r "$TMPDIR/d"`
	// Opens for writing without O_CREAT (of a file of the project the
	// broker did not make: the maker opens it), and 1000 files made
	// in a new directory at the top, which only the broker serves (its
	// "without" is the same script with the directory made beforehand by
	// the launch, in TMPDIR).
	reopen := `python3 -c "
for i in range(1000):
    open('docs/guide.md', 'r+').close()
"`
	newDir := `mkdir build && cd build && i=0; while [ $i -lt 1000 ]; do : > "f$i"; i=$((i+1)); done; cd .. && rm -r build`
	// 1000 writes of an existing file of src/ (the shell's >: O_CREAT
	// and O_TRUNC), which the maker opens (writeExisting).
	rewrite := `i=0; while [ $i -lt 1000 ]; do : > src/main.go; i=$((i+1)); done`
	// 1000 files made in src/, a directory a rule grants whole, whose
	// names the maker makes (maker_linux.go).
	inSrc := `mkdir src/gen && cd src/gen && i=0; while [ $i -lt 1000 ]; do : > "f$i"; i=$((i+1)); done; cd ../.. && rm -r src/gen`
	// The times of a file of the write set, set by its descriptor 1000
	// times (futimens: what touch, cp -p and tar x do to each file they
	// write), which the first stage sets with the broker.
	// Without the broker they are refused: its "without" is the same
	// loop with an fstat in their place.
	futimens := `python3 -c "
import os
fd = os.open('docs/guide.md', os.O_RDWR)
for i in range(1000):
    os.utime(fd)
"`
	fstat := strings.ReplaceAll(futimens, "os.utime(fd)", "os.fstat(fd)")
	for _, w := range []struct {
		name, script, without string
		c                     policy.Capability
	}{{"true", "true", "", projectWrite}, {"read-only: true", "true", "", readOnly}, {"1000 creates in TMPDIR", loop, "", projectWrite},
		{"1000 creates and rm -r", rm, "", projectWrite}, {"1000 opens for writing without O_CREAT", reopen, "", projectWrite},
		{"1000 creates in a new directory at the top, and rm -r", newDir, rm, projectWrite},
		{"1000 creates in src/, and rm -r", inSrc, "", projectWrite},
		{"1000 writes of an existing file in src/", rewrite, "", projectWrite},
		{"1000 futimens of a file of the write set (without: fstat)", futimens, fstat, projectWrite}} {
		var cpu [2][]time.Duration
		var wall [2][]time.Duration
		for i := 0; i < 15; i++ {
			for k, off := range []bool{false, true} {
				script := w.script
				if off && w.without != "" {
					script = w.without
				}
				j.env = base
				if off {
					j.env = append(slices.Clone(base), "LG_CONFINE_NO_BROKER=1")
				}
				var before, after syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
				start := time.Now()
				out, code := j.launch(t, w.c, "jail-sh", script)
				wall[k] = append(wall[k], time.Since(start))
				_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
				if code != 0 {
					t.Fatalf("%s: %d %s", w.name, code, out)
				}
				d := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
				cpu[k] = append(cpu[k], d)
			}
		}
		med := func(d []time.Duration) time.Duration { s := slices.Clone(d); slices.Sort(s); return s[len(s)/2] }
		t.Logf("%s: CPU median with broker %v, without %v; wall %v vs %v", w.name, med(cpu[0]), med(cpu[1]), med(wall[0]), med(wall[1]))
	}
}
