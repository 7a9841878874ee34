package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Programs that run what they read on their standard input as commands.
// Under an agent whose host lets the model type into a command it started
// (Codex's write_stdin reaches a running command's terminal, and no hook
// sees what it types), an approval of one of these approves everything
// typed into it afterwards: the human must be told, and no scope covers
// one.
//
// Each kind reads commands from stdin unless its arguments say otherwise:
//   - shells and interpreters: without a script operand and without
//     inline code (-c, -e, ...), or with -i, -s or a "-" operand;
//   - database clients, debuggers and remote shells: without the option
//     that gives them their commands (psql -c, mysql -e, gdb --batch, ssh
//     with a remote command, ...);
//   - editors and pagers: always (each runs shell commands typed into it:
//     vim's :!, less's !).
type stdinKind int

const (
	stdinScript stdinKind = iota + 1 // a shell or interpreter
	stdinClient                      // reads commands unless given them
	stdinAlways                      // an editor, pager or terminal program
)

var stdinPrograms = sync.OnceValue(func() map[string]stdinKind {
	return map[string]stdinKind{
		// Shells.
		"sh": stdinScript, "bash": stdinScript, "rbash": stdinScript, "zsh": stdinScript, "dash": stdinScript,
		"ksh": stdinScript, "mksh": stdinScript, "fish": stdinScript, "csh": stdinScript, "tcsh": stdinScript,
		"ash": stdinScript, "yash": stdinScript, "elvish": stdinScript, "nu": stdinScript, "xonsh": stdinScript,
		"pwsh": stdinScript, "busybox": stdinScript,
		// Interpreters and REPLs.
		"python": stdinScript, "pypy": stdinScript, "ipython": stdinScript, "perl": stdinScript, "ruby": stdinScript,
		"irb": stdinScript, "node": stdinScript, "nodejs": stdinScript, "deno": stdinScript, "bun": stdinScript,
		"php": stdinScript, "lua": stdinScript, "luajit": stdinScript, "tclsh": stdinScript, "wish": stdinScript,
		"expect": stdinScript, "r": stdinScript, "julia": stdinScript, "ghci": stdinScript, "guile": stdinScript,
		"racket": stdinScript, "sbcl": stdinScript, "clisp": stdinScript, "ocaml": stdinScript, "erl": stdinScript,
		"iex": stdinScript, "scala": stdinScript, "jshell": stdinScript, "groovysh": stdinScript, "swift": stdinScript,
		"qjs": stdinScript, "bb": stdinScript, "nbb": stdinScript, "ts-node": stdinScript, "awk": stdinScript,
		"gawk": stdinScript, "bc": stdinScript, "dc": stdinScript,
		// Database clients, debuggers, remote shells.
		"psql": stdinClient, "mysql": stdinClient, "mariadb": stdinClient, "sqlite3": stdinClient,
		"redis-cli": stdinClient, "mongo": stdinClient, "mongosh": stdinClient, "cqlsh": stdinClient,
		"clickhouse-client": stdinClient, "duckdb": stdinClient, "sqlcmd": stdinClient, "gdb": stdinClient,
		"lldb": stdinClient, "ssh": stdinClient, "ftp": stdinClient, "sftp": stdinClient, "lftp": stdinClient,
		"telnet": stdinClient,
		// Editors, pagers and terminal programs.
		"vi": stdinAlways, "vim": stdinAlways, "nvim": stdinAlways, "view": stdinAlways, "ex": stdinAlways,
		"emacs": stdinAlways, "nano": stdinAlways, "ed": stdinAlways, "less": stdinAlways, "more": stdinAlways,
		"most": stdinAlways, "man": stdinAlways, "tmux": stdinAlways, "screen": stdinAlways, "script": stdinAlways,
		"mosh": stdinAlways, "top": stdinAlways,
	}
})

