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
// the sandbox settings `loopguard init` writes, and no hook (allowed by a
// permission rule), so that only the sandbox differs. The cost per call is
// the slope: (ms/run at 11 calls - ms/run at 1 call) / 10; README (Sandbox)
// reports it.
//
//	scripts/with-keyring go test -run '^$' -bench BashSandbox -benchtime 3x ./e2e/loopguard/
func BenchmarkBashSandbox(b *testing.B) {
	claude := claudetest.Install(b)
	for _, sandbox := range []bool{false, true} {
		for _, calls := range []int{1, 11} {
			b.Run(fmt.Sprintf("sandbox=%v/calls=%d", sandbox, calls), func(b *testing.B) {
				home, dir := b.TempDir(), b.TempDir()
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
				var total float64
				for i := 0; i < b.N; i++ {
					var turns []claudetest.Turn
					for c := 0; c < calls; c++ {
						turns = append(turns, claudetest.Tools(bash(fmt.Sprintf("toolu_bn%d", c), "true")))
					}
					api := claudetest.NewFakeAPI(b, claudetest.Script{Main: append(turns, claudetest.Text("done"))})
					res := claudetest.Run(b, claudetest.Options{Claude: claude, API: api, Dir: dir, Home: home})
					if res.ExitCode != 0 {
						b.Fatalf("claude exit %d: %s", res.ExitCode, res.Stderr)
					}
					for c := 0; c < calls; c++ {
						if r, ok := api.ToolResult(fmt.Sprintf("toolu_bn%d", c)); !ok || r.IsError {
							b.Fatalf("call %d did not run: %+v", c, r)
						}
					}
					total += float64(res.Duration.Milliseconds())
				}
				b.ReportMetric(total/float64(b.N), "ms/run")
			})
		}
	}
}
