package confine

import (
	"path/filepath"
	"slices"

	"github.com/loopguard/loopguard/policy"
)

// homeReads are the paths in the home a launch with capability c reads:
// absolute, each granted read (a directory with what is below it) if it
// exists when the plan is made.
func homeReads(e Env, c policy.Capability) []string {
	if e.Home == "" {
		return nil
	}
	conf := homeConfig
	if c.Network {
		conf = slices.Concat(homeConfig, registryConfig)
	}
	out := make([]string, 0, len(conf))
	for _, f := range conf {
		out = append(out, filepath.Join(e.Home, f))
	}
	return out
}

// homeConfig are the user's configuration files programs read to run
// (git refuses to start without reading ~/.gitconfig); relative to home.
// Files, not their directories: ~/.config/git also holds credentials,
// where git's store helper keeps passwords and tokens in the clear.
var homeConfig = []string{".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes",
	".config/go/env", ".gitignore_global", ".cargo/config.toml", ".cargo/config"}

// registryConfig is npm's user configuration, where `npm login` writes
// the registry's token: readable only under the network capability, whose
// connection is the token's one use. Without it npm passes over the
// unreadable file and runs on its defaults, and nothing a confined program
// prints can carry the token.
var registryConfig = []string{".npmrc", ".config/npm"}
