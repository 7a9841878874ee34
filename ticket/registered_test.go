package ticket

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Hooks and stdio MCP servers registered in the user's own files pass
// through by identity; a project's do not; a Bash call's line that copies
// a registered hook or server is not either.
func TestRegisteredPassThrough(t *testing.T) {
	home, cwd := t.TempDir(), "/work/proj"
	write := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude", "settings.json"), `{"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [
		{"type": "command", "command": "npx prettier --write \"$FILE\""},
		{"type": "command", "command": "/usr/bin/fmt", "args": ["-w"]}]}]}}`)
	write(filepath.Join(home, ".claude.json"), `{"mcpServers": {"bank": {"command": "/opt/mcp/bank", "args": ["--db", "my file.db"]},
		"web": {"type": "http", "url": "https://x"}},
		"projects": {"/work/proj": {"mcpServers": {"gh": {"type": "stdio", "command": "gh-mcp"}}},
			"/elsewhere": {"mcpServers": {"other": {"command": "other-mcp"}}}}}`)
	r := ReadRegistered(home, cwd)
	for _, c := range []struct {
		line string
		want []string
	}{
		{`npx prettier --write "$FILE"`, []string{"/bin/sh", "-c", `npx prettier --write "$FILE"`}},
		{`'/opt/mcp/bank' '--db' 'my file.db'`, []string{"/opt/mcp/bank", "--db", "my file.db"}},
		{`/opt/mcp/bank --db my\ file.db`, []string{"/opt/mcp/bank", "--db", "my file.db"}},
		{`gh-mcp`, []string{"gh-mcp"}},
		// Controls: not registered, or not as given.
		{`npx prettier --write "$FILE"; rm -rf ~`, nil},
		{`/usr/bin/fmt -w`, nil}, // exec form: the host does not wrap it
		{`/opt/mcp/bank --db other.db`, nil},
		{`/opt/mcp/bank --db 'my file.db' && touch x`, nil},
		{`other-mcp`, nil}, // another project's
		{hostLine(`npx prettier --write "$FILE"`), nil},
		{hostLine(`/opt/mcp/bank --db 'my file.db'`), nil},
	} {
		got, ok := r.match(c.line)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q %v, want %q", c.line, got, ok, c.want)
		}
	}
	// Through the gate: a Bash call copying a registered hook's line needs
	// a ticket like any other.
	f := newFixture(t)
	g := f.gate("s1")
	g.Registered = func() Registered { return r }
	if _, err := g.check(hostLine(`npx prettier --write "$FILE"`)); reasonOf(err) != ReasonNoDecision {
		t.Fatalf("a Bash call copying a hook: %v", err)
	}
	// Run: the registered line runs (exit 3 from sh), the Bash call that
	// copies it is refused.
	var out strings.Builder
	g.Stderr = &out
	g.Registered = func() Registered { return Registered{Hooks: []string{"exit 3"}} }
	if code := g.Run("exit 3"); code != 3 {
		t.Fatalf("registered hook: exit %d, %q", code, out.String())
	}
	if code := g.Run(hostLine("exit 3")); code != ExitRefused || !strings.Contains(out.String(), "loopguard: no_decision") {
		t.Fatalf("Bash call copying it: exit %d, %q", code, out.String())
	}
}
