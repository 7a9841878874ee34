package policy

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/fsx"
)

// JailNeed is a right a command needs that the jail does not give (issue
// 36): the jail runs a call with project-write, no network, a private
// temp, nothing outside the project written and git's own directory
// read-only.
type JailNeed struct {
	Right string // JailNetwork, JailOutside, JailGit or JailLinks
	Why   string // for a person: "npm install downloads packages"
	// Unless, when set, are absolute paths in the project: the need falls
	// when one of them exists (npx and bunx run a package installed in a
	// node_modules/.bin of the directory or a parent without the
	// network). The caller looks (the table reads no file).
	Unless []string
}

// The rights a call can need beyond the jail.
const (
	// JailNetwork: TCP or UDP, out (downloads, uploads, remote git,
	// package installs) or in (a server that listens on a port).
	JailNetwork = "network"
	// JailOutside: writes outside the project, root, a Unix socket of a
	// service (docker, systemd, the desktop), or signals to processes the
	// call did not start.
	JailOutside = "outside"
	// JailGit: writes the project's git directory (git add, commit,
	// checkout).
	JailGit = "git"
	// JailLinks: makes a symbolic link in the project (ln -s, python -m
	// venv, uv venv): the jail makes none there, since the file tools
	// write the project beside it (confine's writeDirAccess).
	JailLinks = "links"
)

// NeedsBeyondJail reports what one simple command needs beyond the jail,
// nil when the jail holds all it needs. argv is the command as the shell
// passes it (argv[0] a name or a path); cwd, project and home are
// absolute.
//
// It only predicts, to decide when to ask a human before running: a
// wrong prediction costs a question, or a refused system call the kernel
// reports (and the call can then escalate); it never lets anything
// through, the kernel decides what a jailed call can do. It leans towards
// asking about the network (a question costs less than a confusing
// failure) and towards saying nothing about ordinary local work (build,
// test, lint, format, read, edit, files in the project), which the jail
// holds. Wrappers (env, sudo, time, nice, nohup, timeout, xargs, npx ...)
// are read through to the command they run, and sh -c 'SCRIPT' roughly
// (its words split at ;, &&, || and |). Redirections are not in argv:
// the caller judges their targets (JailWritesOutside).
func NeedsBeyondJail(argv []string, cwd, project, home string) []JailNeed {
	j := &jailJudge{project: project, home: home}
	j.judge(argv, cwd, 0)
	// network, outside, git: the order a screen shows them in.
	slices.SortStableFunc(j.needs, func(a, b JailNeed) int { return jailRank[a.Right] - jailRank[b.Right] })
	return j.needs
}

var jailRank = map[string]int{JailNetwork: 0, JailOutside: 1, JailGit: 2, JailLinks: 3}

// JailWritesOutside reports whether writing the path p (a word of a
// command or a redirection's target, relative to cwd, "~" expanded to
// home) writes outside what the jail lets a call write. It is read
// lexically (no link followed): the kernel has the last word.
//
// The temporary directories (/tmp, /var/tmp, /dev/shm) are not outside:
// the jail gives each call a private temp (issue 36), so what a call
// writes there goes to its own copy, never to the shared one, and is gone
// when the call ends. (Today's launcher makes TMPDIR and /dev/shm
// private; a literal /tmp/x is refused by the kernel unless it mounts a
// private /tmp too: the call then escalates after the refusal.) The
// character devices every program writes (/dev/null, /dev/stdout,
// /dev/tty ...) are not outside either.
func JailWritesOutside(p, cwd, project, home string) bool {
	if p == "" || p == "-" {
		return false
	}
	if strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/") {
		return true // ~user: another user's home
	}
	if strings.HasPrefix(p, "~") && home == "" {
		return true
	}
	a := filepath.Clean(fsx.Abs(cwd, home, p))
	if fsx.Within(a, project) {
		return false
	}
	for _, t := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if fsx.Within(a, t) {
			return false
		}
	}
	switch a {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/full", "/dev/random", "/dev/urandom":
		return false
	}
	return !fsx.Within(a, "/dev/fd") && !fsx.Within(a, "/proc/self/fd")
}

// jailJudge collects the needs of one command, one per right (the first
// reason found).
type jailJudge struct {
	project, home string
	needs         []JailNeed
}

func (j *jailJudge) need(right, why string) { j.add(JailNeed{Right: right, Why: why}) }

// add keeps one need a right, the first found, unless a later one holds
// without a condition where the first had one.
func (j *jailJudge) add(n JailNeed) {
	for i, m := range j.needs {
		if m.Right == n.Right {
			if len(m.Unless) > 0 && len(n.Unless) == 0 {
				j.needs[i] = n
			}
			return
		}
	}
	j.needs = append(j.needs, n)
}

func (j *jailJudge) net(why string)     { j.need(JailNetwork, why) }
func (j *jailJudge) outside(why string) { j.need(JailOutside, why) }
func (j *jailJudge) git(why string)     { j.need(JailGit, why) }

// links notes a symbolic link made at each path that lies in the project
// (a link in the private temp is the jail's to make).
func (j *jailJudge) links(why, cwd string, paths ...string) {
	for _, p := range paths {
		if p == "" || strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "$") {
			// Another user's home; an expansion ($TMPDIR/v, "$" in a
			// sketch): where it lands the kernel decides, and a refused
			// link gets its line after the call.
			continue
		}
		if fsx.Within(filepath.Clean(fsx.Abs(cwd, j.home, p)), j.project) {
			j.need(JailLinks, why)
			return
		}
	}
}

// writes notes a write of each path outside the project, and of the
// project's git directory (rm .git/index.lock).
func (j *jailJudge) writes(prog, cwd string, paths ...string) {
	for _, p := range paths {
		if JailWritesOutside(p, cwd, j.project, j.home) {
			j.outside(prog + " writes " + p + ", outside the project")
			continue
		}
		if inGitDir(p, cwd, j.project, j.home) {
			j.git(prog + " writes " + p + ", in git's own directory")
		}
	}
}

// inGitDir reports whether p lies in a .git directory of the project.
func inGitDir(p, cwd, project, home string) bool {
	if p == "" || !strings.Contains(p, ".git") && !strings.Contains(cwd, ".git") {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(project), filepath.Clean(fsx.Abs(cwd, home, p)))
	if err != nil {
		return false
	}
	return slices.Contains(strings.Split(rel, string(filepath.Separator)), ".git")
}

// maxJailDepth bounds the wrappers read through (sudo env nice xargs ...).
const maxJailDepth = 8

func (j *jailJudge) judge(argv []string, cwd string, depth int) {
	if len(argv) == 0 || depth > maxJailDepth {
		return
	}
	name := argv[0]
	prog := Base(name)
	args := argv[1:]
	if w, ok := jailWrappers()[prog]; ok {
		j.wrapper(prog, w, args, cwd, depth)
		return
	}
	jailTableOnce.Do(buildJailTable)
	if f, ok := jailTable[prog]; ok {
		f(j, jailCall{prog: prog, name: name, args: args, cwd: cwd, depth: depth})
		return
	}
	if why, ok := jailNetworkPrograms()[prog]; ok {
		if h := urlHost(args); h != "" {
			why += " (" + h + ")"
		}
		j.net(prog + " " + why)
		// Where a download lands: outside the project is more than the
		// network (an exact approval then runs unconfined).
		for _, o := range jailDownloadTargets()[prog] {
			if p, ok := argValue(args, o); ok {
				j.writes(prog, cwd, p)
			}
		}
		return
	}
	if IsKeyringTool(name) {
		j.outside(prog + " reaches the OS keyring or the session bus it lives on")
		return
	}
	if prog == "kill" && jobsOnly(args) {
		return // kill %1: a job of the call's own shell
	}
	if why, ok := jailOutsidePrograms()[prog]; ok {
		j.outside(prog + " " + why)
		return
	}
	if fw, ok := jailFileWriters()[prog]; ok {
		written := fw.written(args)
		j.writes(prog, cwd, written...)
		if prog == "ln" && lnSymbolic(args) {
			j.links("ln -s makes a symbolic link in the project", cwd, written...)
		}
	}
}

// lnSymbolic reports whether ln's words ask for a symbolic link (-s,
// --symbolic, or s among short options: -sf, -nsf).
func lnSymbolic(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--symbolic":
			return true
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 's'):
			return true
		}
	}
	return false
}

// jailCall is one command a table entry judges.
type jailCall struct {
	prog, name string
	args       []string
	cwd        string
	depth      int
}

// sub is the first operand of c.args (the subcommand) and its index, the
// options before it skipped; valued names the options that take the next
// word as their value. -1 when there is none.
func (c jailCall) sub(valued ...string) (string, int) {
	return argFirst(c.args, valued...)
}

func argFirst(args []string, valued ...string) (string, int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1], i + 1
			}
			return "", -1
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if !strings.Contains(a, "=") && slices.Contains(valued, a) {
				i++
			}
		default:
			return a, i
		}
	}
	return "", -1
}

// operands are the words of args that are not options, the values of
// the options in valued left out; after "--" every word is one.
func argOperands(args []string, valued ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i+1:]...)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if !strings.Contains(a, "=") && slices.Contains(valued, a) {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

// has reports whether args holds one of the options named (a long one
// also as --name=value).
func argHas(args []string, opts ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, o := range opts {
			if a == o || strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"=") {
				return true
			}
		}
	}
	return false
}

// optValue is the value of the first of the options named: the next word,
// or what follows "=" (a long option) or the letter (a short one).
func argValue(args []string, opts ...string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, o := range opts {
			switch {
			case a == o && i+1 < len(args):
				return args[i+1], true
			case strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"="):
				return a[len(o)+1:], true
			case len(o) == 2 && o[0] == '-' && o[1] != '-' && len(a) > 2 && strings.HasPrefix(a, o) && a[1] != '-':
				return a[2:], true
			}
		}
	}
	return "", false
}

// jailWrapper is how a program that runs another command is read: its
// options that take a value, and for some a word before the command
// (timeout's duration).
type jailWrapper struct {
	valued []string
	// skip: operands before the command (timeout DURATION, flock FILE,
	// taskset MASK).
	skip int
	// root: the command runs as root, or as another user.
	root bool
	// net: the wrapper itself reaches the network (torsocks).
	net bool
}

