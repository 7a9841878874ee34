// Command budgets is make bench's last step: it gathers the budget figures
// hookbench and launchbench appended (bench/budget) and the jail's cost
// through the real client (TestJailCallCost's jail-cost line in go test's
// output), prints them as one table, each with its budget and PASS or OVER,
// puts that table at the top of the report, and exits 3 when any figure is
// over (or was not measured), so that make bench fails; -allow-over exits 0
// all the same. make bench is not part of make ci. See BENCH.md, "Budgets".
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/loopguard/loopguard/bench/budget"
)

// The jail's budget (issue 39, item 6): a jailed call at most this much
// more than the same call under Claude Code's sandbox alone, as the median
// of at least jailRounds rounds of sessions of at least jailCalls calls.
const (
	jailBudgetMS = 10.0
	jailRounds   = 5
	jailCalls    = 20
)

func main() {
	in := flag.String("in", ".cache/bench/budgets.jsonl", "the figures hookbench and launchbench appended")
	jailLog := flag.String("jail-log", "", "go test -v output of TestJailCallCost")
	out := flag.String("out", ".cache/bench/results.md", "the report: the table goes at its top")
	commit := flag.String("commit", "", "the commit measured, for the table's heading")
	allowOver := flag.Bool("allow-over", false, "exit 0 even when a figure is over its budget")
	flag.Parse()
	figs, err := budget.Read(*in)
	if err != nil {
		fatal(err)
	}
	if *jailLog != "" {
		figs = append(figs, jailFigure(*jailLog))
	}
	table, over := render(figs, *commit)
	fmt.Print(table)
	if *out != "" {
		old, err := os.ReadFile(*out)
		if err != nil && !os.IsNotExist(err) {
			fatal(err)
		}
		tmp := *out + ".tmp"
		if err := os.WriteFile(tmp, append([]byte(table+"\n"), old...), 0o644); err != nil {
			fatal(err)
		}
		if err := os.Rename(tmp, *out); err != nil {
			fatal(err)
		}
	}
	if over > 0 {
		fmt.Fprintf(os.Stderr, "budgets: %d of %d figures OVER their budget (see above; %s)\n", over, len(figs), *out)
		if !*allowOver {
			os.Exit(3)
		}
	}
}

func render(figs []budget.Figure, commit string) (string, int) {
	var b strings.Builder
	over := 0
	at := ""
	if commit != "" {
		at = " at " + commit
	}
	fmt.Fprintf(&b, "## Budgets%s\n\n", at)
	b.WriteString("Each figure is from this run, beside its floor from the same rounds. The verdict is the wall time's;\n")
	b.WriteString("the CPU time (user and system) is given beside it, with its own verdict, because the machine a run shares moves wall time more.\n\n")
	b.WriteString("| verdict | issue | figure | budget | wall | CPU |\n|---|---|---|---|---|---|\n")
	for _, g := range figs {
		if !g.Pass {
			over++
		}
		cpu := ""
		if g.CPU != "" {
			cpu = g.CPU + " " + budget.Verdict(g.CPUPass)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", budget.Verdict(g.Pass), g.Issue, g.Name, g.Budget, g.Wall, cpu)
	}
	fmt.Fprintf(&b, "\n%d of %d figures within their budget, %d OVER.\n", len(figs)-over, len(figs), over)
	return b.String(), over
}

var jailLine = regexp.MustCompile(`jail-cost rounds=(\d+) calls=(\d+) sandbox_ms=(\S+) jail_ms=(\S+) cost_ms=(\S+) sandbox_cpu_ms=(\S+) jail_cpu_ms=(\S+) cost_cpu_ms=(\S+)`)

// jailFigure reads TestJailCallCost's line; a run that did not measure
// (skipped, failed) is a figure that is not within its budget.
func jailFigure(file string) budget.Figure {
	g := budget.Figure{
		Issue:  "39",
		Name:   fmt.Sprintf("a jailed call through the real Claude Code, sandbox on, over the same call under its sandbox alone (per call: sessions of 1 and of %d+ calls, interleaved, median of %d+ rounds)", jailCalls, jailRounds),
		Budget: fmt.Sprintf("≤ +%.0f ms a call", jailBudgetMS),
	}
	f, err := os.Open(file)
	if err != nil {
		g.Wall = "not measured: " + err.Error()
		return g
	}
	defer f.Close()
	var m []string
	skip := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if x := jailLine.FindStringSubmatch(sc.Text()); x != nil {
			m = x
		}
		if strings.Contains(sc.Text(), "--- SKIP") || strings.Contains(sc.Text(), "--- FAIL") {
			skip = strings.TrimSpace(sc.Text())
		}
	}
	if m == nil {
		g.Wall = "not measured (" + skip + "; see the jail section below)"
		return g
	}
	n := func(i int) float64 { v, _ := strconv.ParseFloat(m[i], 64); return v }
	rounds, calls := int(n(1)), int(n(2))
	enough := rounds >= jailRounds && calls >= jailCalls
	g.Wall = fmt.Sprintf("+%.1f ms (%.1f ms against %.1f ms a call; %d rounds, %d calls)", n(5), n(4), n(3), rounds, calls)
	g.Pass = enough && n(5) <= jailBudgetMS
	g.CPU = fmt.Sprintf("+%.1f ms (%.1f ms against %.1f ms a call)", n(8), n(7), n(6))
	g.CPUPass = enough && n(8) <= jailBudgetMS
	if !enough {
		g.Wall += fmt.Sprintf(": fewer than %d rounds or %d calls, not the budget's measurement", jailRounds, jailCalls)
	}
	return g
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "budgets:", err)
	os.Exit(1)
}
