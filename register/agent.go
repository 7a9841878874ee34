package register

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
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
	// UserFile and ProjectFile name the hook files the agent reads (for a
	// user's directories and a project directory).
	UserFile    func(d Dirs) string
	ProjectFile func(project string) string
	// File is loopguard's registration for o.
	File func(o Options) AgentFile
	// Check returns what is wrong with the handlers registered in one file
	// (nil when loopguard is registered as init would).
	Check func(regs []Found, o Options) []string
	// Binding says what an approval binds for this agent's calls.
	Binding string
	// Host is what the agent's host does with loopguard's answers.
	Host agents.Host

	// Plugin, when set, is the whole file loopguard writes and owns in
	// place of entries in a hook file (OpenCode's plugin); File and Check
	// are then unused, IsOurs recognises the file and CheckPlugin says
	// what is wrong with it.
	Plugin      func(o Options) []byte
	IsOurs      func(data []byte) bool
	CheckPlugin func(data []byte, o Options) []string
}

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
}

// Command is the hook command for agent and event under o (shell form;
// see Command.Fallback for fallback).
func (o Options) Command(agent, event, fallback string) Command {
	return Command{Binary: o.Binary, Agent: agent, Event: event, Mode: o.Mode, Fallback: fallback}
}

// TimeoutSeconds is the host timeout registered for a hook with deadline d:
// well above it, so the hook's own deadline always answers first (the
// hosts let a timed-out hook's call through).
func TimeoutSeconds(d time.Duration) int { return TimeoutFor(d, 0) }

// FallbackReason is the reason a registration's fallback deny gives.
const FallbackReason = "loopguard: hook_failed: the loopguard hook could not run, so the call is blocked. The user should run `loopguard doctor` in their terminal."

// CheckCommon holds the checks shared by every agent's Check: each event
// in events has one of loopguard's handlers; timeout (read with the given
// key, in units per second) is above the deadline; the command (read with
// cmdKey) is `loopguard hook <agent> --event <event>` and its binary
// exists. It returns the hook commands of loopguard's handlers, by event,
// for checks of the agent's own.
func CheckCommon(regs []Found, o Options, agent string, events []string, cmdKey, timeoutKey string, unitsPerSecond float64) (problems []string, cmds map[string][]Command) {
	cmds = map[string][]Command{}
	for _, ev := range events {
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
			line, _ := r.Fields[cmdKey].(string)
			c, err := ParseShell(line, o.Binary)
			cmds[ev] = append(cmds[ev], c)
			if err != nil || c.Agent != agent || c.Event != ev {
				problems = append(problems, fmt.Sprintf("%s: the hook command does not run `loopguard hook %s --event %s`", ev, agent, ev))
			}
			if filepath.IsAbs(c.Binary) {
				problems = append(problems, CheckBinary(ev, c.Binary)...)
			}
			t, ok := r.Fields[timeoutKey].(float64)
			min := math.Ceil(o.Deadline.Seconds()+1) * unitsPerSecond
			if !ok || t < min {
				problems = append(problems, fmt.Sprintf("%s: %s is %v, not above the hook's %s deadline (at least %v): the host would let a slow call through", ev, timeoutKey, r.Fields[timeoutKey], o.Deadline, min))
			}
		}
	}
	return problems, cmds
}

// CheckBinary says what is wrong with the hook binary bin registered for
// event ev (nothing when it exists).
func CheckBinary(ev, bin string) []string {
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return []string{fmt.Sprintf("%s: the hook binary %s does not exist", ev, bin)}
	}
	return nil
}

// CheckFallback checks that every hook command of loopguard's for event in
// cmds (CheckCommon's) echoes want, the host's deny, when it cannot run:
// host lets the call through when a hook cannot start.
func CheckFallback(cmds map[string][]Command, event, want, host string) []string {
	var problems []string
	for _, c := range cmds[event] {
		switch {
		case c.Fallback == "":
			problems = append(problems, fmt.Sprintf("%s: no deny fallback (`|| echo ...`): %s lets the call through when the hook cannot start", event, host))
		case c.Fallback != want:
			problems = append(problems, fmt.Sprintf("%s: the fallback (`|| echo ...`) is not loopguard's deny: %s lets the call through when the hook cannot start", event, host))
		}
	}
	return problems
}
