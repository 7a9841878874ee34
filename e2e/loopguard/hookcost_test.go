//go:build linux

package loopguard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/testfs"
)

// hookCostEnv turns TestHookTypeCost on: it measures, asserts nothing of
// the figures, and takes minutes.
const hookCostEnv = "LOOPGUARD_E2E_HOOK_COST"

// TestHookTypeCost measures what the hook's transport costs per call
// through the real client, before loopguard decides anything (issue 39,
// item 6: "measure the options ... Claude Code's http hook type"): the
// same Bash call under Claude Code's sandbox alone (a permission rule
// allows it; no hook), with a PreToolUse command hook that is the minimal
// static Go hook (bench/cmd/floorgo: a process started per call), and
// with a PreToolUse http hook answered by a server already running (this
// test's), both answering allow; each with Claude Code's sandbox on and
// off. With the sandbox on, Claude Code sends an http hook's request
// through the sandbox's own filtering proxy, which refuses it (403) unless
// sandbox.network.allowedDomains lets the hook's host through, and then
// the commands the sandbox runs reach it too: so every kind here allows
// 127.0.0.1 alike. Sessions of 1 and 21 calls, the kinds
// interleaved in every round; the cost of one call is the slope, the
// median of the rounds, in wall time and in CPU (the client's and what it
// waited for; the http server's own CPU is this test process's, not
// counted, and is a few microseconds a request).
//
//	LOOPGUARD_E2E_HOOK_COST=5 go test -count=1 -v -run TestHookTypeCost ./e2e/loopguard/
func TestHookTypeCost(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv(hookCostEnv))
	if rounds <= 0 {
		t.Skipf("set %s=ROUNDS to measure", hookCostEnv)
	}
	claude := claudetest.Install(t)
	repo, err := claudetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	floor := filepath.Join(t.TempDir(), "floorgo")
	build := exec.Command("go", "build", "-trimpath", "-o", floor, "./bench/cmd/floorgo")
	build.Dir = repo
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build floorgo: %v\n%s", err, out)
	}
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			Event string `json:"hook_event_name"`
		}
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &call) != nil || call.Event != "PreToolUse" {
			http.Error(w, "not a PreToolUse payload", http.StatusBadRequest)
			return
		}
		served++
		_, _ = io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"floor"}}`)
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	testfs.Write(t, filepath.Join(dir, "notes", ".keep"), nil, 0o644)
	// The sandbox as init writes it, less what names loopguard's paths.
	sandbox := `{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false, "autoAllowBashIfSandboxed": true, "network": {"allowedDomains": ["127.0.0.1"]}}`
	hook := func(h string) string {
		if h == "" {
			return ""
		}
		return fmt.Sprintf(`, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [%s]}]}`, h)
	}
	homes := map[string]string{}
	for name, h := range map[string]string{
		"none":    "",
		"command": fmt.Sprintf(`{"type": "command", "command": %q, "timeout": 30}`, floor),
		"http":    fmt.Sprintf(`{"type": "http", "url": %q, "timeout": 30}`, srv.URL+"/hook"),
	} {
		for _, sb := range []bool{true, false} {
			home := t.TempDir()
			settings := fmt.Sprintf(`{"permissions": {"allow": ["Bash"]}%s}`, hook(h))
			key := name + " unsandboxed"
			if sb {
				settings = fmt.Sprintf(`{"permissions": {"allow": ["Bash"]}, "sandbox": %s%s}`, sandbox, hook(h))
				key = name
			}
			testfs.Write(t, filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o600)
			homes[key] = home
		}
	}

	const cmd = "echo x > notes/c.txt"
	const long = 21
	names := []string{"none", "command", "http", "none unsandboxed", "command unsandboxed", "http unsandboxed"}
	slopes, cpus := map[string][]float64{}, map[string][]float64{}
	for i := 0; i < rounds; i++ {
		ms, cpu := map[string]float64{}, map[string]float64{}
		for _, calls := range []int{1, long} {
			for _, name := range names {
				var turns []claudetest.Turn
				for c := 0; c < calls; c++ {
					turns = append(turns, claudetest.Tools(bash(fmt.Sprintf("toolu_hc%d", c), cmd)))
				}
				api := claudetest.NewFakeAPI(t, claudetest.Script{Main: append(turns, claudetest.Text("done"))})
				before := served
				debug := filepath.Join(t.TempDir(), "debug.txt")
				res := claudetest.Run(t, claudetest.Options{Claude: claude, API: api, Dir: dir, Home: homes[name], Timeout: jailSessionTimeout, Args: []string{"--debug-file", debug}})
				if res.ExitCode != 0 {
					t.Fatalf("%s: claude exit %d: %s", name, res.ExitCode, res.Stderr)
				}
				for c := 0; c < calls; c++ {
					if r, ok := api.ToolResult(fmt.Sprintf("toolu_hc%d", c)); !ok || r.IsError {
						t.Fatalf("%s: call %d did not run: %+v", name, c, r)
					}
				}
				// The http kind went through the server, once a call.
				if strings.HasPrefix(name, "http") && served-before != calls {
					b, _ := os.ReadFile(debug)
					t.Fatalf("the http hook answered %d of %d calls; client debug log:\n%s", served-before, calls, claudetest.Tail(string(b), 60))
				}
				key := name + strconv.Itoa(calls)
				ms[key] = float64(res.Duration.Microseconds()) / 1000
				cpu[key] = float64(res.CPU.Microseconds()) / 1000
			}
		}
		for _, name := range names {
			slopes[name] = append(slopes[name], (ms[name+strconv.Itoa(long)]-ms[name+"1"])/(long-1))
			cpus[name] = append(cpus[name], (cpu[name+strconv.Itoa(long)]-cpu[name+"1"])/(long-1))
		}
	}
	for _, name := range []string{"command", "http", "command unsandboxed", "http unsandboxed"} {
		base := "none"
		if strings.HasSuffix(name, " unsandboxed") {
			base = "none unsandboxed"
		}
		var d, dc []float64
		for i := range slopes[name] {
			d = append(d, slopes[name][i]-slopes[base][i])
			dc = append(dc, cpus[name][i]-cpus[base][i])
		}
		t.Logf("%s hook: %.1f ms wall, %.1f ms CPU a call over no hook (medians of %d rounds; rounds %.1f / %.1f)",
			name, median(d), median(dc), rounds, d, dc)
	}
	t.Logf("hook-cost rounds=%d calls=%d none_ms=%.1f command_ms=%.1f http_ms=%.1f none_cpu_ms=%.1f command_cpu_ms=%.1f http_cpu_ms=%.1f",
		rounds, long, median(slopes["none"]), median(slopes["command"]), median(slopes["http"]), median(cpus["none"]), median(cpus["command"]), median(cpus["http"]))
}
