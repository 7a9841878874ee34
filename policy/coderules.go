package policy

// This file is the one table of the programs whose arguments carry code they
// run: an interpreter's inline code or stdin script (python -c, bash -s,
// node -e), and the options and operands of other programs that run a
// command or a script (find -exec, git -c and its code-running
// subcommands, awk's system(), sed's e and w, tar --to-command, ssh's
// remote command, database clients' shell escapes...). The analysis
// (shellparse) refuses a command CodeInArgs finds code in as indirect; the
// option tables (options_tables.go) say what a scope's * may cover.

import (
	"slices"
	"strings"
	"sync"
)

// CodeInArgs finds where a program's arguments carry code it runs: the
// index in args (args[0] is the program's name as written) of the word that
// does, and why. known is false when the program has no entry here (an
// interpreter or a program of argRules); then i is -1 and why "".
func CodeInArgs(base string, args []string) (i int, why string, known bool) {
	if it, name, ok := interpName(base); ok {
		i, why := checkInterp(name, it, args)
		return i, why, true
	}
	if rule, ok := argRules()[base]; ok {
		i, why := rule(args)
		return i, why, true
	}
	return -1, "", false
}

// interp describes an interpreter's command line: which options carry code.
type interp struct {
	code     string   // short options whose value (or stdin) is code
	valued   string   // short options that take a value
	stop     string   // short options after which the rest are operands (python -m)
	codeLong []string // long options (prefixes) that carry code
	okLong   []string // long options (prefixes) known to be harmless
	modes    []string // long options that run without a script (node --test)
}

var shells = interp{code: "cis", valued: "oO",
	okLong: []string{"--norc", "--noprofile", "--posix", "--noediting", "--restricted", "--verbose"}}

var interps = sync.OnceValue(func() map[string]interp {
	return map[string]interp{
		"sh": shells, "bash": shells, "dash": shells, "zsh": shells, "ksh": shells,
		"mksh": shells, "ash": shells, "rbash": shells, "yash": shells, "posh": shells,
		"oksh": shells, "lksh": shells, "pdksh": shells, "csh": shells, "tcsh": shells,
		"fish":        {code: "ciC", okLong: []string{"--no-config", "--private"}},
		"python":      {code: "ci", valued: "WX", stop: "m", okLong: []string{"--check-hash-based-pycs"}},
		"pypy":        {code: "ci", valued: "WX", stop: "m"},
		"perl":        {code: "eEMm", valued: "I"},
		"ruby":        {code: "eS", valued: "IrCEF"},
		"irb":         {code: "ir"},
		"php":         {code: "rBREa", valued: "cdzS"},
		"node":        {code: "epri", codeLong: []string{"--eval", "--print", "--import", "--require", "--loader", "--experimental-loader", "--env-file", "--input-type", "--interactive"}, okLong: []string{"--test", "--watch", "--inspect", "--enable-source-maps", "--no-warnings", "--trace-", "--max-old-space-size", "--experimental-vm-modules", "--stack-size", "--unhandled-rejections"}, modes: []string{"--test", "--run"}},
		"nodejs":      {code: "epri", codeLong: []string{"--eval", "--print", "--import", "--require", "--loader", "--experimental-loader", "--env-file"}},
		"bun":         {code: "epr", codeLong: []string{"--eval", "--print", "--preload", "--require", "--env-file"}},
		"deno":        {code: "", codeLong: []string{"--eval"}},
		"lua":         {code: "ei", valued: "l"},
		"luajit":      {code: "eij", valued: "lbO"},
		"Rscript":     {code: "e"},
		"rscript":     {code: "e"},
		"R":           {code: "e"},
		"r":           {code: "e"},
		"julia":       {code: "eEi", codeLong: []string{"--eval", "--print", "--load"}},
		"tclsh":       {},
		"wish":        {},
		"groovy":      {code: "e"},
		"scala":       {code: "e"},
		"jshell":      {},
		"elixir":      {code: "er", codeLong: []string{"--eval", "--require"}},
		"erl":         {code: "es"},
		"ghc":         {code: "e"},
		"ghci":        {code: "e"},
		"guile":       {code: "cel"},
		"ipython":     {code: "ci", stop: "m"},
		"micropython": {code: "ci", stop: "m"},
		"jython":      {code: "ci", stop: "m"},
		"ts-node":     {code: "epi", codeLong: []string{"--eval", "--print", "--interactive", "--require"}},
		"tsx":         {code: "ep", codeLong: []string{"--eval", "--print", "--import", "--require"}, modes: []string{"watch"}},
		"qjs":         {code: "eI"},
		"rhino":       {code: "e"},
		"bb":          {code: "e", codeLong: []string{"--eval"}},
		"nbb":         {code: "e", codeLong: []string{"--eval"}},
		"sbcl":        {codeLong: []string{"--eval", "--load"}},
		"dc":          {code: "e", codeLong: []string{"--expression"}},
		"racket":      {code: "elerf"},
		"swift":       {code: "e"},
	}
})

