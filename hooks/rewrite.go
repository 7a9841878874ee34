package hooks

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"

	"github.com/loopguard/loopguard/internal/testknobs"
)

// ReasonNotCanonical: a scoped grant's rule covers the words of a Bash
// call, but the agent's host cannot run a rewritten command, and the
// command's text is not already in canonical form.
const ReasonNotCanonical = "not_canonical"

// What runs is what was analysed. A Bash call a scoped grant covers is
// answered with the canonical command the analysis produced (the agent's
// updatedInput): the program by its absolute path, every word
// single-quoted, globs already expanded, so bash re-reads nothing; and,
// where the kernel has Landlock, run through the launcher, which confines
// the program to the grant's capability (package confine). An analysis
// error then yields a wrong argument or a refused system call, never a
// bypass. An exact approval runs the text the human approved, unchanged.

// errNoRewrite: the host cannot rewrite and the text is not canonical.
var errNoRewrite = errors.New("the agent's host runs the model's own text (it cannot rewrite a command), and this command's text is not plain: a scope covers only a command written without $'...', backslashes, globs, braces or ~ there")

// rewrite returns the input the host must run for a Bash call the rule
// covers, or nil when it may run as it is (an agent that cannot rewrite, a
// plain command). It fails when the call cannot be run canonically.
func (e *Engine) rewrite(c *Call, d *described, rule scope.Rule) (map[string]any, error) {
	res := d.shell
	if res == nil || res.Verdict != shellparse.Simple {
		return nil, errors.New("not a simple command")
	}
	if testknobs.On(testknobs.NoRewrite) {
		return nil, nil
	}
	if !c.Rewrite {
		if !res.Plain {
			return nil, errNoRewrite
		}
		return nil, nil
	}
	cmd, err := e.launchCommand(c, res, rule)
	if err != nil {
		return nil, err
	}
	return withCommand(c.ToolInput, cmd), nil
}

// withCommand is a copy of a Bash call's input with cmd as its command:
// the host runs it in place of the model's, with the other fields as the
// model gave them.
func withCommand(in map[string]any, cmd string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	out["command"] = cmd
	return out
}

// launchCommand is the text that runs one simple command (a whole call, or
// a part of a chain, judged in res.Cwd) as analysed: through the launcher
// with rule's capability when the kernel can confine, its canonical form
// otherwise (and always for a builtin, which runs inside the shell).
func (e *Engine) launchCommand(c *Call, res *shellparse.Result, rule scope.Rule) (string, error) {
	cwd := res.Cwd
	if cwd == "" {
		cwd = c.Cwd
	}
	if e.Env.Launcher == "" || res.Builtin {
		return res.Canonical(cwd)
	}
	spec := confine.Spec{
		Cap:     rule.Capability(),
		Project: filepath.Clean(e.projectDir(c)),
		Cwd:     cwd,
		Exe:     res.Executable,
	}
	for _, w := range res.Argv {
		spec.Argv = append(spec.Argv, w.Value)
	}
	var err error
	if spec.Redirects, err = launchRedirects(cwd, res.Redirects); err != nil {
		return "", err
	}
	// A grant with the network runs in the form init's excludedCommands
	// entry takes out of Claude Code's sandbox (netjail.go), where it
	// could not connect; on the hook's ticket only.
	// So does a grant with git's own directory alone (confine.GitCommand:
	// Claude Code's sandbox makes git add -A fail).
	if len(res.Assigns) == 0 {
		if cmd, ok := confine.NetworkCommand(e.Env.Launcher, spec); ok {
			return cmd, nil
		}
		if cmd, ok := confine.GitCommand(e.Env.Launcher, spec); ok {
			return cmd, nil
		}
	}
	return res.Launch(append([]string{e.confiner()}, spec.Args()...)), nil
}

// launchRedirects are the call's redirections as the launcher performs
// them, in order.
func launchRedirects(cwd string, rs []shellparse.Redirect) ([]confine.Redirect, error) {
	var out []confine.Redirect
	for _, r := range rs {
		fd := 1
		if strings.HasPrefix(r.Op, "<") {
			fd = 0
		}
		if r.Fd != "" {
			n, ok := smallInt(r.Fd)
			if !ok {
				return nil, errors.New("redirection of descriptor " + r.Fd)
			}
			fd = n
		}
		path := shellparse.AbsTarget(cwd, r.Target)
		switch r.Op {
		case "<":
			out = append(out, confine.Redirect{Fd: fd, Op: "<", Path: path})
		case "<>":
			out = append(out, confine.Redirect{Fd: fd, Op: "<>", Path: path})
		case ">", ">|":
			out = append(out, confine.Redirect{Fd: fd, Op: ">", Path: path})
		case ">>":
			out = append(out, confine.Redirect{Fd: fd, Op: ">", Path: path, Append: true})
		case "&>", "&>>":
			out = append(out, confine.Redirect{Fd: 1, Op: ">", Path: path, Append: r.Op == "&>>"},
				confine.Redirect{Fd: 2, Op: "dup", Dup: 1})
		case ">&", "<&":
			switch t := r.Target; {
			case t == "-":
				out = append(out, confine.Redirect{Fd: fd, Op: "close"})
			case strings.HasSuffix(t, "-"):
				n, ok := smallInt(strings.TrimSuffix(t, "-"))
				if !ok {
					return nil, errors.New("redirection to " + t)
				}
				out = append(out, confine.Redirect{Fd: fd, Op: "dup", Dup: n}, confine.Redirect{Fd: n, Op: "close"})
			default:
				if n, ok := smallInt(t); ok {
					out = append(out, confine.Redirect{Fd: fd, Op: "dup", Dup: n})
					continue
				}
				// >&file without a descriptor is &>file.
				out = append(out, confine.Redirect{Fd: 1, Op: ">", Path: path}, confine.Redirect{Fd: 2, Op: "dup", Dup: 1})
			}
		default:
			return nil, errors.New("redirection " + r.Op)
		}
	}
	return out, nil
}

