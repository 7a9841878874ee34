package confine

import (
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// The network escalation (issue 36): a call a human approved that needs
// the network runs through the launcher with project-write+network:PORTS.
// Inside Claude Code's sandbox it could not connect (its network namespace
// has only loopback and a filtering proxy that allows no host), so it runs
// outside that sandbox, in the launcher's own. Claude Code takes a command
// out of its sandbox when every part of it matches a
// sandbox.excludedCommands entry, read from the command as written (a
// quoted program word matches no entry); init writes one entry,
// NetworkExclusion, which NetworkCommand's text matches and a jailed
// call's (--cap jail first) does not. The entry is a route, not a
// permission: two-phase enforcement (package ticket) runs such a command
// only on the hook's ticket for exactly it, so init writes the entry only
// with --ticket.

// NetworkExclusion is the sandbox.excludedCommands entry that takes a
// NetworkCommand of launcher out of Claude Code's sandbox: the launcher,
// the subcommand and --cap written bare, then any project-write+network
// capability and the rest. ("…:*" at the end of an entry is Claude Code's
// older prefix syntax, hence the word after it.)
func NetworkExclusion(launcher string) string {
	return launcher + " " + Subcommand + " --cap " + policy.CapProjectWrite + "+network:* *"
}

// NetworkCommand is the text that runs spec through launcher, its head
// (launcher, subcommand, --cap, the capability) bare so that
// NetworkExclusion matches it, every other word single-quoted. ok is false
// when spec has no named network ports, has more than project-write and
// the network, or a head word would need quoting: the call then stays in
// Claude Code's sandbox, where it cannot connect.
func NetworkCommand(launcher string, spec Spec) (string, bool) {
	c := spec.Cap
	if !c.Network || c.AnyPort || c.Git || c.Jail || !c.Write {
		return "", false
	}
	args := spec.Args()
	head := append([]string{launcher}, args[:3]...)
	for _, w := range head {
		if !bare(w) {
			return "", false
		}
	}
	words := head
	for _, w := range args[3:] {
		words = append(words, quote(w))
	}
	return strings.Join(words, " "), true
}

// bare reports whether w reads the same to bash and to Claude Code's
// matching without quotes: letters, digits and / . _ + - : , only.
func bare(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("/._+-:,", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// quote single-quotes s for bash (shellparse.Quote's spelling; confine
// does not import the analysis).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
