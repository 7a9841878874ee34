// Package shelltool is loopguard's own shell tool, the wrapper of two-phase
// enforcement for hosts with no shell prefix: Gemini CLI (and Qwen Code,
// its fork) run a tool the settings' tools.discoveryCommand lists by
// spawning tools.callCommand with the tool's name as its one argument and
// the call's arguments as JSON on its standard input (Gemini 0.61.0's
// DiscoveredToolInvocation.execute, Qwen Code 0.24.4's likewise). With the
// host's own shell tool excluded (tools.exclude: ["run_shell_command"],
// which the host merges as a union, so a project's settings cannot take
// it out again), every shell command the model runs is a call of this
// tool, and the call command is loopguard-exec: it runs a command only on
// a ticket the hook issued for exactly it (package ticket). A hook that
// hung, crashed, answered nothing or was not loaded issued none, so
// nothing runs, and the model is told why (ticket.ReasonNoDecision).
//
// The ticket is bound to the host process (Host): the host sets no
// session variable for the call command, but spawns it itself, so the
// wrapper's parent is the host, and the hook finds the same process as its
// nearest ancestor that is not a shell (HookHost). Where the host runs the
// hook's rewritten input (Gemini), the hook writes the ticket's nonce into
// the command (ticket.Mark); where it does not (Qwen Code), the nonce is
// derived from the host, the cwd and the command (Derived).
package shelltool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Name is the tool's name as the discovery lists it. Gemini registers it as
// DiscoveredPrefix+Name.
const Name = "loopguard_shell"

// DiscoveredPrefix is what Gemini CLI and Qwen Code put before the name of
// a tool the discovery command lists.
const DiscoveredPrefix = "discovered_tool_"

// HostName is the tool's name in the host's hook payloads.
const HostName = DiscoveredPrefix + Name

// DiscoverWord is loopguard-exec's one argument when the host runs it as
// its tools.discoveryCommand.
const DiscoverWord = "--list-shell-tool"

// BuiltinShell is the host's own shell tool, which the settings exclude.
const BuiltinShell = "run_shell_command"

// Declaration is the tool as the discovery lists it: a function
// declaration in the Gemini API's form.
func Declaration() map[string]any {
	return map[string]any{
		"name": Name,
		"description": "Runs a bash command (bash -c) in the project's root directory and returns its standard output; " +
			"a failing command returns its output, error output and exit code. This is the shell tool here (the built-in one is turned off): " +
			"loopguard decides every command before it runs, and a command it did not decide does not run. " +
			"Use `cd DIR && ...` to work in a subdirectory.",
		"parametersJsonSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"command":     map[string]any{"type": "string", "description": "The exact bash command to run."},
				"description": map[string]any{"type": "string", "description": "A short note for the user on what the command does."},
			},
			"required": []string{"command"},
		},
	}
}

// Discovery is the discovery command's output: a JSON array of one tool.
func Discovery() []byte {
	b, _ := json.Marshal([]any{Declaration()})
	return append(b, '\n')
}

// Settings is the "tools" block of the host's user settings that puts the
// wrapper at launcher (loopguard-exec's absolute path) in front of every
// shell command: the built-in shell excluded, the discovery and call
// commands loopguard's.
func Settings(launcher string) map[string]any {
	return map[string]any{
		"exclude":          []string{BuiltinShell},
		"discoveryCommand": DiscoveryCommand(launcher),
		"callCommand":      launcher,
	}
}

// DiscoveryCommand is the discovery command line: the host parses it
// into words (shell-quote), so a path with a space is quoted.
func DiscoveryCommand(launcher string) string {
	return quote(launcher) + " " + DiscoverWord
}

func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`|&;<>()*?[]#~=%{}!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Derived is the nonce of a ticket for a host that does not run the
// hook's rewritten input: the hook and the wrapper compute it alike from
// the host process, the cwd and the command.
func Derived(host, cwd, cmd string) string {
	h := sha256.New()
	for _, f := range []string{"loopguard shelltool nonce v1", host, filepath.Clean(cwd), cmd} {
		fmt.Fprintf(h, "%d:%s\x00", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Host is the identity of process pid that a ticket is bound to:
// "host:PID:START", START its start time in clock ticks since boot
// (/proc/PID/stat), so that a later process with the same pid is another.
func Host(pid int) (string, error) {
	st, err := readStat(pid)
	if err != nil {
		return "", err
	}
	return "host:" + strconv.Itoa(pid) + ":" + st.start, nil
}

type stat struct {
	ppid  int
	start string
}

// readStat reads the parent and the start time of pid from /proc.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, fmt.Errorf("the host process cannot be read: %w", err)
	}
	// The command name, field 2, is in parentheses and may hold any byte:
	// the fields after it start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, errors.New("the host process cannot be read: /proc stat without a name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, starttime field 22.
	if len(f) < 20 {
		return stat{}, errors.New("the host process cannot be read: /proc stat too short")
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return stat{}, errors.New("the host process cannot be read: bad ppid")
	}
	return stat{ppid: ppid, start: f[19]}, nil
}

// shells are the programs a host runs a hook command with (Gemini and
// Qwen Code: bash -c; others sh -c), which stand between the host and the
// hook.
var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "busybox": true}

// HookHost is the host of the hook running in this process: the nearest
// ancestor that is not a shell. Its identity is what the wrapper finds as
// its own parent when the same host spawns the call command.
func HookHost() (string, error) {
	pid := os.Getppid()
	for i := 0; i < 8 && pid > 1; i++ {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil {
			return "", fmt.Errorf("the hook's host cannot be read: %w", err)
		}
		if !shells[filepath.Base(exe)] {
			return Host(pid)
		}
		st, err := readStat(pid)
		if err != nil {
			return "", err
		}
		pid = st.ppid
	}
	return "", errors.New("the hook's host cannot be found: only shells above it")
}
