package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
	lg "github.com/loopguard/loopguard/e2e/loopguard"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == claudetest.HookArg {
		os.Exit(claudetest.HookMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const fixtures = "../../testdata/payloads"

func allOutputs() []output {
	var out []output
	for _, r := range recordings {
		out = append(out, r.outputs...)
	}
	return out
}

// TestFixtures checks the committed fixtures: exactly the recorded set, each
// with the fields its event and tool must carry.
func TestFixtures(t *testing.T) {
	outs := allOutputs()
	if len(outs) < 9 {
		t.Fatalf("only %d outputs declared", len(outs))
	}
	files, err := filepath.Glob(filepath.Join(fixtures, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, o := range outs {
		want = append(want, o.file)
	}
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	sort.Strings(want)
	if !slices.Equal(want, got) {
		t.Fatalf("fixtures %v, want %v: re-record with go run ./e2e/record -out testdata/payloads", got, want)
	}
	for _, o := range outs {
		t.Run(o.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(fixtures, o.file))
			if err != nil {
				t.Fatal(err)
			}
			var p map[string]json.RawMessage
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			str := func(k string) string {
				var s string
				_ = json.Unmarshal(p[k], &s)
				return s
			}
			if str("hook_event_name") != o.event || str("tool_name") != o.tool {
				t.Errorf("event/tool = %s/%s, want %s/%s", str("hook_event_name"), str("tool_name"), o.event, o.tool)
			}
			for _, k := range []string{"session_id", "cwd", "tool_input", "permission_mode"} {
				if len(p[k]) == 0 {
					t.Errorf("missing %s", k)
				}
			}
			_, hasID := p["tool_use_id"]
			if hasID != (o.event != "PermissionRequest") {
				t.Errorf("tool_use_id present = %v for %s", hasID, o.event)
			}
			_, hasAgent := p["agent_id"]
			if hasAgent != o.subagent || (str("agent_type") != "") != o.subagent {
				t.Errorf("agent_id/agent_type present = %v, want %v", hasAgent, o.subagent)
			}
			var in struct {
				FilePath string `json:"file_path"`
			}
			_ = json.Unmarshal(p["tool_input"], &in)
			if in.FilePath != "" && !filepath.IsAbs(in.FilePath) {
				t.Errorf("file_path %q is not absolute", in.FilePath)
			}
		})
	}
}

// TestRecordMatchesFixtures re-records every payload from the pinned client
// and checks that each has the same shape (the same keys, recursively) as
// the committed fixture, so a client change that adds, drops or renames a
// field shows up here.
func TestRecordMatchesFixtures(t *testing.T) {
	claude := claudetest.Install(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := claudetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	work, out := t.TempDir(), t.TempDir()
	mcp, err := lg.BuildMCP(context.Background(), repo, work)
	if err != nil {
		t.Fatal(err)
	}
	err = record(context.Background(), config{claude: claude, hook: self, mcp: mcp, work: work, out: out, logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range allOutputs() {
		got, err := shapeOf(filepath.Join(out, o.file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := shapeOf(filepath.Join(fixtures, o.file))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: recorded keys\n  %v\nfixture keys\n  %v", o.file, got, want)
		}
	}
}

// shapeOf lists the key paths of a JSON file, e.g. "tool_input.command".
func shapeOf(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	var keys []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				p := strings.TrimPrefix(prefix+"."+k, ".")
				keys = append(keys, p)
				walk(p, e)
			}
		case []any:
			for _, e := range v {
				walk(prefix+"[]", e)
			}
		}
	}
	walk("", v)
	sort.Strings(keys)
	return slices.Compact(keys), nil
}
