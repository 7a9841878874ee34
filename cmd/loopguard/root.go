package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/doctor"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/review"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/team"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/register"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Main runs loopguard with args and returns the exit code. The hook path is
// dispatched before cobra is built, so every tool call pays only for what it
// uses.
func Main(args []string) cli.ExitCode {
	if len(args) > 0 && args[0] == register.Word {
		return runHook(args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	if len(args) > 0 && args[0] == confine.Subcommand {
		// The launcher of a rewritten scoped Bash call: nothing of the CLI.
		return cli.ExitCode(confine.Main(args[1:], os.Stderr))
	}
	if len(args) == 0 && !stdinIsTerminal() {
		// Copilot CLI runs the hooks of .claude/settings.json without their
		// "args": a bare loopguard with a payload on stdin is the hook.
		return runHook(nil, os.Stdin, os.Stdout, os.Stderr)
	}
	root := newRootCmd()
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		cli.PrintError(os.Stderr, err)
		var ee *cli.Exit
		if errors.As(err, &ee) {
			return ee.Code
		}
		return cli.ExitError
	}
	return cli.ExitOK
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "loopguard",
		Short: "Run a coding agent's tool call only if a human approved exactly that call",
		Long: `loopguard is the approval guard for coding agents. Registered as Claude Code's
PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure and SessionEnd hook, it lets
a tool call run only when it carries a valid approval: an HMAC token, keyed from
the OS keyring, over the exact call (or a narrow scope that covers it), the
session and the agent.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate("loopguard {{.Version}}\n")
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		if cmd.Name() == "doctor" {
			return // doctor fails on it, with the fix
		}
		if self, err := cli.SelfPath(); err == nil {
			warnStaleHook(cmd.ErrOrStderr(), self)
		}
	}
	root.AddCommand(
		newPendingCmd(),
		newShowCmd(),
		newApproveCmd(),
		newDenyCmd(),
		newGrantCmd(),
		newGrantsCmd(),
		newRevokeCmd(),
		newPruneCmd(),
		newUndoCmd(),
		newAuditCmd(),
		newVersionCmd(),
		newInitCmd(),
		newUninstallCmd(),
		doctor.NewCmd(doctor.Deps{Version: version}),
		newKeyCmd(),
		review.NewCmd(),
		team.NewCmd(),
		newCompletionCmd(),
		newCheckCmd(),
		newNotifyCmd(),
		newServeCmd(),
		newPasskeyCmd(),
	)
	return root
}

// stdinIsTerminal reports whether stdin is a character device (a person at a
// terminal rather than a pipe from an agent).
func stdinIsTerminal() bool {
	fi, err := os.Stdin.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
