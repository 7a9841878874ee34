package register

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/policy"
)

// Registration is what `loopguard init --agent NAME` writes into one
// agent's hook file and what `loopguard doctor` checks there. Each adapter
// package defines its own (codex.Registration, ...): the flags written by
// init and read back by doctor live in one place per agent.
type Registration struct {
	Agent string
	// User and Project are the hook files the agent reads, "/"-separated:
	// User under the agent's home directory (Dirs.Agent), Project under a
	// project directory (see UserFile and ProjectFile).
	User, Project string
	// Hooks are loopguard's handlers in the file (see File and Check).
	Hooks Hooks
	// Binding says what an approval binds for this agent's calls.
	Binding string
	// Host is what the agent's host does with loopguard's answers.
	Host agents.Host

	// Plugin, when set, is the whole file loopguard writes and owns in
	// place of entries in a hook file (OpenCode's plugin); Hooks are then
	// unused, IsOurs recognises the file and CheckPlugin says what is wrong
	// with it.
	Plugin      func(o Options) []byte
	IsOurs      func(data []byte) bool
	CheckPlugin func(data []byte, o Options) []string
}

// UserFile is the agent's hook file for a user's directories d.
func (r Registration) UserFile(d Dirs) string {
	return filepath.Join(d.Agent(r.Agent), filepath.FromSlash(r.User))
}

// ProjectFile is the agent's hook file for the project directory project.
func (r Registration) ProjectFile(project string) string {
	return filepath.Join(project, filepath.FromSlash(r.Project))
}

// File is loopguard's registration for o.
func (r Registration) File(o Options) AgentFile { return r.Hooks.File(o) }

// Check returns what is wrong with the handlers registered in one file
// (nil when loopguard is registered as init would).
func (r Registration) Check(regs []Found, o Options) []string { return r.Hooks.Check(regs, o) }

// Dirs are the user's directories an agent's user file is found under.
type Dirs struct {
	Home      string // the user's home directory
	CodexHome string // $CODEX_HOME as set ("": not set; see policy.CodexHome)
}

// Agent is the directory where agent keeps its user files
// (policy.AgentHome, which the protected set reads too).
func (d Dirs) Agent(agent string) string { return policy.AgentHome(agent, d.Home, d.CodexHome) }

// Options are the hook's settings as init writes them.
type Options struct {
	Binary   string        // absolute path of loopguard
	Mode     string        // enforce, ask or audit
	Deadline time.Duration // the hook's own deadline
	// Scope is the file the registration is written into (ScopeUser,
	// ScopeProject), written into the command of an agent whose Hooks
	// are Scoped.
	Scope string
	// Ticket writes --ticket into the commands: two-phase enforcement
	// through loopguard's own shell tool (Gemini CLI, Qwen Code; package
	// shelltool).
	Ticket bool
}

// Command is the hook command for agent and event under o (shell form;
// see Command.Fallback for fallback).
func (o Options) Command(agent, event, fallback string) Command {
	return Command{Binary: o.Binary, Agent: agent, Event: event, Mode: o.Mode, Fallback: fallback, Ticket: o.Ticket}
}

// TimeoutSeconds is the host timeout registered for a hook with deadline d:
// well above it, so the hook's own deadline always answers first (the
// hosts let a timed-out hook's call through).
func TimeoutSeconds(d time.Duration) int { return TimeoutFor(d, 0) }

// FallbackReason is the reason a registration's fallback deny gives.
const FallbackReason = "loopguard: hook_failed: the loopguard hook could not run, so the call is blocked. The user should run `loopguard doctor` in their terminal."

// Hooks is a registration of one loopguard handler per event in an
// agent's hook file: what init writes (File) and what doctor checks
// (Check), from one description, so the keys and units a handler is
// written with are the ones it is read back with.
type Hooks struct {
	Agent  string
	Events []string // each gets one handler
	// Nested files group handlers under Matcher (see AgentFile); Version,
	// when not 0, heads a file loopguard creates.
	Nested bool
	// Matcher is the host's matcher for every tool, loopguard's in every
	// agent's file: the group's (Nested) or, written by Handler, the
	// handler's own ("" for none, where none means every tool).
	Matcher string
	Version int
	// Handler is the handler for one event, a struct in the agent's own
	// field order: command (the hook's shell command) under CmdKey, and
	// timeout (the host's, in UnitsPerSecond) under TimeoutKey.
	Handler            func(command string, timeout int) any
	CmdKey, TimeoutKey string
	UnitsPerSecond     int
	// Fallback is, for an event, the deny the command echoes when the hook
	// cannot start ("" for none), for a host (named Host) that lets such a
	// call through. nil: no event has one.
	Fallback func(event string) string
	Host     string
	// Also, when set, is the host's own problem with one handler of the
	// file, loopguard's or another's ("" for none); Check says them last.
	Also func(r Found) string
	// Scoped: the host runs every registration it finds, the user's and
	// the project's, for one call, so each command names its file
	// (Command.Scope) and the hook tells the registrations apart.
	Scoped bool
	// Off are settings of the host's, dotted paths, that init turns off
	// in the same file (AgentFile.Off).
	Off []string
}