// clientBatch are the options that give a stdinClient its commands (it
// then reads none from stdin), and whether it takes its commands from its
// operands instead (sqlite3 DB SQL, ssh HOST COMMAND): from the operand
// at that position on.
var clientBatch = map[string]struct {
	opts    []string
	operand int      // 0: operands are not commands
	valued  string   // short options that take the next word as their value
	long    []string // other options that do
}{
	"psql":    {opts: []string{"-c", "--command", "-f", "--file", "-l", "--list", "-V", "--version", "--help"}},
	"mysql":   {opts: []string{"-e", "--execute", "-V", "--version", "--help"}},
	"mariadb": {opts: []string{"-e", "--execute", "-V", "--version", "--help"}},
	"sqlite3": {opts: []string{"-version", "-help", "--version", "--help"}, operand: 2,
		long: []string{"-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs", "-maxsize", "-mmap", "-heap", "-lookaside", "-pagecache"}},
	"redis-cli":         {opts: []string{"-v", "--version", "--help"}, operand: 1, valued: "hpsauniredcx"},
	"mongo":             {opts: []string{"--eval", "--version", "--help"}, operand: 2},
	"mongosh":           {opts: []string{"--eval", "-f", "--file", "--version", "--help"}, operand: 2},
	"cqlsh":             {opts: []string{"-e", "--execute", "-f", "--file", "--version", "--help"}},
	"clickhouse-client": {opts: []string{"-q", "--query", "--queries-file", "--version", "--help"}},
	"duckdb":            {opts: []string{"-c", "-s", "-f", "-version", "-help", "--version", "--help"}, operand: 2},
	"sqlcmd":            {opts: []string{"-q", "-Q", "-i", "-?", "--version"}},
	"gdb":               {opts: []string{"--batch", "-batch", "--version", "--help"}},
	"lldb":              {opts: []string{"--batch", "-b", "--version", "--help"}},
	"ssh":               {opts: []string{"-V", "-G", "-O", "-Q"}, operand: 2, valued: "BbcDEeFIiJLlmOopQRSWw"},
	"ftp":               {opts: []string{"-h", "--help"}},
	"sftp":              {opts: []string{"-b"}},
	"lftp":              {opts: []string{"-c", "-e", "-f", "--version", "--help"}},
	"telnet":            {},
}

// scriptCode are the options of interpreters that give inline code or a
// module to run (the program then reads no commands from stdin); a shell's
// is -c alone (bash -e is errexit).
var scriptCode = []string{"-c", "-e", "-E", "-m", "-r", "-p", "--eval", "--print", "--command", "--version", "-V", "--help", "-h"}

var shellCode = []string{"-c", "--version", "--help"}

// ReadsCommands says, for a person, when the command argv (argv[0] the
// program, by name or path) reads commands from its standard input: ""
// when it does not.
func ReadsCommands(argv []string) string {
	// Through the wrappers the jail reads through (env, nice, timeout,
	// sudo, exec, stdbuf, nohup, setsid ...): `env bash` is bash.
	// Each wrapper read through shortens argv, and each is read in time
	// of its own options alone (unwrapped), so the chain is read in
	// linear time; past maxWrappers of them it is not read on, and says
	// so (the seventy-first attack run's `env env ... ls` of 16,000 words
	// took 3 s).
	var via []string
	for {
		inner, w, ok := unwrapped(argv)
		if !ok {
			break
		}
		if w == "xargs" && len(inner) > 0 {
			// xargs gives the program its standard input as words: `xargs
			// sh` runs `sh -c …` when `-c …` is typed into it.
			if _, _, ok := lookupProgram(stdinPrograms(), inner); ok {
				return through("xargs runs "+Base(inner[0])+" with the words of its standard input", via)
			}
		}
		if len(via) == maxWrappers {
			return fmt.Sprintf("a chain of more than %d wrappers (%s ...) is not read to its end", maxWrappers, strings.Join(via[:3], " "))
		}
		via = append(via, w)
		argv = inner
	}
	if why := readsCommands(argv); why != "" {
		return through(why, via)
	}
	return ""
}

// maxWrappers bounds the wrappers ReadsCommands reads through.
const maxWrappers = 64

// through is why, read through the wrappers via (outermost first), as the
// reason says it: "bash reads ... (through nice) (through env)".
func through(why string, via []string) string {
	var b strings.Builder
	b.WriteString(why)
	for i := len(via) - 1; i >= 0; i-- {
		b.WriteString(" (through " + via[i] + ")")
	}
	return b.String()
}

