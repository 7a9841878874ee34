package policy

// ToolClass is what loopguard knows a tool of the agent can do.
type ToolClass uint8

const (
	// Guarded tools need an approval or a grant. Every tool not named
	// below is guarded, unknown future tools included.
	Guarded ToolClass = iota
	// ReadOnly tools only read or list (and keep the session's own task
	// list); they run unless they touch a protected resource.
	ReadOnly
	// SubagentLaunch starts a subagent; its own calls are guarded one by one.
	SubagentLaunch
)

// ReadPaths names, for each read-only tool that reads files, the input
// fields holding a path, and whether the field is a glob pattern relative
// to the "path" field (Glob's pattern, Grep's glob filter).
var ReadPaths = map[string][]PathField{
	"Read":         {{Name: "file_path"}},
	"NotebookRead": {{Name: "notebook_path"}},
	"LS":           {{Name: "path"}},
	"Glob":         {{Name: "path"}, {Name: "pattern", Glob: true}},
	"Grep":         {{Name: "path", Dir: true}, {Name: "glob", Glob: true}},
}

// PathField is one input field of a tool that holds a path.
type PathField struct {
	Name string
	// Dir: the tool reads the whole tree below it (a recursive search).
	Dir bool
	// Glob: a pattern, relative to the tool's "path" field (or its cwd).
	Glob bool
}

var toolClasses = map[string]ToolClass{
	"Read": ReadOnly, "NotebookRead": ReadOnly, "LS": ReadOnly, "Glob": ReadOnly, "Grep": ReadOnly,
	"ToolSearch": ReadOnly, "ListAgents": ReadOnly, "CronList": ReadOnly,
	"TodoRead": ReadOnly, "TodoWrite": ReadOnly, "TaskList": ReadOnly, "TaskGet": ReadOnly,
	"TaskCreate": ReadOnly, "TaskUpdate": ReadOnly, "TaskOutput": ReadOnly,
	"Task": SubagentLaunch, "Agent": SubagentLaunch,
}

// ClassOf is the class of a tool by its exact (case-sensitive) name.
func ClassOf(tool string) ToolClass { return toolClasses[tool] }

// KnownTools are the tools of the Claude Code versions loopguard was
// checked against (the pinned client's list is recorded in
// testdata/tools). doctor tests a registration's matcher against them, and
// against names no version has yet, to find tools it leaves unguarded.
var KnownTools = []string{
	"Agent", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList", "DeferredToolPlaceholder",
	"Edit", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "KillShell", "LS",
	"ListAgents", "Monitor", "MultiEdit", "NotebookEdit", "NotebookRead", "PowerShell", "Read",
	"ReportFindings", "ScheduleWakeup", "SendMessage", "Skill", "Task", "TaskStop", "TodoWrite",
	"ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write",
	"mcp__server__tool", "SomeFutureTool",
}

// shownOnly names, per tool, the input fields that change nothing about
// what runs: a note for the human (Bash's description). They are left out
// of a call's digest, so that a retry that words its description anew
// is the same call, and shown apart. Anything not listed is part of the
// digest, future fields included.
var shownOnly = map[string][]string{
	"Bash": {"description"},
}

// ShownOnly reports whether field of tool's input only describes the call.
func ShownOnly(tool, field string) bool {
	for _, f := range shownOnly[tool] {
		if f == field {
			return true
		}
	}
	return false
}
