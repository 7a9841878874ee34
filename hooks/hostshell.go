package hooks

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
)

// hostShellShadowed is why a Bash call of a host that looks its shell up
// by name on its own PATH (Call.HostShells) cannot run as it is: one of
// those names resolves, on the PATH the hook sees (the host's, which the
// hook inherits), to a program the trusted-directory rule refuses (the
// rule a command name in a call is judged by, shellparse.Shadowed): inside
// the project or the cwd, through a relative or unresolvable PATH entry,
// or in a directory that is not trusted and that the user can write. The
// ninety-sixth attack run: under `npx codex`, <project>/node_modules/.bin
// is first on Codex's PATH; a jailed call wrote node_modules/.bin/zsh, and
// the next call, `echo hello` with "shell":"zsh", ran the agent's script,
// unjailed, with loopguard's launcher command as its argument. The payload
// does not carry the shell, so every such call is judged by every name.
// "" when none is shadowed.
func (e *Engine) hostShellShadowed(c *Call) string {
	if c.ToolName != "Bash" || len(c.HostShells) == 0 {
		return ""
	}
	env := e.shellEnv(c)
	// A relative PATH entry is found against the host's own directory,
	// which the hook, its child, shares; the call's cwd is judged too.
	cwds := []string{env.Cwd}
	if wd, err := os.Getwd(); err == nil && filepath.Clean(wd) != filepath.Clean(env.Cwd) {
		cwds = append(cwds, wd)
	}
	for _, name := range c.HostShells {
		for _, cwd := range cwds {
			env.Cwd = cwd
			s := shellparse.Shadowed(name, env)
			if s == nil || (s.Untrusted && !plantable(s)) {
				continue
			}
			where := "the PATH entry " + strconv.Quote(s.Entry)
			if s.Found != "" {
				where = s.Found + " (found through the PATH entry " + strconv.Quote(s.Entry) + ")"
			}
			return present.EscapeText("the host may run this call with the shell " + name +
				", which it looks up by name on its own PATH (the model names the shell per call, and the call does not say which): " +
				s.Reason + ". No decision makes that safe: the host would run " + where +
				" with the command as its argument, outside any confinement. The user should remove the file, or take that directory off the PATH the agent is started with (npx and npm exec put node_modules/.bin first; direnv's PATH_add; an activated environment) and start the agent again")
		}
	}
	return ""
}

// plantable reports whether a program s found in a directory that is
// not trusted could be changed without root (fsx.UserWritable: the file,
// what it links to, or a directory above either): one that cannot (a
// system package's) is no one's plant.
func plantable(s *shellparse.Shadow) bool {
	if s.Found == "" || s.Resolved == "" {
		return true
	}
	return fsx.UserWritable(s.Found) || fsx.UserWritable(s.Resolved)
}
