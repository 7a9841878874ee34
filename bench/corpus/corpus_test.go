package corpus

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/shellparse"
)

func TestReadWrite(t *testing.T) {
	in := []Entry{
		{Cmd: "ls -la | head && echo '<done>'", Agent: "claude-code", Source: "github.com/o/n", Path: "logs/x.json", Commit: strings.Repeat("a", 40), License: "MIT", Shape: shellparse.Shape("ls -la | head")},
		{Cmd: "printf 'a\\tb\\n'\nexit 0", Agent: "codex"},
	}
	var b bytes.Buffer
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<done>") {
		t.Errorf("HTML escaped: %s", b.String())
	}
	out, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n%+v\n%+v", in, out)
	}
	for _, bad := range []string{`{"agent":"x"}`, `{"cmd":""}`, `not json`, "", "\n\n"} {
		if _, err := Read(strings.NewReader(bad)); err == nil {
			t.Errorf("Read(%q): no error", bad)
		}
	}
	// Someone else's corpus: only cmd, extra fields.
	if es, err := Read(strings.NewReader(`{"cmd":"git status","session":"x"}` + "\n")); err != nil || len(es) != 1 || es[0].Cmd != "git status" {
		t.Errorf("minimal corpus: %v %v", es, err)
	}
}

func TestDedup(t *testing.T) {
	got := Dedup([]Entry{{Cmd: "a", Source: "1"}, {Cmd: "b"}, {Cmd: "a", Source: "2"}, {Cmd: "a "}})
	if len(got) != 3 || got[0].Source != "1" || got[2].Cmd != "a " {
		t.Errorf("Dedup: %+v", got)
	}
}

func TestExtractJSON(t *testing.T) {
	// A Claude Code transcript: JSON lines, cwd on each line, one Bash
	// call and one Read call.
	claude := `{"type":"user","cwd":"/home/u/p","message":{"role":"user","content":"hi"}}
{"type":"assistant","cwd":"/home/u/p","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"git status && ls","description":"d"}},{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/x"}}]}}
not json at all
{"type":"assistant","cwd":"/home/u/q","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"cat > f <<'EOF'\na\nEOF"}}]}}
`
	want := []Found{{Cmd: "git status && ls", Agent: "claude-code", Cwd: "/home/u/p"}, {Cmd: "cat > f <<'EOF'\na\nEOF", Agent: "claude-code", Cwd: "/home/u/q"}}
	if got := Extract(FormatJSON, []byte(claude)); !reflect.DeepEqual(got, want) {
		t.Errorf("claude: %+v", got)
	}
	// A hook payload log: one JSON array.
	hooks := `[{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"npm test"}},
	 {"tool_name":"Edit","tool_input":{"file_path":"a"}}]`
	if got := Extract(FormatJSON, []byte(hooks)); !reflect.DeepEqual(got, []Found{{Cmd: "npm test", Agent: "claude-code", Cwd: "/w"}}) {
		t.Errorf("hooks: %+v", got)
	}
	// OpenCode's export.
	oc := `{"info":{"directory":"/r"},"messages":[{"parts":[{"type":"tool","tool":"bash","state":{"status":"completed","input":{"command":"bun test","description":"t"}}},{"type":"tool","tool":"read","state":{"input":{"filePath":"x"}}}]}]}`
	if got := Extract(FormatJSON, []byte(oc)); !reflect.DeepEqual(got, []Found{{Cmd: "bun test", Agent: "opencode", Cwd: "/r"}}) {
		t.Errorf("opencode: %+v", got)
	}
	// Codex's rollout: argv of bash -lc, a plain argv, and shell_command.
	codex := `{"type":"session_meta","payload":{"cwd":"/c","id":"x"}}
{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"rg -n foo | head\"],\"workdir\":\"/c/sub\"}"}}
{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\",\"-la\",\"a b\"]}"}}
{"type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"cargo test\"}"}}
{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{}"}}
`
	want = []Found{{Cmd: "rg -n foo | head", Agent: "codex", Cwd: "/c/sub"}, {Cmd: "ls -la 'a b'", Agent: "codex", Cwd: "/c"}, {Cmd: "cargo test", Agent: "codex", Cwd: "/c"}}
	if got := Extract(FormatJSON, []byte(codex)); !reflect.DeepEqual(got, want) {
		t.Errorf("codex: %+v", got)
	}
}

func TestExtractSpecStory(t *testing.T) {
	md := "<!-- Claude Code Session 1 (2026-01-01 00:00:00Z) -->\n\n" +
		"<tool-use data-tool-type=\"shell\" data-tool-name=\"Bash\"><details>\n<summary>Tool use: **Bash**</summary>\nList files\n\n`ls -la | grep `x``\n\n```text\nout\n```\n</details></tool-use>\n\n" +
		"<tool-use data-tool-type=\"shell\" data-tool-name=\"Bash\"><details>\n<summary>Tool use: **Bash**</summary>\n\n```bash\ncat <<'EOF' > a\n```x```\nEOF\n```\n</details></tool-use>\n\n" +
		"<tool-use data-tool-type=\"read\" data-tool-name=\"Read\"><details>\n<summary>Tool use: **Read**</summary>\n`/etc/passwd`\n</details></tool-use>\n\n" +
		"<!-- Codex CLI Session 2 (2026-01-02 00:00:00Z) -->\n\n" +
		"<tool-use data-tool-type=\"shell\" data-tool-name=\"shell_command\"><details>\n<summary>Tool use: **shell_command** `rg -n TODO`</summary>\n```\nx\n```\n</details></tool-use>\n\n" +
		"<!-- cursoride Session 3 (2026-01-03 00:00:00Z) -->\n\n" +
		"<tool-use data-tool-type=\"shell\" data-tool-name=\"run_terminal_cmd\">\n<details><summary>Tool use: **run_terminal_cmd** • Run command: dir</summary>\n\n```bash\ndir\n```\n\n```\nPS C:\\Users\\x> dir\n```\n</details></tool-use>\n"
	want := []Found{
		{Cmd: "ls -la | grep `x`", Agent: "claude-code"},
		{Cmd: "cat <<'EOF' > a\n```x```\nEOF", Agent: "claude-code"},
		{Cmd: "rg -n TODO", Agent: "codex"},
		{Cmd: "dir", Agent: "cursor", Shell: "powershell"},
	}
	if got := Extract(FormatSpecStory, []byte(md)); !reflect.DeepEqual(got, want) {
		t.Errorf("specstory:\n got %q\nwant %q", got, want)
	}
}

func TestExtractMarkdownJSON(t *testing.T) {
	md := "### Assistant\n> time\n\n[\n  {\n    \"type\": \"tool_use\",\n    \"name\": \"Bash\",\n    \"input\": {\n      \"command\": \"pytest -q\"\n    }\n  }\n]\n\n---\n[\nnot json\n]\n"
	if got := Extract(FormatMarkdownJSON, []byte(md)); !reflect.DeepEqual(got, []Found{{Cmd: "pytest -q", Agent: "claude-code"}}) {
		t.Errorf("markdown-json: %+v", got)
	}
}
