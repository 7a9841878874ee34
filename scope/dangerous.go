package scope

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrDangerous is matched (errors.Is) by every error Dangerous returns.
var ErrDangerous = errors.New("scope would let the agent escape the guard")

// DangerousError explains why a rule may not be granted.
type DangerousError struct {
	Rule string // canonical form
	Why  string
}

func (e *DangerousError) Error() string {
	return fmt.Sprintf("refusing to grant %s: %s; approve such calls one at a time with `loopguard approve <id>`", e.Rule, e.Why)
}

// Is makes errors.Is(err, ErrDangerous) true.
func (e *DangerousError) Is(target error) bool { return target == ErrDangerous }

func dangerous(r Rule, format string, args ...any) error {
	return &DangerousError{Rule: r.String(), Why: fmt.Sprintf(format, args...)}
}

// Command names (base names, lower case, version suffix removed) that a Bash
// scope may never name: with them a scoped grant runs anything.
var (
	shellNames = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "pdksh", "oksh", "yash", "fish",
		"csh", "tcsh", "ash", "rc", "es", "elvish", "nu", "xonsh", "posh", "busybox", "toybox")
	interpreterNames = set("python", "pypy", "perl", "ruby", "irb", "node", "nodejs", "deno", "bun",
		"php", "lua", "luajit", "tclsh", "wish", "expect", "rscript", "r", "julia", "osascript",
		"pwsh", "powershell", "awk", "gawk", "mawk", "nawk", "java", "jshell", "groovy", "scala",
		"ghci", "runghc", "racket", "guile", "sbcl", "ocaml", "erl", "escript", "elixir", "iex",
		"swift", "vim", "vi", "nvim", "ex", "ed", "emacs", "gdb", "lldb", "sed", "m4")
	wrapperNames = set("env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "nohup", "nice",
		"ionice", "timeout", "time", "watch", "parallel", "stdbuf", "setsid", "chroot", "unshare",
		"nsenter", "flock", "script", "chrt", "taskset", "cgexec", "firejail", "bwrap",
		"systemd-run", "at", "batch", "crontab", "eval", "exec", "source", ".", "command", "builtin",
		"alias", "declare", "typeset", "export", "trap", "coproc", "strace", "ltrace", "valgrind",
		"entr", "fakeroot", "ssh-agent", "dbus-run-session", "xvfb-run", "sg", "newgrp",
		"caffeinate", "direnv", "nix-shell", "find", "npx", "pnpx", "bunx", "uvx", "pipx", "ssh",
		"docker", "podman", "kubectl", "tmux", "screen")
	guardNames = set("loopguard", "claude", "secret-tool", "gnome-keyring-daemon", "gnome-keyring",
		"security", "dbus-send", "busctl", "gdbus", "dbus-monitor", "qdbus", "kwallet-query",
		"kwalletcli", "keyctl", "seahorse", "systemctl", "launchctl")
)

// pathWriters change the files named in their arguments. With a wildcard
// they could overwrite the hook settings or the guard itself.
var pathWriters = set("cp", "mv", "rm", "ln", "tee", "dd", "install", "chmod", "chown", "chgrp",
	"truncate", "rsync", "patch", "unlink", "shred", "touch", "chattr", "setfacl")

// wildcardAfterName lists commands whose global options (right after the
// name) can run other programs: git -c core.pager=..., -c alias.x=!sh ...
// A wildcard in the first argument position is refused for them.
var wildcardAfterName = set("git", "make", "gmake", "tar", "rsync", "npm", "pnpm", "yarn", "cargo", "go")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// commandBase reduces a command name or path to the name the lists use:
// base name, lower case, without a trailing version ("python3.12" ->
// "python", "bash5" -> "bash").
func commandBase(name string) string {
	b := strings.ToLower(filepath.Base(name))
	b = strings.TrimSuffix(b, ".exe")
	t := strings.TrimRight(b, "0123456789.-")
	if t == "" {
		return b
	}
	return t
}

// protected path names: a rule mentioning them is refused.
var protectedWords = []string{".claude", "loopguard", "keyrings", "keychains"}

