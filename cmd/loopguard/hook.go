package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/notify"
	"github.com/loopguard/loopguard/state"
)

// runHook is `loopguard hook [agent]`: the coding agent runs it for every
// tool call. It is dispatched before cobra is built and never exits 1.
// Without an agent name it is Claude Code's registration, which Cursor and
// Copilot CLI run too: the payload says which agent sent it (see hookAgent).
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer) ExitCode {
	agent := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		agent, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	event := fs.String("event", "", "the event this hook is registered for")
	mode := fs.String("mode", hooks.ModeEnforce, "enforce, ask or audit")
	wait := fs.Duration("wait", 0, "hold a call without a grant until a human decides, at most this long")
	deadline := fs.Duration("deadline", hooks.DefaultDeadline, "deny if no decision within this time (plus --wait)")
	parseErr := fs.Parse(args)
	if parseErr == nil && fs.NArg() > 0 {
		parseErr = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if parseErr == nil && *mode != hooks.ModeEnforce && *mode != hooks.ModeAsk && *mode != hooks.ModeAudit {
		parseErr = fmt.Errorf("unknown mode %q", *mode)
	}
	opts := hookAgent(agent)
	opts.Event = *event
	opts.Deadline = *deadline + *wait
	opts.NewEngine = func() (*hooks.Engine, error) {
		if parseErr != nil {
			return nil, fmt.Errorf("bad hook arguments: %w", parseErr)
		}
		return newEngine(*mode, *wait)
	}
	return ExitCode(agents.Run(context.Background(), opts, stdin, stdout, stderr))
}

func newEngine(mode string, wait time.Duration) (*hooks.Engine, error) {
	dir, err := state.DefaultDir()
	if err != nil {
		return nil, err
	}
	st, err := state.Open(dir)
	if err != nil {
		return nil, err
	}
	cfgPath, err := config.DefaultPath()
	if err != nil {
		return nil, err
	}
	// A config that is there but wrong stops the hook (a deny): no silent
	// fall back to other trusted directories.
	cfg, _, err := config.Load(cfgPath)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	self, err := os.Executable()
	if err == nil {
		if r, err := filepath.EvalSymlinks(self); err == nil {
			self = r
		}
	}
	var custody hooks.Custody
	if cfg.Backend == config.BackendVault {
		if custody, err = vaultCustody(cfg); err != nil {
			return nil, err
		}
	}
	eng := &hooks.Engine{
		Custody: custody,
		Store:   st,
		Audit:   audit.Open(filepath.Join(dir, "audit")),
		LoadKey: keyring.Load,
		Env: hooks.Env{
			Path:       os.Getenv("PATH"),
			Home:       home,
			ProjectDir: os.Getenv("CLAUDE_PROJECT_DIR"),
			Self:       self,
			StateDir:   dir,
			ConfigDir:  filepath.Dir(cfgPath),
			Trusted:    cfg.Trusted(),
		},
		Mode: mode,
		Wait: wait,
	}
	eng.OnHeld = heldNotifier(cfg, eng.Audit)
	return eng, nil
}

// heldNotifier tells the human that the hook holds a call: the desktop
// notification (unless the config turns it off) and the config's notify
// command, both in the background and bounded (package notify). The hook
// runs them, not review: review may not be running, and the hook runs as
// the user outside the agent's sandbox. A failure is logged, never a
// decision.
func heldNotifier(cfg config.Config, log *audit.Log) func(*state.Pending) {
	nf := notify.Notifier{Command: cfg.NotifyCommand()}
	if cfg.DesktopOn() {
		nf.Bus = keyring.SessionBus
	}
	if nf.Bus == nil && len(nf.Command) == 0 {
		return nil
	}
	return func(p *state.Pending) {
		n := notify.Note{ID: p.ID, Prefix: short(p.ID, 6), Tool: hooks.EscapeText(p.Tool), Summary: hooks.Summary(p),
			Reason: p.Reason, Session: hooks.EscapeText(p.Session), Project: hooks.EscapeText(p.ProjectDir), HeldUntil: p.HeldUntil}
		nf.Fire(n, func(what string, err error) {
			if errors.Is(err, notify.ErrUnavailable) {
				return // no desktop here: nothing to tell, nothing to log
			}
			_ = log.AppendNoSync(audit.Entry{Time: time.Now().UTC(), Event: "notify", Session: p.Session, Agent: p.Agent,
				Tool: p.Tool, Pending: p.ID, Decision: "notify-failed", Reason: "notify_" + what, Detail: hooks.EscapeText(err.Error())})
		})
	}
}
