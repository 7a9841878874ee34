package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/bench/budget"
)

func writeLog(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "jail.log")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestJailFigure(t *testing.T) {
	line := func(rounds, calls, cost, costCPU string) string {
		return "=== RUN   TestJailCallCost\n    jail_session_test.go:440: jail-cost rounds=" + rounds + " calls=" + calls +
			" sandbox_ms=150.0 jail_ms=158.0 cost_ms=" + cost + " sandbox_cpu_ms=40.0 jail_cpu_ms=52.0 cost_cpu_ms=" + costCPU + "\n--- PASS: TestJailCallCost (600.00s)\n"
	}
	for _, c := range []struct {
		name, log     string
		pass, cpuPass bool
	}{
		{"within", line("5", "21", "8.0", "12.0"), true, false},
		{"at the budget", line("5", "21", "10.0", "10.0"), true, true},
		{"over", line("5", "21", "10.1", "3.0"), false, true},
		{"too few rounds", line("4", "21", "1.0", "1.0"), false, false},
		{"too few calls", line("5", "19", "1.0", "1.0"), false, false},
		{"skipped", "--- SKIP: TestJailCallCost (0.00s)\n", false, false},
	} {
		g := jailFigure(writeLog(t, c.log))
		if g.Pass != c.pass || g.CPUPass != c.cpuPass {
			t.Errorf("%s: pass %v, CPU pass %v; want %v, %v (%+v)", c.name, g.Pass, g.CPUPass, c.pass, c.cpuPass, g)
		}
	}
	if g := jailFigure(filepath.Join(t.TempDir(), "absent")); g.Pass || !strings.HasPrefix(g.Wall, "not measured") {
		t.Errorf("no log: %+v", g)
	}
}

func TestRenderCountsOver(t *testing.T) {
	figs := []budget.Figure{{Name: "a", Pass: true}, {Name: "b"}, {Name: "c", Pass: true}}
	table, over := render(figs, "abc1234")
	if over != 1 {
		t.Errorf("over = %d, want 1", over)
	}
	for _, want := range []string{"## Budgets at abc1234", "| PASS |", "| **OVER** |", "2 of 3 figures within their budget, 1 OVER"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if _, over := render(figs[:1], ""); over != 0 {
		t.Errorf("all within: over = %d", over)
	}
}
