package present

import (
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// StdinWarning is what the human is told of a command that reads commands
// from its standard input (why says which, policy.ReadsCommands).
func StdinWarning(why string) string {
	return why + ": approving it approves whatever is typed into it after it starts, which runs unchecked (Codex lets the model type into a running command with write_stdin, and no hook sees what it types; there loopguard runs it in the jail where its launcher is installed)"
}

// Danger names what in a call destroys or exfiltrates: recursive deletes
// outside the project, forced pushes, a download piped into a shell,
// writes to a device, world-writable trees, credentials files. It is a
// warning for the human reviewing the call, drawn from the canonical bytes
// the digest covers; it never allows or denies anything. projectDir is the
// call's project ("" if unknown).
func Danger(canonical []byte, projectDir string) []string {
	v, err := token.Decode(canonical)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	in, _ := m["input"].(map[string]any)
	tool, _ := m["tool"].(string)
	return DangerOf(tool, in, nil, projectDir)
}

// DangerAway is Danger for a call whose project nobody named: another
// machine's call, read from its record, of which the approver knows only
// the cwd the digest binds, and the agent chose that cwd. A relative
// operand reaches below the cwd and is judged against it as Danger judges
// it; an absolute operand reaches what it names from any cwd, so no cwd
// excuses it: `cd .. && rm -rf /work/app` warns as `rm -rf /work/app` does
// on the agent's own machine, whose project its host names.
func DangerAway(canonical []byte) []string {
	v, err := token.Decode(canonical)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	in, _ := m["input"].(map[string]any)
	tool, _ := m["tool"].(string)
	cwd, _ := m["cwd"].(string)
	return dangerIn(tool, in, nil, reach{dir: projectRoot(cwd), cwdOnly: true})
}

// PendingDanger is the danger lines of p: DangerAway for a call read from
// another machine (p.Away), else Danger in p's project.
func PendingDanger(p *state.Pending) []string {
	if p.Away {
		return DangerAway(p.Descriptor)
	}
	return Danger(p.Descriptor, p.ProjectDir)
}

// reach is what a call's relative operands are judged against: dir, the
// project ("" when none is known: every operand is outside); cwdOnly, that
// dir is only the call's cwd, which excuses no absolute operand.
type reach struct {
	dir     string
	cwdOnly bool
}

// DangerOf is Danger on a call already decoded: its tool, its input and,
// for a shell command, the sketch of the command from the parse that
// analysed it (nil: DangerOf parses the command itself).
func DangerOf(tool string, in map[string]any, sk *shellparse.Sketch, projectDir string) []string {
	return dangerIn(tool, in, sk, reach{dir: projectRoot(projectDir)})
}

func dangerIn(tool string, in map[string]any, sk *shellparse.Sketch, r reach) []string {
	var out []string
	seen := map[string]bool{} // a line once, however many calls give it
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if p, ok := in[k].(string); ok {
			if c := credential(p); c != "" {
				add(tool + " touches a credentials file (" + c + ")")
			}
		}
	}
	if cmd, ok := in["command"].(string); ok && (tool == "Bash" || strings.Contains(strings.ToLower(tool), "shell")) {
		for _, w := range bashDanger(sketched(cmd, sk), r) {
			add(w)
		}
	}
	return out
}

// credentialNames are the paths (a suffix of the path, after cleaning)
// that hold secrets.
var credentialNames = []string{".ssh/id_", ".ssh/authorized_keys", ".aws/credentials", ".aws/config", ".netrc", ".git-credentials",
	".config/gh/hosts.yml", ".docker/config.json", ".kube/config", ".npmrc", ".pypirc", ".gnupg/", ".config/gcloud/", ".azure/", ".env"}

func credential(p string) string {
	p = filepath.ToSlash(p)
	for _, n := range credentialNames {
		i := strings.Index(p, n)
		if i < 0 || (i > 0 && p[i-1] != '/' && p[i-1] != '~' && p[i-1] != '@' && p[i-1] != '=') {
			continue
		}
		rest := p[i+len(n):]
		switch {
		case strings.HasSuffix(n, "/") || strings.HasSuffix(n, "_"):
		case n == ".env" && rest != "" && !strings.HasPrefix(rest, ".") && !strings.HasPrefix(rest, "/"):
			continue // .envrc, .environment: not this
		case n != ".env" && rest != "" && !strings.HasPrefix(rest, "/"):
			continue
		}
		return n
	}
	return ""
}

// bashDanger reads every simple command of cmd, wherever it is nested
// (shellparse's sketch: the one model of the language).
func bashDanger(sk *shellparse.Sketch, r reach) []string {
	if sk == nil {
		return nil
	}
	var out []string
	for _, line := range sk.Pipelines {
		// downloaded: a part before this one fetches (each part is read
		// once, however long the pipeline).
		downloaded := false
		for _, c := range line {
			if downloaded && runsInput(sk.Calls[c]) {
				out = append(out, "a download is piped into an interpreter: it runs whatever the server sends")
			}
			downloaded = downloaded || fetches(sk.Calls[c])
		}
	}
	for _, c := range sk.Calls {
		out = append(out, callDanger(c, r)...)
	}
	return out
}

// sketched is sk, or when there is none (the caller has no parse of cmd,
// or the analysis refused cmd before parsing it) cmd's own sketch; nil when
// bash cannot parse cmd.
func sketched(cmd string, sk *shellparse.Sketch) *shellparse.Sketch {
	if sk != nil {
		return sk
	}
	if s, ok := shellparse.SketchOf(cmd); ok {
		return &s
	}
	return nil
}