func smallInt(s string) (int, bool) {
	if s == "" || len(s) > 4 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// capabilityOf is the capability a call runs with under rule, for the
// audit log and messages; "" when it is not confined.
func (e *Engine) capabilityOf(c *Call, d *described, rule scope.Rule) string {
	if c.ToolName != "Bash" || !c.Launches() || e.Env.Launcher == "" || d.shell == nil || d.shell.Builtin {
		return ""
	}
	return rule.Capability().String()
}

// match is scope.Match; in a test build with the loose-analysis knob, a
// Bash rule covers every simple command of its program, so that a test can
// show the kernel holding with no analysis in front of it.
func (e *Engine) match(rule scope.Rule, sc scope.Call) error {
	if testknobs.On(testknobs.LooseAnalysis) && rule.Tool() == "Bash" && sc.Shell != nil && sc.Shell.Verdict == shellparse.Simple {
		if len(sc.Shell.Argv) > 0 && filepath.Base(sc.Shell.Argv[0].Value) == rule.Program() {
			return nil
		}
	}
	return scope.Match(rule, sc)
}

// literalGlobs is res with every glob word that matched nothing made a
// literal word: the canonical command passes it single-quoted, so bash
// expands nothing (ls .eslintrc* with no such file lists the name
// .eslintrc*, and a file that appears later is not matched).
func literalGlobs(res *shellparse.Result) *shellparse.Result {
	if res == nil || testknobs.On(testknobs.NoRewrite) {
		return res
	}
	glob := false
	for _, w := range res.Argv {
		glob = glob || w.Glob
	}
	if !glob {
		return res
	}
	cp := *res
	cp.Argv = make([]shellparse.Word, len(res.Argv))
	for i, w := range res.Argv {
		w.Glob = false
		cp.Argv[i] = w
	}
	return &cp
}

// pinnedBash is the input the host runs for an allowed Bash call of a
// host whose model picks the shell (Call.PinBash): the command it would
// run (updated's, or the model's own when updated is nil) as
// `exec BASH -c 'COMMAND'`, COMMAND one word that /bin/sh, dash, bash,
// zsh and fish all read as the same bytes (pinQuote), so bash runs the text the
// analysis read, and its output and exit status are the command's.
// updated is returned as it is for any other call.
func pinnedBash(c *Call, updated map[string]any) (map[string]any, error) {
	if !c.PinBash || !c.Rewrite || c.ToolName != "Bash" || testknobs.On(testknobs.NoRewrite) {
		return updated, nil
	}
	in := updated
	if in == nil {
		in = c.ToolInput
	}
	cmd, ok := in["command"].(string)
	if !ok {
		return nil, errors.New("the call's command is not a string")
	}
	bash := policy.BashPath()
	if bash == "" {
		return nil, errors.New("no bash in /usr/bin or /bin to run the command with (the host may run it with another shell)")
	}
	return withCommand(in, "exec "+pinQuote(bash)+" -c "+pinQuote(cmd)), nil
}

// pinQuote is s single-quoted with every quote and backslash outside the
// quotes, each escaped by a backslash: sh, bash and zsh read it as s, and
// so does fish, which inside single quotes takes \\ as one backslash.
func pinQuote(s string) string {
	r := strings.NewReplacer(`'`, `'\''`, `\`, `'\\'`)
	return "'" + r.Replace(s) + "'"
}

// howItRuns is what an allow's message adds of how the call runs: as
// analysed (confined where there is a launcher) when rewritten is set,
// whole in the jail for a jailed call.
func (e *Engine) howItRuns(c *Call, d *described, reason string, rewritten bool, confined string) string {
	switch {
	case rewritten && reason == ReasonJailed:
		return "; it runs whole, as written, confined by the kernel"
	case rewritten && e.Env.Launcher != "" && !d.shell.Builtin:
		return "; it runs as analysed, confined"
	case rewritten:
		return "; it runs as analysed"
	case reason == ReasonJailed && c.Wrapped && confined != "":
		return "; it runs whole, as written, through loopguard's wrapper, confined by the kernel"
	}
	return ""
}
