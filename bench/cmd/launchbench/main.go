// Command launchbench measures what the launcher (loopguard-confine)
// adds to a command a scoped grant allows: the same program run alone and
// through the launcher, as whole processes, interleaved call by call so
// that the machine's drift cancels; median, p90, CPU time and the paired
// difference. Rows: read-only (git --version, under the preset's capability)
// and project-write (true, in a project of the given size, where the launcher
// walks the tree for executable configuration).
//
// Beside them, in the same rounds: -floor, a static Go program that takes
// the launcher's command line and only execs (bench/cmd/floorexec: the Go
// runtime's start, the launcher's floor), and -alt, the previous release's
// launcher, which today's is held to be not slower than (issue 35). -budgets
// appends the figures (bench/budget) for bench/cmd/budgets. Then the undo
// record's cost (undo.go).
//
// Run it through `make bench`. See BENCH.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/bench/budget"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
)

// Budgets.
const (
	// budgetStart is what a read-only launch may add to the program
	// (issue 22; issue 39 asks the launcher's start measured and cut).
	budgetStart = 2 * time.Millisecond
	// budgetNotSlower: today's launch over the previous release's, same
	// rounds (issue 35), within what two medians of one binary differ by.
	budgetNotSlower = 1.05
)

func main() {
	launcher := flag.String("launcher", "bin/loopguard-confine", "the launcher binary (loopguard-confine; or loopguard-exec, loopguard-hook: their exec subcommand)")
	floor := flag.String("floor", "", "the launcher's floor, run beside it (bin/bench/floorexec: only execs)")
	alt := flag.String("alt", "", "the previous release's launcher, run beside it: today's is held to not slower")
	altName := flag.String("alt-name", "", "what -alt is (its commit)")
	repo := flag.String("repo", ".", "a project for the project-write row (this repository)")
	rounds := flag.Int("rounds", 200, "measured runs per program and row")
	readOnly := flag.Bool("read-only", false, "only the read-only rows")
	out := flag.String("out", "", "append the Markdown table here too")
	budgets := flag.String("budgets", "", "append the budget figures here (JSON lines, for bench/cmd/budgets)")
	flag.Parse()
	if abi := confine.ABI(); abi < confine.MinABI {
		fmt.Fprintf(os.Stderr, "launchbench: Landlock ABI %d, confinement needs %d: nothing to measure\n", abi, confine.MinABI)
		os.Exit(1)
	}
	h, _ := filepath.Abs(*launcher)
	r, _ := filepath.Abs(*repo)
	git, err := exec.LookPath("git")
	if err != nil {
		fatal(err)
	}
	git, _ = filepath.EvalSymlinks(git)
	tru, _ := exec.LookPath("true")
	tru, _ = filepath.EvalSymlinks(tru)
	files := 0
	_ = filepath.WalkDir(r, func(string, os.DirEntry, error) error { files++; return nil })
	type row struct {
		name string
		cap  policy.Capability
		argv []string
	}
	rows := []row{{"read-only: git --version", policy.Capability{}, []string{git, "--version"}}}
	if !*readOnly {
		rows = append(rows,
			row{fmt.Sprintf("project-write: true, project of %d entries", files), policy.Capability{Write: true}, []string{tru}},
			row{fmt.Sprintf("project-write+git: true, project of %d entries", files), policy.Capability{Write: true, Git: true}, []string{tru}})
	}
	var b strings.Builder
	var figs []budget.Figure
	fmt.Fprintf(&b, "\n### The launcher (%s exec), %d runs each, interleaved\n\n", filepath.Base(h), *rounds)
	fmt.Fprintf(&b, "Landlock ABI %d. Per whole process, ms: wall time, and CPU time (user and system, the launched program's included).\n", confine.ABI())
	if *floor != "" {
		fmt.Fprintf(&b, "\"floor\" is %s: a static Go program given the launcher's command line that only execs the program.\n", filepath.Base(*floor))
	}
	if *alt != "" {
		fmt.Fprintf(&b, "\"previous\" is %s (%s), the previous release's launcher.\n", *alt, *altName)
	}
	fmt.Fprintf(&b, "Load average at the start: %s.\n\n", loadavg())
	b.WriteString("| row | program | wall median | wall p90 | CPU median | added to alone, median of pairs |\n|---|---|--:|--:|--:|--:|\n")
	for _, row := range rows {
		spec := confine.Spec{Cap: row.cap, Project: r, Cwd: r, Exe: row.argv[0], Argv: append([]string{filepath.Base(row.argv[0])}, row.argv[1:]...)}
		progs := []*prog{
			{name: "alone", path: row.argv[0], args: row.argv[1:]},
			{name: "**" + filepath.Base(h) + "**", path: h, args: spec.Args()},
		}
		if *floor != "" {
			f, _ := filepath.Abs(*floor)
			progs = append(progs, &prog{name: "floor: " + filepath.Base(f), path: f, args: spec.Args()})
		}
		var watched *prog
		if row.cap.Write {
			// As users run it: the hook starts the project's undo
			// watcher with the first call that can write (package
			// undo), and every later record asks it.
			state, err := os.MkdirTemp("", "launchbench-watched-")
			if err != nil {
				fatal(err)
			}
			defer os.RemoveAll(state)
			stop, err := startWatcher(watcherOf(h), filepath.Join(state, "loopguard"), r)
			if err != nil {
				fatal(err)
			}
			defer stop()
			watched = &prog{name: "**" + filepath.Base(h) + "**, with the project's undo watcher", path: h, args: spec.Args(),
				env: append(os.Environ(), "XDG_STATE_HOME="+state)}
			progs = append(progs, watched)
		}
		if *alt != "" {
			a, _ := filepath.Abs(*alt)
			progs = append(progs, &prog{name: "previous: " + *altName, path: a, args: spec.Args()})
		}
		for i := -5; i < *rounds; i++ { // 5 warm-up rounds
			for k := range progs {
				p := progs[(k+mod(i, len(progs)))%len(progs)]
				w, c := p.once()
				if i >= 0 {
					p.wall, p.cpu = append(p.wall, w), append(p.cpu, c)
				}
			}
		}
		alone := progs[0]
		added := map[*prog]time.Duration{}
		for _, p := range progs {
			var d []time.Duration
			for i := range p.wall {
				d = append(d, p.wall[i]-alone.wall[i])
			}
			added[p] = pct(d, 50)
			add := ms(added[p])
			if p == alone {
				add = ""
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", row.name, p.name, ms(pct(p.wall, 50)), ms(pct(p.wall, 90)), ms(pct(p.cpu, 50)), add)
		}
		now := progs[1]
		if row.cap == (policy.Capability{}) {
			detail := ""
			if *floor != "" {
				detail = fmt.Sprintf("; the floor (only execs) adds %s ms", ms(added[progs[2]]))
			}
			addedCPU := pct(now.cpu, 50) - pct(alone.cpu, 50)
			figs = append(figs, budget.Figure{
				Issue: "22, 39", Name: "the launcher's own start: what " + filepath.Base(h) + " adds to `git --version` (read-only), median of paired differences",
				Budget: "≤ " + ms(budgetStart) + " ms",
				Wall:   ms(added[now]) + " ms" + detail, Pass: added[now] <= budgetStart,
				CPU: ms(addedCPU) + " ms (CPU medians' difference)", CPUPass: addedCPU <= budgetStart,
			})
		}
		if *alt != "" {
			old := progs[len(progs)-1]
			for _, p := range []*prog{now, watched} {
				if p == nil {
					continue
				}
				name := "launcher, " + row.name
				if p == watched {
					name += ", with the project's undo watcher"
				}
				x := float64(pct(p.wall, 50)) / float64(pct(old.wall, 50))
				xc := float64(pct(p.cpu, 50)) / float64(pct(old.cpu, 50))
				figs = append(figs, budget.Figure{
					Issue: "35", Name: name + ": today's over the previous release's (" + *altName + "), same rounds",
					Budget: fmt.Sprintf("≤ %.2fx (not slower)", budgetNotSlower),
					Wall:   fmt.Sprintf("%.2fx (%s ms / %s ms)", x, ms(pct(p.wall, 50)), ms(pct(old.wall, 50))), Pass: x <= budgetNotSlower,
					CPU: fmt.Sprintf("%.2fx (%s ms / %s ms)", xc, ms(pct(p.cpu, 50)), ms(pct(old.cpu, 50))), CPUPass: xc <= budgetNotSlower,
				})
			}
		}
	}
	if *undoRounds > 0 && !*readOnly { // undo.go
		s, f, err := undoRows(h, *undoRounds)
		if err != nil {
			fatal(err)
		}
		b.WriteString(s)
		figs = append(figs, f...)
	}
	if len(figs) > 0 {
		b.WriteString("\nBudgets (the verdict is the wall time's):\n\n")
		for _, g := range figs {
			fmt.Fprintf(&b, "- %s %s, budget %s: wall %s; CPU %s %s\n", budget.Verdict(g.Pass), g.Name, g.Budget, g.Wall, g.CPU, budget.Verdict(g.CPUPass))
		}
	}
	fmt.Print(b.String())
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		_, _ = f.WriteString(b.String())
	}
	if *budgets != "" {
		if err := budget.Append(*budgets, figs...); err != nil {
			fatal(err)
		}
	}
}

// prog is one program of a row and what it measured.
type prog struct {
	name      string
	path      string
	args      []string
	env       []string // nil: this process's
	wall, cpu []time.Duration
}

// once runs p and returns its wall time from start to reaped exit and its
// CPU time; a failed run stops the benchmark.
func (p *prog) once() (wall, cpu time.Duration) {
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fatal(fmt.Errorf("%s %s: %v: %s", p.path, strings.Join(p.args, " "), err, out))
	}
	wall = time.Since(start)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func mod(a, b int) int { return ((a % b) + b) % b }

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "launchbench:", err)
	os.Exit(1)
}
