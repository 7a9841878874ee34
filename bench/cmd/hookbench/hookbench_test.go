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

// constant is a series of n runs of the same wall and CPU time.
func constant(n int, wall, cpu time.Duration) series {
	var s series
	for range n {
		s.add(sample{wall: wall, cpu: cpu})
	}
	return s
}

// The budgets of issue 39: a deny path against 1.3x the Go floor, an
// allowed call against 1.3x the Go floor plus one keyring read (the keyring
// floor over the Go floor), and not slower than the previous release.
func TestFigures(t *testing.T) {
	ms := time.Millisecond
	cfgs := []*config{{name: "empty"}, {name: "big", grants: 100}}
	path := func(name string, allow bool, hook, big, alt time.Duration) *pathResult {
		return &pathResult{
			p:       &benchPath{name: name, allow: allow},
			floorGo: constant(5, 10*ms, 4*ms),
			floorKR: constant(5, 18*ms, 5*ms), // a keyring read: 8 ms wall, 1 ms CPU
			hook:    []series{constant(5, hook, hook/2), constant(5, big, big/2)},
			alt:     constant(5, alt, alt/2),
		}
	}
	r := &results{o: options{alt: "old", altName: "17f28e1"}, cfgs: cfgs, paths: []*pathResult{
		path("no-grant", false, 12*ms, 13*ms, 13*ms),                 // 1.3x at the slowest state: within; not slower
		path("chained", false, 12*ms, 13100*time.Microsecond, 11*ms), // 1.31x: over; 1.09x the old: slower
		path("scoped", true, 21*ms, 20*ms, 21*ms),                    // 21 ms against 13 + 8: within
		path("exact", true, 21100*time.Microsecond, 1*ms, 30*ms),     // over
	}}
	figs := r.figures()
	if len(figs) != 8 {
		t.Fatalf("%d figures, want 8: %+v", len(figs), figs)
	}
	want := []bool{true, true, false, false, true, true, false, true}
	for i, g := range figs {
		if g.Pass != want[i] {
			t.Errorf("figure %d (%s): pass %v, want %v (%s)", i, g.Name, g.Pass, want[i], g.Wall)
		}
	}
	// CPU: scoped's budget is 1.3 x 4 + 1 = 6.2 ms, the hook's CPU 10.5 ms.
	if figs[4].CPUPass || !strings.Contains(figs[4].CPU, "6.20") {
		t.Errorf("scoped CPU: %+v", figs[4])
	}
	// Without -alt-name no figure holds the alt binary to not slower.
	r.o.altName = ""
	if n := len(r.figures()); n != 4 {
		t.Errorf("%d figures without a previous release, want 4", n)
	}
}

// TestPick: -paths picks the paths measured, in their order; "" keeps
// every path. The states are made before, for every path (run).
func TestPick(t *testing.T) {
	var all []*benchPath
	for _, n := range []string{"read-only", "no-grant", "scoped", "exact"} {
		all = append(all, &benchPath{name: n})
	}
	names := func(ps []*benchPath) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.name)
		}
		return strings.Join(s, ",")
	}
	for only, want := range map[string]string{"": "read-only,no-grant,scoped,exact", "exact, no-grant": "no-grant,exact", "scoped": "scoped", "nope": ""} {
		if got := names(pick(all, only)); got != want {
			t.Errorf("pick(%q) = %q, want %q", only, got, want)
		}
	}
}

// A run removes the work directories earlier runs left (killed before
// their cleanup) once they are an hour old, and nothing else.
func TestRemoveStaleRuns(t *testing.T) {
	work := t.TempDir()
	for _, d := range []string{"run-old", "run-new", "state-old"} {
		if err := os.MkdirAll(filepath.Join(work, d, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleRun)
	for _, d := range []string{"run-old", "state-old"} {
		if err := os.Chtimes(filepath.Join(work, d), old, old); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleRuns(work)
	for d, want := range map[string]bool{"run-old": false, "run-new": true, "state-old": true} {
		if _, err := os.Stat(filepath.Join(work, d)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", d, err == nil, want)
		}
	}
}