// interpName maps "python3.12" to "python", "perl5.36" to "perl".
func interpName(base string) (interp, string, bool) {
	if it, ok := interps()[base]; ok {
		return it, base, true
	}
	name, ok := versionedName(base)
	if !ok {
		return interp{}, "", false
	}
	switch name {
	case "python", "pypy", "perl", "ruby", "php", "lua", "luajit", "tclsh", "wish", "node", "bash", "zsh", "ksh", "guile", "julia":
		return interps()[name], name, true
	}
	return interp{}, "", false
}

// versionedName splits python3.12, python3.12-dbg, perl5.36.0, node18: it
// returns the leading letters of a name that matches
// ^([a-z]+)[0-9][0-9.]*[a-z]{0,2}(-dbg)?$ (a hand-written match, not a
// regexp compiled on every hook call; TestVersionedNameMatchesRegexp holds
// it to that regexp).
func versionedName(s string) (string, bool) {
	i := 0
	for i < len(s) && 'a' <= s[i] && s[i] <= 'z' {
		i++
	}
	if i == 0 || i == len(s) || s[i] < '0' || s[i] > '9' {
		return "", false
	}
	j := i + 1
	for j < len(s) && (s[j] == '.' || '0' <= s[j] && s[j] <= '9') {
		j++
	}
	k := j
	for k < len(s) && k-j < 2 && 'a' <= s[k] && s[k] <= 'z' {
		k++
	}
	if rest := s[k:]; rest != "" && rest != "-dbg" {
		return "", false
	}
	return s[:i], true
}

// checkInterp finds inline code, or a script read from stdin.
func checkInterp(name string, it interp, args []string) (int, string) {
	infos := map[string]bool{"--version": true, "-V": true, "--help": true, "-h": true, "-v": name == "node" || name == "nodejs" || name == "perl" || name == "ruby" || name == "php"}
	if name == "deno" || name == "bun" {
		for i, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if a == "eval" || a == "repl" || a == "x" {
				return i + 1, name + " " + a + " runs inline code (or downloaded code)"
			}
			break
		}
	}
	noScript := false
	for i := 1; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			if i+1 < len(args) && args[i+1] != "-" {
				return -1, ""
			}
			return i, name + " reads a script from stdin"
		case arg == "-":
			return i, name + " reads a script from stdin"
		case infos[arg]:
			noScript = true // keep looking: a code option may follow
		case strings.HasPrefix(arg, "--") && slices.Contains(it.modes, arg):
			noScript = true
		case strings.HasPrefix(arg, "--"):
			for _, p := range it.codeLong {
				if strings.HasPrefix(arg, p) {
					return i, name + " " + arg + " runs inline code"
				}
			}
			ok := false
			for _, p := range it.okLong {
				if strings.HasPrefix(arg, p) {
					ok = true
				}
			}
			if !ok {
				return i, name + " option " + arg + " is not known to be safe"
			}
		case len(arg) > 1 && (arg[0] == '-' || (arg[0] == '+' && it.code == shells.code)):
			for j := 1; j < len(arg); j++ {
				c := arg[j]
				switch {
				case strings.IndexByte(it.code, c) >= 0:
					return i, name + " " + arg + " runs inline code or reads it from stdin"
				case strings.IndexByte(it.stop, c) >= 0:
					return -1, ""
				case strings.IndexByte(it.valued, c) >= 0:
					if j == len(arg)-1 {
						i++
					}
					j = len(arg)
				}
			}
		default:
			return -1, "" // the script file
		}
	}
	if noScript {
		return -1, ""
	}
	return len(args) - 1, name + " reads a script from stdin"
}

