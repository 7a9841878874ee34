package main

// The undo record's cost (issue 36, item 5: at most 50 ms per call in a
// git repository of 10,000 files): the launcher with its record against
// the same launcher built without it (confine's benchNoRecord, set at
// link time; no shipped build has it), as whole processes, interleaved
// call by call, in a generated repository (100 directories of 100 files
// of 4 kB, committed), each launcher with its own undo directory. Rows: a
// call that writes nothing (true) and one that appends to one file.

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/bench/budget"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
)

var (
	undoRounds = flag.Int("undo-rounds", 20, "measured runs per launcher of the undo rows (0: none)")
	undoSrc    = flag.String("undo-src", ".", "the module the launcher without a record is built from (go build)")
)

// budgetUndo is what a record may add to a call (issue 36, item 5).
const budgetUndo = 50 * time.Millisecond

// undoRows measures the record of launcher and returns the report's
// section and the budget figures.
func undoRows(launcher string, rounds int) (string, []budget.Figure, error) {
	tmp, err := os.MkdirTemp("", "launchbench-undo-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	none := filepath.Join(tmp, "loopguard-confine-norecord")
	build := exec.Command("go", "build", "-ldflags", "-X github.com/loopguard/loopguard/confine.benchNoRecord=1", "-o", none, "./cmd/loopguard-confine")
	build.Dir, build.Env = *undoSrc, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("building the launcher without a record: %v: %s", err, out)
	}
	repo := filepath.Join(tmp, "repo")
	if err := makeRepo(repo); err != nil {
		return "", nil, err
	}
	sh, _ := exec.LookPath("sh")
	sh, _ = filepath.EvalSymlinks(sh)
	tru, _ := exec.LookPath("true")
	tru, _ = filepath.EvalSymlinks(tru)
	type row struct {
		name string
		argv []string
	}
	rows := []row{
		{"true (writes nothing)", []string{tru}},
		{"sh -c 'date >> pkg000/file000.go' (one file)", []string{sh, "-c", "date >> pkg000/file000.go"}},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### The undo record (%s exec, project-write), %d runs each, interleaved\n\n", filepath.Base(launcher), rounds)
	b.WriteString("In a git repository of 10,000 files of 4 kB (100 directories of 100), the launcher with its record against the same launcher built without it; ")
	b.WriteString("each keeps its own undo directory, took its first record (every file copied) and another 2 s later before the runs, then 2 warm-up rounds. ")
	fmt.Fprintf(&b, "Per whole process, ms. Load average at the start: %s.\n\n", loadavg())
	b.WriteString("| call | CPU with / without | added CPU, median of pairs | wall with / without | added wall, median of pairs |\n|---|--:|--:|--:|--:|\n")
	var figs []budget.Figure
	for _, r := range rows {
		spec := confine.Spec{Cap: policy.Capability{Write: true}, Project: repo, Cwd: repo, Exe: r.argv[0], Argv: append([]string{filepath.Base(r.argv[0])}, r.argv[1:]...)}
		with := &prog{name: "record", path: launcher, args: spec.Args()}
		watched := &prog{name: "record, watcher", path: launcher, args: spec.Args()}
		without := &prog{name: "no record", path: none, args: spec.Args()}
		for _, p := range []*prog{with, watched, without} {
			state := filepath.Join(tmp, "state-"+strings.NewReplacer(" ", "-", ",", "").Replace(p.name)+"-"+strings.Fields(r.name)[0])
			p.env = append(os.Environ(), "XDG_STATE_HOME="+state)
			if p == watched {
				// The project's watcher, as the hook starts it.
				stop, err := startWatcher(watcherOf(launcher), filepath.Join(state, "loopguard"), repo)
				if err != nil {
					return "", nil, err
				}
				defer stop()
			}
			p.once() // the first record copies every file
		}
		time.Sleep(2100 * time.Millisecond) // past the window in which a file's times are not trusted
		for i := -3; i < rounds; i++ {
			ps := []*prog{with, watched, without}
			for k := 0; k < mod(i, 3); k++ {
				ps = append(ps[1:], ps[0])
			}
			for _, p := range ps {
				w, c := p.once()
				if i >= 0 {
					p.wall, p.cpu = append(p.wall, w), append(p.cpu, c)
				}
			}
		}
		for _, p := range []*prog{with, watched} {
			var dw, dc []time.Duration
			for i := range p.wall {
				dw, dc = append(dw, p.wall[i]-without.wall[i]), append(dc, p.cpu[i]-without.cpu[i])
			}
			addW, addC := pct(dw, 50), pct(dc, 50)
			name := r.name
			if p == watched {
				name += ", with the project's watcher"
			}
			fmt.Fprintf(&b, "| %s | %s / %s | %s | %s / %s | %s |\n", name, ms(pct(p.cpu, 50)), ms(pct(without.cpu, 50)), ms(addC),
				ms(pct(p.wall, 50)), ms(pct(without.wall, 50)), ms(addW))
			figs = append(figs, budget.Figure{
				Issue: "36", Name: "the undo record of a call in a git repository of 10,000 files, " + name + ": what it adds to the launch, median of paired differences",
				Budget: "≤ " + ms(budgetUndo) + " ms",
				Wall:   ms(addW) + " ms", Pass: addW <= budgetUndo,
				CPU: ms(addC) + " ms", CPUPass: addC <= budgetUndo,
			})
		}
	}
	return b.String(), figs, nil
}

// watcherOf is the binary that runs the project's undo watcher beside the
// launcher h, as the hook starts it: loopguard-exec beside it
// (policy.Launcher), else h itself.
func watcherOf(h string) string {
	if w := policy.Launcher(h); w != h {
		if fi, err := os.Stat(w); err == nil && fi.Mode().IsRegular() {
			return w
		}
	}
	return h
}

// startWatcher starts the project's undo watcher (launcher's
// undo-watch, as the hook starts it) and waits until it listens; stop
// ends it.
func startWatcher(launcher, stateDir, project string) (stop func(), err error) {
	cmd := exec.Command(launcher, "undo-watch", "--state", stateDir, "--project", project)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for i := 0; i < 500; i++ {
		if m, _ := filepath.Glob(filepath.Join(policy.UndoDir(stateDir), "*", "watch")); len(m) > 0 {
			return stop, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	return nil, fmt.Errorf("the undo watcher of %s did not start listening", project)
}

// makeRepo makes a git repository of 100 directories of 100 files of
// 4 kB, committed.
func makeRepo(dir string) error {
	body := strings.Repeat("0123456789abcdef", 256)
	for d := 0; d < 100; d++ {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%03d.go", f)), []byte(fmt.Sprintf("// %d %d\n%s", d, f, body[:4080])), 0o644); err != nil {
				return err
			}
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@invalid", "commit", "-qm", "bench"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}
