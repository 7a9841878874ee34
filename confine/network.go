package confine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/undo"
)

// The network escalation (issue 36): a call a human approved that needs
// the network runs through the launcher with project-write+network:PORTS.
// Inside Claude Code's sandbox it could not connect (its network namespace
// has only loopback and a filtering proxy that allows no host), so it runs
// outside that sandbox, in the launcher's own. Claude Code takes a command
// out of its sandbox when every part of it matches a
// sandbox.excludedCommands entry, read from the command as written (a
// quoted program word matches no entry); init writes NetworkExclusion,
// which NetworkCommand's text matches and a jailed call's (--cap jail
// first) does not, and UnconfinedExclusion (below). The entry is a route, not a
// permission: two-phase enforcement (package ticket) runs such a command
// only on the hook's ticket for exactly it, so init writes the entry only
// with --ticket.

// The second route out (issue 36): a call a human approved exactly that
// needs more than the network (git push, git fetch: the network and git's
// own directory, keys in ~/.ssh or an agent; npm install -g, go install, a
// write to ~/.config) can work neither in Claude Code's sandbox nor in the
// jail. It runs unconfined, as an exact approval ran before the sandbox
// was on: UnconfinedCommand's text, which init's second entry,
// UnconfinedExclusion, takes out of the sandbox, and which the launcher
// runs with no restriction (the launcher still grants nothing: inside a
// sandbox or a jail the program stays in it). The same rule holds: the
// entry routes, the hook's ticket for exactly that text permits.

// The third route out (issue 36): git's own directory. Claude Code's
// sandbox gives a command the project and its .git, but mounts /dev/null
// over each executable configuration name the project lacks (.bashrc,
// .mcp.json, .vscode...), so `git add -A` there fails on them ("can only
// add regular files") and an approved commit never lands. A call that
// needs git's own directory alone (an exact approval of git add && git
// commit under the jail grant, a Bash(git commit *) grant) runs instead
// through the launcher with project-write+git, outside that sandbox, in
// the launcher's own: no network, the project's executable configuration
// held, git's configuration and hooks pinned (gitpin.go). GitCommand's
// text, matched by init's third entry, GitExclusion; the hook's ticket
// for exactly that text permits.

// CapUnconfined is the launcher's --cap word of UnconfinedCommand: no
// capability (policy never parses it; a grant cannot name it).
const CapUnconfined = "unconfined"

// CapAsWritten is the launcher's --cap word of AsWrittenCommand: no
// capability either, and no excludedCommands entry names it.
const CapAsWritten = "as-written"

// Exclusions are the sandbox.excludedCommands entries init writes for
// launcher with two-phase enforcement, and the only ones doctor accepts:
// NetworkExclusion, UnconfinedExclusion and GitExclusion.
func Exclusions(launcher string) []string {
	return []string{NetworkExclusion(launcher), UnconfinedExclusion(launcher), GitExclusion(launcher)}
}

// GitExclusion is the sandbox.excludedCommands entry that takes a
// GitCommand of launcher out of Claude Code's sandbox: the capability
// word exactly project-write+git, then a space (so that
// project-write+git+network:443 is not matched).
func GitExclusion(launcher string) string {
	return launcher + " " + Subcommand + " --cap " + policy.CapProjectWrite + "+git *"
}

// GitCommand is the text that runs spec through launcher, its head bare
// so that GitExclusion matches it, every other word single-quoted. ok is
// false unless spec's capability is project-write+git alone, or when a
// head word would need quoting.
func GitCommand(launcher string, spec Spec) (string, bool) {
	c := spec.Cap
	if !c.Git || !c.Write || c.Network || c.Jail {
		return "", false
	}
	spec.Unconfined = false
	return headBare(launcher, spec.Args())
}

// UnconfinedExclusion is the sandbox.excludedCommands entry that takes an
// UnconfinedCommand of launcher out of Claude Code's sandbox.
func UnconfinedExclusion(launcher string) string {
	return launcher + " " + Subcommand + " --cap " + CapUnconfined + " *"
}

