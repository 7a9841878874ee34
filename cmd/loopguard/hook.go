package main

import "io"

// runHook is replaced by the hook engine adapter.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer) ExitCode {
	_, _ = io.WriteString(stdout, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"loopguard: internal_error: hook not built yet"}}`+"\n")
	_, _ = io.WriteString(stderr, "loopguard: internal_error: hook not built yet\n")
	return ExitDeny
}
