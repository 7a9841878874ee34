package present

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/shellparse"
)

// checkReads is what loopguard check reads of a command: the analysis and
// the outline it prints, each piece escaped.
func checkReads(cmd string, env shellparse.Env) {
	shellparse.Analyze(cmd, env)
	lines, _ := shellparse.Outline(cmd)
	for _, l := range lines {
		for _, s := range l.Source {
			EscapeText(s)
		}
	}
}

// dangerReads is what the hook shows the human of a Bash call beside the
// analysis: the DANGER and stdin lines, from the analysis's sketch.
func dangerReads(cmd string, sk *shellparse.Sketch, project string) {
	DangerOf("Bash", map[string]any{"command": cmd}, sk, project)
	StdinDanger(cmd, sk)
}

// threadCPU is the CPU time the calling thread has used: unlike the wall
// clock, it does not count the time the thread waited for a core other
// processes held.
func threadCPU(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Skipf("no thread CPU clock: %v", err)
	}
	return time.Duration(ts.Nano())
}

// costRatio is the CPU time of large over that of small, each the least
// of three interleaved runs on one locked thread, after a warm-up of
// each. The collector runs between the runs, never during one (its
// background work runs on other threads, at times the work does not
// choose), so each run starts from the same clean heap.
func costRatio(t *testing.T, small, large func()) (ratio float64, s, l time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer runtime.GC()
	small()
	large()
	least := func(f func(), was time.Duration) time.Duration {
		runtime.GC()
		start := threadCPU(t)
		f()
		d := threadCPU(t) - start
		if was == 0 || d < was {
			return d
		}
		return was
	}
	for range 3 {
		s = least(small, s)
		l = least(large, l)
	}
	return float64(l) / float64(s), s, l
}

// TestLongCommandsCostLinear: the work loopguard check and the hook do on
// a long command grows with its length, not its square (issue 39: a
// 4,001-part pipeline took 20 times a 1,001-part one in the chain walk;
// the danger lines looked back along the whole pipeline from each part
// that runs its input, and looked for each line among all the lines
// before it). What check reads (checkReads) of a pipeline, and the danger
// lines (dangerReads) of every shape, cost at most 8 times as much for
// 4,001 parts as for 1,001: linear is 4, and measures 3.3 to 5.6 under
// -race on a loaded 2-core machine, the larger run's data outgrowing the
// caches the smaller fits in; a square is 16. Thread CPU time, the least
// of three runs, so a loaded machine's waits do not count; a ratio over
// the bound is measured again twice before it fails, as noise does not
// repeat and a square does. shellparse counts the walk and the
// allocations of check's work in every shape, deterministically
// (TestPipelineLinear, TestLongCommandsAllocateLinearly). Without the
// linear danger lines, the pipeline into shells and the lists of deletes
// and of device writes fail it (10 to 14 times).
func TestLongCommandsCostLinear(t *testing.T) {
	const bound = 8
	env := shellparse.Env{Cwd: "/work/p", ProjectDir: "/work/p", Path: "/usr/bin:/bin"}
	for _, shape := range []struct {
		name  string
		first string
		part  string // %d is the part's index
		sep   string
		check bool // time checkReads too
	}{
		{"pipeline", "id", "id", "|", true},
		{"pipeline into shells", "id", "sh", "|", false},
		{"list of deletes", "true", "rm -rf /a%d", ";", false},
		{"list of device writes", "true", "dd of=/dev/%d", ";", false},
		{"and-list of greps", "true", "grep x%d .", "&&", false},
	} {
		build := func(n int) string {
			parts := []string{shape.first}
			for i := 1; i < n; i++ {
				p := shape.part
				if strings.Contains(p, "%d") {
					p = fmt.Sprintf(p, i)
				}
				parts = append(parts, p)
			}
			return strings.Join(parts, shape.sep)
		}
		small, large := build(1001), build(4001)
		if len(large) > shellparse.MaxCommandLen {
			t.Fatalf("%s: %d bytes, more than the analysis reads", shape.name, len(large))
		}
		sk1, ok1 := shellparse.SketchOf(small)
		sk4, ok4 := shellparse.SketchOf(large)
		if !ok1 || !ok4 {
			t.Fatalf("%s: not sketched", shape.name)
		}
		type step struct {
			name         string
			small, large func()
		}
		steps := []step{{"danger lines", func() { dangerReads(small, &sk1, env.ProjectDir) }, func() { dangerReads(large, &sk4, env.ProjectDir) }}}
		if shape.check {
			steps = append(steps, step{"check", func() { checkReads(small, env) }, func() { checkReads(large, env) }})
		}
		for _, st := range steps {
			var ratio float64
			var s, l time.Duration
			for try := 0; try < 3; try++ {
				ratio, s, l = costRatio(t, st.small, st.large)
				if ratio <= bound {
					break
				}
			}
			t.Logf("%s, %s: 1,001 parts %v, 4,001 parts %v (%.1f times)", shape.name, st.name, s, l, ratio)
			if ratio > bound {
				t.Errorf("%s, %s: 4,001 parts cost %.1f times 1,001 (%v, %v), want at most %d", shape.name, st.name, ratio, l, s, bound)
			}
		}
	}
}
