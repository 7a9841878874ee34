package ticket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

// The wrapper (Claude Code's CLAUDE_CODE_SHELL_PREFIX). Claude Code 2.1.328
// runs every Bash call as `SHELL -c -l "'PREFIX' 'TEXT'"`, where TEXT is
// its own preamble (the shell snapshot, shopt lines, exports) joined by &&
// with `eval 'COMMAND'` and `pwd -P >| FILE`; inside its sandbox
// (bubblewrap) the whole line, the prefix included, is what bwrap runs, so
// the wrapper runs inside the sandbox. It wraps shell-form hook commands
// the same way (`'PREFIX' 'HOOK COMMAND'`, outside the sandbox), and
// stdio MCP servers as the prefix with one argument, the server's command
// line quoted. Exec-form hooks are not wrapped.
//
// So the wrapper receives exactly one argument. It runs:
//   - loopguard's own hook, when the argument is a command line whose
//     program is the loopguard binary installed beside the wrapper (by
//     file identity, symlinks resolved, never by name) with "hook" as its
//     first word: in the wrapper's own process where the wrapper can
//     (Gate.Hook; the hook then finds the wrapper in itself,
//     InFrontSelf), else as a child, so that the hook finds the wrapper
//     as its parent (InFront);
//   - a shell-form hook command or a stdio MCP server registered in the
//     user's own or the managed settings (ReadRegistered), by identity:
//     the line byte for byte, the server word for word;
//   - a Bash call, when the argument holds exactly one top-level
//     `eval WORD` whose WORD is a command the hook issued a ticket for,
//     claimed for this run (Claim): bash -c with the argument, unchanged.
//
// Anything else is refused with ReasonNoDecision, on stderr, exit 126: the
// host shows that to the model as the call's result. A Bash call whose
// text is byte-identical to a hook's command line is still a Bash call:
// the host wraps it in its preamble.

// refused follows the reason code in the wrapper's refusal:
// "loopguard: REASON: this command did not run: WHY...".
const refused = ": this command did not run: "

// IsRefusal reports whether a call's output holds the wrapper's refusal
// line: the command did not run.
func IsRefusal(output string) bool {
	for _, l := range strings.Split(output, "\n") {
		rest, ok := strings.CutPrefix(l, "loopguard: ")
		if !ok {
			continue
		}
		for _, r := range Reasons() {
			if strings.HasPrefix(rest, r+refused) {
				return true
			}
		}
	}
	return false
}

// ExitRefused is the wrapper's exit code for a command it does not run
// (the shell's "cannot execute").
const ExitRefused = 126

// Gate is the wrapper's collaborators.
type Gate struct {
	Store *Store
	// Self is the wrapper's executable, symlinks resolved.
	Self string
	// Key loads the ticket key (from the OS keyring).
	Key func() ([]byte, error)
	// Session is the host's session id for this shell.
	Session string
	Cwd     string
	Stderr  io.Writer
	// Registered, when set, reads the hook commands and MCP servers run
	// without a ticket (ReadRegistered); only for a line that is not a
	// Bash call's.
	Registered func() Registered
	// Hook, when set, runs loopguard's own hook command line argv (its
	// binary, "hook", its arguments) in this process, standard streams
	// and all; ran is false when it did not, having read nothing, and the
	// wrapper then runs argv as a child.
	Hook func(argv []string) (code int, ran bool)
}

// Run decides and runs text; it returns only to refuse, or with a pass
// through's exit code.
func (g *Gate) Run(text string) int {
	if argv, ok := g.ownHook(text); ok {
		if g.Hook != nil {
			if code, ran := g.Hook(argv); ran {
				return code
			}
		}
		return passThrough(argv)
	}
	if _, err := evaluated(text); err != nil && g.Registered != nil {
		// Not a Bash call's line: a registered hook or MCP server?
		if argv, ok := g.Registered().match(text); ok {
			return passThrough(argv)
		}
	}
	claimed, err := g.check(text)
	if err != nil {
		g.refuse(err)
		return ExitRefused
	}
	bash := policy.BashPath()
	if bash == "" {
		g.refuse(refuse(ReasonNoDecision, "no bash in /usr/bin or /bin"))
		return ExitRefused
	}
	if claimed.Hold != nil {
		// The lock goes with the command: the descriptor is inherited.
		inherit(claimed.Hold)
	}
	err = syscall.Exec(bash, []string{"bash", "-c", text}, os.Environ())
	g.refuse(refuse(ReasonNoDecision, "failed to run bash: %v", err))
	return ExitRefused
}

func (g *Gate) refuse(err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Reason: ReasonNoDecision, Why: err.Error()}
	}
	fmt.Fprintf(g.Stderr, "loopguard: %s"+refused+"%s. Every command runs only on a decision of loopguard's hook for exactly that command; "+
		"if the hook failed or is not loaded, the user should run `loopguard doctor`. Retry the identical call once; do not work around it.\n", e.Reason, e.Why)
}

// check finds the ticketed command in text and claims its ticket.
func (g *Gate) check(text string) (*Claimed, error) {
	cmd, err := evaluated(text)
	if err != nil {
		return nil, err
	}
	nonce, _, ok := Unmark(cmd)
	if !ok {
		// The host may have made NUL /dev/null in the marker's command,
		// never in the marker itself.
		return nil, refuse(ReasonNoDecision, "no hook decided this command (it carries no ticket)")
	}
	return g.Store.Claim(Want{Nonce: nonce, Command: cmd, Session: g.Session, Cwd: g.Cwd}, g.Key)
}

// maxText bounds the wrapper's argument.
const maxText = 4 * MaxCommand

