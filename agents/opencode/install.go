package opencode

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/register"
)

//go:embed plugin.js
var pluginSource string

// pluginHeader is the start every version of loopguard's plugin has.
const pluginHeader = "// loopguard: OpenCode plugin, written by `loopguard init --agent opencode`."

// Plugin is the plugin init writes for o: plugin.js with the hook's
// binary, mode and timeout (in milliseconds, well above the deadline),
// and --ticket in the hook's command line when o.Ticket (two-phase
// enforcement: OpenCode's shell is loopguard's wrapper).
func Plugin(o register.Options) []byte {
	mode := o.Mode
	if mode == "" {
		mode = "enforce"
	}
	return []byte(pluginWith(o.Binary, mode, register.TimeoutSeconds(o.Deadline)*1000, o.Ticket))
}

// pluginArgs is the hook's command line as the plugin runs it, a
// JavaScript array: Args of register.Command, with the plugin's own
// variables event and MODE in their places.
func pluginArgs(ticket bool) string {
	var words []string
	for _, a := range (register.Command{Agent: Name, Event: "event", Mode: "MODE", Ticket: ticket}).Args() {
		if a == "event" || a == "MODE" {
			words = append(words, a)
		} else {
			words = append(words, jsString(a))
		}
	}
	return "[" + strings.Join(words, ", ") + "]"
}

// jsString is s as a JavaScript string literal (a JSON string is one).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func pluginWith(bin, mode string, timeoutMS int, ticket bool) string {
	return strings.NewReplacer("__HOOK__", jsString(bin), "__MODE__", jsString(mode), "__TIMEOUT_MS__", strconv.Itoa(timeoutMS),
		"__FAILED__", jsString(register.FallbackReason), "__ARGS__", pluginArgs(ticket)).Replace(pluginSource)
}

// IsOurs recognises a plugin file of loopguard's, of any version.
func IsOurs(data []byte) bool { return strings.HasPrefix(string(data), pluginHeader) }

var settingsRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^const HOOK = (".*")\nconst MODE = (".*")\nconst TIMEOUT_MS = ([0-9]+)\n`)
})

// Settings are what a plugin file of loopguard's was written with.
type Settings struct {
	Bin       string
	Mode      string
	TimeoutMS int
	// Ticket: the hook runs with --ticket (two-phase enforcement).
	Ticket bool
	// Intact: the rest of the file is exactly what init writes.
	Intact bool
}

// ReadPlugin reads the settings of a plugin file of loopguard's.
func ReadPlugin(data []byte) (Settings, error) {
	var st Settings
	m := settingsRe().FindSubmatch(data)
	if m == nil || !IsOurs(data) {
		return st, fmt.Errorf("not loopguard's OpenCode plugin")
	}
	if json.Unmarshal(m[1], &st.Bin) != nil || json.Unmarshal(m[2], &st.Mode) != nil {
		return st, fmt.Errorf("the plugin's settings cannot be read")
	}
	st.TimeoutMS, _ = strconv.Atoi(string(m[3]))
	for _, ticket := range []bool{false, true} {
		if pluginWith(st.Bin, st.Mode, st.TimeoutMS, ticket) == string(data) {
			st.Ticket, st.Intact = ticket, true
		}
	}
	return st, nil
}

// Registration is OpenCode's: loopguard's own plugin file, in
// ~/.config/opencode/plugin/ (every project) or <project>/.opencode/plugin/.
// OpenCode loads the project's only with its project configuration on
// (OPENCODE_DISABLE_PROJECT_CONFIG unset); the user's always.
var Registration = register.Registration{
	Agent:   Name,
	User:    "plugin/loopguard.js",
	Project: ".opencode/plugin/loopguard.js",
	Plugin:  Plugin,
	IsOurs:  IsOurs,
	CheckPlugin: func(data []byte, o register.Options) []string {
		st, err := ReadPlugin(data)
		if err != nil {
			return []string{err.Error()}
		}
		var problems []string
		if !st.Intact {
			problems = append(problems, "the plugin is not the one init writes (edited, or from another loopguard version)")
		}
		problems = append(problems, register.CheckBinary("tool.execute.before", st.Bin)...)
		if min := (int(o.Deadline.Seconds()) + 1) * 1000; st.TimeoutMS < min {
			problems = append(problems, fmt.Sprintf("the plugin's timeout %d ms is not above the hook's %s deadline", st.TimeoutMS, o.Deadline))
		}
		return problems
	},
	Binding: "the session (each OpenCode subagent has its own), the call id, the tool and its complete arguments",
	Host: agents.Host{Client: "OpenCode 1.18.33",
		Rewrite: "loopguard's plugin sets the arguments OpenCode runs (output.args)",
		Timeout: "loopguard's plugin blocks the call when the hook does not answer within its timeout or cannot start; OpenCode skips a plugin that fails to load (doctor checks it is intact), and runs the call unless init --ticket made loopguard's wrapper its shell"},
}
