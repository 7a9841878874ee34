package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/loopguard/loopguard/policy"
)

// bashBuiltins are run by bash without a PATH lookup.
var bashBuiltins = set(".", ":", "[", "alias", "bg", "bind", "break", "builtin",
	"caller", "cd", "command", "compgen", "complete", "compopt", "continue",
	"declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
	"export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs",
	"kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd",
	"pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt",
	"source", "suspend", "test", "times", "trap", "true", "type", "typeset",
	"ulimit", "umask", "unalias", "unset", "wait")

// safeBuiltins may be a simple command; every other builtin is Indirect:
// it runs code (jobs -x runs a command), changes the shell, or assigns
// variables (whose array subscripts bash evaluates, running any $( ) inside).
var safeBuiltins = set(":", "[", "cd", "dirs", "echo", "exit", "false", "help",
	"kill", "popd", "printf", "pushd", "pwd", "test", "times", "true",
	"type", "ulimit", "umask", "wait")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// indirectByName finds commands that run other code, by name and args.
// args[0] is the command name; pos gives each word's position.
func indirectByName(base string, args []string, pos []syntax.Pos) error {
	if lower := strings.ToLower(base); lower != base {
		// Case-insensitive file systems (macOS) run /usr/bin/env as ENV.
		if err := indirectByName(lower, args, pos); err != nil {
			return err
		}
	}
	at := func(i int) syntax.Pos {
		if i >= 0 && i < len(pos) {
			return pos[i]
		}
		return pos[0]
	}
	prog, known := policy.Lookup(base)
	if bashBuiltins[base] && base == args[0] && !safeBuiltins[base] {
		why := "changes the shell or runs code"
		if known && prog.Class == policy.Runner {
			why = prog.Why
		}
		return deny(Indirect, at(0), "builtin %s %s", base, why)
	}
	if base == "ld.so" || strings.HasPrefix(base, "ld-linux") {
		return deny(Indirect, at(0), "%s runs another program", base)
	}
	if known && prog.Class == policy.Runner {
		if base == "env" && len(args) == 1 {
			return nil // prints the environment
		}
		return deny(Indirect, at(0), "%s %s", base, prog.Why)
	}
	if i, why, ok := policy.CodeInArgs(base, args); ok {
		if why != "" {
			return deny(Indirect, at(i), "%s", why)
		}
		return nil
	}
	if known && (prog.Class == policy.Shell || prog.Class == policy.Interpreter || prog.Class == policy.CommandRunner) {
		return deny(Indirect, at(0), "%s %s; it runs another command or code in ways the analysis does not read", base, prog.Why)
	}
	return nil
}
