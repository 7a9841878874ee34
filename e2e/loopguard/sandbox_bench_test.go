package loopguard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// BenchmarkBashSandbox measures what Claude Code's sandbox costs a Bash
// call: whole `claude -p` runs of 1 and of 11 `true` calls, with and without
// the sandbox switches `loopguard init` writes, and no hook (a permission
// rule allows the calls), so that only the sandbox differs. The four kinds
// of run alternate in every iteration, so that load on the machine hits
// them alike. The cost of one call is the slope, (ms at 11 calls - ms at 1
// call) / 10; README (Sandbox) reports it.
//
//	go test -run '^$' -bench BashSandbox -benchtime 5x ./e2e/loopguard/
func BenchmarkBashSandbox(b *testing.B) {
	claude := claudetest.Install(b)
	type kind struct {
		sandbox bool
		calls   int
	}
	kinds := []kind{{false, 1}, {true, 1}, {false, 11}, {true, 11}}
	homes := map[bool]string{}
	for _, sandbox := range []bool{false, true} {
		home := b.TempDir()
		settings := `{"permissions": {"allow": ["Bash(true)"]}}`
		if sandbox {
			settings = `{"permissions": {"allow": ["Bash(true)"]}, "sandbox": {"enabled": true, "failIfUnavailable": true,
				"allowUnsandboxedCommands": false, "autoAllowBashIfSandboxed": false}}`
		}
		if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
			b.Fatal(err)
		}
		homes[sandbox] = home
	}
	dir := b.TempDir()
	ms := map[kind]float64{}
	for i := 0; i < b.N; i++ {
		for _, k := range kinds {
			var turns []claudetest.Turn
			for c := 0; c < k.calls; c++ {
				turns = append(turns, claudetest.Tools(bash(fmt.Sprintf("toolu_bn%d", c), "true")))
			}
			api := claudetest.NewFakeAPI(b, claudetest.Script{Main: append(turns, claudetest.Text("done"))})
			res := claudetest.Run(b, claudetest.Options{Claude: claude, API: api, Dir: dir, Home: homes[k.sandbox]})
			if res.ExitCode != 0 {
				b.Fatalf("claude exit %d: %s", res.ExitCode, res.Stderr)
			}
			for c := 0; c < k.calls; c++ {
				if r, ok := api.ToolResult(fmt.Sprintf("toolu_bn%d", c)); !ok || r.IsError {
					b.Fatalf("sandbox %v: call %d did not run: %+v", k.sandbox, c, r)
				}
			}
			ms[k] += float64(res.Duration.Microseconds()) / 1000
		}
	}
	n := float64(b.N)
	off := (ms[kind{false, 11}] - ms[kind{false, 1}]) / 10 / n
	on := (ms[kind{true, 11}] - ms[kind{true, 1}]) / 10 / n
	b.ReportMetric(off, "ms/call-unsandboxed")
	b.ReportMetric(on, "ms/call-sandboxed")
	b.ReportMetric(on-off, "ms/call-sandbox-cost")
	b.ReportMetric((ms[kind{true, 1}]-ms[kind{false, 1}])/n, "ms/run-sandbox-cost")
}
