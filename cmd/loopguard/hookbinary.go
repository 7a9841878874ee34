package main

import (
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"

	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/policy"
)

// hookBinary is the binary to register as the hook for the loopguard at
// full: loopguard-hook beside it, which starts faster, when it is there and
// is of the same build (sameBuild); otherwise full itself (`loopguard
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
	if err := sameBuild(full, hook); err != nil {
		return full, err.Error()
	}
	if cfg, err := loadConfig(); err == nil && cfg.Backend == config.BackendVault {
		return full, "the configuration names the Vault backend, which " + policy.HookBinaryName + " would hand to loopguard on every call (a process start more)"
	}
	return hook, ""
}

// sameBuild reports, as an error, when the binaries a and b were not built
// from the same source with the same toolchain and settings: their Go
// build information differs (the toolchain, the main module, the build
// settings: VCS revision and state, flags), a module both link is of two
// versions, or it cannot be read. Which modules each links may differ:
// loopguard-hook links fewer.
func sameBuild(a, b string) error {
	ia, err := buildinfo.ReadFile(a)
	if err != nil {
		return fmt.Errorf("cannot read the build of %s: %w", a, err)
	}
	ib, err := buildinfo.ReadFile(b)
	if err != nil {
		return fmt.Errorf("cannot read the build of %s: %w", b, err)
	}
	same := ia.GoVersion == ib.GoVersion && sameModule(&ia.Main, &ib.Main) && slices.Equal(ia.Settings, ib.Settings)
	deps := map[string]*debug.Module{}
	for _, m := range ia.Deps {
		deps[m.Path] = m
	}
	for _, m := range ib.Deps {
		if d, ok := deps[m.Path]; ok && !sameModule(d, m) {
			same = false
		}
	}
	if !same {
		return fmt.Errorf("%s and %s are not from the same build: install both with `make install` (or go install ./cmd/...)", a, b)
	}
	return nil
}

func sameModule(x, y *debug.Module) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.Path == y.Path && x.Version == y.Version && x.Sum == y.Sum && sameModule(x.Replace, y.Replace)
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
	if err := sameBuild(self, hook); err != nil {
		fmt.Fprintf(w, "loopguard: warning: %v\n", err)
		fmt.Fprintf(w, "loopguard: hint: where %s is the registered hook (loopguard doctor says), it decides by its own build's rules until both are installed again\n", policy.HookBinaryName)
	}
}
