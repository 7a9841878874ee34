package hooks

import (
	"strings"
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
		got := confinedContext(c.cap, true)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.cap, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q says %q", c.cap, got, w)
			}
		}
	}
	if got := confinedContext(policy.Capability{}, false); got != "" {
		t.Errorf("unconfined: %q", got)
	}
}