// argRules catch programs that run code given in particular arguments.
var argRules = sync.OnceValue(func() map[string]func(args []string) (int, string) {
	return map[string]func(args []string) (int, string){
		"printf": func(args []string) (int, string) {
			if len(args) > 1 && strings.HasPrefix(args[1], "-v") {
				return 1, "printf -v assigns a variable, evaluating its subscript"
			}
			return -1, ""
		},
		"test": testRule, "[": testRule,
		"wait": func(args []string) (int, string) {
			return findArg(args, "wait -p assigns a variable", "-p")
		},
		"find": func(args []string) (int, string) {
			return findArg(args, "find runs a command for each file", "-exec", "-execdir", "-ok", "-okdir")
		},
		"awk": awkRule, "gawk": awkRule, "mawk": awkRule, "nawk": awkRule, "busybox-awk": awkRule,
		"sed": sedRule, "gsed": sedRule,
		"git": gitRule,
		"tar": func(args []string) (int, string) {
			if i, why := findPrefix(args, "tar runs a program", "--to-command", "--use-compress-program", "--checkpoint-action", "--info-script", "--new-volume-script", "--rsh-command", "--rmt-command"); why != "" {
				return i, why
			}
			for i, a := range args[1:] {
				if (i == 0 || strings.HasPrefix(a, "-")) && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "IF") {
					return i + 1, "tar -I or -F runs a program"
				}
			}
			return -1, ""
		},
		"zip": func(args []string) (int, string) {
			return findPrefix(args, "zip runs an unzip command", "-TT", "--unzip-command")
		},
		"rsync": func(args []string) (int, string) {
			if i, why := findPrefix(args, "rsync runs a remote shell or program", "--rsh", "--rsync-path", "-e"); why != "" {
				return i, why
			}
			if i := shortWith(args, "e"); i > 0 {
				return i, "rsync -e runs a remote shell"
			}
			return -1, ""
		},
		"ssh":  sshRule,
		"scp":  sshOptRule("scp", "oFS"),
		"sftp": sshOptRule("sftp", "oFSbD"),
		"man": func(args []string) (int, string) {
			return findPrefix(args, "man runs a pager or browser", "-P", "--pager", "-H", "--html")
		},
		"sqlite3": func(args []string) (int, string) {
			for i, a := range args[1:] {
				if strings.Contains(a, ".shell") || strings.Contains(a, ".system") || strings.Contains(a, ".load") || strings.Contains(a, "load_extension") {
					return i + 1, "sqlite3 runs a shell command or loads code"
				}
			}
			return -1, ""
		},
		"make": func(args []string) (int, string) {
			return findPrefix(args, "make evaluates inline makefile code or a shell override", "--eval", "-E", "SHELL=", ".SHELLFLAGS=", "MAKESHELL=")
		},
		"go": func(args []string) (int, string) {
			if i, why := findPrefix(args, "go runs a program on the build", "-exec", "--exec", "-toolexec", "--toolexec", "-vettool", "--vettool"); why != "" {
				return i, why
			}
			if len(args) > 2 && args[1] == "env" {
				return findArg(args, "go env -w changes settings for every later go command", "-w", "-u")
			}
			if len(args) > 2 && args[1] == "run" {
				for i, a := range args[2:] {
					if !strings.HasPrefix(a, "-") && strings.Contains(a, "@") {
						return i + 2, "go run downloads and runs a module"
					}
				}
			}
			return -1, ""
		},
		"npm": scriptShellRule,
		"nc":  netcatRule, "ncat": netcatRule, "netcat": netcatRule, "nc.openbsd": netcatRule, "nc.traditional": netcatRule,
		"socat": func(args []string) (int, string) {
			for i, a := range args[1:] {
				u := strings.ToUpper(a)
				if strings.Contains(u, "EXEC:") || strings.Contains(u, "SYSTEM:") || strings.Contains(u, "EXEC,") {
					return i + 1, "socat EXEC/SYSTEM runs a command"
				}
			}
			return -1, ""
		},
		"docker": containerRule, "podman": containerRule,
		"kubectl": kubectlRule,
		"psql":    sqlShellRule, "mysql": sqlShellRule, "mariadb": sqlShellRule,
		"cmake": func(args []string) (int, string) {
			for i := 1; i+1 < len(args); i++ {
				if args[i] == "-E" && (args[i+1] == "env" || args[i+1] == "chdir" || args[i+1] == "time") {
					return i, "cmake -E " + args[i+1] + " runs another command"
				}
			}
			return -1, ""
		},
		"npx": func(args []string) (int, string) {
			return findPrefix(args, "npx -c runs a shell command", "-c", "--call", "--shell")
		},
		"pnpm": scriptShellRule,
		"yarn": scriptShellRule,
		"cargo": func(args []string) (int, string) {
			return findPrefix(args, "cargo --config can set a runner or wrapper", "--config")
		},
	}
})