// jailWrappers are the wrappers read through: the programs of the Runner
// class (programs.go) that run the command their words name, with the
// options each takes. A Runner not listed here is judged by the tables
// below (npx, uvx, crontab) or not at all.
var jailWrappers = sync.OnceValue(func() map[string]jailWrapper {
	return map[string]jailWrapper{
		"env":              {valued: []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}},
		"sudo":             {valued: []string{"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user", "-R", "--chroot"}, root: true},
		"doas":             {valued: []string{"-u", "-C"}, root: true},
		"run0":             {valued: []string{"-u", "--user", "-g", "--group", "-D", "--chdir"}, root: true},
		"pkexec":           {valued: []string{"--user"}, root: true},
		"runuser":          {valued: []string{"-u", "--user", "-g", "--group", "-G", "--supp-group"}, root: true},
		"time":             {valued: []string{"-f", "--format", "-o", "--output"}},
		"nice":             {valued: []string{"-n", "--adjustment"}},
		"ionice":           {valued: []string{"-c", "--class", "-n", "--classdata"}},
		"nohup":            {},
		"setsid":           {},
		"stdbuf":           {valued: []string{"-i", "-o", "-e"}},
		"timeout":          {valued: []string{"-s", "--signal", "-k", "--kill-after"}, skip: 1},
		"xargs":            {valued: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars"}},
		"flock":            {valued: []string{"-w", "--timeout", "-E", "--conflict-exit-code"}, skip: 1},
		"taskset":          {skip: 1},
		"chrt":             {skip: 1},
		"watch":            {valued: []string{"-n", "--interval", "-d", "-q"}},
		"unbuffer":         {},
		"eatmydata":        {},
		"catchsegv":        {},
		"rlwrap":           {},
		"command":          {},
		"builtin":          {},
		"exec":             {valued: []string{"-a"}},
		"caffeinate":       {valued: []string{"-t", "-w"}},
		"ssh-agent":        {},
		"xvfb-run":         {valued: []string{"-n", "--server-num", "-s", "--server-args", "-f", "--auth-file", "-e", "--error-file", "-p", "--xauth-protocol"}},
		"dbus-run-session": {},
		"torsocks":         {net: true},
		"proxychains":      {valued: []string{"-f"}, net: true},
		"strace":           {valued: []string{"-e", "-o", "-p", "-s", "-u", "-P", "-a", "-b", "-E", "-I", "-O", "-S", "-X"}},
		"ltrace":           {valued: []string{"-e", "-o", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-L", "-x"}},
		"valgrind":         {},
		"fakeroot":         {},
		"faketime":         {skip: 1},
	}
})

func (j *jailJudge) wrapper(prog string, w jailWrapper, args []string, cwd string, depth int) {
	if w.root {
		j.outside(prog + " runs a command as root or another user")
	}
	if w.net {
		j.net(prog + " sends the command's connections through a proxy")
	}
	if prog == "time" || prog == "strace" || prog == "ltrace" {
		if o, ok := argValue(args, "-o", "--output"); ok {
			j.writes(prog, cwd, o)
		}
	}
	if prog == "command" && argHas(args, "-v", "-V") {
		return // names the command, runs nothing
	}
	if prog == "env" {
		if d, ok := argValue(args, "-C", "--chdir"); ok {
			cwd = filepath.Clean(fsx.Abs(cwd, j.home, d))
		}
		if s, ok := argValue(args, "-S", "--split-string"); ok {
			j.script(s, cwd, depth+1)
			return
		}
	}
	if prog == "flock" {
		if s, ok := argValue(args, "-c", "--command"); ok {
			j.script(s, cwd, depth+1)
			return
		}
	}
	i := wrappedStart(prog, w, args)
	if i < 0 {
		return
	}
	rest := args[i:]
	if prog == "watch" && !argHas(args, "-x", "--exec") {
		// watch runs its words with sh -c.
		j.script(strings.Join(rest, " "), cwd, depth+1)
		return
	}
	j.judge(rest, cwd, depth+1)
}

// wrappedStart is where, in the words args after the wrapper prog's name,
// the command it runs starts: past its options (and their values), env's
// NAME=value words and the operands w skips (timeout's duration); -1 when
// it names none.
func wrappedStart(prog string, w jailWrapper, args []string) int {
	_, i := argFirst(args, w.valued...)
	if prog == "env" {
		// NAME=value words come before the command.
		for i >= 0 && i < len(args) && strings.Contains(args[i], "=") && !strings.HasPrefix(args[i], "=") {
			i++
		}
	}
	if i < 0 {
		return -1
	}
	i += w.skip
	if i >= len(args) {
		return -1
	}
	return i
}

// script judges a shell script given as a string (sh -c, env -S, watch)
// roughly: its words split at blanks, its commands at ;, &, &&, || and |,
// quotes dropped. A script whose words this reading gets wrong costs a
// question or a refused system call, never a bypass.
func (j *jailJudge) script(s, cwd string, depth int) {
	var cmd []string
	flush := func() {
		if len(cmd) > 0 {
			if cmd[0] == "cd" && len(cmd) == 2 {
				cwd = filepath.Clean(fsx.Abs(cwd, j.home, cmd[1]))
			} else {
				j.judge(cmd, cwd, depth)
			}
		}
		cmd = nil
	}
	for _, f := range strings.Fields(s) {
		f = strings.Trim(f, `"'()`)
		if f == "" {
			continue
		}
		stripped := strings.TrimRight(f, ";&|")
		switch {
		case f == "do" || f == "then" || f == "else" || f == "{" || f == "}":
			flush()
		case stripped == "":
			flush()
		case stripped != f:
			cmd = append(cmd, stripped)
			flush()
		default:
			cmd = append(cmd, f)
		}
	}
	flush()
}

// jailNetworkPrograms need the network for their job, whatever their
// words.
var jailNetworkPrograms = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"curl": "downloads or uploads", "wget": "downloads", "aria2c": "downloads", "axel": "downloads",
		"http": "sends HTTP requests", "https": "sends HTTP requests", "xh": "sends HTTP requests", "httpie": "sends HTTP requests",
		"websocat": "opens network connections", "grpcurl": "sends gRPC requests",
		"ssh": "connects to another machine", "scp": "copies over the network", "sftp": "copies over the network",
		"mosh": "connects to another machine", "ssh-copy-id": "connects to another machine", "ssh-keyscan": "connects to other machines",
		"nc": "opens network connections", "ncat": "opens network connections", "netcat": "opens network connections",
		"socat": "opens network connections", "telnet": "opens network connections",
		"ftp": "transfers over the network", "lftp": "transfers over the network", "tftp": "transfers over the network",
		"dig": "queries DNS", "nslookup": "queries DNS", "host": "queries DNS", "drill": "queries DNS", "whois": "queries a whois server",
		"ping": "sends packets", "traceroute": "sends packets", "tracepath": "sends packets", "mtr": "sends packets", "nmap": "scans the network",
		"aws": "calls the cloud's API", "gcloud": "calls the cloud's API", "gsutil": "calls the cloud's API", "az": "calls the cloud's API",
		"kubectl": "calls the cluster's API", "helm": "calls the cluster or a chart repository", "doctl": "calls the cloud's API",
		"flyctl": "calls its service", "fly": "calls its service", "heroku": "calls its service", "vercel": "calls its service",
		"netlify": "calls its service", "railway": "calls its service", "firebase": "calls its service", "wrangler": "calls its service",
		"supabase": "calls its service", "glab": "calls GitLab", "hub": "calls GitHub", "tea": "calls Gitea",
		"svn": "talks to its server", "rclone": "transfers over the network", "s3cmd": "transfers over the network",
		"uvicorn": "listens on a TCP port", "gunicorn": "listens on a TCP port", "hypercorn": "listens on a TCP port",
		"http-server": "listens on a TCP port", "live-server": "listens on a TCP port", "webpack-dev-server": "listens on a TCP port",
		"ngrok": "tunnels over the network", "cloudflared": "tunnels over the network",
		"psql": "connects to a database server", "pg_dump": "connects to a database server", "pg_restore": "connects to a database server",
		"createdb": "connects to a database server", "dropdb": "connects to a database server", "mysql": "connects to a database server",
		"mysqldump": "connects to a database server", "mariadb": "connects to a database server", "redis-cli": "connects to a Redis server",
		"mongosh": "connects to a database server", "mongo": "connects to a database server", "clickhouse-client": "connects to a database server",
		"ollama": "talks to the ollama server", "sphinx-autobuild": "listens on a TCP port",
		"opencode": "calls a model's API", "claude": "calls a model's API", "codex": "calls a model's API",
		"gemini": "calls a model's API", "aider": "calls a model's API", "cursor-agent": "calls a model's API",
	}
})

// jailDownloadTargets are the options of a downloader that name the file
// or directory it writes.
var jailDownloadTargets = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"curl": {"-o", "--output", "--output-dir"},
		"wget": {"-O", "--output-document", "-P", "--directory-prefix"},
	}
})

// jailOutsidePrograms reach outside the project whatever their words:
// root, a service's socket, the desktop, other processes, the user's
// configuration.
var jailOutsidePrograms = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"su": "runs a shell as another user", "systemctl": "talks to systemd over its socket",
		"service": "controls system services", "launchctl": "controls launchd's services",
		"crontab": "changes the user's scheduled jobs", "at": "schedules a job outside the call", "batch": "schedules a job outside the call",
		"kill": "signals a process the call did not start", "pkill": "signals processes the call did not start",
		"killall": "signals processes the call did not start", "fuser": "can signal processes the call did not start",
		"ssh-keygen": "writes keys in ~/.ssh", "ssh-add": "talks to the ssh agent's socket",
		"xdg-open": "asks the desktop to open it", "open": "asks the desktop to open it", "osascript": "drives other applications",
		"notify-send": "talks to the desktop's notification service", "pbcopy": "writes the clipboard", "xclip": "uses the clipboard",
		"xsel": "uses the clipboard", "wl-copy": "writes the clipboard",
		"tmux": "talks to a tmux server outside the call", "screen": "talks to a screen session outside the call",
		"code": "talks to the editor outside the call", "cursor": "talks to the editor outside the call",
		"mount": "mounts file systems", "umount": "unmounts file systems", "shutdown": "stops the machine", "reboot": "restarts the machine",
		"update-alternatives": "changes the system's programs", "ldconfig": "changes the system's library cache",
		"useradd": "changes the system's users", "usermod": "changes the system's users", "passwd": "changes a password", "chsh": "changes the login shell",
		"defaults": "writes the user's preferences", "gsettings": "writes the user's settings", "dconf": "writes the user's settings",
		"mkcert": "installs a certificate authority", "pipx": "installs tools in the home",
	}
})