// UnconfinedCommand is the text that runs spec's program through launcher
// with no restriction, its head (launcher, subcommand, --cap unconfined)
// bare so that UnconfinedExclusion matches it, every other word
// single-quoted; spec's capability is not used. ok is false when a head
// word would need quoting or spec has redirections (the hook hands bash
// -c the whole command, which performs its own): the call then stays
// where it is.
func UnconfinedCommand(launcher string, spec Spec) (string, bool) {
	if len(spec.Redirects) > 0 {
		return "", false
	}
	spec.Unconfined, spec.AsWritten = true, false
	return headBare(launcher, spec.Args())
}

// The hold where the call stays (the ninety-fifth attack run): a call approved
// exactly under the jail grant that takes neither route out, nor the
// jail with the network or git's own directory, ran as written, where the
// host runs it, and took no hold: jailed calls and the file tools' writes
// changed what it ran while it ran (the ninety-fifth attack run, through
// Copilot CLI, and Claude Code registered without --ticket, where no
// approved call took the unconfined form). It now runs as
// AsWrittenCommand's text: the launcher adds no restriction and holds the
// project as for the unconfined form (runUnconfined), and the text
// matches no sandbox.excludedCommands entry, so that inside Claude Code's
// sandbox it stays there, as the call did before: it leaves nothing a
// human did not approve leaving (a call with a DANGER line, one that
// cannot be parsed).

// AsWrittenCommand is the text that runs spec's program through launcher
// as it would run without it, where the host runs it (inside a sandbox,
// in it), holding its project while it runs: --cap as-written, every word
// after the head single-quoted; spec's capability is not used. ok is
// false as for UnconfinedCommand.
func AsWrittenCommand(launcher string, spec Spec) (string, bool) {
	if len(spec.Redirects) > 0 {
		return "", false
	}
	spec.Unconfined, spec.AsWritten = true, true
	return headBare(launcher, spec.Args())
}

// runUnconfined runs s's program as UnconfinedCommand asks: in its cwd,
// with the launcher's environment, no restriction added. It returns only
// when the program could not be run.
//
// The program holds its project for as long as any of its processes runs
// (undo.HoldForApproved, the locks' descriptors inherited across exec):
// a jailed call waits for it to end and a file tool's write is held for
// a decision, so nothing that ran with no decision changes what the
// approved call runs while it runs (the ninety-fourth attack run's jailed
// rewrite of deploy.sh while the approved make ran, after the approval's
// check). A confined call that still runs there holds the project: this
// call is then not run, since what that call writes the approver did not
// see.
//
// The as-written form (AsWrittenCommand) holds the project the same way;
// where the undo directory is on a read-only mount (a sandbox around the
// host that init did not set up, in which a jailed call runs beyond undo
// and takes no lock either) it runs with no hold, as it ran before.
func runUnconfined(s Spec, e Env) error {
	if len(s.Redirects) > 0 {
		return errors.New("the unconfined form takes no redirection")
	}
	if st := e.Places.StateDir; st != "" && s.Project != "" {
		what := fmt.Sprintf("%q (pid %d, since %s)", strings.Join(s.Argv, " "), os.Getpid(), time.Now().Format("15:04:05"))
		held, err := undo.HoldForApproved(st, s.Project, what)
		switch {
		case errors.Is(err, undo.ErrBusy):
			return errors.New("another call still runs in this project, or in one that holds it or lies in it (a confined call that was running when the approval was checked, or another approved call): what it writes, the approver did not see, and this call could run it. Let that call end, or stop it, then ask for this call again")
		case err != nil && s.AsWritten && (errors.Is(err, undo.ErrStateReadOnly) || errors.Is(err, syscall.EROFS)):
			// Nothing can be held there, the places it reaches neither.
			s.Holds, held = nil, nil
		case err != nil:
			return fmt.Errorf("failed to hold the project for the approved call: %w", err)
		}
		more, err := holdPlaces(st, s, what)
		if err != nil {
			for _, f := range held {
				f.Close()
			}
			return err
		}
		held = append(held, more...)
		if err := inheritHigh(held); err != nil {
			return fmt.Errorf("failed to hold the project for the approved call: %w", err)
		}
	}
	if err := os.Chdir(s.Cwd); err != nil {
		return err
	}
	return syscall.Exec(s.Exe, s.Argv, os.Environ())
}

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
	spec.Unconfined = false
	return headBare(launcher, spec.Args())
}

// headBare is launcher and args as one command text: the head (launcher,
// subcommand, --cap, the capability) bare, every other word quoted; ok is
// false when a head word would need quoting.
func headBare(launcher string, args []string) (string, bool) {
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
