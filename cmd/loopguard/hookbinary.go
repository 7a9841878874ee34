package main

import (
	"fmt"
	"io"
	"os"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/policy"
)

// hookBinary is the binary to register as the hook for the loopguard at
// full: loopguard-hook beside it, which starts faster, when it is there and
// is of the same build (cli.SameBuild); otherwise full itself (`loopguard
// hook`), with the reason in why ("" when loopguard-hook is registered).
// A loopguard-hook left from another build is never registered: it would
// decide with another version's rules. Nor is it under the Vault backend,
// which it hands to loopguard (hookmain): registering loopguard saves that
// exec on every call.
func hookBinary(full string) (bin, why string) {
	_, hook := policy.Binaries(full)
	fi, err := os.Stat(hook)
	switch {
	case os.IsNotExist(err):
		return full, hook + " is not installed"
	case err != nil:
		return full, err.Error()
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return full, hook + " is not an executable file"
	}
	if err := cli.SameBuild(full, hook); err != nil {
		return full, err.Error()
	}
	if cfg, err := cli.LoadConfig(); err == nil && cfg.Backend == config.BackendVault {
		return full, "the configuration names the Vault backend, which " + policy.HookBinaryName + " would hand to loopguard on every call (a process start more)"
	}
	return hook, ""
}

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