// StdinDanger lists the commands of cmd, wherever nested, that read
// commands from their standard input, as StdinWarning has them, from the
// sketch of the parse that analysed it (nil: StdinDanger parses cmd
// itself, as the analysis may refuse a text before parsing it).
func StdinDanger(cmd string, sk *shellparse.Sketch) []string {
	sk = sketched(cmd, sk)
	if sk == nil {
		return nil
	}
	var out []string
	for _, c := range sk.Calls {
		if why := policy.ReadsCommands(c); why != "" {
			out = append(out, StdinWarning(why))
		}
	}
	return out
}

func fetches(argv []string) bool {
	switch filepath.Base(argv[0]) {
	case "curl", "wget", "fetch", "http", "aria2c":
		return true
	}
	return false
}

// runsInput: a shell or an interpreter (policy's classes) that reads its
// program from stdin, or a wrapper that runs one.
func runsInput(argv []string) bool {
	name := filepath.Base(argv[0])
	if name == "sudo" || name == "env" || name == "doas" {
		return true
	}
	p, ok := policy.Lookup(name)
	return ok && (p.Class == policy.Shell || p.Class == policy.Interpreter)
}

func callDanger(argv []string, r reach) []string {
	if len(argv) == 0 {
		return nil
	}
	name := filepath.Base(argv[0])
	args := argv[1:]
	if (name == "sudo" || name == "doas") && len(args) > 0 {
		return callDanger(args, r)
	}
	var out []string
	if why := policy.ReadsCommands(argv); why != "" {
		out = append(out, StdinWarning(why))
	}
	for _, a := range args {
		if c := credential(a); c != "" {
			out = append(out, name+" names a credentials file ("+c+")")
			break
		}
	}
	has := func(short byte, long ...string) bool { return hasFlag(args, short, long...) }
	operands := func() []string { return operandsOf(args) }
	switch name {
	case "rm":
		if !has('r', "--recursive") && !has('R') {
			break
		}
		for _, t := range operands() {
			if outside(t, r) {
				out = append(out, "rm deletes recursively outside the project ("+t+")")
				break
			}
		}
	case "git":
		if len(operands()) > 0 && operands()[0] == "push" {
			forced := has('f', "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete") || has('d')
			for _, o := range operands()[1:] {
				if strings.HasPrefix(o, "+") || strings.HasPrefix(o, ":") {
					forced = true
				}
			}
			if forced {
				out = append(out, "git push rewrites or deletes history on the remote (--force, --delete, +ref or :ref)")
			}
		}
	case "dd":
		for _, a := range args {
			if strings.HasPrefix(a, "of=/dev/") && a != "of=/dev/null" {
				out = append(out, "dd writes to a device ("+strings.TrimPrefix(a, "of=")+")")
			}
		}
	case "chmod":
		recursive := has('R', "--recursive")
		for _, a := range operands() {
			if a == "777" || a == "0777" || a == "a+rwx" || a == "o+w" || a == "a+w" {
				if recursive {
					out = append(out, "chmod -R "+a+" makes a whole tree writable by everyone")
				} else {
					out = append(out, "chmod "+a+" makes files writable by everyone")
				}
				break
			}
		}
	case "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "wipefs", "shred":
		out = append(out, name+" destroys data")
	}
	return out
}

// projectRoot is dir as a project for Danger, or "" (no project known)
// when it is no project at all: the root, a top-level directory (/tmp,
// /home), a home directory (/home/u, /Users/u, /root). A call that runs
// there and deletes recursively is outside any project. An approver on
// another machine takes the project from the call's own cwd (the digest
// binds it), so this is what keeps `cd / && rm -rf home/u` a danger there.
func projectRoot(dir string) string {
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	segs := strings.Split(strings.Trim(filepath.ToSlash(filepath.Clean(dir)), "/"), "/")
	switch {
	case len(segs) <= 1 || segs[0] == "":
		return ""
	case len(segs) == 2 && (segs[0] == "home" || segs[0] == "Users"):
		return ""
	}
	return dir
}

// outside reports whether a path operand of rm may lie outside the
// project: absolute or home-relative paths not under it, parent
// references, expansions and bare globs of the root or home; with no
// project known, every operand; with only the cwd known, every absolute
// operand.
func outside(t string, r reach) bool {
	projectDir := r.dir
	if projectDir == "" || (r.cwdOnly && filepath.IsAbs(t)) {
		return true
	}
	switch {
	case t == "" || strings.Contains(t, "$"):
		return true
	case strings.HasPrefix(t, "~"):
		return true
	case strings.Contains("/"+filepath.ToSlash(t)+"/", "/../"):
		return true
	case filepath.IsAbs(t):
		rel, err := filepath.Rel(filepath.Clean(projectDir), filepath.Clean(t))
		return err != nil || rel == "." || strings.HasPrefix(rel, "..")
	case t == "." || t == "*" || t == "./*":
		return false
	}
	return false
}

// hasFlag reports whether args, before a --, hold one of the long
// options (or its --opt=value form) or, when short is not 0, a bundle of
// short options with short in it.
func hasFlag(args []string, short byte, long ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, l := range long {
			if a == l || strings.HasPrefix(a, l+"=") {
				return true
			}
		}
		if short != 0 && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], short) >= 0 {
			return true
		}
	}
	return false
}

// operandsOf are args but the options: every word after a --, and the
// words before it that do not start with -.
func operandsOf(args []string) []string {
	var ops []string
	dash := false
	for _, a := range args {
		if !dash && a == "--" {
			dash = true
			continue
		}
		if dash || !strings.HasPrefix(a, "-") {
			ops = append(ops, a)
		}
	}
	return ops
}
