package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"strings"

	"github.com/loopguard/loopguard/shellparse"
)

// Formats a command is found in.
const (
	// FormatJSON: a JSON document or JSON lines holding tool calls (Claude
	// Code's ~/.claude/projects/*/*.jsonl transcripts, hook payload logs
	// such as logs/pre_tool_use.json, OpenCode's `opencode export`, Codex's
	// rollout-*.jsonl, Gemini CLI's chats), recognised by the shape of
	// each call (see found).
	FormatJSON = "json"
	// FormatSpecStory: SpecStory's Markdown (.specstory/history/*.md), one
	// <tool-use data-tool-type="shell"> block a call.
	FormatSpecStory = "specstory"
	// FormatMarkdownJSON: a Markdown export that prints the transcript's
	// content blocks as indented JSON ("### Assistant" then [ {...} ]).
	FormatMarkdownJSON = "markdown-json"
)

// Found is one command found in a log.
type Found struct {
	Cmd   string
	Agent string
	Cwd   string
	Shell string
}

// Extract finds the shell commands in one log file of the given format.
func Extract(format string, data []byte) []Found {
	switch format {
	case FormatJSON:
		return extractJSON(data)
	case FormatSpecStory:
		return extractSpecStory(data)
	case FormatMarkdownJSON:
		return extractMarkdownJSON(data)
	}
	return nil
}

// extractJSON reads data as one JSON document, or else as JSON lines, and
// walks every value for tool calls. The working directory a log names
// (Claude Code's cwd on each line, Codex's session_meta, OpenCode's
// directory) carries on to the calls that follow it.
func extractJSON(data []byte) []Found {
	var w walker
	var doc any
	if err := decode(data, &doc); err == nil {
		w.walk(doc)
		return w.out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || (line[0] != '{' && line[0] != '[') {
			continue
		}
		var v any
		if decode(line, &v) == nil {
			w.walk(v)
		}
	}
	return w.out
}

func decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("trailing data after the JSON value")

type walker struct {
	cwd string
	out []Found
}

func (w *walker) add(agent, cmd, cwd string) {
	if strings.TrimSpace(cmd) == "" {
		return
	}
	if cwd == "" {
		cwd = w.cwd
	}
	w.out = append(w.out, Found{Cmd: cmd, Agent: agent, Cwd: cwd})
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

func (w *walker) walk(v any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			w.walk(e)
		}
	case map[string]any:
		for _, k := range []string{"cwd", "directory"} {
			if s := str(x, k); strings.HasPrefix(s, "/") || (len(s) > 2 && s[1] == ':') {
				w.cwd = s
			}
		}
		if p := obj(x, "payload"); p != nil && str(p, "cwd") != "" {
			w.cwd = str(p, "cwd")
		}
		w.found(x)
		// In a stable order: a later key's cwd must not depend on map order.
		ks := make([]string, 0, len(x))
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			w.walk(x[k])
		}
	}
}

// found recognises one tool call of a shell tool in m.
func (w *walker) found(m map[string]any) {
	switch {
	// Claude Code's transcript: a tool_use content block.
	case str(m, "type") == "tool_use" && str(m, "name") == "Bash":
		if in := obj(m, "input"); in != nil {
			w.add("claude-code", str(in, "command"), "")
		}
	// Claude Code's hook payload (PreToolUse / PostToolUse), as logged.
	case str(m, "tool_name") == "Bash" && obj(m, "tool_input") != nil:
		w.add("claude-code", str(obj(m, "tool_input"), "command"), str(m, "cwd"))
	// OpenCode's export: a tool part of the bash tool.
	case str(m, "type") == "tool" && str(m, "tool") == "bash":
		if st := obj(m, "state"); st != nil {
			if in := obj(st, "input"); in != nil {
				w.add("opencode", str(in, "command"), "")
			}
		}
	// Codex's rollout: a function call of its shell tools.
	case str(m, "type") == "function_call" || str(m, "type") == "custom_tool_call":
		name := str(m, "name")
		if name != "shell" && name != "shell_command" && name != "exec_command" && name != "container.exec" && name != "local_shell" {
			return
		}
		var args map[string]any
		if s := str(m, "arguments"); s != "" {
			if decode([]byte(s), &args) != nil {
				return
			}
		} else if a := obj(m, "arguments"); a != nil {
			args = a
		}
		cwd := str(args, "workdir")
		for _, k := range []string{"command", "cmd"} {
			switch c := args[k].(type) {
			case string:
				w.add("codex", c, cwd)
				return
			case []any:
				w.add("codex", joinArgv(c), cwd)
				return
			}
		}
	case str(m, "type") == "local_shell_call":
		if a := obj(m, "action"); a != nil {
			if c, ok := a["command"].([]any); ok {
				w.add("codex", joinArgv(c), str(a, "working_directory"))
			}
		}
	// Gemini CLI: a function call of run_shell_command.
	case str(m, "name") == "run_shell_command" && obj(m, "args") != nil:
		a := obj(m, "args")
		w.add("gemini-cli", str(a, "command"), str(a, "dir_path"))
	}
}

