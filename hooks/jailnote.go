package hooks

import (
	"fmt"
	"github.com/loopguard/loopguard/confine"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/state"
)

// What the model hears about the jail a granted Bash call runs in: once
// per session (agent and session), a short note beside the first confined
// call's result (jailNote); after that, a line only beside the result of a
// confined call the jail refused something, naming the right it most
// likely lacked and how to ask for it (refusalNote). Every confined call
// used to carry the whole paragraph: some 12,000 tokens over a session of
// a hundred calls.

// toldJail names the jail's note among what a session is told once
// (state.Store.Told).
const toldJail = "jail"

// jailContext is the context beside a confined call's result: the jail's
// note the first time this session's agent runs a confined call, "" after.
// Only a PreToolUse answer carries it to the model (a PermissionRequest's
// cannot, and audit mode answers nothing), so only one marks the session
// told. The marker costs this path one stat; one that is missing or
// unreadable tells again.
func (e *Engine) jailContext(c *Call, cp policy.Capability, confined bool) string {
	if !confined || c.Event != PreToolUse || e.Mode == ModeAudit {
		return ""
	}
	if e.Store.Told(c.SessionID, c.Agent(), toldJail) {
		return ""
	}
	_ = e.Store.MarkTold(c.SessionID, c.Agent(), toldJail)
	return jailNote(cp)
}

// jailNote says, in under 250 characters, what a program confined to cp
// can do and how a command runs unconfined.
func jailNote(cp policy.Capability) string {
	if cp.Jail {
		w := "writes the project and $TMPDIR (not /tmp)"
		if !cp.Write {
			w = "reads the project, writes only $TMPDIR"
		}
		return "loopguard runs your Bash commands in a jail: it " + w + ", never executable configuration or instruction files (.git, .claude, CLAUDE.md...); no network, no token in env. A command that needs more is held for the user."
	}
	can := "reads the project and toolchains, writes only $TMPDIR"
	if cp.Write || cp.Git {
		can = "writes the project and $TMPDIR, never executable configuration (.git, .claude, .envrc...)"
		if cp.Git {
			can = "writes the project, .git and $TMPDIR, no other executable configuration (.claude, .envrc...)"
		}
	}
	net := "no network"
	if cp.Network {
		net = "network" // to the ports its name lists (+network:443)
	}
	return "loopguard jails granted commands; this one (" + cp.String() + ") " + can + "; " + net +
		"; no Unix socket or /dev/tty. Unconfined needs the user's exact approval."
}

// refusalContext is the line beside the result of a call allowed as a,
// when it ran confined and its output shows a refusal by the jail; ""
// otherwise (an unconfined call's output is not read at all).
func (e *Engine) refusalContext(c *Call, a state.Allowed) string {
	if a.Capability == "" || c.Output == "" {
		return ""
	}
	cp, err := policy.ParseCapability(a.Capability)
	if err != nil {
		return ""
	}
	cwd := a.Cwd
	if cwd == "" {
		cwd = c.Cwd
	}
	return refusalNote(cp, c.Output, jailSite{places: e.places(c), project: e.projectDir(c), cwd: cwd, home: e.Env.Home, xdgConfig: e.Env.XDGConfigHome, escape: c.Escape})
}

// jailSite is where a confined call ran, for reading the paths its
// refusals name.
type jailSite struct {
	places             policy.Places
	project, cwd, home string
	xdgConfig          string // $XDG_CONFIG_HOME
	escape             string // Call.Escape
}

// notRun starts the launcher's own line when it ran nothing (confine.Main).
const notRun = "loopguard: the program was not run:"

// refusalMarks are what a refusal by the jail prints, lower-cased:
// strerror(EACCES), strerror(EPERM), strerror(EROFS) (a path held
// read-only by the launch's mount namespace), a socket's ENETUNREACH, and
// Node's and Python's error names; and, in a launch with a network
// namespace of its own (its loopback alone), what a name that does not
// resolve and a port of its loopback no one listens on print (curl, glibc,
// Node, Go, Python).
var (
	refusalMarks = []string{"permission denied", "operation not permitted", "read-only file system", "network is unreachable", "eacces"}
	ownNetMarks  = []string{"could not resolve", "couldn't resolve", "temporary failure in name resolution", "name or service not known", "eai_again", "enotfound",
		"connection refused", "econnrefused", "failed to connect", "couldn't connect"}
)