// readsCommands is ReadsCommands of a command that is no wrapper.
func readsCommands(argv []string) string {
	name, kind, ok := lookupProgram(stdinPrograms(), argv)
	if !ok {
		return ""
	}
	args := argv[1:]
	what := name + " reads commands from its standard input"
	switch kind {
	case stdinAlways:
		return name + " runs commands typed into it (a shell escape)"
	case stdinScript:
		code := scriptCode
		if p, ok := Lookup(name); ok && p.Class == Shell {
			code = shellCode
		}
		interactive := true
		for i, a := range args {
			switch {
			case a == "-" || a == "-i" || a == "-s" || a == "--interactive":
				return what
			case a == "--":
				if i+1 < len(args) {
					interactive = false
				}
			case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
				for _, c := range code {
					if a == c || strings.HasPrefix(a, c+"=") || (len(c) == 2 && c[1] != '-' && len(a) > 2 && a[1] != '-' && strings.ContainsRune(a[1:], rune(c[1]))) {
						interactive = false
					}
				}
				if a == "-i" {
					return what
				}
			default:
				// A script operand.
				interactive = false
			}
			if !interactive {
				break
			}
		}
		if interactive {
			return what
		}
	case stdinClient:
		b := clientBatch[name]
		operands := 0
		for i := 0; i < len(args); i++ {
			a := args[i]
			if strings.HasPrefix(a, "-") {
				if len(a) == 2 && strings.IndexByte(b.valued, a[1]) >= 0 || slices.Contains(b.long, a) {
					i++ // its value
					continue
				}
				for _, o := range b.opts {
					if a == o || strings.HasPrefix(a, o+"=") || (strings.HasPrefix(o, "-") && !strings.HasPrefix(o, "--") && len(o) == 2 && strings.HasPrefix(a, o)) {
						return ""
					}
				}
				continue
			}
			operands++
			if b.operand > 0 && operands >= b.operand {
				return ""
			}
		}
		return what
	}
	return ""
}

// shellEscapes are the clients whose own commands run shell commands, and
// how: given their commands on the command line (psql -c, sqlite3 DB SQL,
// sftp -b), they still run what a shell runs.
var shellEscapes = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"psql": `\!`, "mysql": "system", "mariadb": "system", "sqlite3": ".shell and .system", "duckdb": ".shell and .system",
		"sqlcmd": "!!", "mongo": "run()", "mongosh": "require('child_process')", "gdb": "shell", "lldb": "platform shell",
		"ftp": "!", "sftp": "!", "lftp": "!",
	}
})

// RunsCommands says, for a person, when the command argv runs commands
// that no analysis of its words can see: it reads them from its standard
// input (ReadsCommands), or it is a client whose commands include a shell
// escape, whichever commands it was given. "" when neither. No scope
// covers such a command.
func RunsCommands(argv []string) string {
	if why := ReadsCommands(argv); why != "" {
		return why
	}
	name, esc, ok := lookupProgram(shellEscapes(), argv)
	if !ok {
		return ""
	}
	return name + " runs the commands it is given, and shell commands through them (" + esc + ")"
}

// lookupProgram finds the program of argv (argv[0], by name or path) in
// table: by its file name, lower case and without .exe, or else by its
// Base (python3.12 as python). It returns the name it was found under.
func lookupProgram[V any](table map[string]V, argv []string) (string, V, bool) {
	var zero V
	if len(argv) == 0 {
		return "", zero, false
	}
	name := strings.TrimSuffix(strings.ToLower(filepath.Base(argv[0])), ".exe")
	if v, ok := table[name]; ok {
		return name, v, true
	}
	name = Base(argv[0])
	v, ok := table[name]
	return name, v, ok
}

// unwrapped is the command a wrapper argv runs (jailWrappers: env, nice,
// timeout, sudo, exec, xargs, stdbuf, nohup, setsid ...), its options and
// leading operands skipped, and the wrapper's name; false when argv is no
// wrapper or names no command. env -S's string and watch's words are split
// at blanks.
func unwrapped(argv []string) ([]string, string, bool) {
	if len(argv) == 0 {
		return nil, "", false
	}
	prog := Base(argv[0])
	w, ok := jailWrappers()[prog]
	if !ok {
		return nil, "", false
	}
	args := argv[1:]
	if prog == "command" && argHas(args, "-v", "-V") {
		return nil, "", false
	}
	if prog == "env" {
		// -S is an option of env's own, before its first operand: only
		// those words are looked at (env env env ... is read in linear
		// time).
		opts := args
		if _, first := argFirst(args, w.valued...); first >= 0 {
			opts = args[:first]
		}
		if s, ok := argValue(opts, "-S", "--split-string"); ok {
			return strings.Fields(s), prog, true
		}
	}
	i := wrappedStart(prog, w, args)
	if i < 0 {
		return nil, "", false
	}
	return args[i:], prog, true
}