// joinArgv turns a shell tool's argv into the command bash runs. Codex
// runs a model's shell call as argv; a call of the form
// [bash|sh|zsh, -c|-lc, SCRIPT] runs SCRIPT, and Codex itself judges
// SCRIPT (its safe-command list parses the script of bash -lc). Any other
// argv is joined with single quotes where a word needs them, the way a
// shell would have to be given it.
func joinArgv(argv []any) string {
	words := make([]string, 0, len(argv))
	for _, a := range argv {
		s, ok := a.(string)
		if !ok {
			return ""
		}
		words = append(words, s)
	}
	if len(words) == 3 {
		switch strings.TrimPrefix(words[0], "/bin/") {
		case "bash", "sh", "zsh", "/usr/bin/bash", "/usr/bin/zsh":
			if words[1] == "-lc" || words[1] == "-c" {
				return words[2]
			}
		}
	}
	quoted := make([]string, len(words))
	for i, s := range words {
		if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!=") {
			quoted[i] = s
		} else {
			quoted[i] = shellparse.Quote(s)
		}
	}
	return strings.Join(quoted, " ")
}

var (
	specHeader = regexp.MustCompile(`<!-- ([A-Za-z][A-Za-z .-]*?) Session `)
	specBlock  = regexp.MustCompile(`(?s)<tool-use data-tool-type="shell" data-tool-name="([^"]*)">(.*?)</tool-use>`)
	// A prompt of Windows PowerShell at the start of an output line.
	psPrompt = regexp.MustCompile(`(?m)^PS [A-Za-z]:\\`)
	// A PowerShell cmdlet (Verb-Noun) in command position.
	psCmdlet = regexp.MustCompile(`(^|[;|&({]\s*)(Get|Set|New|Remove|Move|Copy|Select|Test|Where|ForEach|Invoke|Start|Stop|Out|Write|Format|Measure|Sort|Import|Export|Add|Clear|Rename|Resolve|Split|Join|Expand|Compress)-[A-Z][A-Za-z]+\b`)
)

// specAgent names the agent of a SpecStory header ("Claude Code",
// "cursoride", "Codex CLI").
func specAgent(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "claude"):
		return "claude-code"
	case strings.Contains(n, "codex"):
		return "codex"
	case strings.Contains(n, "cursor"):
		return "cursor"
	case strings.Contains(n, "gemini"):
		return "gemini-cli"
	}
	return strings.ReplaceAll(strings.TrimSpace(n), " ", "-")
}

// extractSpecStory reads SpecStory's Markdown. Each agent's provider
// writes a shell call its own way (specstory-cli/pkg/providers/*/
// markdown_tools.go): a command with a newline in a ```bash fence, else
// `COMMAND` alone on a line of the body (Claude Code, Droid), or in the
// summary after the tool's name (Codex, Cursor CLI). Cursor IDE's
// run_terminal_cmd always has the ```bash fence. A file without a session
// header is the Cursor extension's.
func extractSpecStory(data []byte) []Found {
	text := string(data)
	var out []Found
	// Headers, by offset: each block belongs to the session above it.
	heads := specHeader.FindAllStringSubmatchIndex(text, -1)
	for _, b := range specBlock.FindAllStringSubmatchIndex(text, -1) {
		agent := "cursor"
		for _, h := range heads {
			if h[0] < b[0] {
				agent = specAgent(text[h[2]:h[3]])
			}
		}
		cmd, rest, ok := specCommand(text[b[4]:b[5]])
		if !ok {
			continue
		}
		f := Found{Cmd: cmd, Agent: agent}
		if psPrompt.MatchString(rest) || psCmdlet.MatchString(cmd) {
			f.Shell = "powershell"
		}
		out = append(out, f)
	}
	return out
}

// specCommand finds the command in a tool-use block's body, and returns
// what follows it (the output).
func specCommand(body string) (cmd, rest string, ok bool) {
	lines := strings.SplitAfter(body, "\n")
	summary := ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\n")
		if strings.Contains(l, "<summary>") {
			summary = l
			continue
		}
		if fence, lang := fenceOpen(l); fence != "" {
			if lang != "bash" && lang != "sh" && lang != "shell" && lang != "zsh" && lang != "console" {
				break // the output's fence: no command before it
			}
			var b strings.Builder
			for j := i + 1; j < len(lines); j++ {
				if strings.TrimRight(lines[j], "\n") == fence {
					return strings.TrimSuffix(b.String(), "\n"), strings.Join(lines[j+1:], ""), true
				}
				b.WriteString(lines[j])
			}
			return "", "", false
		}
		if len(l) >= 3 && l[0] == '`' && l[len(l)-1] == '`' && l[1] != '`' {
			return l[1 : len(l)-1], strings.Join(lines[i+1:], ""), true
		}
	}
	// In the summary: Tool use: **NAME** `COMMAND`</summary>
	if i := strings.Index(summary, "** `"); i >= 0 {
		s := summary[i+len("** `"):]
		if j := strings.LastIndex(s, "`</summary>"); j >= 0 {
			return s[:j], body, true
		}
	}
	return "", "", false
}

// fenceOpen returns the fence (``` or longer) and language of a line that
// opens a fenced code block, or "".
func fenceOpen(l string) (fence, lang string) {
	n := 0
	for n < len(l) && l[n] == '`' {
		n++
	}
	if n < 3 {
		return "", ""
	}
	return l[:n], strings.TrimSpace(l[n:])
}

// extractMarkdownJSON reads a Markdown export that prints each message's
// content blocks as a JSON array starting at the start of a line ("[" ...
// "]"), and walks each array.
func extractMarkdownJSON(data []byte) []Found {
	var w walker
	lines := strings.SplitAfter(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimRight(lines[i], "\r\n") != "[" {
			continue
		}
		var b strings.Builder
		for j := i; j < len(lines); j++ {
			b.WriteString(lines[j])
			if strings.TrimRight(lines[j], "\r\n") == "]" {
				var v any
				if decode([]byte(b.String()), &v) == nil {
					w.walk(v)
					i = j
				}
				break
			}
		}
	}
	return w.out
}
