// Package budget is one budget figure a benchmark measured: what was
// measured, against what budget, and whether it held, in wall time and in
// CPU time. `make bench`'s parts (hookbench, launchbench, the jail's cost
// through the real client) each append theirs to one file of JSON lines;
// bench/cmd/budgets prints them as one table, PASS or OVER each, and exits
// non-zero when any is over (BENCH.md, "Budgets").
package budget

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// Figure is one budget and what was measured against it. The verdict is
// the wall time's (the issues' budgets are whole processes); the CPU time
// (user and system, every thread) is given beside it because the machine a
// run shares moves wall time more than CPU time.
type Figure struct {
	Issue  string `json:"issue"`  // the issue that sets the budget: "39", "35", "22"
	Name   string `json:"name"`   // what is measured, against what
	Budget string `json:"budget"` // the budget as a reader checks it: "≤ 1.30x the Go floor"
	Wall   string `json:"wall"`   // the wall-time figure, with what it is made of
	Pass   bool   `json:"pass"`
	// CPU is the same figure in CPU time, "" when not measured.
	CPU     string `json:"cpu,omitempty"`
	CPUPass bool   `json:"cpu_pass,omitempty"`
}

// Append adds figs to file (JSON lines), creating it.
func Append(file string, figs ...Figure) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, g := range figs {
		if err := enc.Encode(g); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Read reads what Append wrote.
func Read(file string) ([]Figure, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Figure
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var g Figure
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		out = append(out, g)
	}
	return out, sc.Err()
}

// Verdict is PASS or OVER, as the report prints it.
func Verdict(pass bool) string {
	if pass {
		return "PASS"
	}
	return "**OVER**"
}