// containerRule lets through the docker and podman subcommands that do not
// run a container's command on this host (build runs the Dockerfile like
// make runs the Makefile); every other one, plugins included, is Indirect,
// as are options before the subcommand (-H names another daemon).
func containerRule(args []string) (int, string) {
	if len(args) < 2 {
		return -1, ""
	}
	switch a := args[1]; {
	case a == "--version" || a == "--help" || a == "-v" || a == "-h":
		return -1, ""
	case strings.HasPrefix(a, "-"):
		return 1, args[0] + " option " + a + " before the subcommand is not known to be safe"
	}
	switch args[1] {
	case "ps", "images", "image", "logs", "inspect", "version", "info", "build", "pull", "push", "tag",
		"stats", "top", "history", "events", "port", "diff", "search", "network", "volume", "save", "load", "login", "logout":
		return -1, ""
	}
	return 1, args[0] + " " + args[1] + " runs a container's command, a plugin, or changes the daemon"
}

// kubectlRule lets through kubectl's read-only subcommands; every other
// one (exec, run, debug, attach, cp, apply, plugins...) is Indirect.
func kubectlRule(args []string) (int, string) {
	for i, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch a {
		case "get", "describe", "logs", "version", "explain", "api-resources", "api-versions", "top", "cluster-info", "events":
			return -1, ""
		}
		return i + 1, "kubectl " + a + " runs commands or workloads, or is a plugin"
	}
	return -1, ""
}

func testRule(args []string) (int, string) {
	return findArg(args, "test -v evaluates an array subscript", "-v", "-R")
}

func scriptShellRule(args []string) (int, string) {
	if i, why := findPrefix(args, "--script-shell names the shell that runs scripts", "--script-shell"); why != "" {
		return i, why
	}
	if len(args) > 1 && (args[1] == "exec" || args[1] == "x" || args[1] == "dlx") {
		return findPrefix(args, "exec -c runs a shell command", "-c", "--call")
	}
	return -1, ""
}

func findArg(args []string, why string, names ...string) (int, string) {
	for i, a := range args[1:] {
		for _, n := range names {
			if a == n {
				return i + 1, why
			}
		}
	}
	return -1, ""
}

func findPrefix(args []string, why string, prefixes ...string) (int, string) {
	for i, a := range args[1:] {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return i + 1, why
			}
		}
	}
	return -1, ""
}

