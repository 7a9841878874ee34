package policy

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Class says what a program can do that a standing scope must not grant.
type Class string

const (
	// Shell runs shell code: any command.
	Shell Class = "shell"
	// Interpreter runs code in some language, from a file, its command line
	// or stdin (awk, sed, vim and gdb count: each has a language that runs
	// commands).
	Interpreter Class = "interpreter"
	// Runner runs another command given in its arguments (env, sudo,
	// xargs, timeout), or downloads and runs one (npx, uvx).
	Runner Class = "runner"
	// CommandRunner runs a command or code through some of its arguments
	// only (find -exec, ssh HOST CMD, docker run, kubectl exec); the
	// analysis reads the arguments, a scope over it is refused.
	CommandRunner Class = "command_runner"
	// Guard reaches loopguard itself, its keys (the OS keyring and the
	// session bus it lives on), the agent, or the services that run them.
	Guard Class = "guard"
	// FileWriter changes the files its arguments name (cp, mv, rm, tee);
	// with a wildcard it could overwrite the hook settings or the guard.
	FileWriter Class = "file_writer"
)

// Program is what the policy knows about one program name.
type Program struct {
	Name  string
	Class Class
	// Keyring is true for tools that reach the OS keyring or its bus.
	Keyring bool
	// Why says, for a person, what a scope over it would grant.
	Why string
}

// programGroup is one class of programs: each name is a Program of that
// class, described by why (unless programWhy says otherwise).
type programGroup struct {
	class Class
	why   string
	names []string
}

// programGroups is the program table. A table the linker lays out, read by
// Lookup as it is: built into a map at first use it cost a Bash call's hook
// process some 85 us (the first Lookup, timed in a fresh process). No name
// is listed twice (TestProgramTable).
var programGroups = []programGroup{
	{Shell, "is a shell: it runs any command", []string{
		"sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "lksh", "pdksh", "oksh", "yash", "fish",
		"csh", "tcsh", "ash", "posh", "rc", "es", "elvish", "nu", "nushell", "xonsh", "ion", "murex",
		"oil", "osh", "ysh", "busybox", "toybox", "pwsh", "powershell", "cmd"}},
	{Interpreter, "is an interpreter: it runs any code", []string{
		"python", "pypy", "ipython", "micropython", "jython", "perl", "ruby", "irb", "node", "nodejs",
		"deno", "bun", "ts-node", "tsx", "qjs", "rhino", "php", "lua", "luajit", "tclsh", "wish",
		"expect", "rscript", "r", "julia", "osascript", "java", "jshell", "groovy", "scala", "kotlin",
		"ghc", "ghci", "runghc", "runhaskell", "racket", "guile", "sbcl", "clisp", "ocaml", "erl",
		"escript", "elixir", "iex", "swift", "bb", "nbb", "dc",
		"awk", "gawk", "mawk", "nawk", "m4",
		"vim", "vi", "nvim", "ex", "view", "rview", "vimdiff", "emacs", "emacsclient", "ed", "nano",
		"gdb", "lldb"}},
	{Runner, "runs another command or code", []string{
		"env", "sudo", "doas", "su", "pkexec", "runuser", "run0", "sg", "newgrp", "xargs", "timeout",
		"nohup", "nice", "ionice", "time", "watch", "parallel", "sem", "stdbuf", "setsid", "script",
		"flock", "chroot", "taskset", "chrt", "numactl", "prlimit", "unshare", "nsenter", "firejail",
		"bwrap", "systemd-run", "strace", "ltrace", "valgrind", "at", "batch", "tmux", "screen",
		"unbuffer", "fakeroot", "faketime", "proot", "torsocks", "proxychains", "tsocks",
		"catchsegv", "setpriv", "capsh", "dbus-run-session", "dbus-launch", "xvfb-run", "daemonize",
		"start-stop-daemon", "cgexec", "chpst", "setarch", "linux32", "linux64", "eatmydata", "rlwrap",
		"winpty", "entr", "nsjail", "ssh-agent", "caffeinate", "sandbox-exec", "arch", "open",
		"xdg-open", "openvt", "crontab", "ld.so", "exec", "eval", "source", ".", "command", "builtin",
		"alias", "declare", "typeset", "export", "trap", "coproc", "direnv", "nix-shell", "nix",
		"pnpx", "bunx", "uvx", "pipx"}},
	{CommandRunner, "runs commands or code given in some of its arguments", []string{
		"ssh", "docker", "podman", "kubectl", "npx"}},
	{Guard, "can change or read the guard, its keys or its hooks", []string{
		"loopguard", "claude", "systemctl", "launchctl"}},
	{FileWriter, "changes the files its arguments name", []string{
		"cp", "mv", "rm", "ln", "tee", "dd", "install", "chmod", "chown", "chgrp", "truncate", "rsync",
		"patch", "unlink", "shred", "touch", "chattr", "setfacl"}},
}

