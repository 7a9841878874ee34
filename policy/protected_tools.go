package policy

// ToolClass is what loopguard knows a tool of the agent can do.
type ToolClass uint8

const (
	// Guarded tools need an approval or a grant. Every tool not named
	// below is guarded, unknown future tools included.
	Guarded ToolClass = iota
	// ReadOnly tools only read or list (and keep the session's own task
	// list, or ask the user a question); they run unless they touch a
	// protected resource.
	ReadOnly
	// SubagentLaunch starts a subagent; its own calls are guarded one by one.
	SubagentLaunch
)

// tools is the tool schema, the one home of what loopguard knows of each
// tool of the agent: its class, the input fields that name the paths it
// reads (read-only tools) or the file it changes (file tools), and the
// fields that only describe it. A tool not named is Guarded and changes
// no file loopguard knows of, future tools included.
var tools = map[string]Tool{
	"Read":         {Class: ReadOnly, ReadPaths: []PathField{{Name: "file_path"}}},
	"NotebookRead": {Class: ReadOnly, ReadPaths: []PathField{{Name: "notebook_path"}}},
	"LS":           {Class: ReadOnly, ReadPaths: []PathField{{Name: "path"}}},
	"Glob":         {Class: ReadOnly, ReadPaths: []PathField{{Name: "path"}, {Name: "pattern", Glob: true}}},
	"Grep":         {Class: ReadOnly, ReadPaths: []PathField{{Name: "path", Dir: true}, {Name: "glob", Glob: true}}},
	"ToolSearch":   {Class: ReadOnly}, "ListAgents": {Class: ReadOnly}, "CronList": {Class: ReadOnly},
	"TodoRead": {Class: ReadOnly}, "TodoWrite": {Class: ReadOnly}, "TaskList": {Class: ReadOnly}, "TaskGet": {Class: ReadOnly},
	"TaskCreate": {Class: ReadOnly}, "TaskUpdate": {Class: ReadOnly}, "TaskOutput": {Class: ReadOnly}, "AskUserQuestion": {Class: ReadOnly},
	"Task":         {Class: SubagentLaunch},
	"Agent":        {Class: SubagentLaunch},
	"Write":        {Changes: "file_path"},
	"Edit":         {Changes: "file_path"},
	"MultiEdit":    {Changes: "file_path"},
	"NotebookEdit": {Changes: "notebook_path"},
	"Bash":         {ShownOnly: []string{"description"}},
	// Guarded, and they end a background call: a launch they stop may
	// have been killed before its sweep (hookmain's recovery after them).
	"TaskStop":  {StopsTask: true},
	"KillShell": {StopsTask: true},
}

// Tool is one row of the tool schema.
type Tool struct {
	Class ToolClass
	// ReadPaths are the fields naming what a read-only tool reads.
	ReadPaths []PathField
	// Changes is the field naming the file a file tool changes.
	Changes string
	// ShownOnly are the fields that change nothing about what runs.
	ShownOnly []string
	// StopsTask: the tool ends a call running in the background.
	StopsTask bool
}

// ToolOf is the schema row of a tool, by its exact name.
func ToolOf(name string) Tool { return tools[name] }

// PathField is one input field of a tool that holds a path.
type PathField struct {
	Name string
	// Dir: the tool reads the whole tree below it (a recursive search).
	Dir bool
	// Glob: a pattern, relative to the tool's "path" field (or its cwd).
	Glob bool
}

// ClassOf is the class of a tool by its exact (case-sensitive) name.
func ClassOf(tool string) ToolClass { return tools[tool].Class }

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

// ShownOnly reports whether field of tool's input only describes the call.
func ShownOnly(tool, field string) bool {
	for _, f := range tools[tool].ShownOnly {
		if f == field {
			return true
		}
	}
	return false
}
