package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/claude"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// A Write Gemini CLI may write with its escapes decoded is shown with a
// note that says so, from the session's host; the same call from Claude
// Code, one without such an escape, and one into a JSON file (which
// Gemini never unescapes) are shown without it.
func TestRenderSaysGeminiDecodesWriteEscapes(t *testing.T) {
	dir := t.TempDir()
	pending := func(session, name, content string) *state.Pending {
		t.Helper()
		f := filepath.Join(dir, name)
		d := token.Descriptor{Tool: "Write", Cwd: dir, Input: map[string]any{"file_path": f, "content": content},
			Target: &token.Target{Path: f, SHA256: token.Absent}}
		canonical, err := d.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		return &state.Pending{ID: "p1", Session: session, Agent: token.MainAgent, Tool: "Write", Descriptor: canonical, Status: state.StatusOpen}
	}
	const note = "NOTE: Gemini CLI writes this content with its backslash escapes decoded"
	gem, cc := agents.Session(gemini.Name, "s"), agents.Session(claude.Name, "s")
	for _, c := range []struct {
		session, file, content string
		want                   bool
	}{
		{gem, "a.go", `fmt.Println("a\nb")` + "\n", true},
		{gem, "a.sh", "echo \\\"x\\\"\n", true},
		{gem, "a.txt", "C:\\\\Users\n", true},
		{gem, "a.go", "plain\n", false},
		{gem, "a.go", `a \x b \u0041` + "\n", false},
		{gem, "a.json", `{"a": "b\nc"}` + "\n", false},
		{gem, "a.IPYNB", `{"a": "b\nc"}` + "\n", false},
		{cc, "a.go", `fmt.Println("a\nb")` + "\n", false},
	} {
		_, body := RenderParts(nil, pending(c.session, c.file, c.content), false)
		if got := strings.Contains(body, note); got != c.want {
			t.Errorf("%s, %s, %q: note shown %v, want %v:\n%s", c.session, c.file, c.content, got, c.want, body)
		}
		if !strings.Contains(body, "CHANGES: Write") {
			t.Errorf("%s, %s: no diff:\n%s", c.session, c.file, body)
		}
	}
}