// DenyOn is a Fallback for one event only: the deny the host reads, made
// by deny and marshalled when first asked for (the hook links the
// adapters and never asks; marshalled at init it cost every hook run).
func DenyOn(event string, deny func() any) func(ev string) string {
	text := sync.OnceValue(func() string {
		b, _ := json.Marshal(deny())
		return string(b)
	})
	return func(ev string) string {
		if ev != event {
			return ""
		}
		return text()
	}
}

func (h Hooks) fallback(ev string) string {
	if h.Fallback == nil {
		return ""
	}
	return h.Fallback(ev)
}

// File is loopguard's registration under o.
func (h Hooks) File(o Options) AgentFile {
	f := AgentFile{Nested: h.Nested, Version: h.Version, Self: o.Binary, Off: h.Off}
	for _, ev := range h.Events {
		c := o.Command(h.Agent, ev, h.fallback(ev))
		if h.Scoped {
			c.Scope = o.Scope
		}
		f.Entries = append(f.Entries, AgentEntry{Event: ev, Matcher: h.Matcher,
			Handler: h.Handler(c.String(), TimeoutSeconds(o.Deadline)*h.UnitsPerSecond)})
	}
	return f
}

// Check says what is wrong with the handlers regs of one file (nil when
// loopguard is registered as init writes it): each event has one of
// loopguard's handlers; each command reads back (ParseShell) as `loopguard
// hook <agent> --event <event>` with its fallback, and its binary exists;
// each timeout is above the deadline.
func (h Hooks) Check(regs []Found, o Options) []string {
	var problems []string
	for _, ev := range h.Events {
		var ours []Found
		for _, r := range regs {
			if r.Ours && r.Event == ev {
				ours = append(ours, r)
			}
		}
		if len(ours) == 0 {
			problems = append(problems, fmt.Sprintf("%s: loopguard is not registered", ev))
			continue
		}
		for _, r := range ours {
			line, _ := r.Fields[h.CmdKey].(string)
			c, err := ParseShell(line, o.Binary)
			if err != nil || c.Agent != h.Agent || c.Event != ev {
				problems = append(problems, fmt.Sprintf("%s: the hook command does not run `loopguard hook %s --event %s`", ev, h.Agent, ev))
			}
			switch want := h.fallback(ev); {
			case want == "":
			case c.Fallback == "":
				problems = append(problems, fmt.Sprintf("%s: no deny fallback (`|| echo ...`): %s lets the call through when the hook cannot start", ev, h.Host))
			case c.Fallback != want:
				problems = append(problems, fmt.Sprintf("%s: the fallback (`|| echo ...`) is not loopguard's deny: %s lets the call through when the hook cannot start", ev, h.Host))
			}
			if filepath.IsAbs(c.Binary) {
				problems = append(problems, CheckBinary(ev, c.Binary)...)
			}
			t, ok := r.Fields[h.TimeoutKey].(float64)
			min := math.Ceil(o.Deadline.Seconds()+1) * float64(h.UnitsPerSecond)
			if !ok || t < min {
				problems = append(problems, fmt.Sprintf("%s: %s is %v, not above the hook's %s deadline (at least %v): the host would let a slow call through", ev, h.TimeoutKey, r.Fields[h.TimeoutKey], o.Deadline, min))
			}
		}
	}
	if h.Also != nil {
		for _, r := range regs {
			if p := h.Also(r); p != "" {
				problems = append(problems, p)
			}
		}
	}
	return problems
}

// Narrow says which of loopguard's handlers regs registers under another
// matcher than the catch-all h.Matcher (an older loopguard's list of tool
// names, or one edited by hand): the host runs them for the tools it
// names only, and any other tool runs with no decision of loopguard's.
func (h Hooks) Narrow(regs []Found) []string {
	want := fmt.Sprintf("%q", h.Matcher)
	if h.Matcher == "" {
		want = "none"
	}
	var out []string
	for _, r := range regs {
		if r.Ours && r.Matcher != h.Matcher && slices.Contains(h.Events, r.Event) {
			out = append(out, fmt.Sprintf("%s: loopguard is registered with the matcher %q, not the catch-all (%s): a tool it leaves out runs with no decision of loopguard's (an older loopguard's registration)", r.Event, r.Matcher, want))
		}
	}
	return out
}

// CheckBinary says what is wrong with the hook binary bin registered for
// event ev (nothing when it exists).
func CheckBinary(ev, bin string) []string {
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return []string{fmt.Sprintf("%s: the hook binary %s does not exist", ev, bin)}
	}
	return nil
}
