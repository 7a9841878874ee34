//go:build linux

package confine

import (
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestBrokerCost (LG_MEASURE_BROKER=1): interleaved launches under the
// filter alone, with the broker and without.
func TestBrokerCost(t *testing.T) {
	if os.Getenv("LG_MEASURE_BROKER") != "1" {
		t.Skip("a measurement")
	}
	j := newJail(t, false)
	base := j.env
	loop := `i=0; while [ $i -lt 1000 ]; do : > "$TMPDIR/f$i"; i=$((i+1)); done`
	rm := `mkdir "$TMPDIR/d" && cd "$TMPDIR/d" && ` + loop + ` && cd / && rm -r "$TMPDIR/d"`
	for _, w := range []struct{ name, script string }{{"true", "true"}, {"1000 creates in TMPDIR", loop}, {"1000 creates and rm -r", rm}} {
		var cpu [2][]time.Duration
		var wall [2][]time.Duration
		for i := 0; i < 15; i++ {
			for k, off := range []bool{false, true} {
				j.env = base
				if off {
					j.env = append(slices.Clone(base), "LG_CONFINE_NO_BROKER=1")
				}
				var before, after syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
				start := time.Now()
				out, code := j.launch(t, projectWrite, "jail-sh", w.script)
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