// programWhy says better, for a few names, what a scope over them grants.
var programWhy = []struct{ name, why string }{
	{"xargs", "runs a command built from its input"},
	{"sudo", "runs another command as another user"},
	{"env", "runs another command with a changed environment"},
	{"eval", "runs its arguments as shell code"},
	{"exec", "replaces the shell with another command"},
}

// keyringWhy describes a keyring tool the table does not list otherwise.
const keyringWhy = "reaches the OS keyring or the session bus it lives on"

// lookupName is the table's Program for the exact name n: its group's
// class and why (programWhy's where it has one), Keyring for the keyring
// tools; a keyring tool the groups do not list is a Guard of its own.
func lookupName(n string) (Program, bool) {
	for gi := range programGroups {
		g := &programGroups[gi]
		for _, m := range g.names {
			if m != n {
				continue
			}
			p := Program{Name: n, Class: g.class, Why: g.why, Keyring: slices.Contains(keyringTools, n)}
			for _, w := range programWhy {
				if w.name == n {
					p.Why = w.why
				}
			}
			return p, true
		}
	}
	if slices.Contains(keyringTools, n) {
		return Program{Name: n, Class: Guard, Why: keyringWhy, Keyring: true}, true
	}
	return Program{}, false
}

// keyringTools reach the OS keyring or the session bus it lives on, or are
// loopguard itself.
var keyringTools = []string{"secret-tool", "gnome-keyring-daemon", "gnome-keyring", "busctl",
	"dbus-send", "gdbus", "dbus-monitor", "qdbus", "keyctl", "security", "seahorse",
	"kwallet-query", "kwalletcli", "loopguard"}

// Base reduces a command name or path to the name the policy lists: the
// base name, lower case, without ".exe" and without a version suffix
// ("python3.12" -> "python", "/usr/bin/Bash5" -> "bash"). Names made only
// of digits and dots are kept.
func Base(name string) string {
	b := strings.ToLower(filepath.Base(name))
	b = strings.TrimSuffix(b, ".exe")
	if strings.HasPrefix(b, "ld-linux") || strings.HasPrefix(b, "ld.so") {
		return "ld.so"
	}
	t := strings.TrimRight(b, "0123456789.-")
	// python3.12-dbg, python3.11m
	if t == b {
		for _, suf := range []string{"-dbg", "m", "d"} {
			if s := strings.TrimSuffix(b, suf); s != b {
				if u := strings.TrimRight(s, "0123456789.-"); u != s && u != "" {
					t = u
				}
			}
		}
	}
	if t == "" {
		return b
	}
	return t
}

// Lookup returns what the policy knows about name (a command name or path,
// reduced with Base; the exact base name is tried first, so "bash5" and
// "Bash" find bash).
func Lookup(name string) (Program, bool) {
	exact := strings.ToLower(filepath.Base(name))
	if p, ok := lookupName(exact); ok {
		return p, true
	}
	return lookupName(Base(name))
}

// IsKeyringTool reports whether name (a command name or path) reaches the
// OS keyring or its bus, or is loopguard.
func IsKeyringTool(name string) bool {
	p, ok := Lookup(name)
	return ok && p.Keyring
}

// KeyringTools lists the keyring tools, sorted.
func KeyringTools() []string {
	out := append([]string(nil), keyringTools...)
	sort.Strings(out)
	return out
}

// Names lists the programs of class c, sorted.
func Names(c Class) []string {
	var out []string
	for _, g := range programGroups {
		if g.class == c {
			out = append(out, g.names...)
		}
	}
	for _, n := range keyringTools {
		if p, _ := lookupName(n); p.Class == c && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