func awkRule(args []string) (int, string) {
	program := false // a program file was given (-f)
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--version" || a == "-V" || a == "--help":
			program = true
		case a == "-f" || a == "--file" || a == "-E" || a == "--exec" || a == "-i" || a == "--include":
			program = program || (a != "-i" && a != "--include")
			i++
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--exec=") || strings.HasPrefix(a, "--include="):
			program = program || !strings.HasPrefix(a, "--include=")
		case a == "-e" || strings.HasPrefix(a, "--source") || a == "-l" || strings.HasPrefix(a, "--load") ||
			(len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:2], "el")):
			return i, "awk " + a + " runs inline code or loads an extension"
		case a == "-v" || a == "-F" || a == "--assign" || a == "--field-separator":
			i++
		case strings.HasPrefix(a, "-v") || strings.HasPrefix(a, "-F") || strings.HasPrefix(a, "--assign=") || strings.HasPrefix(a, "--field-separator="):
		case a == "--":
			if program {
				return -1, ""
			}
			return i + 1, "awk runs the inline program given on its command line"
		case strings.HasPrefix(a, "-"):
			return i, "awk option " + a + " is not known to be safe"
		default:
			if program {
				return -1, ""
			}
			return i, "awk runs the inline program given on its command line"
		}
	}
	if program {
		return -1, ""
	}
	return len(args) - 1, "awk reads its program from the command line"
}

func sshRule(args []string) (int, string) {
	operands := 0
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if len(args)-(i+1) > 1 {
				return i + 2, "ssh runs a command on the remote host"
			}
			return -1, ""
		}
		if len(a) > 1 && a[0] == '-' {
			for j := 1; j < len(a); j++ {
				c := a[j]
				if c == 'o' || c == 'F' {
					return i, "ssh -o and -F can run a local command"
				}
				if strings.IndexByte("BbcDEeIiJLlmOpQRSWw", c) >= 0 {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
			continue
		}
		operands++
		if operands > 1 {
			return i, "ssh runs a command on the remote host"
		}
	}
	return -1, ""
}

func sshOptRule(name, letters string) func(args []string) (int, string) {
	return func(args []string) (int, string) {
		if i := shortWith(args, letters); i > 0 {
			return i, name + " " + args[i] + " can run a local command"
		}
		return -1, ""
	}
}

// shortWith is the index of the first word after argv[0] that is a
// cluster of short options (-xyz) holding one of letters; -1 when none is.
func shortWith(args []string, letters string) int {
	for i, a := range args {
		if i > 0 && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a, letters) {
			return i
		}
	}
	return -1
}

func netcatRule(args []string) (int, string) {
	if i, why := findPrefix(args, "netcat runs a program for the connection", "--exec", "--sh-exec", "--lua-exec"); why != "" {
		return i, why
	}
	if i := shortWith(args, "ec"); i > 0 {
		return i, "netcat -e or -c runs a program for the connection"
	}
	return -1, ""
}

// sqlShellRule catches SQL clients told to run shell commands (\!, system,
// \o |cmd, COPY ... PROGRAM).
func sqlShellRule(args []string) (int, string) {
	for i, a := range args[1:] {
		l := strings.ToLower(a)
		if strings.Contains(l, `\!`) || strings.Contains(l, "|") || strings.Contains(l, "system") || strings.Contains(l, "program") {
			return i + 1, "the SQL client may run a shell command (\\!, system, |, PROGRAM)"
		}
	}
	return -1, ""
}