// jailFileWriter says which words of a file-changing program it writes.
type jailFileWriter struct {
	valued []string
	// last: only the last operand is written (cp, ln, install's target),
	// or the directory of -t.
	last bool
	// first: the first operand is not a path (chmod's mode, chown's owner).
	first bool
	// inPlace: writes its operands only with -i (sed -i, perl -i).
	inPlace bool
}

func (fw jailFileWriter) written(args []string) []string {
	if fw.inPlace && !inPlace(args) {
		return nil
	}
	if fw.inPlace && !argHas(args, "-e", "--expression", "-f", "--file") {
		fw.first = true // sed -i SCRIPT FILE...
	}
	var out []string
	if t, ok := argValue(args, "-t", "--target-directory"); ok && fw.last {
		out = append(out, t)
	}
	ops := argOperands(args, fw.valued...)
	switch {
	case fw.first && len(ops) > 0:
		ops = ops[1:]
	case fw.last && len(out) > 0:
		ops = nil
	case fw.last && len(ops) > 0:
		ops = ops[len(ops)-1:]
	}
	return append(out, ops...)
}

func inPlace(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "-i") ||
			len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'i') && !strings.ContainsAny(a, "ef") {
			return true
		}
	}
	return false
}

// jailFileWriters are the programs that change the files their words
// name (the FileWriter class and a few more): what they write outside the
// project is outside the jail. mv also removes its sources.
var jailFileWriters = sync.OnceValue(func() map[string]jailFileWriter {
	return map[string]jailFileWriter{
		"cp":       {valued: []string{"-t", "--target-directory", "-S", "--suffix"}, last: true},
		"ln":       {valued: []string{"-t", "--target-directory", "-S", "--suffix"}, last: true},
		"install":  {valued: []string{"-t", "--target-directory", "-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"}, last: true},
		"rsync":    {valued: []string{"-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--exclude-from", "--include-from", "--files-from", "--chmod", "--backup-dir", "--temp-dir", "-T", "--partial-dir", "--log-file"}, last: true},
		"mv":       {valued: []string{"-t", "--target-directory", "-S", "--suffix"}},
		"rm":       {},
		"rmdir":    {},
		"unlink":   {},
		"shred":    {valued: []string{"-n", "--iterations", "-s", "--size", "--random-source"}},
		"touch":    {valued: []string{"-d", "--date", "-t", "-r", "--reference"}},
		"mkdir":    {valued: []string{"-m", "--mode", "--context"}},
		"tee":      {},
		"truncate": {valued: []string{"-s", "--size", "-r", "--reference"}},
		"chmod":    {valued: []string{"--reference"}, first: true},
		"chown":    {valued: []string{"--reference", "--from"}, first: true},
		"chgrp":    {valued: []string{"--reference"}, first: true},
		"chattr":   {first: true},
		"setfacl":  {valued: []string{"-m", "--modify", "-x", "--remove", "-M", "--modify-file", "-X", "--remove-file", "--set", "--set-file"}},
		"sed":      {valued: []string{"-e", "--expression", "-f", "--file", "-l", "--line-length"}, inPlace: true},
		"patch":    {valued: []string{"-p", "-i", "--input", "-o", "--output", "-d", "--directory", "-F", "-B", "-r", "-z", "-V", "-D"}},
		"dd":       {},
	}
})

// jailTable judges the programs whose need depends on their words. It is
// built on first use (jailTableOnce), not at start-up: only a call a jail
// grant may cover is judged by it. (Not a sync.OnceValue: the judges it
// holds reach it again, an initialisation cycle for a variable.)
var (
	jailTable     map[string]func(*jailJudge, jailCall)
	jailTableOnce sync.Once
)

func buildJailTable() {
	jailTable = map[string]func(*jailJudge, jailCall){
		"git": jailGit, "gh": jailGh, "rsync": jailRsync, "npm": jailNpm, "pnpm": jailPnpm, "yarn": jailYarn, "bun": jailBun,
		"npx": jailNpx, "bunx": jailNpx, "pnpx": jailNpx, "uvx": jailUvx,
		"pip": jailPip, "uv": jailUv, "poetry": jailPoetry, "pipenv": jailPipenv, "conda": jailConda, "mamba": jailConda, "micromamba": jailConda,
		"python": jailPython, "virtualenv": jailVirtualenv, "go": jailGo, "cargo": jailCargo, "rustup": jailRustup,
		"gem": jailGem, "bundle": jailBundle, "composer": jailComposer, "mvn": jailMvn, "mvnw": jailMvn, "gradle": jailGradle, "gradlew": jailGradle,
		"docker": jailDocker, "podman": jailDocker, "docker-compose": jailDocker,
		"apt": jailSystemPkg, "apt-get": jailSystemPkg, "dnf": jailSystemPkg, "yum": jailSystemPkg, "pacman": jailSystemPkg,
		"apk": jailSystemPkg, "zypper": jailSystemPkg, "snap": jailSystemPkg, "flatpak": jailSystemPkg, "port": jailSystemPkg,
		"brew": jailBrew, "nvm": jailVersionManager, "sdk": jailVersionManager, "asdf": jailVersionManager, "volta": jailVersionManager,
		"fnm": jailVersionManager, "pyenv": jailVersionManager, "rbenv": jailVersionManager, "mise": jailVersionManager, "corepack": jailVersionManager,
		"deno": jailDeno, "hg": jailHg, "terraform": jailTerraform, "tofu": jailTerraform,
		"make": jailMake, "find": jailFind, "tar": jailTar, "unzip": jailUnzip,
		"sh": jailShell, "bash": jailShell, "zsh": jailShell, "dash": jailShell, "ksh": jailShell, "eval": jailEval,
		"pre-commit": jailPreCommit, "husky": jailHusky, "lefthook": jailHusky,
		"flask": jailServe("run"), "rails": jailServe("s", "server"), "hugo": jailServe("server", "serve"), "jekyll": jailServe("serve", "s"),
		"next": jailServe("dev", "start"), "ng": jailServe("serve", "s"), "php": jailPHP, "vite": jailVite,
		"webpack": jailServe("serve"), "serve": jailServe(""), "expo": jailServe("start"), "streamlit": jailServe("run"),
		"jupyter": jailServe("notebook", "lab", "server"), "astro": jailServe("dev", "preview"), "nuxt": jailServe("dev", "preview"),
		"nuxi": jailServe("dev", "preview"), "storybook": jailServe("dev"), "gatsby": jailServe("develop", "serve"),
		"docusaurus": jailServe("start", "serve"), "parcel": jailServe("", "serve"), "remix": jailServe("dev"),
		"mkdocs": jailMkdocs, "playwright": jailBrowserTests, "cypress": jailBrowserTests,
		"dotnet": jailDotnet, "flutter": jailPub, "dart": jailPub, "pod": jailCocoapods, "swift": jailSwift,
		"mix": jailMix, "cabal": jailCabal, "stack": jailCabal, "opam": jailCabal, "pip-compile": jailAlways("resolves against the package index"),
		"pip-sync": jailAlways("downloads packages"), "huggingface-cli": jailHF, "hf": jailHF,
		"prisma": jailDBTool("migrate", "db", "studio"), "drizzle-kit": jailDBTool("push", "migrate", "studio", "pull", "introspect"),
	}
}

// jailAlways: a program that needs the network whatever its words but
// --version and --help.
func jailAlways(why string) func(*jailJudge, jailCall) {
	return func(j *jailJudge, c jailCall) {
		if !argHas(c.args, "--version", "-V", "--help", "-h") {
			j.net(c.prog + " " + why)
		}
	}
}

// jailDBTool: an ORM's command line, whose subcommands named connect to
// the database server (or, for studio, listen on a port); a SQLite
// database would not need it, which the words do not say.
func jailDBTool(subs ...string) func(*jailJudge, jailCall) {
	return func(j *jailJudge, c jailCall) {
		if s, _ := c.sub("--schema", "--config"); slices.Contains(subs, s) {
			j.net(c.prog + " " + s + " connects to the database server")
		}
	}
}

func jailMkdocs(j *jailJudge, c jailCall) {
	switch s, _ := c.sub(); s {
	case "serve":
		j.net("mkdocs serve listens on a TCP port")
	case "gh-deploy":
		j.net("mkdocs gh-deploy pushes the site")
		j.git("mkdocs gh-deploy commits to the gh-pages branch")
	}
}

// jailBrowserTests: end-to-end test runners start the application's
// server (webServer) and browsers that load pages; their install
// downloads browsers into the home.
func jailBrowserTests(j *jailJudge, c jailCall) {
	switch s, _ := c.sub(); s {
	case "install", "install-deps":
		j.net(c.prog + " " + s + " downloads browsers")
		j.outside(c.prog + " " + s + " writes the browsers in the home")
	case "test", "run", "open", "codegen", "show-report", "":
		if s == "" && len(c.args) > 0 {
			return // --version, --help
		}
		j.net(c.prog + " " + s + " usually starts a server and browsers that load pages")
	}
}

func jailDotnet(j *jailJudge, c jailCall) {
	sub, k := c.sub()
	rest := c.args[k+1:]
	switch sub {
	case "restore", "publish":
		j.net("dotnet " + sub + " downloads packages")
	case "add":
		if s, _ := argFirst(rest); s == "package" || len(rest) > 1 && rest[1] == "package" {
			j.net("dotnet add package downloads the package")
		}
	case "tool", "workload":
		if s, _ := argFirst(rest); s == "install" || s == "update" || s == "restore" {
			j.net("dotnet " + sub + " " + s + " downloads")
			if argHas(rest, "-g", "--global") || sub == "workload" {
				j.outside("dotnet " + sub + " " + s + " writes outside the project")
			}
		}
	case "nuget":
		if s, _ := argFirst(rest); s == "push" || s == "delete" {
			j.net("dotnet nuget " + s + " reaches the feed")
		}
	case "new":
		if s, _ := argFirst(rest); s == "install" || s == "search" || s == "update" {
			j.net("dotnet new " + s + " downloads templates")
			j.outside("dotnet new " + s + " writes the templates in the home")
		}
	case "watch", "run":
		// may serve: the words do not say
	}
	// dotnet build and test restore what is not cached: not counted, the
	// kernel refuses and the call escalates (as for cargo build).
}

func jailPub(j *jailJudge, c jailCall) {
	sub, k := c.sub()
	if sub == "pub" && k >= 0 {
		s, _ := argFirst(c.args[k+1:])
		switch s {
		case "get", "upgrade", "add", "outdated", "downgrade", "publish", "deps", "cache":
			if s != "deps" {
				j.net(c.prog + " pub " + s + " reaches pub.dev")
			}
		case "global":
			j.net(c.prog + " pub global reaches pub.dev")
			j.outside(c.prog + " pub global writes the home")
		}
		return
	}
	switch sub {
	case "create", "upgrade", "precache", "doctor":
		if sub != "doctor" {
			j.net(c.prog + " " + sub + " downloads")
		}
		if sub == "upgrade" || sub == "precache" {
			j.outside(c.prog + " " + sub + " writes the SDK")
		}
	}
}

