package agents

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/install"
)

// Registration is what `loopguard init --agent NAME` writes into one
// agent's hook file and what `loopguard doctor` checks there. Each adapter
// package defines its own (codex.Registration, ...): the flags written by
// init and read back by doctor live in one place per agent.
type Registration struct {
	Agent string
	// UserFile and ProjectFile name the hook files the agent reads (for a
	// home directory and a project directory).
	UserFile    func(home string) string
	ProjectFile func(project string) string
	// File is loopguard's registration for o.
	File func(o RegOptions) install.AgentFile
	// Check returns what is wrong with the handlers registered in one file
	// (nil when loopguard is registered as init would).
	Check func(regs []install.AgentRegistered, o RegOptions) []string
	// Binding says what an approval binds for this agent's calls.
	Binding string
	// Host is what the agent's host does with loopguard's answers.
	Host Host

	// Plugin, when set, is the whole file loopguard writes and owns in
	// place of entries in a hook file (OpenCode's plugin); File and Check
	// are then unused, IsOurs recognises the file and CheckPlugin says
	// what is wrong with it.
	Plugin      func(o RegOptions) []byte
	IsOurs      func(data []byte) bool
	CheckPlugin func(data []byte, o RegOptions) []string
}

// Host is what one agent's host does with a hook, as checked on a real
// client (the version is named); doctor and the README say it.
type Host struct {
	// Client is the client and version the facts were checked on.
	Client string
	// Rewrite says how the host runs the canonical rewrite of a Bash call
	// a scoped grant covers; "" when it cannot (or it is unproven): a scope
	// then covers only a command whose text is already plain.
	Rewrite string
	// Timeout says what the host does with the call when a hook runs past
	// the timeout registered for it; TimeoutOpen when it runs the call.
	Timeout     string
	TimeoutOpen bool
}

// RegOptions are the hook's settings as init writes them.
type RegOptions struct {
	Binary   string        // absolute path of loopguard
	Mode     string        // enforce, ask or audit
	Deadline time.Duration // the hook's own deadline
}

// TimeoutSeconds is the host timeout registered for a hook with deadline d:
// well above it, so the hook's own deadline always answers first (the
// hosts let a timed-out hook's call through).
func TimeoutSeconds(d time.Duration) int {
	return install.TimeoutFor(d, 0)
}

// ShellQuote quotes s for a POSIX shell (and fish), as one word.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command is the shell command running loopguard's hook for agent and
// event. When fallback is not "", it is echoed if loopguard cannot start
// or dies: for hosts that let a call through on a hook failure, fallback is
// that host's deny. It must hold no single quote.
func Command(o RegOptions, agent, event, fallback string) string {
	mode := o.Mode
	if mode == "" {
		mode = "enforce"
	}
	cmd := ShellQuote(o.Binary) + " hook " + agent + " --event " + event + " --mode " + mode
	if fallback != "" {
		cmd += " || echo '" + fallback + "'"
	}
	return cmd
}

// FallbackReason is the reason a registration's fallback deny gives.
const FallbackReason = "loopguard: hook_failed: the loopguard hook could not run, so the call is blocked. The user should run `loopguard doctor` in their terminal."

// Checks shared by every agent's Check: each event in events has one of
// loopguard's handlers; timeout (read with the given key, in units per
// second) is above the deadline; the command runs loopguard with `hook
// <agent> --event <event>` and the binary exists.
func CheckCommon(regs []install.AgentRegistered, o RegOptions, agent string, events []string, cmdKey, timeoutKey string, unitsPerSecond float64) []string {
	var problems []string
	for _, ev := range events {
		var ours []install.AgentRegistered
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
			cmd, _ := r.Fields[cmdKey].(string)
			if !strings.Contains(cmd, " hook "+agent+" --event "+ev) {
				problems = append(problems, fmt.Sprintf("%s: the hook command does not run `loopguard hook %s --event %s`", ev, agent, ev))
			}
			if bin := firstWord(cmd); bin != "" {
				problems = append(problems, CheckBinary(ev, bin)...)
			}
			t, ok := r.Fields[timeoutKey].(float64)
			min := math.Ceil(o.Deadline.Seconds()+1) * unitsPerSecond
			if !ok || t < min {
				problems = append(problems, fmt.Sprintf("%s: %s is %v, not above the hook's %s deadline (at least %v): the host would let a slow call through", ev, timeoutKey, r.Fields[timeoutKey], o.Deadline, min))
			}
		}
	}
	return problems
}

// CheckBinary says what is wrong with the hook binary bin registered for
// event ev (nothing when it exists).
func CheckBinary(ev, bin string) []string {
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return []string{fmt.Sprintf("%s: the hook binary %s does not exist", ev, bin)}
	}
	return nil
}

// firstWord is a command's executable, unquoted ("" when it cannot tell).
func firstWord(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if strings.HasPrefix(cmd, "'") {
		end := strings.Index(cmd[1:], "'")
		if end < 0 {
			return ""
		}
		w := cmd[1 : 1+end]
		if filepath.IsAbs(w) {
			return w
		}
		return ""
	}
	w, _, _ := strings.Cut(cmd, " ")
	if filepath.IsAbs(w) {
		return w
	}
	return ""
}
