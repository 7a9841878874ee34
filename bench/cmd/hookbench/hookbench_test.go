//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/agents/claude"
)

func TestStatsNearestRank(t *testing.T) {
	var s series
	for i := 100; i >= 1; i-- { // 1..100 ms, added out of order
		s.add(sample{wall: time.Duration(i) * time.Millisecond, maxRSS: int64(i), selfRSS: 50})
	}
	st := s.stats()
	want := map[string][2]time.Duration{
		"p50": {st.p50, 50 * time.Millisecond},
		"p90": {st.p90, 90 * time.Millisecond},
		"p99": {st.p99, 99 * time.Millisecond},
		"min": {st.min, 1 * time.Millisecond},
		"max": {st.max, 100 * time.Millisecond},
	}
	for name, g := range want {
		if g[0] != g[1] {
			t.Errorf("%s = %v, want %v", name, g[0], g[1])
		}
	}
	if st.n != 100 || st.peakRSS != 100 || st.rssBound {
		t.Errorf("n=%d peak=%d bound=%v, want 100, 100, false", st.n, st.peakRSS, st.rssBound)
	}
	// A peak not above spawn's own RSS is only an upper bound.
	var small series
	small.add(sample{wall: time.Millisecond, maxRSS: 40, selfRSS: 50})
	if !small.stats().rssBound {
		t.Error("a peak below spawn's RSS is not marked as a bound")
	}
}

func TestCheckVerify(t *testing.T) {
	c := check{code: 2, contains: []string{`"permissionDecision":"deny"`, "no_grant"}}
	ok := sample{code: 2, stdout: []byte(`{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"loopguard: no_grant: ..."}}`)}
	if err := c.verify(ok); err != nil {
		t.Errorf("the expected answer is refused: %v", err)
	}
	for name, s := range map[string]sample{
		"exit code":   {code: 0, stdout: ok.stdout},
		"reason code": {code: 2, stdout: []byte(`{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"loopguard: chained_command"}}`)},
		"decision":    {code: 2, stdout: []byte(`{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"no_grant"}}`)},
	} {
		if c.verify(s) == nil {
			t.Errorf("a wrong %s is accepted", name)
		}
	}
}

// The payloads the benchmark feeds the hook must be ones the hook decodes
// (all but the malformed one), with the recorded folder rewritten and every
// other field kept.
func TestPayloadsDecode(t *testing.T) {
	work := t.TempDir()
	paths, sessions, err := makePaths(options{repo: "../../.."}, work)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 9 || len(sessions) == 0 {
		t.Fatalf("%d paths and %d sessions, want 9 and some", len(paths), len(sessions))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p.payload)
		if err != nil {
			t.Fatal(err)
		}
		call, err := claude.Decode(data)
		if p.name == "malformed" {
			if err == nil {
				t.Error("the malformed payload decodes")
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		if call.Event != p.event || !strings.HasPrefix(call.Cwd, work) || call.Cwd != p.project {
			t.Errorf("%s: event %q cwd %q, want %q under %s", p.name, call.Event, call.Cwd, p.event, work)
		}
		if strings.Contains(string(data), "/tmp/loopguard-record-") {
			t.Errorf("%s still names the recording folder", p.name)
		}
		if _, err := os.Stat(call.Cwd); err != nil {
			t.Errorf("%s: cwd does not exist: %v", p.name, err)
		}
		switch p.name {
		case "write-1mb":
			if c, _ := call.ToolInput["content"].(string); len(c) != 1<<20 {
				t.Errorf("write-1mb content is %d bytes", len(c))
			}
		case "chained", "scoped", "scoped-read-only":
			if c, _ := call.ToolInput["command"].(string); c == "echo hello > greeting.txt" {
				t.Errorf("%s kept the recorded command", p.name)
			}
		}
	}
	// Fields are kept: the recorded payload's keys all survive the rewrite.
	orig, err := os.ReadFile(filepath.Join("../../../testdata/payloads", "pretooluse-subagent-bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(work, "payloads", "exact.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "agent_id", "agent_type", "effort", "hook_event_name", "tool_name", "tool_input", "tool_use_id"} {
		if strings.Contains(string(orig), `"`+key+`"`) != strings.Contains(string(got), `"`+key+`"`) {
			t.Errorf("key %s was not kept", key)
		}
	}
}
