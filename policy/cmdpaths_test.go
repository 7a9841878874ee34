package policy

import (
	"strings"
	"testing"
)

// FuzzCommandPaths: whatever the text of a git setting or a .envrc (the
// hook reads both on every call), commandPaths returns, never
// panic, and give only paths below the top.
func FuzzCommandPaths(f *testing.F) {
	for _, s := range []string{
		`sh -c 'cl/clean.sh "$1"' -- %f`, `python3 -mtools2.conv`, `PYTHONPATH=tools python3 -m conv`,
		`eval "$(./gen/genenv)"`, "source_env_if_exists \\\n .envrc.cont", `export $(grep -v '^#' .env.shared | xargs)`,
		`for f in .envrc.d/*.sh; do source_env "$f"; done`, "$(", "`", `"$(git rev-parse --show-toplevel)/fm/fmt.sh"`, `use flake ./nix`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		const top = "/p"
		for _, p := range commandPaths(text, top, top, envrc) {
			if !strings.HasPrefix(p, top+"/") {
				t.Fatalf("%q gave %q, not below the top", text, p)
			}
		}
	})
}
