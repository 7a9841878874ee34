package cli

import (
	"os"

	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// HookBinary is the binary to register as the hook for the loopguard at
// full: loopguard-hook beside it, which starts faster, when it is there and
// is of the same build (SameBuild); otherwise full itself (`loopguard
// hook`), with the reason in why ("" when loopguard-hook is registered).
// A loopguard-hook left from another build is never registered: it would
// decide with another version's rules. Nor is it under the Vault backend,
// which it hands to loopguard (hookmain): registering loopguard saves that
// exec on every call.
func HookBinary(full string) (bin, why string) {
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
	if err := SameBuild(full, hook); err != nil {
		return full, err.Error()
	}
	if cfg, err := LoadConfig(); err == nil && cfg.Backend == config.BackendVault {
		return full, "the configuration names the Vault backend, which " + policy.HookBinaryName + " would hand to loopguard on every call (a process start more)"
	}
	return hook, ""
}

// ShellToolInPlace reports whether reg's user settings put loopguard's own
// shell tool (the launcher beside self) in place of the host's shell.
func ShellToolInPlace(reg register.Registration, env install.Env, self string) bool {
	data, _, err := install.ReadSettings(reg.UserFile(env.Dirs()))
	return err == nil && data != nil && install.HasShellTool(data, policy.Launcher(self))
}