func jailCocoapods(j *jailJudge, c jailCall) {
	switch s, _ := c.sub(); s {
	case "install", "update", "repo", "outdated", "search", "trunk", "spec":
		j.net("pod " + s + " reaches the specs repository")
	}
}

func jailSwift(j *jailJudge, c jailCall) {
	if s, k := c.sub(); s == "package" && k >= 0 {
		switch t, _ := argFirst(c.args[k+1:]); t {
		case "resolve", "update", "add-dependency", "fetch", "show-dependencies":
			if t != "show-dependencies" {
				j.net("swift package " + t + " fetches the dependencies")
			}
		}
	}
}

func jailMix(j *jailJudge, c jailCall) {
	s, _ := c.sub()
	switch {
	case s == "deps.get" || s == "deps.update" || s == "hex.publish" || s == "hex.outdated" || s == "archive.install" || s == "local.hex" || s == "local.rebar":
		j.net("mix " + s + " reaches hex.pm")
		if strings.HasPrefix(s, "archive.") || strings.HasPrefix(s, "local.") {
			j.outside("mix " + s + " writes ~/.mix")
		}
	case s == "phx.server":
		j.net("mix phx.server listens on a TCP port")
	}
}

func jailCabal(j *jailJudge, c jailCall) {
	switch s, _ := c.sub(); s {
	case "update", "install", "fetch", "get", "setup", "upgrade", "init":
		if s == "init" && c.prog != "opam" {
			return // cabal init, stack init write the project
		}
		j.net(c.prog + " " + s + " downloads")
		if s != "fetch" && s != "get" {
			j.outside(c.prog + " " + s + " writes its store in the home")
		}
	}
}

func jailHF(j *jailJudge, c jailCall) {
	switch s, _ := c.sub(); s {
	case "", "env", "version", "--version", "-h", "--help":
	default:
		j.net(c.prog + " " + s + " reaches the Hugging Face Hub")
	}
}

// jailServe: a program that listens on a TCP port with the subcommands
// named ("" for any words).
func jailServe(subs ...string) func(*jailJudge, jailCall) {
	return func(j *jailJudge, c jailCall) {
		s, _ := c.sub()
		if slices.Contains(subs, "") || slices.Contains(subs, s) {
			j.net(c.prog + " " + s + " listens on a TCP port")
		}
	}
}

func jailVite(j *jailJudge, c jailCall) {
	switch s, _ := c.sub("--port", "--host", "--mode", "-m", "--config", "-c"); s {
	case "", "dev", "serve", "preview":
		if !argHas(c.args, "--version", "-v", "--help", "-h") {
			j.net(strings.TrimSpace("vite "+s) + " listens on a TCP port")
		}
	}
}

func jailPHP(j *jailJudge, c jailCall) {
	if argHas(c.args, "-S") {
		j.net("php -S listens on a TCP port")
	}
	ops := argOperands(c.args, "-c", "-d", "-f", "-t", "-S", "-z")
	if len(ops) >= 2 && filepath.Base(ops[0]) == "artisan" && ops[1] == "serve" {
		j.net("artisan serve listens on a TCP port")
	}
}

// gitGlobalValued are git's options before the subcommand that take a
// value.
var gitGlobalValued = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds"}

// gitReads are git's subcommands that read the repository only (and may
// write the work tree, which the jail gives, or files the call names).
var gitReads = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true, "blame": true,
		"annotate": true, "shortlog": true, "describe": true, "rev-list": true, "ls-tree": true, "cat-file": true, "grep": true,
		"show-ref": true, "merge-base": true, "help": true, "version": true, "check-ignore": true, "check-attr": true,
		"check-ref-format": true, "count-objects": true, "diff-tree": true, "diff-index": true, "diff-files": true,
		"for-each-ref": true, "name-rev": true, "var": true, "whatchanged": true, "range-diff": true, "format-patch": true,
		"archive": true, "fsck": true, "verify-commit": true, "verify-tag": true, "cherry": true, "show-branch": true,
		"clean": true, "difftool": true, "column": true, "stripspace": true,
		"interpret-trailers": true, "patch-id": true, "get-tar-commit-id": true, "ls-remote": true, "bugreport": true,
		"reflog":     true, // show, the default; expire and delete write (below)
		"config":     true, // read unless it sets (below)
		"remote":     true, // lists unless it changes (below)
		"lfs":        true, // judged below
		"bundle":     true, // writes the file it names
		"blame-tree": true,
	}
})

// gitNetwork are git's subcommands that reach a remote.
var gitNetwork = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"fetch": "fetches from a remote", "pull": "fetches from a remote", "push": "sends to a remote",
		"clone": "downloads a repository", "ls-remote": "asks a remote", "send-email": "sends mail",
		"request-pull": "asks a remote",
	}
})

func jailGit(j *jailJudge, c jailCall) {
	cwd := c.cwd
	args := c.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		if slices.Contains(gitGlobalValued, a) && i+1 < len(args) {
			if a == "-C" {
				cwd = filepath.Clean(fsx.Abs(cwd, j.home, args[i+1]))
			}
			i++
		}
	}
	if i >= len(args) {
		return // git --version, git -h
	}
	sub, rest := args[i], args[i+1:]
	elsewhere := !fsx.Within(cwd, j.project) && !fsx.Within(cwd, "/tmp")
	if sub == "clone" {
		j.net("git clone downloads a repository")
		ops := argOperands(rest, "-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--separate-git-dir", "--depth",
			"--shallow-since", "--shallow-exclude", "-c", "--config", "-j", "--jobs", "--filter", "--template", "--server-option", "--bundle-uri")
		target := "."
		if len(ops) >= 2 {
			target = ops[len(ops)-1]
		}
		if JailWritesOutside(target, cwd, j.project, j.home) {
			j.outside("git clone writes " + target + ", outside the project")
		} else {
			j.git("git clone creates a .git directory")
		}
		return
	}
	if why, ok := gitNetwork()[sub]; ok {
		j.net("git " + sub + " " + why)
	}
	if wr, why := gitWritesRepo(sub, rest); wr {
		if elsewhere {
			j.outside("git " + sub + " writes a repository outside the project")
		} else {
			j.git("git " + sub + " " + why)
		}
	}
	switch sub {
	case "worktree":
		if s, k := argFirst(rest); s == "add" {
			if ops := argOperands(rest[k+1:], "-b", "-B", "--reason"); len(ops) > 0 {
				j.writes("git worktree add", cwd, ops[0])
			}
		}
	case "config":
		if argHas(rest, "--global", "--system") && gitConfigSets(rest) {
			j.outside("git config --global writes the user's git configuration")
		}
	case "submodule":
		switch s, _ := argFirst(rest, "--quiet"); s {
		case "update", "add":
			if !argHas(rest, "--no-fetch", "-N") || s == "add" {
				j.net("git submodule " + s + " downloads the submodules")
			}
		case "sync", "foreach":
			if argHas(rest, "--recursive") && s == "foreach" {
				j.judge(argOperands(rest[1:]), cwd, c.depth+1)
			}
		}
	case "remote":
		switch s, _ := argFirst(rest, "-v", "--verbose"); s {
		case "update", "prune":
			j.net("git remote " + s + " fetches from the remotes")
		case "show":
			if !argHas(rest, "-n") {
				j.net("git remote show asks the remote")
			}
		}
	case "lfs":
		switch s, _ := argFirst(rest); s {
		case "pull", "fetch", "push", "clone", "fsck":
			j.net("git lfs " + s + " transfers large files")
		}
	case "archive":
		if argHas(rest, "--remote") {
			j.net("git archive --remote asks a remote")
		}
		if o, ok := argValue(rest, "-o", "--output"); ok {
			j.writes("git archive", cwd, o)
		}
	case "format-patch":
		if o, ok := argValue(rest, "-o", "--output-directory"); ok {
			j.writes("git format-patch", cwd, o)
		}
	case "pull", "fetch", "push":
	default:
	}
}

// gitWritesRepo reports whether git SUB ARGS writes the repository's own
// directory (the index, refs, objects, config): gitWrites (capability.go)
// less the forms that only read or only write the work tree, and the
// subcommands gitWrites does not name because their rules never get
// +git. An unknown subcommand (an alias, a git-foo on PATH) is counted as
// writing: the analysis cannot tell.
func gitWritesRepo(sub string, args []string) (bool, string) {
	const w = "writes the repository's .git"
	first, _ := argFirst(args)
	switch sub {
	case "stash":
		return first != "list" && first != "show", w
	case "tag":
		if len(args) == 0 || argHas(args, "-l", "--list", "-n", "--contains", "--no-contains", "--points-at", "--merged", "--no-merged", "-v", "--verify", "--column", "--sort", "--format") {
			return false, ""
		}
		return argHas(args, "-d", "--delete", "-a", "--annotate", "-s", "--sign", "-f", "--force", "-m", "--message", "-F", "--file", "-u", "--local-user") || first != "", w
	case "branch":
		if argHas(args, "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "-f", "--force", "-t", "--track", "--no-track") {
			return true, w
		}
		if argHas(args, "-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--column") {
			return false, ""
		}
		return first != "", w
	case "worktree":
		return first != "list", w
	case "notes":
		return first != "" && first != "list" && first != "show", w
	case "apply":
		// Without --index, --cached or --3way git apply writes the work
		// tree only; --check, --stat, --numstat and --summary write
		// nothing.
		return argHas(args, "--index", "--cached", "-3", "--3way", "--intent-to-add", "-N"), w
	case "reflog":
		return first == "expire" || first == "delete", w
	case "config":
		return gitConfigSets(args) && !argHas(args, "--global", "--system", "-f", "--file", "--blob"), "writes .git/config"
	case "remote":
		switch first {
		case "add", "remove", "rm", "rename", "set-url", "set-head", "set-branches", "prune", "update":
			return true, "writes .git/config"
		}
		return false, ""
	case "submodule":
		switch first {
		case "", "status", "summary", "foreach":
			return false, ""
		}
		return true, w
	case "lfs":
		switch first {
		case "install", "uninstall", "pull", "fetch", "checkout", "migrate", "prune", "lock", "unlock":
			return true, w
		}
		return false, ""
	case "bisect":
		return first != "log" && first != "visualize" && first != "view", "writes .git's bisect state"
	case "clone", "ls-remote", "send-email", "request-pull", "push":
		// push writes only remote-tracking refs: counted with the network.
		return sub == "push", "updates the remote-tracking refs in .git"
	case "init":
		return true, "creates a .git directory"
	}
	if gitReads()[sub] {
		return false, ""
	}
	if gitWrites()[sub] {
		return true, w
	}
	switch sub {
	case "update-ref", "update-index", "symbolic-ref", "hash-object", "read-tree", "write-tree", "commit-tree", "mktag", "mktree",
		"prune", "repack", "pack-refs", "maintenance", "replace", "filter-branch", "filter-repo", "sparse-checkout", "mergetool",
		"merge-file", "checkout-index", "unpack-objects", "index-pack", "fast-import", "commit-graph", "multi-pack-index", "rerere", "range-diff":
		return true, w
	}
	return true, "is not a git subcommand the analysis knows (an alias?): it may write .git"
}

