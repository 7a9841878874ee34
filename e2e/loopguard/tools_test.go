package loopguard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// toolsFile is the tool list the pinned client offers the model, recorded
// from the tools array of its own request (see TestRecordedToolList).
var toolsFile = filepath.Join("..", "..", "testdata", "tools", "claude-code-"+claudetest.Version+".txt")

// deferredMarker opens the prompt's list of deferred tools, one per line
// after the colon, up to a blank line.
const deferredMarker = "The following deferred tools are now available via ToolSearch."

func deferredTools(body []byte) []string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			i := strings.Index(v, deferredMarker)
			if i < 0 {
				return
			}
			rest := v[i:]
			j := strings.Index(rest, ":\n")
			if j < 0 {
				return
			}
			for _, line := range strings.Split(rest[j+2:], "\n") {
				if strings.TrimSpace(line) == "" {
					break
				}
				out = append(out, strings.TrimSpace(line))
			}
		}
	}
	walk(v)
	return out
}

// TestRecordedToolList checks that testdata/tools holds the exact tool list
// the pinned client sends in the tools array of a request. With
// LOOPGUARD_RECORD_TOOLS=1 it rewrites the file instead.
func TestRecordedToolList(t *testing.T) {
	claude := claudetest.Install(t)
	dir := t.TempDir()
	api := claudetest.NewFakeAPI(t, claudetest.Script{Main: []claudetest.Turn{claudetest.Text("done")}})
	res := claudetest.Run(t, claudetest.Options{Claude: claude, API: api, Dir: dir})
	if res.ExitCode != 0 {
		t.Fatalf("claude exit %d: %s", res.ExitCode, res.Stderr)
	}
	var names []string
	for _, r := range api.Requests() {
		if r.Side || r.Subagent {
			continue
		}
		var req struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatal(err)
		}
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
		}
		// Deferred tools are named in the prompt and loaded by ToolSearch;
		// they are tools the model can call all the same.
		names = append(names, deferredTools(r.Body)...)
		break
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) < 10 {
		t.Fatalf("the client offered only %d tools: %v", len(names), names)
	}
	for _, must := range []string{"Bash", "Write", "Monitor", "CronCreate", "WebSearch"} {
		if !slices.Contains(names, must) {
			t.Fatalf("%s is not in the recorded list %v; has the prompt changed?", must, names)
		}
	}
	got := strings.Join(names, "\n") + "\n"
	if os.Getenv("LOOPGUARD_RECORD_TOOLS") == "1" {
		if err := os.WriteFile(toolsFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(toolsFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("the pinned client's tool list changed; re-record with LOOPGUARD_RECORD_TOOLS=1 and review:\nrecorded:\n%s\nnow:\n%s", want, got)
	}
}