// Dangerous reports whether r may be granted as a standing scope: nil if it
// may, else a *DangerousError (errors.Is ErrDangerous) explaining why and
// pointing to exact approvals. home is the user's home directory (absolute),
// used to recognise absolute patterns that reach into it.
//
// Refused:
//   - bare rules for tools that take arguments (Bash, Edit, Write, Read,
//     WebFetch...): they would cover every call;
//   - Bash scopes over shells, interpreters (and tools with an
//     execute-a-command language: awk, sed, vim, jq...), wrappers that run
//     another command (env, sudo, xargs, find, timeout, ssh, docker...),
//     loopguard itself, the claude CLI and the keyring and service tools
//     (secret-tool, gnome-keyring-daemon, security, dbus-send, busctl, gdbus,
//     systemctl...), whether named or pinned under another name;
//   - Bash scopes with a wildcard right after git, make, tar, npm, go... whose
//     global options can run other programs (git -c core.pager=...);
//   - Bash scopes whose words or redirections mention .claude, loopguard or
//     the keyrings;
//   - Bash scopes with a wildcard over commands that write the files they
//     name (cp, mv, rm, ln, tee, dd, chmod...), and Bash scopes redirecting
//     to a file named settings.json or settings.local.json;
//   - Edit and Write scopes that can reach the project's .claude/ (its
//     settings hold the hooks), .git/ (config and hooks run commands),
//     .vscode/ or .idea/ (the directories Claude Code protects in
//     bypassPermissions mode), ~/.claude/, the guard's state, config and
//     binary, or the keyrings; Read scopes that can reach the guard's state
//     or the keyrings.
//
// An absolute pattern with ** (Edit(//tmp/x/**)) may reach some other
// directory's .claude/; Dangerous cannot know the project dir, so the hook's
// protected-resource check, which runs before any scope, covers that case.
func Dangerous(r Rule, home string) error {
	switch r.kind {
	case kindBare:
		if argumentFree[r.tool] {
			return nil
		}
		return dangerous(r, "a bare %s rule would cover every %s call; write a scoped rule such as %s", r.tool, r.tool, bareExample(r.tool))
	case kindBash:
		return dangerousBash(r)
	case kindFile:
		return dangerousFile(r, home)
	case kindWebFetch, kindMCP:
		return nil
	}
	return dangerous(r, "invalid rule")
}

func bareExample(tool string) string {
	switch tool {
	case toolBash:
		return "Bash(go test ./...)"
	case toolWebFetch:
		return "WebFetch(domain:pkg.go.dev)"
	case toolMultiEdit, toolNotebookEdit:
		return "Edit(src/**)"
	}
	return tool + "(src/**)"
}

func dangerousBash(r Rule) error {
	bs, err := r.bashSpecOf()
	if err != nil {
		return dangerous(r, "invalid Bash rule: %v", err)
	}
	names := []string{bs.words[0].lits[0]}
	if r.exe != "" && r.exe != pinnedBuiltin {
		names = append(names, r.exe)
	}
	for _, n := range names {
		b := commandBase(n)
		switch {
		case shellNames[b]:
			return dangerous(r, "%s is a shell: a scope over it runs any command", n)
		case interpreterNames[b]:
			return dangerous(r, "%s is an interpreter that can run any code", n)
		case wrapperNames[b]:
			return dangerous(r, "%s runs other commands", n)
		case guardNames[b]:
			return dangerous(r, "%s can change or read the guard, its keys or its hooks", n)
		}
	}
	hasWild := bs.trailing
	for _, w := range bs.words[1:] {
		if !w.literal() {
			hasWild = true
		}
	}
	if hasWild && pathWriters[commandBase(names[0])] {
		return dangerous(r, "with a wildcard, %s can overwrite the hook settings or the guard; name the files", names[0])
	}
	if hasWild && wildcardAfterName[commandBase(names[0])] && (len(bs.words) == 1 || !bs.words[1].literal()) {
		return dangerous(r, "a wildcard right after %s can pass global options that run other programs (for git: -c core.pager=..., -c alias.x=!...); name the subcommand, as in %s log *", names[0], names[0])
	}
	var texts []string
	for _, w := range bs.words {
		texts = append(texts, w.lits...)
	}
	for _, rd := range bs.redirs {
		texts = append(texts, rd.target)
		switch filepath.Base(rd.target) {
		case "settings.json", "settings.local.json":
			return dangerous(r, "redirecting to %s could overwrite a hook settings file, depending on the cwd", rd.target)
		}
	}
	for _, t := range texts {
		lt := strings.ToLower(t)
		for _, p := range protectedWords {
			if strings.Contains(lt, p) {
				return dangerous(r, "it mentions %q: the hook settings, the guard and the keyrings are changed by the human only", p)
			}
		}
	}
	return nil
}