// gitConfigSets reports whether git config ARGS changes a value (a name
// and a value, or --unset, --add, --replace-all, set, unset ...).
func gitConfigSets(args []string) bool {
	if argHas(args, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--show-origin", "--show-scope", "-e", "--edit") {
		return argHas(args, "-e", "--edit")
	}
	if argHas(args, "--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section") {
		return true
	}
	ops := argOperands(args, "-f", "--file", "--blob", "--type", "--default", "--comment")
	if len(ops) > 0 {
		switch ops[0] {
		case "get", "list":
			return false
		case "set", "unset", "rename-section", "remove-section", "edit":
			return true
		}
	}
	return len(ops) >= 2
}

// npmValued are npm's options that take a value.
var npmValued = []string{"--prefix", "-C", "--registry", "--cache", "--userconfig", "--globalconfig", "-w", "--workspace",
	"--loglevel", "--tag", "--access", "--otp", "--omit", "--include", "--install-strategy", "--before", "--location", "-L"}

// npmNetwork are npm's commands that reach the registry (and their
// aliases).
var npmNetwork = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"install": true, "i": true, "in": true, "ins": true, "inst": true, "insta": true, "instal": true, "isnt": true, "isnta": true,
		"isntal": true, "isntall": true, "add": true, "ci": true, "clean-install": true, "ic": true, "install-clean": true,
		"isntall-clean": true, "install-ci-test": true, "cit": true, "clean-install-test": true, "sit": true, "install-test": true, "it": true,
		"update": true, "up": true, "upgrade": true, "udpate": true, "publish": true, "unpublish": true, "view": true, "v": true,
		"info": true, "show": true, "outdated": true, "audit": true, "login": true, "adduser": true, "add-user": true, "logout": true,
		"whoami": true, "search": true, "s": true, "se": true, "find": true, "ping": true, "dist-tag": true, "dist-tags": true,
		"deprecate": true, "owner": true, "author": true, "access": true, "team": true, "token": true, "star": true, "stars": true,
		"unstar": true, "exec": true, "x": true, "uninstall": true, "remove": true, "rm": true, "r": true, "un": true, "unlink": true,
		"dedupe": true, "ddp": true, "find-dupes": true, "doctor": true, "sbom": false, "fund": true, "org": true, "hook": true,
		"profile": true, "create": true, "innit": false, "pkg": false,
	}
})

// jsServeScripts are package.json scripts that usually run a server.
var jsServeScripts = map[string]bool{"dev": true, "start": true, "serve": true, "preview": true}

func jailNpm(j *jailJudge, c jailCall) {
	sub, k := c.sub(npmValued...)
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	global := argHas(c.args, "-g", "--global", "--location=global")
	if p, ok := argValue(c.args, "--prefix", "-C"); ok && JailWritesOutside(p, c.cwd, j.project, j.home) && sub != "run" && sub != "test" {
		global = true
	}
	switch {
	case npmNetwork()[sub]:
		j.net("npm " + sub + " reaches the registry")
		if global && sub != "view" && sub != "info" && sub != "show" && sub != "outdated" && sub != "search" {
			j.outside("npm " + sub + " -g writes the global packages")
		}
		if sub == "exec" || sub == "x" {
			j.npxRun(jailCall{prog: "npm exec", args: rest, cwd: c.cwd, depth: c.depth})
		}
	case sub == "init" || sub == "create" || sub == "innit":
		if ops := argOperands(rest, "-w", "--workspace", "--scope"); len(ops) > 0 {
			j.net("npm init " + ops[0] + " downloads and runs an initializer")
		}
	case sub == "link" || sub == "ln":
		j.outside("npm link writes the global packages")
		if len(argOperands(rest)) > 0 {
			j.net("npm link PKG reaches the registry")
		}
	case sub == "start" || sub == "run" || sub == "run-script" || sub == "rum" || sub == "urn":
		script := sub
		if sub != "start" {
			script, _ = argFirst(rest, npmValued...)
		}
		if jsServeScripts[script] {
			j.net("npm " + sub + " " + script + " usually runs a server, which listens on a TCP port")
		}
	case sub == "version":
		if v, _ := argFirst(rest); v != "" && !argHas(c.args, "--no-git-tag-version", "--git-tag-version=false") {
			j.git("npm version commits and tags in git")
		}
	case sub == "config" || sub == "c":
		if s, _ := argFirst(rest); s == "set" || s == "delete" || s == "edit" || s == "fix" {
			j.outside("npm config " + s + " writes the user's .npmrc")
		}
	case sub == "cache":
		if s, _ := argFirst(rest); s == "add" {
			j.net("npm cache add downloads")
		}
	}
}

func jailPnpm(j *jailJudge, c jailCall) {
	sub, k := c.sub("--filter", "-F", "--dir", "-C", "--workspace-dir", "--reporter", "--loglevel", "--registry", "--store-dir", "--virtual-store-dir")
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	switch sub {
	case "install", "i", "add", "update", "up", "upgrade", "remove", "rm", "uninstall", "un", "fetch", "outdated", "audit",
		"publish", "import", "install-test", "it", "dedupe", "view", "info", "show", "search", "login", "logout", "whoami", "create":
		j.net("pnpm " + sub + " reaches the registry")
		if argHas(c.args, "-g", "--global") {
			j.outside("pnpm " + sub + " -g writes the global packages")
		}
	case "dlx":
		j.npxRun(jailCall{prog: "pnpm dlx", args: rest, cwd: c.cwd, depth: c.depth})
	case "setup", "env", "self-update", "link", "ln":
		j.outside("pnpm " + sub + " writes outside the project")
		if sub == "env" || sub == "self-update" {
			j.net("pnpm " + sub + " downloads")
		}
	case "exec":
		j.judge(rest, c.cwd, c.depth+1)
	case "run", "start":
		script := sub
		if sub == "run" {
			script, _ = argFirst(rest)
		}
		if jsServeScripts[script] {
			j.net("pnpm " + sub + " " + script + " usually runs a server, which listens on a TCP port")
		}
	case "":
		if len(c.args) == 0 {
			return // pnpm alone prints its help
		}
	default:
		if jsServeScripts[sub] {
			j.net("pnpm " + sub + " usually runs a server, which listens on a TCP port")
		}
	}
}

func jailYarn(j *jailJudge, c jailCall) {
	sub, k := c.sub("--cwd", "--modules-folder", "--cache-folder", "--registry", "--network-timeout", "--mutex")
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	switch sub {
	case "":
		if argHas(c.args, "-v", "--version", "-h", "--help") {
			return
		}
		j.net("yarn alone installs the dependencies")
	case "install", "add", "upgrade", "up", "upgrade-interactive", "remove", "outdated", "audit", "publish", "npm", "info",
		"view", "login", "logout", "import", "create", "why", "dedupe", "set", "plugin", "owner", "tag", "team":
		if sub == "why" || sub == "set" && !strings.HasPrefix(strings.Join(rest, " "), "version") {
			return
		}
		j.net("yarn " + sub + " reaches the registry")
	case "global":
		j.net("yarn global reaches the registry")
		j.outside("yarn global writes the global packages")
	case "dlx":
		j.npxRun(jailCall{prog: "yarn dlx", args: rest, cwd: c.cwd, depth: c.depth})
	case "link":
		j.outside("yarn link writes outside the project")
	case "exec":
		j.judge(rest, c.cwd, c.depth+1)
	case "run":
		if s, _ := argFirst(rest); jsServeScripts[s] {
			j.net("yarn run " + s + " usually runs a server, which listens on a TCP port")
		}
	case "config":
		if s, _ := argFirst(rest); s == "set" || s == "delete" || s == "unset" {
			j.outside("yarn config " + s + " writes the user's configuration")
		}
	default:
		if jsServeScripts[sub] {
			j.net("yarn " + sub + " usually runs a server, which listens on a TCP port")
		}
	}
}

func jailBun(j *jailJudge, c jailCall) {
	sub, k := c.sub("--cwd", "-c", "--config")
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	switch sub {
	case "install", "i", "add", "a", "update", "remove", "rm", "outdated", "publish", "create", "c", "init", "pm", "audit", "info", "link":
		if sub == "init" && len(argOperands(rest)) == 0 {
			return
		}
		if sub == "pm" {
			if s, _ := argFirst(rest); s != "cache" && s != "pack" {
				return
			}
		}
		j.net("bun " + sub + " reaches the registry")
		if argHas(c.args, "-g", "--global") || sub == "link" {
			j.outside("bun " + sub + " -g writes the global packages")
		}
	case "x":
		j.npxRun(jailCall{prog: "bun x", args: rest, cwd: c.cwd, depth: c.depth})
	case "upgrade":
		j.net("bun upgrade downloads")
		j.outside("bun upgrade replaces bun itself")
	case "run":
		if s, _ := argFirst(rest); jsServeScripts[s] {
			j.net("bun run " + s + " usually runs a server, which listens on a TCP port")
		}
	default:
		if jsServeScripts[sub] {
			j.net("bun " + sub + " usually runs a server, which listens on a TCP port")
		}
	}
}

// jailNpx: npx (bunx, pnpx) downloads its package unless it is told not
// to, and runs it: the command it runs is judged too.
func jailNpx(j *jailJudge, c jailCall) { j.npxRun(c) }

