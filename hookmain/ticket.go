package hookmain

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/ticket"
)

// Two-phase enforcement, the hook's half (package ticket has the
// wrapper's). A registration with --ticket (init --ticket, Claude Code
// only) runs every Bash call through the wrapper, loopguard-exec, set as
// Claude Code's CLAUDE_CODE_SHELL_PREFIX; the hook is registered in shell
// form, so Claude Code runs it through the wrapper too. For a Bash call
// the engine allowed, the hook then:
//   - proves the wrapper stands in front of this session: its parent
//     process is the installed wrapper (ticket.InFront, from /proc), or
//     this process is, where the wrapper runs the hook itself
//     (InWrapper, ticket.InFrontSelf), and
//     no project settings file sets CLAUDE_CODE_SHELL_PREFIX (a wrapper
//     that execs the real one for hooks only would pass the first test)
//     or a variable that runs code around it (wrapperEnvSetBy);
//     otherwise it denies with ticket.ReasonNoWrapper;
//   - issues a ticket for the exact command it hands back, the nonce's
//     marker line first (updatedInput).
// After the call (PostToolUse, PostToolUseFailure) it spends the ticket,
// gives the engine the command without the marker (what it decided), and
// raises ticket.ReasonRanWithoutDecision for a Bash call that ran with no
// ticket on record.

// backgroundClaim bounds how long PostToolUse of a background Bash call
// waits for the wrapper to claim its ticket before spending it (the
// hook's own deadline is 5 s).
const backgroundClaim = 3 * time.Second

// ticketSteps are agents.Options' Before and After for a --ticket
// registration.
func ticketSteps(wrapper func() string, inFront func(wrapper string) error) (
	func(context.Context, *hooks.Engine, *hooks.Call) *hooks.Decision,
	func(context.Context, *hooks.Engine, *hooks.Call, hooks.Decision) hooks.Decision,
) {
	before := func(ctx context.Context, eng *hooks.Engine, c *hooks.Call) *hooks.Decision {
		if c.ToolName != "Bash" || (c.Event != hooks.PostToolUse && c.Event != hooks.PostToolUseFailure) {
			return nil
		}
		cmd, _ := c.ToolInput["command"].(string)
		nonce, rest, marked := ticket.Unmark(cmd)
		store, err := ticketStore()
		if marked && err == nil && c.Event == hooks.PostToolUse && c.ToolInput["run_in_background"] == true {
			// Started, not ended: the wrapper may not have claimed its
			// ticket yet. Spent after it did, or after backgroundClaim
			// (then the command, not yet started, does not run).
			store.WaitClaimed(nonce, backgroundClaim)
		}
		if marked && err == nil && store.Spend(nonce) {
			c.ToolInput = withCommand(c.ToolInput, rest)
			return nil
		}
		if c.Event == hooks.PostToolUseFailure && ticket.IsRefusal(c.Output) {
			// The wrapper refused it: nothing ran.
			if marked {
				c.ToolInput = withCommand(c.ToolInput, rest)
			}
			return nil
		}
		d := hooks.Decision{Behavior: hooks.Alarm, Reason: ticket.ReasonRanWithoutDecision,
			SystemMessage: "loopguard: " + ticket.ReasonRanWithoutDecision + ": a Bash call ran with no decision of loopguard's on record (no ticket): the wrapper is not in front of this session's shell. Run `loopguard doctor`."}
		appendAudit(eng, c, d, "")
		return &d
	}
	after := func(ctx context.Context, eng *hooks.Engine, c *hooks.Call, d hooks.Decision) hooks.Decision {
		if c.ToolName != "Bash" || c.Event != hooks.PreToolUse || d.Behavior != hooks.Allow {
			return d
		}
		deny := ticketDeny(eng, c)
		if err := inFront(wrapper()); err != nil {
			return deny(ticket.ReasonNoWrapper, err.Error())
		}
		if f, key, why := wrapperEnvSetBy(eng.Env.ProjectDir, wrapper()); f != "" {
			return deny(ticket.ReasonNoWrapper, f+" sets "+key+", which "+why+": a repository's settings may not replace loopguard's wrapper or run code around it")
		}
		if f := exclusionsSetBy(eng.Env.ProjectDir); f != "" {
			return deny(ticket.ReasonSandboxExcluded, f+" sets sandbox.excludedCommands: a repository's settings may not take commands out of Claude Code's sandbox (Claude Code runs a project's entries outside it even under the user's allowUnsandboxedCommands: false)")
		}
		tp, refused := ticketInputs(ctx, eng, c, d, deny)
		if refused != nil {
			return *refused
		}
		nonce, err := ticket.NewNonce()
		if err != nil {
			return deny(ticket.ReasonNoDecision, "no command to issue a ticket for")
		}
		marked := ticket.Mark(nonce, tp.cmd)
		t := &ticket.Ticket{Session: c.SessionID, Nonce: nonce, Command: marked, Capability: d.Capability,
			Project: eng.Env.ProjectDir, Cwd: c.Cwd, Expiry: time.Now().Add(ticket.Lifetime).Unix()}
		if err := tp.store.Issue(t, tp.key); err != nil {
			return deny(ticket.ReasonNoDecision, err.Error())
		}
		d.UpdatedInput = withCommand(tp.in, marked)
		return d
	}
	return before, after
}