// gitRule finds git invocations that run configured or inline commands.
func gitRule(args []string) (int, string) {
	sub := -1
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || strings.HasPrefix(a, "--config-env") || (strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--")):
			return i, "git -c sets configuration that can run commands"
		case strings.HasPrefix(a, "--exec-path="):
			return i, "git --exec-path changes where git finds its commands"
		case a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
			continue
		case strings.HasPrefix(a, "-"):
			continue
		}
		sub = i
		break
	}
	if sub < 0 {
		return -1, ""
	}
	rest := args[sub+1:]
	at := func(j int) int { return sub + 1 + j }
	for j, a := range rest {
		for _, p := range []string{"--exec", "--upload-pack", "--receive-pack", "--extcmd", "--open-files-in-pager", "--config-env", "--tool", "--interpreter"} {
			if strings.HasPrefix(a, p) {
				return at(j), "git " + args[sub] + " " + a + " runs a command"
			}
		}
	}
	switch args[sub] {
	case "rebase":
		if i, why := findArg(args[sub:], "git rebase -x runs a command", "-x"); why != "" {
			return sub + i, why
		}
	case "bisect":
		if len(rest) > 0 && rest[0] == "run" {
			return at(0), "git bisect run runs a command"
		}
	case "submodule":
		for j, a := range rest {
			if a == "foreach" {
				return at(j), "git submodule foreach runs a command"
			}
		}
	case "filter-branch", "filter-repo", "difftool", "mergetool", "send-email", "instaweb", "daemon", "p4", "svn", "cvsimport", "archimport", "quiltimport", "credential", "shell", "fsmonitor--daemon":
		return sub, "git " + args[sub] + " runs a command given inline or in its configuration"
	case "grep":
		if i, why := findPrefix(args[sub:], "git grep -O runs a command (the pager)", "-O", "--open-files-in-pager"); why != "" {
			return sub + i, why
		}
	case "clone":
		if i, why := findArg(args[sub:], "git clone -u runs a command (upload-pack)", "-u"); why != "" {
			return sub + i, why
		}
		for j, a := range rest {
			if strings.HasPrefix(a, "ext::") {
				return at(j), "the ext:: transport runs a command"
			}
		}
	case "config":
		if i, _ := findArg(args[sub:], "", "--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list"); i >= 0 {
			return -1, ""
		}
		for j, a := range rest {
			if strings.HasPrefix(a, "!") || codeConfigKey(a) {
				return at(j), "git config sets a value that runs a command"
			}
		}
	case "fetch", "pull", "push", "ls-remote", "remote", "submodule--helper", "archive":
		for j, a := range rest {
			if strings.HasPrefix(a, "ext::") || strings.HasPrefix(a, "--remote=ext::") {
				return at(j), "the ext:: transport runs a command"
			}
		}
	}
	return -1, ""
}

// codeConfigKey reports git configuration keys whose values run commands.
func codeConfigKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "filter.") || strings.HasPrefix(k, "pager.") ||
		strings.HasPrefix(k, "include") || strings.HasPrefix(k, "url.") || strings.HasPrefix(k, "remote.") ||
		strings.HasPrefix(k, "diff.") || strings.HasPrefix(k, "merge.") || strings.HasPrefix(k, "credential") ||
		strings.HasPrefix(k, "gpg.") || strings.HasPrefix(k, "sequence.") || strings.HasPrefix(k, "uploadpack.") ||
		strings.HasPrefix(k, "protocol.") {
		return true
	}
	switch k {
	case "core.pager", "core.editor", "core.sshcommand", "core.hookspath", "core.fsmonitor",
		"core.askpass", "core.gitproxy", "core.worktree", "core.attributesfile", "core.excludesfile",
		"init.templatedir", "sendemail.smtpserver", "web.browser", "help.browser":
		return true
	}
	return strings.HasSuffix(k, ".command") || strings.HasSuffix(k, ".cmd") || strings.HasSuffix(k, ".program") ||
		strings.HasSuffix(k, ".tool") || strings.HasSuffix(k, ".path") || strings.HasSuffix(k, ".driver") ||
		strings.HasSuffix(k, ".helper") || strings.HasSuffix(k, ".textconv")
}