func (j *jailJudge) npxRun(c jailCall) {
	spec, k := argFirst(c.args, "-p", "--package", "--cache", "--registry", "--prefix", "-w", "--workspace")
	script, shell := argValue(c.args, "-c", "--call")
	switch {
	case argHas(c.args, "--offline", "--no-install", "--no"):
		// runs only what is installed
	case k < 0 && !shell:
		if len(c.args) > 0 && !argHas(c.args, "--version", "-v", "--help", "-h") {
			j.net(c.prog + " downloads the package it runs when it is not installed")
		}
	default:
		n := JailNeed{Right: JailNetwork, Why: c.prog + " downloads the package it runs when it is not installed"}
		if k >= 0 && !shell && !argHas(c.args, "-p", "--package") && !strings.Contains(strings.TrimPrefix(spec, "@"), "@") &&
			(c.prog == "npx" || c.prog == "bunx" || c.prog == "npm exec" || c.prog == "bun x") {
			n.Why = c.prog + " downloads " + spec + " unless it is installed in node_modules/.bin"
			n.Unless = j.localBins(npmPackageBin(spec), c.cwd)
		}
		j.add(n)
	}
	if shell {
		j.script(script, c.cwd, c.depth+1)
		return
	}
	if k < 0 {
		return
	}
	rest := append([]string{npmPackageBin(spec)}, c.args[k+1:]...)
	j.judge(rest, c.cwd, c.depth+1)
}

// localBins are the node_modules/.bin/NAME npx would find, from cwd up
// to the project (cwd alone when it is not in the project).
func (j *jailJudge) localBins(name, cwd string) []string {
	if name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return nil
	}
	var out []string
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		out = append(out, filepath.Join(d, "node_modules", ".bin", name))
		if !fsx.Within(d, j.project) || d == filepath.Clean(j.project) || d == filepath.Dir(d) {
			return out
		}
	}
}

// npmPackageBin is the program a package spec runs: its name without
// the scope and the version (@scope/pkg@1 -> pkg).
func npmPackageBin(spec string) string {
	if i := strings.LastIndex(spec, "/"); i >= 0 && strings.HasPrefix(spec, "@") {
		spec = spec[i+1:]
	}
	if i := strings.Index(spec, "@"); i > 0 {
		spec = spec[:i]
	}
	return spec
}

func jailUvx(j *jailJudge, c jailCall) {
	if !argHas(c.args, "--offline") {
		j.net("uvx downloads the tool it runs when it is not cached")
	}
	if _, k := argFirst(c.args, "--from", "--with", "-w", "--python", "-p", "--index", "--index-url", "--extra-index-url"); k >= 0 {
		j.judge(c.args[k:], c.cwd, c.depth+1)
	}
}

func jailPip(j *jailJudge, c jailCall) {
	sub, k := c.sub("--python", "--cache-dir", "--log", "--proxy", "--retries", "--timeout", "--exists-action", "--cert", "--client-cert")
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	switch sub {
	case "install", "download", "wheel", "search", "index", "lock":
		if !argHas(rest, "--no-index") {
			j.net("pip " + sub + " downloads packages")
		}
		if sub != "install" {
			return
		}
		if argHas(rest, "--user", "--break-system-packages") {
			j.outside("pip install --user writes the user's site-packages")
		}
		for _, o := range []string{"--target", "-t", "--prefix", "--root"} {
			if p, ok := argValue(rest, o); ok {
				j.writes("pip install", c.cwd, p)
			}
		}
		// A pip outside a virtual environment writes the system's or the
		// user's site-packages: argv cannot tell, the kernel refuses it.
	case "uninstall":
		if argHas(rest, "--break-system-packages") {
			j.outside("pip uninstall --break-system-packages writes the system's site-packages")
		}
	case "config":
		if s, _ := argFirst(rest); s == "set" || s == "unset" || s == "edit" {
			j.outside("pip config " + s + " writes the user's pip configuration")
		}
	}
}

func jailUv(j *jailJudge, c jailCall) {
	sub, k := c.sub("--directory", "--project", "--python", "-p", "--cache-dir", "--config-file", "--color")
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	offline := argHas(c.args, "--offline")
	switch sub {
	case "venv":
		dirs := argOperands(rest, "--python", "-p", "--prompt", "--index-url", "--extra-index-url", "--index", "--link-mode", "--cache-dir")
		if len(dirs) == 0 {
			dirs = []string{".venv"}
		}
		j.links("uv venv makes a virtual environment, whose lib64 is a symbolic link", c.cwd, dirs...)
	case "pip":
		s, m := argFirst(rest)
		if m >= 0 {
			j.judge(append([]string{"pip", s}, rest[m+1:]...), c.cwd, c.depth+1)
		}
		if s == "install" && argHas(rest, "--system", "--break-system-packages") {
			j.outside("uv pip install --system writes the system's site-packages")
		}
	case "sync", "add", "lock", "remove", "export", "tree":
		if !offline && !argHas(rest, "--frozen", "--offline") || sub == "add" {
			if sub == "tree" || sub == "export" {
				return // read the lock file
			}
			j.net("uv " + sub + " resolves and downloads packages")
		}
	case "run":
		if argHas(rest, "--with", "--with-requirements", "--with-editable") && !offline {
			j.net("uv run --with installs packages")
		}
		if _, m := argFirst(rest, "--with", "--with-requirements", "--with-editable", "--python", "-p", "--package", "--extra",
			"--group", "--env-file", "--directory", "--project", "--index", "--index-url", "--extra-index-url", "--from"); m >= 0 {
			j.judge(rest[m:], c.cwd, c.depth+1)
		}
	case "tool":
		switch s, m := argFirst(rest); s {
		case "install", "upgrade":
			j.net("uv tool " + s + " downloads the tool")
			j.outside("uv tool " + s + " installs in the home")
		case "uninstall":
			j.outside("uv tool uninstall writes the home")
		case "run":
			j.judge(append([]string{"uvx"}, rest[m+1:]...), c.cwd, c.depth+1)
		}
	case "python":
		if s, _ := argFirst(rest); s == "install" || s == "uninstall" || s == "upgrade" {
			j.net("uv python " + s + " downloads Python")
			j.outside("uv python " + s + " writes uv's Pythons in the home")
		}
	case "self":
		j.net("uv self downloads uv")
		j.outside("uv self update replaces uv itself")
	case "publish":
		j.net("uv publish uploads")
	case "cache":
		if s, _ := argFirst(rest); s == "clean" || s == "prune" {
			j.outside("uv cache " + s + " writes uv's cache in the home")
		}
	}
}

func jailPoetry(j *jailJudge, c jailCall) {
	sub, k := c.sub("-C", "--directory", "-P", "--project")
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	switch sub {
	case "install", "add", "lock", "update", "remove", "publish", "search", "show", "sync":
		if sub == "show" && !argHas(rest, "--outdated", "-o", "--latest", "-l") {
			return
		}
		if sub == "lock" && argHas(rest, "--no-update") {
			return
		}
		j.net("poetry " + sub + " reaches the package index")
	case "self":
		j.net("poetry self downloads")
		j.outside("poetry self writes poetry's own environment")
	case "config":
		if !argHas(rest, "--list", "--local") && len(argOperands(rest)) >= 2 || argHas(rest, "--unset") && !argHas(rest, "--local") {
			j.outside("poetry config writes the user's configuration")
		}
	case "run":
		j.judge(rest, c.cwd, c.depth+1)
	}
}

func jailPipenv(j *jailJudge, c jailCall) {
	sub, k := c.sub()
	switch sub {
	case "install", "sync", "update", "lock", "uninstall", "upgrade":
		j.net("pipenv " + sub + " reaches the package index")
	case "run":
		j.judge(c.args[k+1:], c.cwd, c.depth+1)
	}
}

func jailConda(j *jailJudge, c jailCall) {
	sub, k := c.sub("-n", "--name", "-p", "--prefix")
	switch sub {
	case "install", "create", "update", "upgrade", "search":
		j.net(c.prog + " " + sub + " downloads packages")
		if sub == "search" {
			return
		}
		fallthrough
	case "remove", "uninstall", "clean", "init", "config", "env":
		if p, ok := argValue(c.args, "-p", "--prefix"); ok && !JailWritesOutside(p, c.cwd, j.project, j.home) {
			return
		}
		j.outside(c.prog + " " + sub + " writes its environments outside the project")
	case "run":
		j.judge(argOperands(c.args[k+1:], "-n", "--name", "-p", "--prefix"), c.cwd, c.depth+1)
	}
}

func jailPython(j *jailJudge, c jailCall) {
	for i := 0; i < len(c.args); i++ {
		switch a := c.args[i]; {
		case a == "-m" && i+1 < len(c.args):
			j.pythonModule(c.args[i+1], c.args[i+2:], c)
			return
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			j.pythonModule(a[2:], c.args[i+1:], c)
			return
		case strings.HasPrefix(a, "-c") || a == "-" || a == "--":
			return // code on the command line or stdin: the jail decides
		case a == "-W" || a == "-X" || a == "-Q":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			j.pythonScript(a, c.args[i+1:])
			return
		}
	}
}

// jailVirtualenv: virtualenv DIR, as python -m virtualenv DIR.
func jailVirtualenv(j *jailJudge, c jailCall) { j.pythonModule("virtualenv", c.args, c) }

// pythonScript: the scripts whose words say they serve or install.
func (j *jailJudge) pythonScript(script string, rest []string) {
	r, _ := argFirst(rest)
	switch filepath.Base(script) {
	case "manage.py":
		if r == "runserver" {
			j.net("manage.py runserver listens on a TCP port")
		}
	case "setup.py":
		if r == "install" || r == "develop" || r == "upload" {
			j.net("setup.py " + r + " downloads its requirements")
			if r == "install" {
				j.outside("setup.py install writes the site-packages")
			}
		}
	}
}

// pythonModule: python -m M ARGS.
func (j *jailJudge) pythonModule(m string, rest []string, c jailCall) {
	switch m {
	case "pip", "pipx", "poetry", "pipenv", "uv", "conda", "pre_commit", "flask", "uvicorn", "gunicorn", "streamlit", "jupyter":
		name := strings.ReplaceAll(m, "_", "-")
		j.judge(append([]string{name}, rest...), c.cwd, c.depth+1)
	case "http.server", "SimpleHTTPServer", "smtpd", "aiosmtpd":
		j.net("python -m " + m + " listens on a TCP port")
	case "venv", "virtualenv":
		// Its lib64 is a link, even with --copies.
		j.links("python -m "+m+" makes a virtual environment, whose lib64 is a symbolic link", c.cwd,
			argOperands(rest, "--prompt", "--upgrade-deps-from", "-p", "--python", "--activators", "--app-data", "--seeder", "--creator", "--discovery")...)
	case "ensurepip":
		if argHas(rest, "--user") {
			j.outside("python -m ensurepip --user writes the user's site-packages")
		}
	case "twine":
		if s, _ := argFirst(rest); s == "upload" || s == "register" {
			j.net("twine " + s + " uploads")
		}
	}
}