// ticketDeny is how a ticketed registration refuses an allowed call it
// cannot issue a ticket for: a deny with reason and why, audited.
func ticketDeny(eng *hooks.Engine, c *hooks.Call) func(reason, why string) hooks.Decision {
	return func(reason, why string) hooks.Decision {
		out := hooks.Decision{Behavior: hooks.Deny, Reason: reason,
			Message: "loopguard: " + reason + ": " + why + ". The call is blocked; the user should run `loopguard doctor`."}
		appendAudit(eng, c, out, why)
		return out
	}
}

// ticketParts is what a ticket for an allowed call is issued from: the
// ticket key, the store, and the input that will run (the engine's
// rewrite, else the call's own) with its command.
type ticketParts struct {
	key   []byte
	store *ticket.Store
	in    map[string]any
	cmd   string
}

// ticketInputs gathers them for d, the allow of c; refused is deny's
// answer when one cannot be had (the keyring, the ticket directory, no
// command).
func ticketInputs(ctx context.Context, eng *hooks.Engine, c *hooks.Call, d hooks.Decision, deny func(reason, why string) hooks.Decision) (tp ticketParts, refused *hooks.Decision) {
	fail := func(reason, why string) (ticketParts, *hooks.Decision) {
		out := deny(reason, why)
		return ticketParts{}, &out
	}
	key, err := eng.TicketKey(ctx)
	if err != nil {
		return fail(hooks.ReasonKeyring, "the ticket key cannot be read: "+err.Error())
	}
	store, err := ticketStore()
	if err != nil {
		return fail(ticket.ReasonNoDecision, err.Error())
	}
	in := d.UpdatedInput
	if in == nil {
		in = c.ToolInput
	}
	cmd, ok := in["command"].(string)
	if !ok {
		return fail(ticket.ReasonNoDecision, "no command to issue a ticket for")
	}
	return ticketParts{key: key, store: store, in: in, cmd: cmd}, nil
}

func ticketStore() (*ticket.Store, error) {
	dir, err := ticket.Dir()
	if err != nil {
		return nil, err
	}
	return &ticket.Store{Dir: dir}, nil
}

// withCommand is a copy of a Bash input with cmd as its command.
func withCommand(in map[string]any, cmd string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	out["command"] = cmd
	return out
}

// exclusionsSetBy names the project settings file that lists any
// sandbox.excludedCommands, "" when none does (the same files as
// wrapperEnvSetBy). Claude Code 2.1.328 runs a command matching a project's
// entry outside its sandbox whatever the user's settings say; the one
// entry loopguard writes lives in the user's file.
func exclusionsSetBy(project string) string {
	for _, p := range projectSettings(project) {
		data, err := fsx.ReadRegular(p, 4<<20, 0)
		if err != nil {
			continue
		}
		var s struct {
			Sandbox struct {
				Excluded json.RawMessage `json:"excludedCommands"`
			} `json:"sandbox"`
		}
		if json.Unmarshal(data, &s) != nil {
			// Claude Code would not read it either.
			continue
		}
		if ex := string(s.Sandbox.Excluded); ex != "" && ex != "null" && ex != "[]" {
			return p
		}
	}
	return ""
}

// projectSettings are the project settings files of the hook's working
// directory (Claude Code's) and of the project the host names.
func projectSettings(project string) []string {
	var dirs, out []string
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	if project != "" {
		dirs = append(dirs, project)
	}
	for _, d := range dirs {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			out = append(out, filepath.Join(d, ".claude", name))
		}
	}
	return out
}

// wrapperEnvSetBy names the project settings file whose env replaces
// loopguard's wrapper or runs code around it, the variable and what it
// does; "" when none does: in the hook's working directory (Claude
// Code's) and the project the host names. Claude Code runs each command
// as CLAUDE_CODE_SHELL -c 'CLAUDE_CODE_SHELL_PREFIX LINE', and the
// wrapper runs the line with bash once its ticket holds, in that env:
// the thirteenth attack run's BASH_ENV ran its file in that bash, outside
// the jail, and its CLAUDE_CODE_SHELL before the wrapper, on every call.
// A jailed program gets none of it (the launcher keeps its own list).
func wrapperEnvSetBy(project, wrapper string) (file, key, why string) {
	var dirs []string
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	if project != "" {
		dirs = append(dirs, project)
	}
	for _, d := range dirs {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			p := filepath.Join(d, ".claude", name)
			data, err := fsx.ReadRegular(p, 4<<20, 0)
			if err != nil {
				continue
			}
			var s struct {
				Env map[string]any `json:"env"`
			}
			if json.Unmarshal(data, &s) != nil {
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				if k == "CLAUDE_CODE_SHELL_PREFIX" {
					if s.Env[k] != wrapper {
						return p, k, "replaces or unsets the wrapper"
					}
					continue
				}
				if why := ticket.AroundWrapper(k); why != "" {
					return p, k, why
				}
			}
		}
	}
	return "", "", ""
}

func appendAudit(eng *hooks.Engine, c *hooks.Call, d hooks.Decision, detail string) {
	if eng.Audit == nil {
		return
	}
	_ = eng.Audit.Append(audit.Entry{Time: time.Now().UTC(), Event: c.Event, Session: c.SessionID, Agent: c.Agent(), AgentType: c.AgentType,
		Tool: c.ToolName, Decision: d.Behavior, Reason: d.Reason, Mode: eng.Mode, Told: hooks.Told(d), Detail: detail, Summary: hooks.CallSummary(c)})
}

// wrapperFor is the wrapper a --ticket registration requires: the
// launcher beside the binary (self), symlinks resolved.
func wrapperFor(self string) string {
	if self == "" {
		return ""
	}
	return policy.Launcher(self)
}