// sedRule parses sed's options and script for the e and w commands and s
// flags (GNU sed runs commands and writes files with them).
func sedRule(args []string) (int, string) {
	var scripts []int
	haveScript, sandbox := false, false
	var first = -1
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--sandbox":
			sandbox = true
		case a == "--version" || a == "--help":
			return -1, ""
		case a == "--":
			if !haveScript && i+1 < len(args) && first < 0 {
				first = i + 1
			}
			i = len(args)
		case strings.HasPrefix(a, "--expression="):
			scripts, haveScript = append(scripts, i), true
		case a == "--expression":
			if i+1 < len(args) {
				scripts, haveScript = append(scripts, i+1), true
			}
			i++
		case strings.HasPrefix(a, "--file"):
			return i, "sed --file reads its script from a file the analysis cannot see (it may run commands or write files)"
		case strings.HasPrefix(a, "--line-length"):
			if !strings.Contains(a, "=") {
				i++
			}
		case strings.HasPrefix(a, "--"):
			switch strings.SplitN(a, "=", 2)[0] {
			case "--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered",
				"--null-data", "--posix", "--debug", "--follow-symlinks", "--in-place", "--binary", "--zero-terminated":
			default:
				return i, "sed option " + a + " is not known to be safe"
			}
		case len(a) > 1 && a[0] == '-':
		cluster:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'n', 'E', 'r', 's', 'u', 'z', 'b':
				case 'i':
					if a == "-i" && i+1 < len(args) && args[i+1] == "" {
						i++ // BSD sed: -i '' takes a separate, empty suffix
					}
					break cluster // the rest is a backup suffix
				case 'f':
					return i, "sed -f reads its script from a file the analysis cannot see (it may run commands or write files)"
				case 'e', 'l':
					if a[j] != 'l' {
						haveScript = true
					}
					if j == len(a)-1 {
						if a[j] == 'e' && i+1 < len(args) {
							scripts = append(scripts, i+1)
						}
						i++
					} else if a[j] == 'e' {
						scripts = append(scripts, -(i + 1)) // attached: -e'p'
					}
					break cluster
				default:
					return i, "sed option " + a + " is not known to be safe"
				}
			}
		default:
			if !haveScript && first < 0 {
				first = i
			}
		}
	}
	if !haveScript && first >= 0 {
		scripts = append(scripts, first)
	}
	if sandbox {
		return -1, ""
	}
	for _, si := range scripts {
		var s string
		idx := si
		switch {
		case si < 0:
			idx = -si - 1
			a := args[idx]
			s = a[strings.IndexByte(a, 'e')+1:]
		case strings.HasPrefix(args[si], "--expression="):
			s = strings.TrimPrefix(args[si], "--expression=")
		default:
			s = args[si]
		}
		if sedScriptUnsafe(s) {
			return idx, "the sed script may run commands, read or write files it names (e, r, R, w, W, s///e, s///w), or is not understood"
		}
	}
	return -1, ""
}

// sedScriptUnsafe parses a sed script conservatively: true for e, r, R, w, W
// commands, s flags e and w, and anything it does not understand.
func sedScriptUnsafe(s string) bool {
	i, n := 0, len(s)
	digits := func() {
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	blanks := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func(alsoSemi bool) {
		for i < n && s[i] != '\n' && !(alsoSemi && s[i] == ';') {
			i++
		}
	}
	delimited := func(d byte) bool {
		for i < n {
			switch c := s[i]; {
			case c == '\\':
				i += 2
			case c == '\n':
				return false
			case c == d:
				i++
				return true
			default:
				i++
			}
		}
		return false
	}
	address := func() bool {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			digits()
			if i < n && s[i] == '~' {
				i++
				digits()
			}
		case i < n && s[i] == '$':
			i++
		case i < n && (s[i] == '/' || s[i] == '\\'):
			d := byte('/')
			if s[i] == '\\' {
				if i+1 >= n || s[i+1] == '\n' || s[i+1] == '\\' {
					return false
				}
				d = s[i+1]
				i++
			}
			i++
			if !delimited(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';') {
			i++
		}
		if i >= n {
			return false
		}
		if !address() {
			return true
		}
		if i < n && s[i] == ',' {
			i++
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
				digits()
			} else if !address() {
				return true
			}
		}
		blanks()
		for i < n && s[i] == '!' {
			i++
			blanks()
		}
		if i >= n {
			return true
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#':
			toEOL(false)
			continue
		case ':', 'b', 't', 'T', 'v':
			toEOL(true)
			continue
		case 'a', 'i', 'c':
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			continue
		case 'r', 'R':
			return true // reads a file the script names, which no word shows
		case 'q', 'Q', 'l', 'L':
			blanks()
			digits()
		case 's', 'y':
			if i >= n || s[i] == '\\' || s[i] == '\n' {
				return true
			}
			d := s[i]
			i++
			if !delimited(d) { // pattern or source characters
				return true
			}
			if !delimited(d) { // replacement or target characters
				return true
			}
			if c == 's' {
			flags:
				for i < n {
					switch f := s[i]; {
					case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || (f >= '0' && f <= '9'):
						i++
					case f == 'e' || f == 'w' || f == 'W':
						return true
					default:
						break flags
					}
				}
			}
		default:
			return true
		}
		blanks()
		if i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != '#' {
			return true
		}
	}
}