// evaluated is the one command the host's line evaluates: the WORD of its
// only top-level `eval WORD`, quotes removed. The line is a single
// statement of commands joined by &&; a second eval, an eval anywhere
// else, or a WORD with an expansion is refused.
func evaluated(text string) (string, error) {
	if len(text) > maxText {
		return "", refuse(ReasonNoDecision, "the command line is too long")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return "", refuse(ReasonNoDecision, "the host's command line does not parse: %v", err)
	}
	if len(f.Stmts) != 1 {
		return "", refuse(ReasonNoDecision, "the host's command line is not one statement")
	}
	var parts []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt && !s.Negated && !s.Background && len(s.Redirs) == 0 {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		parts = append(parts, s)
	}
	flatten(f.Stmts[0])
	found := ""
	n := 0
	for _, p := range parts {
		call, ok := p.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "eval" {
			continue
		}
		n++
		if len(call.Args) != 2 || len(call.Assigns) != 0 {
			return "", refuse(ReasonNoDecision, "the host's eval is not of one word")
		}
		w, err := literal(call.Args[1])
		if err != nil {
			return "", err
		}
		found = w
	}
	if n != 1 {
		return "", refuse(ReasonNoDecision, "no hook decided this command (the host's line evaluates %d commands)", n)
	}
	// Any other eval, anywhere in the line, is not the host's preamble.
	evals := 0
	syntax.Walk(f, func(node syntax.Node) bool {
		if c, ok := node.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if v, err := literal(c.Args[0]); err == nil && strings.TrimPrefix(v, "\\") == "eval" {
				evals++
			}
		}
		return true
	})
	if evals != 1 {
		return "", refuse(ReasonNoDecision, "the host's line runs eval %d times", evals)
	}
	return found, nil
}

// literal is a word's value after quote removal; an expansion is refused.
func literal(w *syntax.Word) (string, error) {
	bad := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob, *syntax.BraceExp:
			bad = true
		}
		return !bad
	})
	if bad {
		return "", refuse(ReasonNoDecision, "the evaluated word holds an expansion")
	}
	v, err := expand.Literal(&expand.Config{}, w) // its own config: nil shares a global one
	if err != nil {
		return "", refuse(ReasonNoDecision, "the evaluated word: %v", err)
	}
	return v, nil
}

// ownHook reports whether text is loopguard's own hook command line: its
// program, symlinks resolved, is the loopguard or loopguard-hook binary in
// the wrapper's own directory, and "hook" is its first argument. argv is
// what to run.
func (g *Gate) ownHook(text string) ([]string, bool) {
	if g.Self == "" || len(text) > 64<<10 {
		return nil, false
	}
	cmds, ops, ok := shellparse.List(text)
	if !ok || len(cmds) == 0 || len(cmds[0]) < 2 || cmds[0][1] != "hook" {
		return nil, false
	}
	// `|| echo FALLBACK` is what a shell-form registration may add.
	if len(cmds) > 2 || len(cmds) == 2 && (ops[0] != "||" || len(cmds[1]) != 2 || cmds[1][0] != "echo") {
		return nil, false
	}
	exe := cmds[0][0]
	if !filepath.IsAbs(exe) {
		return nil, false
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil || filepath.Dir(real) != filepath.Dir(g.Self) {
		return nil, false
	}
	switch strings.TrimSuffix(filepath.Base(real), ".exe") {
	case "loopguard", "loopguard-hook":
	default:
		return nil, false
	}
	return append([]string{real}, cmds[0][1:]...), true
}

// passThrough runs argv as a child, its standard streams the wrapper's,
// signals passed on, and returns its exit code.
func passThrough(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		return ExitRefused
	}
	go func() {
		for s := range sig {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return ExitRefused
	}
	return 0
}

// KeyTimeout bounds a wrapper's keyring read (this one's and the shell
// tool's, package shelltool).
const KeyTimeout = 2 * time.Second

// Main is the wrapper's process: args are its arguments after the
// program (exactly one: the host's command line). loadKey reads the
// master key (the keyring); ticketKey derives the ticket key from it;
// hook is Gate.Hook.
func Main(args []string, stderr io.Writer, loadKey func(context.Context) ([]byte, error), ticketKey func([]byte) ([]byte, error),
	hook func(argv []string) (int, bool)) int {
	g := &Gate{Stderr: stderr, Hook: hook}
	if len(args) != 1 {
		g.refuse(refuse(ReasonNoDecision, "the wrapper takes exactly one argument, the host's command line"))
		return ExitRefused
	}
	dir, err := Dir()
	if err != nil {
		g.refuse(refuse(ReasonNoDecision, "%v", err))
		return ExitRefused
	}
	g.Store = &Store{Dir: dir}
	if self, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(self); err == nil {
			g.Self = r
		}
	}
	g.Cwd, _ = os.Getwd()
	g.Registered = func() Registered {
		home, err := passwdHome()
		if err != nil {
			return Registered{}
		}
		return ReadRegistered(home, g.Cwd)
	}
	// The session id is not a setting: it is what the ticket is matched
	// against, and the host sets it for the shell.
	g.Session = os.Getenv("CLAUDE_CODE_SESSION_ID")
	g.Key = KeyFrom(loadKey, ticketKey)
	return g.Run(args[0])
}

// KeyFrom is a wrapper's ticket key: the master key read by loadKey
// within KeyTimeout, derived by ticketKey, the master cleared after (the
// wrapper's, the shell tool's and the shell's: packages shelltool and
// shellwrap).
func KeyFrom(loadKey func(context.Context) ([]byte, error), ticketKey func([]byte) ([]byte, error)) func() ([]byte, error) {
	return func() ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), KeyTimeout)
		defer cancel()
		master, err := loadKey(ctx)
		if err != nil {
			return nil, err
		}
		defer clear(master)
		return ticketKey(master)
	}
}
