// Command loopguard-exec is a launcher: what `loopguard-hook exec` does
// (package confine). The hook names it in the forms that leave Claude
// Code's sandbox (`loopguard-exec exec --cap project-write+network:...`,
// `+git`, `unconfined`), which the sandbox's excludedCommands name, and in
// every launch where loopguard-confine, the launcher alone, is not beside
// it (an install from before it).
//
// It is also the wrapper of two-phase enforcement (package ticket): set
// as Claude Code's CLAUDE_CODE_SHELL_PREFIX, it is run with exactly one
// argument, the host's command line, and runs it only on a ticket the
// hook issued for it. Claude Code runs its shell-form hooks through the
// prefix too: loopguard's own hook is answered here, in this process
// (hookmain.InWrapper), which saves the hook's own process start on every
// call (about 9 ms on a host where Go starts in 6.6); so this binary links
// the hook's packages as well, which adds about 2 to 4 ms to a launch
// through it: hence loopguard-confine.
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
	// The key's holder, which the hook starts (package keyring).
	if len(args) > 1 && args[0] == keyring.HolderSubcommand {
		os.Exit(keyring.HoldMain(args[1:]))
	}
	// The project's undo watcher and the guard of its launches, which
	// the hook starts (packages undo, hookmain).
	if len(args) > 1 && args[0] == undo.WatchSubcommand {
		os.Exit(undo.WatchMain(args[1:], hookmain.GuardLaunches))
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