func jailGo(j *jailJudge, c jailCall) {
	cwd := c.cwd
	sub, k := c.sub("-C")
	if d, ok := argValue(c.args[:max(k, 0)], "-C"); ok {
		cwd = filepath.Clean(fsx.Abs(cwd, j.home, d))
	}
	if k < 0 {
		return
	}
	rest := c.args[k+1:]
	versioned := func() bool {
		for _, a := range argOperands(rest, goBuildValued...) {
			if strings.Contains(a, "@") {
				return true
			}
		}
		return false
	}
	switch sub {
	case "get":
		j.net("go get downloads modules")
	case "install":
		if versioned() {
			j.net("go install PKG@VERSION downloads the module")
		}
		j.outside("go install writes the program to GOBIN, outside the project")
	case "run":
		if versioned() {
			j.net("go run PKG@VERSION downloads the module")
		}
	case "mod":
		switch s, _ := argFirst(rest); s {
		case "download", "tidy", "vendor", "graph", "why", "verify":
			if s == "graph" || s == "why" || s == "verify" {
				return // read the module cache; a missing module fails in the jail
			}
			j.net("go mod " + s + " may download modules")
		}
	case "work":
		if s, _ := argFirst(rest); s == "sync" || s == "vendor" {
			j.net("go work " + s + " may download modules")
		}
	case "clean":
		if argHas(rest, "-modcache", "-cache", "-testcache", "-fuzzcache") {
			j.outside("go clean writes the module or build cache")
		}
	case "env":
		if argHas(rest, "-w", "-u") {
			j.outside("go env -w writes the user's go env file")
		}
	case "telemetry":
		if len(rest) > 0 {
			j.outside("go telemetry writes the user's telemetry mode")
		}
	case "build":
		if o, ok := argValue(rest, "-o"); ok {
			j.writes("go build", cwd, o)
		}
	}
}

// goBuildValued are the go build flags that take a value.
var goBuildValued = []string{"-o", "-p", "-tags", "-ldflags", "-gcflags", "-asmflags", "-mod", "-modfile", "-overlay", "-pkgdir", "-toolexec", "-exec", "-run", "-bench", "-count", "-timeout", "-coverprofile", "-covermode", "-coverpkg", "-cpu", "-parallel", "-benchtime", "-C"}

func jailCargo(j *jailJudge, c jailCall) {
	args := c.args
	if len(args) > 0 && strings.HasPrefix(args[0], "+") {
		args = args[1:] // cargo +nightly
	}
	sub, k := argFirst(args, "-C", "--config", "-Z", "--color")
	if k < 0 {
		return
	}
	rest := args[k+1:]
	offline := argHas(c.args, "--offline", "--frozen") || argHas(rest, "--offline", "--frozen")
	switch sub {
	case "fetch", "add", "update", "publish", "search", "login", "logout", "owner", "yank", "generate-lockfile", "vendor", "info":
		if !offline || sub == "publish" || sub == "search" {
			j.net("cargo " + sub + " reaches the registry")
		}
	case "install", "binstall":
		if !offline {
			j.net("cargo " + sub + " downloads the crate")
		}
		if r, ok := argValue(rest, "--root"); !ok || JailWritesOutside(r, c.cwd, j.project, j.home) {
			j.outside("cargo " + sub + " writes ~/.cargo/bin, outside the project")
		}
	case "uninstall":
		j.outside("cargo uninstall writes ~/.cargo/bin, outside the project")
	}
	// cargo build, check, test, run may fetch crates the lock names when
	// they are not cached: not counted (the kernel refuses, the call
	// escalates then).
}

func jailRustup(j *jailJudge, c jailCall) {
	sub, k := c.sub("--toolchain")
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	switch sub {
	case "", "show", "which", "help", "doc", "completions":
		return
	case "run":
		if _, m := argFirst(rest); m >= 0 {
			j.judge(rest[m+1:], c.cwd, c.depth+1)
		}
		return
	case "default", "override", "set":
		if len(rest) == 0 {
			return // shows
		}
	case "toolchain", "target", "component":
		if s, _ := argFirst(rest); s == "list" {
			return
		}
	}
	if sub != "override" && sub != "set" {
		j.net("rustup " + sub + " may download toolchains")
	}
	j.outside("rustup " + sub + " writes ~/.rustup, outside the project")
}

func jailGem(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub(); sub {
	case "install", "update", "fetch", "search", "push", "yank", "outdated", "sources", "owner", "signin":
		j.net("gem " + sub + " reaches rubygems")
		if sub == "install" || sub == "update" {
			if d, ok := argValue(c.args, "-i", "--install-dir"); !ok || JailWritesOutside(d, c.cwd, j.project, j.home) {
				j.outside("gem " + sub + " writes the gems outside the project")
			}
		}
	case "uninstall", "cleanup", "pristine":
		j.outside("gem " + sub + " writes the gems outside the project")
	}
}

func jailBundle(j *jailJudge, c jailCall) {
	sub, k := c.sub()
	switch sub {
	case "", "install", "update", "add", "lock", "outdated", "package", "cache", "binstubs", "pristine":
		if sub == "binstubs" || sub == "lock" && !argHas(c.args, "--update") {
			return
		}
		if !argHas(c.args, "--local") {
			j.net("bundle " + sub + " reaches rubygems")
		}
	case "exec", "ex":
		j.judge(c.args[k+1:], c.cwd, c.depth+1)
	case "config":
		if !argHas(c.args, "--local") && len(argOperands(c.args[k+1:])) >= 2 {
			j.outside("bundle config writes the user's configuration")
		}
	}
}

func jailComposer(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub("-d", "--working-dir"); sub {
	case "install", "i", "require", "req", "r", "update", "u", "upgrade", "create-project", "remove", "rm", "outdated", "search", "show", "audit", "self-update", "selfupdate", "global":
		if sub == "show" && !argHas(c.args, "--latest", "-l", "--outdated", "-o", "--available", "-a") {
			return
		}
		j.net("composer " + sub + " reaches packagist")
		if sub == "global" || sub == "self-update" || sub == "selfupdate" {
			j.outside("composer " + sub + " writes outside the project")
		}
	}
}

// jailMvn: Maven keeps what it downloads in ~/.m2: a build whose
// dependencies are cached runs offline; the goals that fetch on purpose,
// install (~/.m2) and deploy are counted.
func jailMvn(j *jailJudge, c jailCall) {
	offline := argHas(c.args, "-o", "--offline")
	for _, a := range argOperands(c.args, "-f", "--file", "-s", "--settings", "-pl", "--projects", "-P", "--activate-profiles", "-T", "--threads", "-D", "-l", "--log-file", "-gs", "-t", "-rf", "--resume-from", "-b", "--builder") {
		switch {
		case strings.HasPrefix(a, "dependency:") && !offline, strings.HasPrefix(a, "versions:") && !offline,
			a == "deploy", strings.HasPrefix(a, "deploy:"), strings.HasPrefix(a, "release:"), strings.HasPrefix(a, "archetype:generate") && !offline:
			j.net("mvn " + a + " reaches the repositories")
		case a == "install", strings.HasPrefix(a, "install:"):
			j.outside("mvn install writes the artifacts in ~/.m2")
		}
	}
	// ./mvnw downloads Maven itself the first time, gradlew Gradle: not
	// counted; the kernel refuses and the call escalates.
}

// jailGradle: the tasks that fetch on purpose and wrapper (which
// downloads a distribution) are counted; a build whose dependencies are
// cached runs offline.
func jailGradle(j *jailJudge, c jailCall) {
	offline := argHas(c.args, "--offline")
	if argHas(c.args, "--refresh-dependencies") && !offline {
		j.net(c.prog + " --refresh-dependencies downloads the dependencies")
	}
	for _, a := range argOperands(c.args, "-p", "--project-dir", "-b", "--build-file", "-c", "--settings-file", "-x", "--exclude-task", "-D", "-P", "-I", "--init-script", "--max-workers", "-g", "--gradle-user-home") {
		t := a[strings.LastIndex(a, ":")+1:]
		switch {
		case t == "wrapper", t == "dependencies", t == "dependencyInsight", t == "dependencyUpdates", strings.HasPrefix(t, "publish"):
			if !offline || t == "wrapper" || strings.HasPrefix(t, "publish") {
				j.net(c.prog + " " + a + " reaches the repositories")
			}
		}
	}
}

func jailDocker(j *jailJudge, c jailCall) {
	sub, k := c.sub("-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "-f", "--file", "-p", "--project-name", "--profile", "--env-file")
	if sub == "" && argHas(c.args, "-v", "--version", "-h", "--help") {
		return
	}
	if c.prog == "podman" {
		j.outside("podman writes its containers and images in the home")
	} else {
		j.outside(c.prog + " talks to the docker daemon's socket, outside the project")
	}
	rest := []string{}
	if k >= 0 {
		rest = c.args[k+1:]
	}
	if sub == "compose" || c.prog == "docker-compose" {
		if c.prog != "docker-compose" {
			sub, _ = argFirst(rest, "-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory")
		}
		switch sub {
		case "up", "pull", "push", "build", "run", "create", "start", "restart":
			j.net("docker compose " + sub + " may pull images and publishes ports")
		}
		return
	}
	switch sub {
	case "pull", "push", "build", "run", "create", "login", "logout", "search", "buildx", "builder", "manifest", "trust", "start", "restart", "exec":
		if sub == "exec" || sub == "start" || sub == "restart" {
			return // in a container that exists: the daemon's, not this call's, network
		}
		j.net(c.prog + " " + sub + " reaches a registry")
	case "image", "container":
		if s, _ := argFirst(rest); s == "pull" || s == "push" || s == "build" || s == "run" || s == "create" {
			j.net(c.prog + " " + sub + " " + s + " reaches a registry")
		}
	}
}

// jailSystemPkg: the system's package managers.
func jailSystemPkg(j *jailJudge, c jailCall) {
	sub, _ := c.sub("-o", "-c", "-t", "--target-release", "--repo", "-R", "--root")
	switch sub {
	case "install", "in", "reinstall", "update", "upgrade", "up", "full-upgrade", "dist-upgrade", "add", "download", "source", "refresh", "ref",
		"makecache", "-S", "-Sy", "-Syu", "-Syy", "-Syyu", "-U", "build-dep", "search":
		j.net(c.prog + " " + sub + " downloads packages")
		if sub == "search" || sub == "download" {
			return
		}
		j.outside(c.prog + " " + sub + " writes the system")
	case "remove", "purge", "autoremove", "erase", "del", "uninstall", "rm", "-R", "-Rs", "-Rns", "clean", "autoclean", "mark", "enable", "disable":
		j.outside(c.prog + " " + sub + " writes the system")
	case "":
		for _, a := range c.args {
			if strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "-U") {
				j.net(c.prog + " " + a + " downloads packages")
				j.outside(c.prog + " " + a + " writes the system")
				return
			}
			if strings.HasPrefix(a, "-R") {
				j.outside(c.prog + " " + a + " writes the system")
				return
			}
		}
	}
}

