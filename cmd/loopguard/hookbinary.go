package main

import (
	"fmt"
	"io"
	"os"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/policy"
)

// warnStaleHook warns on w when a loopguard-hook beside self is of another
// build: after an upgrade of loopguard alone, a registered loopguard-hook
// still decides by the old build's rules, and the hook itself cannot tell
// cheaply. Every CLI command but doctor (which fails on it) says so, so the
// human sees it at their next review or approve.
func warnStaleHook(w io.Writer, self string) {
	_, hook := policy.Binaries(self)
	if _, err := os.Stat(hook); err != nil {
		return // not installed: init registers loopguard hook
	}
	if err := cli.SameBuild(self, hook); err != nil {
		fmt.Fprintf(w, "loopguard: warning: %v\n", err)
		fmt.Fprintf(w, "loopguard: hint: where %s is the registered hook (loopguard doctor says), it decides by its own build's rules until both are installed again\n", policy.HookBinaryName)
	}
}
