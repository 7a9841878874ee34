// Command launchbench measures what the launcher (loopguard-exec)
// adds to a command a scoped grant allows: the same program run alone and
// through the launcher, as whole processes, interleaved call by call so
// that the machine's drift cancels; median, p90 and the paired difference.
// Rows: read-only (git --version, under the preset's capability) and
// project-write (true, in a project of the given size, where the launcher
// walks the tree for executable configuration).
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

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
)

func main() {
	hook := flag.String("launcher", "bin/loopguard-exec", "the launcher binary (loopguard-exec, or loopguard-hook: its exec subcommand)")
	repo := flag.String("repo", ".", "a project for the project-write row (this repository)")
	rounds := flag.Int("rounds", 200, "measured runs per program and row")
	readOnly := flag.Bool("read-only", false, "only the read-only rows")
	out := flag.String("out", "", "append the Markdown table here too")
	flag.Parse()
	if abi := confine.ABI(); abi < confine.MinABI {
		fmt.Fprintf(os.Stderr, "launchbench: Landlock ABI %d, confinement needs %d: nothing to measure\n", abi, confine.MinABI)
		os.Exit(1)
	}
	h, _ := filepath.Abs(*hook)
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
	fmt.Fprintf(&b, "\n### The launcher (%s exec), %d runs each, interleaved\n\n", filepath.Base(h), *rounds)
	fmt.Fprintf(&b, "Landlock ABI %d. Wall time per whole process, ms.\n\n", confine.ABI())
	b.WriteString("| row | alone median | launched median | alone p90 | launched p90 | added, median of pairs |\n|---|--:|--:|--:|--:|--:|\n")
	for _, row := range rows {
		spec := confine.Spec{Cap: row.cap, Project: r, Cwd: r, Exe: row.argv[0], Argv: append([]string{filepath.Base(row.argv[0])}, row.argv[1:]...)}
		alone := exec.Command(row.argv[0], row.argv[1:]...)
		launched := exec.Command(h, spec.Args()...)
		for i := 0; i < 5; i++ { // warm-up
			once(alone)
			once(launched)
		}
		var a, l, d []time.Duration
		for i := 0; i < *rounds; i++ {
			x, y := once(alone), once(launched)
			a, l, d = append(a, x), append(l, y), append(d, y-x)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", row.name, ms(pct(a, 50)), ms(pct(l, 50)), ms(pct(a, 90)), ms(pct(l, 90)), ms(pct(d, 50)))
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
}

// once runs a copy of c and returns its wall time from start to reaped
// exit; a failed run stops the benchmark.
func once(c *exec.Cmd) time.Duration {
	cmd := exec.Command(c.Path, c.Args[1:]...)
	cmd.Dir = c.Dir
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fatal(fmt.Errorf("%s: %v: %s", strings.Join(c.Args, " "), err, out))
	}
	return time.Since(start)
}

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

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "launchbench:", err)
	os.Exit(1)
}