func jailBrew(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub(); sub {
	case "", "list", "ls", "info", "--prefix", "--cellar", "--repository", "--version", "config", "doctor", "deps", "uses", "leaves", "home", "help", "shellenv", "--env", "commands", "desc", "cat", "log":
		if sub == "info" || sub == "desc" {
			j.net("brew " + sub + " may ask the API")
		}
	case "search", "outdated", "fetch", "audit":
		j.net("brew " + sub + " reaches the network")
	case "uninstall", "remove", "rm", "link", "unlink", "cleanup", "pin", "unpin", "untap", "autoremove", "services":
		j.outside("brew " + sub + " writes the Homebrew prefix")
	default:
		j.net("brew " + sub + " downloads")
		j.outside("brew " + sub + " writes the Homebrew prefix")
	}
}

// jailVersionManager: nvm, sdkman, asdf, volta, fnm, pyenv, rbenv, mise,
// corepack: installs download and write the home; listing and showing
// do neither; switching writes the home's settings.
func jailVersionManager(j *jailJudge, c jailCall) {
	sub, k := c.sub()
	switch sub {
	case "", "ls", "list", "current", "which", "version", "--version", "-v", "help", "--help", "where", "home", "root", "prefix", "versions", "env", "exec", "run", "x", "shell", "init", "doctor":
		if (sub == "exec" || sub == "run" || sub == "x") && k >= 0 {
			if _, m := argFirst(c.args[k+1:]); m >= 0 && c.prog != "mise" && c.prog != "asdf" {
				j.judge(c.args[k+1+m+1:], c.cwd, c.depth+1)
			}
		}
		return
	case "install", "i", "update", "upgrade", "plugin", "fetch", "ls-remote", "list-remote", "list-all", "selfupdate", "self-update",
		"install-latest-npm", "reinstall-packages", "prepare", "enable", "pin", "setup", "use", "up", "sync":
		if c.prog == "nvm" && sub == "use" || c.prog == "corepack" && sub == "enable" {
			break
		}
		j.net(c.prog + " " + sub + " downloads")
	}
	j.outside(c.prog + " " + sub + " writes its versions or settings in the home")
}

func jailDeno(j *jailJudge, c jailCall) {
	sub, _ := c.sub()
	for _, a := range c.args {
		if strings.HasPrefix(a, "https://") || strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "npm:") || strings.HasPrefix(a, "jsr:") {
			j.net("deno runs or fetches a remote module")
			break
		}
	}
	switch sub {
	case "install", "i", "add", "cache", "outdated", "publish", "upgrade", "uninstall", "remove":
		if sub != "uninstall" && sub != "remove" {
			j.net("deno " + sub + " downloads modules")
		}
		if argHas(c.args, "-g", "--global") || sub == "upgrade" || sub == "uninstall" && argHas(c.args, "-g", "--global") {
			j.outside("deno " + sub + " writes outside the project")
		}
	case "serve":
		j.net("deno serve listens on a TCP port")
	}
}

func jailHg(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub("-R", "--repository", "--cwd", "--config"); sub {
	case "pull", "push", "clone", "incoming", "in", "outgoing", "out", "fetch":
		j.net("hg " + sub + " reaches a remote")
	}
}

func jailTerraform(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub("-chdir"); sub {
	case "", "fmt", "validate", "version", "-version", "--version", "graph", "show", "output", "console", "providers", "help", "-help":
	default:
		j.net(c.prog + " " + sub + " reaches providers and the state's backend")
	}
}

func jailMake(j *jailJudge, c jailCall) {
	for _, a := range argOperands(c.args, "-C", "--directory", "-f", "--file", "--makefile", "-I", "--include-dir", "-j", "--jobs", "-l", "--load-average", "-o", "-W", "--what-if") {
		if a == "install" || a == "uninstall" {
			j.outside("make " + a + " usually writes outside the project")
		}
	}
}

func jailFind(j *jailJudge, c jailCall) {
	var starts []string
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		starts = append(starts, a)
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	for ; i < len(c.args); i++ {
		switch a := c.args[i]; a {
		case "-delete":
			j.writes("find -delete", c.cwd, starts...)
		case "-exec", "-execdir", "-ok", "-okdir":
			end := i + 1
			for end < len(c.args) && c.args[end] != ";" && c.args[end] != "+" {
				end++
			}
			var cmd []string
			for _, w := range c.args[i+1 : end] {
				if w == "{}" && len(starts) == 1 {
					w = starts[0] // the files found lie below it
				}
				cmd = append(cmd, w)
			}
			j.judge(cmd, c.cwd, c.depth+1)
			i = end
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(c.args) {
				j.writes("find "+a, c.cwd, c.args[i+1])
			}
		}
	}
}

func jailTar(j *jailJudge, c jailCall) {
	if len(c.args) == 0 {
		return
	}
	modes := ""
	for k, a := range c.args {
		switch {
		case k == 0 && !strings.HasPrefix(a, "-"):
			modes += a // tar czf ...
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
			modes += a[1:]
		case a == "--create" || a == "--append" || a == "--update":
			modes += "c"
		case a == "--extract" || a == "--get":
			modes += "x"
		}
	}
	switch {
	case strings.ContainsAny(modes, "cru"):
		if f, ok := tarFile(c.args); ok {
			j.writes("tar", c.cwd, f)
		}
	case strings.ContainsRune(modes, 'x'):
		d := "."
		if v, ok := argValue(c.args, "-C", "--directory"); ok {
			d = v
		}
		j.writes("tar -x", c.cwd, d)
	}
}

// tarFile is the archive tar's -f (or bundled f, or --file) names.
func tarFile(args []string) (string, bool) {
	if v, ok := argValue(args, "--file"); ok {
		return v, true
	}
	for k, a := range args {
		bundle := strings.TrimPrefix(a, "-")
		if strings.HasPrefix(a, "--") || k > 0 && !strings.HasPrefix(a, "-") {
			continue
		}
		if i := strings.IndexByte(bundle, 'f'); i >= 0 {
			if i+1 < len(bundle) {
				return bundle[i+1:], true
			}
			if k+1 < len(args) {
				return args[k+1], true
			}
		}
	}
	return "", false
}

func jailUnzip(j *jailJudge, c jailCall) {
	if d, ok := argValue(c.args, "-d"); ok {
		j.writes("unzip", c.cwd, d)
	}
}

// jailShell: sh -c SCRIPT (the c in any bundle of short options: -ec,
// -lc), read roughly (script); a script file runs in the jail.
func jailShell(j *jailJudge, c jailCall) {
	code := false
	for i := 0; i < len(c.args); i++ {
		switch a := c.args[i]; {
		case a == "--" || a == "-":
			return
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++ // bash -o pipefail -c ...
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			code = code || strings.ContainsRune(a[1:], 'c')
		case code:
			j.script(a, c.cwd, c.depth+1)
			return
		default:
			return
		}
	}
}

func jailEval(j *jailJudge, c jailCall) { j.script(strings.Join(c.args, " "), c.cwd, c.depth+1) }

func jailPreCommit(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub("-c", "--config"); sub {
	case "install", "uninstall", "install-hooks", "init-templatedir":
		j.git("pre-commit " + sub + " writes .git/hooks")
		if sub == "install-hooks" {
			j.net("pre-commit install-hooks downloads the hooks' environments")
			j.outside("pre-commit keeps its environments in ~/.cache/pre-commit")
		}
	case "autoupdate":
		j.net("pre-commit autoupdate asks the hooks' repositories")
		j.outside("pre-commit keeps its environments in ~/.cache/pre-commit")
	case "", "run", "try-repo", "gc", "clean":
		j.outside("pre-commit keeps its hooks' environments (and its lock) in ~/.cache/pre-commit")
		if sub != "gc" && sub != "clean" {
			j.net("pre-commit downloads a hook's environment the first time it runs")
		}
	}
}

func jailHusky(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub(); sub {
	case "", "install", "init":
		j.git(c.prog + " " + sub + " sets git's hooks (core.hooksPath, .git/hooks)")
	}
}

// jobsOnly reports whether kill's operands are all job specs (%1) or
// options: the shell's own jobs, started in the same call.
func jobsOnly(args []string) bool {
	ops := argOperands(args, "-s", "-n")
	if len(ops) == 0 {
		return argHas(args, "-l", "-L")
	}
	for _, o := range ops {
		if !strings.HasPrefix(o, "%") {
			return false
		}
	}
	return true
}

func jailGh(j *jailJudge, c jailCall) {
	switch sub, _ := c.sub("-R", "--repo"); sub {
	case "", "help", "version", "--version", "completion", "--help", "-h":
		return
	}
	j.net("gh calls GitHub")
}

// jailRsync: a remote operand (host:path, rsync://) or a remote shell
// reaches the network; a local copy writes its destination.
func jailRsync(j *jailJudge, c jailCall) {
	fw := jailFileWriters()["rsync"]
	for _, o := range argOperands(c.args, fw.valued...) {
		if strings.Contains(o, "://") || remoteSpec(o) {
			j.net("rsync copies over the network")
			return
		}
	}
	j.writes("rsync", c.cwd, fw.written(c.args)...)
}

// remoteSpec reports whether an scp or rsync operand names a host
// (host:path, user@host:path): a colon before any slash.
func remoteSpec(o string) bool {
	i := strings.IndexByte(o, ':')
	return i > 0 && !strings.Contains(o[:i], "/")
}

// urlHost is the host (and port) of the first URL in args, for a person:
// "127.0.0.1:48123" says the call reaches a service on this machine.
func urlHost(args []string) string {
	for _, a := range args {
		_, rest, ok := strings.Cut(a, "://")
		if !ok || strings.ContainsAny(a[:len(a)-len(rest)-3], "/ ") {
			continue
		}
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			rest = rest[i+1:]
		}
		return rest
	}
	return ""
}
