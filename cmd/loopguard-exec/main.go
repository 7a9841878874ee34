// Command loopguard-exec is loopguard's launcher: what `loopguard-hook
// exec` does (package confine), so that a Bash call a scoped grant allows
// pays one process start for its confinement (BENCH.md measures it). The
// hook rewrites such a call into `loopguard-exec exec --cap ... -- PROGRAM
// ARGV` when this binary sits beside it, and into `loopguard-hook exec
// ...` otherwise.
//
// It is also the wrapper of two-phase enforcement (package ticket): set
// as Claude Code's CLAUDE_CODE_SHELL_PREFIX, it is run with exactly one
// argument, the host's command line, and runs it only on a ticket the
// hook issued for it. Claude Code runs its shell-form hooks through the
// prefix too: loopguard's own hook is answered here, in this process
// (hookmain.InWrapper), which saves the hook's own process start on every
// call (about 9 ms on a host where Go starts in 6.6); so this binary links
// the hook's packages as well, which adds about 1.8 ms to a launch.
//
// As Gemini CLI's or Qwen Code's tools.callCommand it is the wrapper in
// front of loopguard's own shell tool (package shelltool), and lists that
// tool as their tools.discoveryCommand. As OpenCode's configured shell it
// is run as `loopguard-exec -c COMMAND` (package shellwrap).
package main

import (
	"os"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hookmain"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/shelltool"
	"github.com/loopguard/loopguard/shellwrap"
	"github.com/loopguard/loopguard/ticket"
	"github.com/loopguard/loopguard/token"
	"github.com/loopguard/loopguard/undo"
)

func main() {
	args := os.Args[1:]
	// Gemini CLI's and Qwen Code's tools.discoveryCommand and callCommand
	// (package shelltool): one argument, never a Claude Code host line
	// (which always holds its eval).
	if len(args) == 1 && args[0] == shelltool.DiscoverWord {
		_, err := os.Stdout.Write(shelltool.Discovery())
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	// OpenCode's shell setting (package shellwrap): "-c" and the command.
	if shellwrap.Is(args) {
		os.Exit(shellwrap.Main(args, os.Stderr, keyring.Load, ticketKey))
	}
	if len(args) == 1 && args[0] == shelltool.Name {
		os.Exit(shelltool.Main(args, os.Stdin, os.Stderr, keyring.Load, ticketKey))
	}
	// The project's undo watcher, which the hook starts (package undo).
	if len(args) > 1 && args[0] == undo.WatchSubcommand {
		os.Exit(undo.WatchMain(args[1:]))
	}
	if len(args) == 1 && args[0] != confine.Subcommand {
		os.Exit(ticket.Main(args, os.Stderr, keyring.Load, ticketKey, hookmain.InWrapper))
	}
	if len(args) > 0 && args[0] == confine.Subcommand {
		args = args[1:]
	}
	os.Exit(confine.Main(args, os.Stderr))
}

func ticketKey(master []byte) ([]byte, error) {
	k, err := token.NewKeys(master)
	if err != nil {
		return nil, err
	}
	return k.TicketKey(), nil
}
