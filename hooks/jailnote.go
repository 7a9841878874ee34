package hooks

import (
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// confinedContext tells the model what a confined program could not do,
// so that a refused write or connection reads as what it is.
func confinedContext(c policy.Capability, confined bool) string {
	if !confined {
		return ""
	}
	what := "read the project and the toolchains, and write nothing but its own TMPDIR; it kept only the environment variables read-only tools read (locale, terminal, paths, Go's settings)"
	if c.Write {
		what = "write the project (except its top level, where it can change existing files but create nothing, and executable configuration such as .git, .claude, .mcp.json or .envrc at any depth), temp and its own build caches (Go's and npm's, not the user's)"
		if c.Git {
			what = strings.Replace(what, ".git, ", "", 1) + ", and the repository's .git"
		}
	}
	net := "; it can open no network connection"
	if c.Network {
		net = "; it can use the network"
	}
	return "loopguard ran this command confined (" + c.String() + "): it could " + what + net +
		", no Unix socket, no kernel keyring and no controlling terminal (/dev/tty). A 'Permission denied' or a refused connection comes from that; to run it unconfined, ask the user to approve the exact command."
}
