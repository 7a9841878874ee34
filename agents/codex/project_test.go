package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionProject: the project of a Codex session is read from its
// session record where Codex keeps it, for that session only.
func TestSessionProject(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	dir := filepath.Join(home, "sessions", "2026", "12", "01")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	meta := `{"timestamp":"2026-12-01T15:03:13.522Z","type":"session_meta","payload":{"session_id":"s1","id":"s1","cwd":"/work/proj","base_instructions":{"text":"` +
		strings.Repeat("x", 200<<10) + `"}}}` + "\n" + `{"type":"turn"}` + "\n"
	rec := filepath.Join(dir, "rollout-s1.jsonl")
	if err := os.WriteFile(rec, []byte(meta), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := sessionProject(rec, "s1"); got != "/work/proj" {
		t.Errorf("the session's own record: %q, want /work/proj", got)
	}
	if got := sessionProject(rec, "s2"); got != "" {
		t.Errorf("another session's record: %q", got)
	}
	outside := filepath.Join(t.TempDir(), "rollout-s1.jsonl")
	_ = os.WriteFile(outside, []byte(meta), 0o600)
	if got := sessionProject(outside, "s1"); got != "" {
		t.Errorf("a record outside $CODEX_HOME/sessions: %q", got)
	}
	dotdot := filepath.Join(home, "sessions", "..", "..", filepath.Base(filepath.Dir(outside)), "rollout-s1.jsonl")
	if got := sessionProject(dotdot, "s1"); got != "" {
		t.Errorf("a path climbing out of sessions: %q", got)
	}
	link := filepath.Join(dir, "link.jsonl")
	_ = os.Symlink(outside, link)
	if got := sessionProject(link, "s1"); got != "" {
		t.Errorf("a symlink in sessions: %q", got)
	}
}