// The lines beside a refused call's result, one per right it can lack;
// CAP is the capability's name.
const (
	askExact     = "ask the user to approve the exact command (loopguard approve)"
	notRunNote   = "loopguard: the jail could not be set up, so nothing ran (its loopguard line says why); to run it unconfined, " + askExact + "."
	unixNote     = "loopguard: the jail (CAP) refuses every Unix socket (Docker, D-Bus, ssh-agent), whatever the grant; to run it unconfined, " + askExact + "."
	attrNote     = "loopguard: the jail (CAP) refused changing a file's mode, owner or times (chmod, chown, utime); to run it unconfined, " + askExact + "."
	networkNote  = "loopguard: the jail (CAP) has no network: ask the user to grant the command with +network (loopguard grant --network) or to approve it exactly (loopguard approve)."
	portsNote    = "loopguard: the grant (CAP) lets the command connect over TCP to the ports it names alone, and listen on none: to reach another port, ask the user to grant the ports it needs (+network:22,443) or to approve it exactly (loopguard approve)."
	loopbackNote = "loopguard: the jail (CAP) has a network of its own: localhost there is the call's own loopback (a server the same call starts answers it), never this machine's; to reach this machine's servers, " + askExact + "."
	tempNote     = "loopguard: the jail (CAP) gives the command a private temp directory: write under $TMPDIR, not the shared /tmp; otherwise " + askExact + "."
	configNote   = "loopguard: the jail (CAP) keeps the project's executable configuration read-only (.git, .claude, .envrc...); to change it, " + askExact + "."
	// gitNote is for git's own directory, which +git writes (but for its
	// configuration and hooks): the usability run met git add's
	// "index.lock: Read-only file system" under project-write.
	gitNote      = "loopguard: the jail (CAP) does not write git's own directory (.git): a command that does (git add, commit, checkout) needs a grant with +git (loopguard grant --git), which still keeps git's configuration and hooks, or the user's exact approval (loopguard approve)."
	linkNote     = "loopguard: the jail (CAP) makes no symbolic link in the project (the file tools write there beside it), so no python -m venv either; to run it outside the jail, " + askExact + "."
	topNote      = "loopguard: the jail (CAP) makes, changes, renames and removes files and directories at the project's top level, but makes no link there and leaves its executable configuration as it is; to run it unconfined, " + askExact + "."
	readOnlyNote = "loopguard: the jail (CAP) writes nothing but its $TMPDIR, and outside the project reads only the system, toolchains and a few configuration files; to run it unconfined, " + askExact + "."
	outsideNote  = "loopguard: the jail (CAP) writes nothing outside the project but its $TMPDIR, and reads there only the system, toolchains and a few configuration files; to run it unconfined, " + askExact + "."
	// privateNote names the path whose mode keeps other users out, and
	// that mode: git's own messages name the wrong cause ("bad config
	// line 5" of the ~/.gitconfig whose include it could not read).
	privateNote = "loopguard: the jail (CAP) reads no file of the home whose mode keeps other users out, and %s is mode %04o: a program that needs it stops there (git at an include or an excludes file it cannot read). If it holds no secret, the user can make it readable (chmod o+r, o+rx for a directory); else, to run it unconfined, " + askExact + "."
)

// jailAsk is how a jailed call asks to leave the jail: the host's own
// request to run a command outside its sandbox (escape: Call.Escape),
// which loopguard holds for the human's exact approval (sandbox_escape);
// a host without one leaves the user to run it.
func jailAsk(escape string) string {
	if escape == "" {
		return "ask the user to run it themselves (this agent has no way to ask for a command outside the jail)"
	}
	return "retry the same command with " + escape + " (the user then approves exactly it, or not), or ask the user to run it"
}

