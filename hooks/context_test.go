package hooks

import (
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// TestConfinedContext: the note beside a confined result names what the
// capability refused, so the model reads a "Permission denied" as the
// confinement's; an unconfined run (no Landlock) gets no note.
func TestConfinedContext(t *testing.T) {
	for _, c := range []struct {
		cap       policy.Capability
		want, not []string
	}{
		{policy.Capability{}, []string{"read-only", "write nothing but its own TMPDIR", "environment variables", "no network", "no Unix socket", "/dev/tty"}, []string{"write the project"}},
		{policy.Capability{Write: true}, []string{"project-write", "write the project", ".git, .claude", "its own build caches", "no network"}, []string{"environment variables", "repository's .git"}},
		{policy.Capability{Write: true, Git: true}, []string{"project-write+git", "the repository's .git"}, []string{".git, .claude"}},
		{policy.Capability{Write: true, Network: true}, []string{"it can use the network"}, []string{"no network"}},
	} {
		wantText(t, c.cap.String(), confinedContext(c.cap, true), c.want, c.not)
	}
	if got := confinedContext(policy.Capability{}, false); got != "" {
		t.Errorf("unconfined: %q", got)
	}
}
