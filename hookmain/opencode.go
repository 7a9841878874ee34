package hookmain

import (
	"context"
	"path/filepath"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/shelltool"
	"github.com/loopguard/loopguard/ticket"
)

// Two-phase enforcement under OpenCode, the hook's half (package
// shellwrap has the wrapper's). OpenCode runs every shell call as
// `SHELL -c COMMAND`, SHELL its configuration's `shell`, which init
// --ticket sets to loopguard-exec in the user's opencode.json.
// loopguard's plugin hands the hook the effective configuration's shell
// (what OpenCode runs, after every config file and variable) with each
// call. A registration with --ticket then, for a bash call the engine
// allowed:
//   - checks that the shell is the installed wrapper (the same file,
//     symlinks resolved); otherwise (a project's opencode.json, an
//     OPENCODE_CONFIG* variable, no shell at all) it denies with
//     ticket.ReasonNoWrapper;
//   - issues a ticket bound to the host process (shelltool.HookHost: the
//     plugin spawns the hook from OpenCode's process, which spawns the
//     shell too), the cwd and a nonce whose marker line it writes first
//     in the command it hands back (the plugin sets output.args).
// After the call it spends the ticket and flags a shell call that ran
// with no ticket on record.

// opencodeCall is what loopguard's plugin adds to a call's payload.
type opencodeCall struct {
	shell  *string // the effective configuration's shell ("" none)
	output *string // what the call returned (after it)
}

// opencodeAdapter keeps the plugin's additions of the call it decoded.
type opencodeAdapter struct {
	agents.Adapter
	got opencodeCall
}

func (a opencodeAdapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	*a.got.shell, _ = m["shell"].(string)
	*a.got.output, _ = m["output"].(string)
	return a.Adapter.Decode(m, event)
}

// opencodeOptions makes opts a --ticket registration for OpenCode.
func opencodeOptions(opts *agents.Options, wrapper func() string) {
	var shell, output string
	got := opencodeCall{shell: &shell, output: &output}
	wrap := func(a agents.Adapter) agents.Adapter { return opencodeAdapter{Adapter: a, got: got} }
	if opts.Adapter != nil {
		opts.Adapter = wrap(opts.Adapter)
	}
	if detect := opts.Detect; detect != nil {
		opts.Detect = func(m map[string]any) (agents.Adapter, error) {
			a, err := detect(m)
			if a != nil {
				a = wrap(a)
			}
			return a, err
		}
	}
	opts.Before = func(ctx context.Context, eng *hooks.Engine, c *hooks.Call) *hooks.Decision {
		if c.ToolName != "Bash" || c.Event != hooks.PostToolUse {
			return nil
		}
		cmd, _ := c.ToolInput["command"].(string)
		nonce, rest, marked := ticket.Unmark(cmd)
		store, err := ticketStore()
		if marked && err == nil && store.Spend(nonce) {
			c.ToolInput = withCommand(c.ToolInput, rest)
			return nil
		}
		if ticket.IsRefusal(output) {
			// The wrapper refused it: nothing ran.
			if marked {
				c.ToolInput = withCommand(c.ToolInput, rest)
			}
			return nil
		}
		d := hooks.Decision{Behavior: hooks.Alarm, Reason: ticket.ReasonRanWithoutDecision,
			SystemMessage: "loopguard: " + ticket.ReasonRanWithoutDecision + ": a shell call ran with no decision of loopguard's on record (no ticket): loopguard's wrapper is not OpenCode's shell. Run `loopguard doctor --agent opencode`."}
		appendAudit(eng, c, d, "")
		return &d
	}
	opts.After = func(ctx context.Context, eng *hooks.Engine, c *hooks.Call, d hooks.Decision) hooks.Decision {
		if c.ToolName != "Bash" || c.Event != hooks.PreToolUse || d.Behavior != hooks.Allow {
			return d
		}
		deny := ticketDeny(eng, c)
		if why := opencodeShellProblem(shell, wrapper()); why != "" {
			return deny(ticket.ReasonNoWrapper, why)
		}
		host, err := shelltool.HookHost()
		if err != nil {
			return deny(ticket.ReasonNoWrapper, err.Error())
		}
		tp, refused := ticketInputs(ctx, eng, c, d, deny)
		if refused != nil {
			return *refused
		}
		nonce, err := ticket.NewNonce()
		if err != nil {
			return deny(ticket.ReasonNoDecision, "no nonce: "+err.Error())
		}
		t := &ticket.Ticket{Session: host, Nonce: nonce, Command: ticket.Mark(nonce, tp.cmd), Capability: d.Capability,
			Project: eng.Env.ProjectDir, Cwd: c.Cwd, Expiry: time.Now().Add(ticket.Lifetime).Unix()}
		if err := tp.store.Issue(t, tp.key); err != nil {
			return deny(ticket.ReasonNoDecision, err.Error())
		}
		d.UpdatedInput = withCommand(tp.in, t.Command)
		return d
	}
}

// opencodeShellProblem says why OpenCode's effective shell is not the
// wrapper, "" when it is: the same file, symlinks resolved. OpenCode runs
// a configured shell given by absolute path as that path.
func opencodeShellProblem(shell, wrapper string) string {
	if shell == "" {
		return "OpenCode's configuration names no shell (loopguard's plugin found none, or is not init's), so its shell calls would not run through loopguard's wrapper " + wrapper
	}
	if !filepath.IsAbs(shell) {
		return "OpenCode's configured shell " + shell + " is not loopguard's wrapper " + wrapper
	}
	got, err1 := filepath.EvalSymlinks(shell)
	want, err2 := filepath.EvalSymlinks(wrapper)
	if err1 != nil || err2 != nil || got != want {
		return "OpenCode's configured shell " + shell + " is not loopguard's wrapper " + wrapper + " (a project's opencode.json or an OPENCODE_CONFIG* variable may not replace it)"
	}
	return ""
}