// refusalNote is one line naming the right a program confined to cp most
// likely lacked, from what its output says ("" when it shows no refusal by
// the jail): the launcher's own refusal; a Unix socket; a change of a
// file's mode, owner or times; the network; else by the path the refusal
// names: the shared temp directory, executable configuration, the
// project's top level, outside the project; else by the capability.
func refusalNote(cp policy.Capability, out string, site jailSite) string {
	if strings.Contains(out, notRun) {
		return notRunNote
	}
	marks := refusalMarks
	if !cp.Network {
		marks = append(slices.Clip(marks), ownNetMarks...)
	}
	lines := refusalLines(out, marks)
	if len(lines) == 0 {
		return ""
	}
	named := func(note string) string {
		note = strings.Replace(note, "CAP", cp.String(), 1)
		if cp.Jail {
			// Under the jail grant a retry is jailed again: the way out
			// is a request the human decides, bound to the exact call.
			ask := jailAsk(site.escape)
			note = strings.Replace(note, "to run it unconfined, "+askExact, "to run it outside the jail, "+ask, 1)
			note = strings.Replace(note, askExact, ask, 1)
			note = strings.Replace(note, "ask the user to grant the command with +network (loopguard grant --network) or to approve it exactly (loopguard approve)", ask, 1)
		}
		return note
	}
	has := func(marks ...string) bool {
		for _, l := range lines {
			l = strings.ToLower(l)
			for _, m := range marks {
				if strings.Contains(l, m) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case has(".sock", "unix", "d-bus", "dbus", "docker daemon", "ssh-agent", "ssh_auth_sock", "x11", "open display"):
		return named(unixNote)
	case has("chmod", "chown", "chgrp", "utime", "changing permissions", "changing ownership", "setting times", "preserving times", "preserving permissions", "setxattr"):
		return named(attrNote)
	case cp.Jail && has("symbolic link", "symlink", "lib64'"):
		// ln: failed to create symbolic link; Node's EACCES: permission
		// denied, symlink; venv's lib64 link ('lib' -> '.venv/lib64').
		return named(linkNote)
	case !cp.Network && has("localhost", "127.0.0.1", "[::1]") && has("connection refused", "econnrefused", "failed to connect", "couldn't connect"):
		return named(loopbackNote)
	case !cp.Network && has("network is unreachable", "connect", "socket", "dial ", "resolve", "getaddrinfo", "name resolution", "http", "tcp", "udp", "eai_again", "enotfound"):
		return named(networkNote)
	case cp.Network && !cp.AnyPort && has("connect", "dial ", "bind", "listen", "tcp", "socket"):
		// +network:PORTS: Landlock refused a port it does not name, or
		// a listener (EACCES), or the filter another protocol.
		return named(portsNote)
	}
	for _, l := range lines {
		for _, p := range linePaths(l) {
			if note := pathNote(cp, p, site); note != "" {
				return named(note)
			}
		}
	}
	if cp.Write || cp.Git {
		return named(outsideNote)
	}
	return named(readOnlyNote)
}

// refusalLines are the lines of out that show a refusal (a mark, in any
// case), as they are: the first 20. The paths they name keep their case
// (a project in ~/MyProject was taken for a path outside it).
func refusalLines(out string, marks []string) []string {
	var lines []string
	for l := range strings.Lines(out) {
		low := strings.ToLower(l)
		for _, m := range marks {
			if strings.Contains(low, m) {
				lines = append(lines, l)
				break
			}
		}
		if len(lines) == 20 {
			break
		}
	}
	return lines
}

// linePaths are the paths a refusal line names: its quoted words, then
// its words with a slash, but not a first word ending in a colon (the
// program's name: "/usr/bin/touch: cannot touch 'x'").
func linePaths(line string) []string {
	var quoted, slashed []string
	words := strings.Fields(line)
	for i, w := range words {
		t := strings.TrimRight(w, ":,;)")
		q := strings.Trim(t, "'\"`‘’“”")
		if q == "" {
			continue
		}
		switch {
		case q != t:
			quoted = append(quoted, q)
		case i == 0 && strings.HasSuffix(w, ":"):
		case strings.Contains(q, "/"):
			slashed = append(slashed, strings.TrimLeft(q, "("))
		}
	}
	return append(quoted, slashed...)
}

// pathNote is the note for a refusal naming p, "" when p says nothing.
func pathNote(cp policy.Capability, p string, site jailSite) string {
	switch {
	case strings.HasPrefix(p, "~/") && site.home != "":
		p = filepath.Join(site.home, p[2:])
	case !filepath.IsAbs(p):
		if site.cwd == "" {
			return ""
		}
		p = filepath.Join(site.cwd, p)
	}
	p = filepath.Clean(p)
	if site.home != "" && fsx.Within(p, site.home) && (site.project == "" || !fsx.Within(p, site.project)) {
		if at, mode, ok := confine.PrivateInHome(site.home, site.xdgConfig, p); ok {
			return fmt.Sprintf(privateNote, at, uint32(mode))
		}
	}
	for _, t := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if fsx.Within(p, t) {
			return tempNote
		}
	}
	if site.project == "" || !fsx.Within(p, site.project) {
		if cp.Write || cp.Git {
			return outsideNote
		}
		return readOnlyNote
	}
	if !cp.Write && !cp.Git {
		return readOnlyNote
	}
	gitDir := filepath.Join(site.project, ".git")
	inGit := fsx.Within(p, gitDir)
	if inGit && !cp.Git && p != gitDir && !policy.GitPinned(strings.TrimPrefix(p, gitDir+"/")) {
		return gitNote
	}
	if inGit && !cp.Git || !inGit && site.places.Classify(p).Protected() {
		return configNote
	}
	if filepath.Dir(p) == site.project {
		return topNote
	}
	return ""
}
