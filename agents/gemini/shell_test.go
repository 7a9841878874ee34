package gemini

import (
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/hooks"
)

// stripRows are stripShellWrapper's cases: the text Gemini keeps, or ""
// with refused for the double quotes it reads with shell-quote.
var stripRows = []struct {
	in, out string
	refused bool
}{
	{in: "ls -la", out: "ls -la"},
	{in: "  ls  \n", out: "ls"},
	{in: "\u00a0echo hi\u3000", out: "echo hi"},
	{in: "bash -c 'echo hi'", out: "echo hi"},
	// The eighty-second attack run's F1: bash runs echo hi alone.
	{in: "bash -c 'echo hi' 'x; id > pwned.txt; echo '", out: "echo hi' 'x; id > pwned.txt; echo "},
	{in: "/bin/sh -c 'a' ", out: "a"},
	{in: "./zsh -c x y", out: "x y"},
	{in: "BaSh -C 'x'", out: "x"},
	{in: "ſh -c 'x'", out: "ſh -c 'x'"},
	{in: "env bash -c 'x'", out: "env bash -c 'x'"},
	{in: "bash  -c\t\"a b\"", out: "a b"},
	{in: `bash -c "a" "b"`, refused: true},
	{in: `bash -c "echo $HOME"`, refused: true},
	{in: `bash -c "a\\b"`, refused: true},
	{in: "bash -c \"a`b`\"", refused: true},
	{in: `bash -C "a$b"`, out: "a$b"},
	{in: `cmd.exe /c "x"`, out: "x"},
	{in: `CMD.EXE /C 'x'`, out: "x"},
	{in: `powershell.exe -NoProfile -Command 'rm -rf x'`, out: "rm -rf x"},
	{in: `pwsh -Command "a $b"`, out: "a $b"},
	{in: `bash -c '`, out: "'"},
	{in: `bash -c ''`, out: ""},
	{in: "bash -c", out: "bash -c"},
	{in: "bash -c ", out: ""},
}

func TestStripShellWrapper(t *testing.T) {
	for _, r := range stripRows {
		out, ok := stripShellWrapper(r.in)
		if ok == r.refused || ok && out != r.out {
			t.Errorf("stripShellWrapper(%q) = %q, %v; want %q, refused %v", r.in, out, ok, r.out, r.refused)
		}
	}
}

// TestRuns: the text judged for a command, or its refusal.
func TestRuns(t *testing.T) {
	for _, r := range []struct{ in, out, refused string }{
		{in: "ls -la", out: "ls -la"},
		{in: "bash -c 'echo hi'", out: "echo hi"},
		{in: "bash -c 'echo hi' 'x; id > pwned.txt; echo '", out: "echo hi' 'x; id > pwned.txt; echo"},
		{in: "echo a\\", out: "echo a\\ "},
		{in: "cat <<EOF\nhi\nEOF", out: "cat <<EOF\nhi\nEOF"},
		{in: "case x in x) echo y;; esac", out: "case x in x) echo y;; esac"},
		{in: "(cd a && ls) && echo $(ls)", out: "(cd a && ls) && echo $(ls)"},
		{in: "echo hi # a comment )", out: "echo hi # a comment )"},
		// F1b: bash alone reads a syntax error; in Gemini's subshell the
		// first ) closes it and id runs.
		{in: "echo ok ) ; id > pwned.txt ; ( :", refused: "would not stay inside it whole"},
		{in: "echo ok\n)\nid", refused: "would not stay inside it whole"},
		{in: "cat <<EOF\nhi", refused: "would not stay inside it whole"},
		{in: "echo 'open", refused: "would not stay inside it whole"},
		{in: `bash -c "echo $HOME"`, refused: "its own parser"},
	} {
		out, err := Runs(r.in)
		switch {
		case r.refused != "" && (err == nil || !strings.Contains(err.Error(), r.refused)):
			t.Errorf("Runs(%q) = %q, %v; want a refusal (%s)", r.in, out, err, r.refused)
		case r.refused == "" && (err != nil || out != r.out):
			t.Errorf("Runs(%q) = %q, %v; want %q", r.in, out, err, r.out)
		}
	}
}

// TestDecodeShellAsRun: the engine sees the text Gemini runs.
func TestDecodeShellAsRun(t *testing.T) {
	payload := func(cmd string) map[string]any {
		return map[string]any{"session_id": "s", "transcript_path": "/t", "cwd": "/p", "hook_event_name": BeforeTool,
			"timestamp": "x", "tool_name": "run_shell_command", "tool_input": map[string]any{"command": cmd, "dir_path": "sub"}}
	}
	c, _, err := Adapter{}.Decode(payload("bash -c 'echo hi' 'x; id > pwned.txt; echo '"), BeforeTool)
	if err != nil || c.ToolName != "Bash" || c.ToolInput["command"] != "echo hi' 'x; id > pwned.txt; echo" || c.Cwd != "/p/sub" {
		t.Fatalf("F1: %+v, %v", c, err)
	}
	if _, _, err := (Adapter{}).Decode(payload("echo ok ) ; id > pwned.txt ; ( :"), BeforeTool); err == nil {
		t.Fatal("F1b: decoded")
	} else if _, ok := err.(*hooks.MalformedError); !ok {
		t.Fatalf("F1b: %T %v", err, err)
	}
	// The control: an ordinary command is judged as written.
	c, _, err = Adapter{}.Decode(payload("go test ./..."), BeforeTool)
	if err != nil || c.ToolInput["command"] != "go test ./..." {
		t.Fatalf("control: %+v, %v", c, err)
	}
}

// TestStripShellWrapperOracle runs stripRows, and random texts inside
// bash -c "...", through Gemini CLI 0.61.0's own stripShellWrapper, from
// the bundle the end-to-end tests install (e2e/agenttest); it skips when
// it is not installed.
func TestStripShellWrapperOracle(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	cache := filepath.Join("..", "..", ".cache", "agents")
	if c := os.Getenv("LOOPGUARD_AGENTS_CACHE"); c != "" {
		cache = c
	}
	// The chunk of the installed version (gemini.js imports it) that
	// exports the function: an install over another version leaves that
	// one's chunks beside it.
	bundle := filepath.Join(cache, "gemini/node_modules/@google/gemini-cli/bundle")
	entry, _ := os.ReadFile(filepath.Join(bundle, "gemini.js"))
	mod := ""
	for _, name := range regexp.MustCompile(`"\./(chunk-[A-Z0-9]+\.js)"`).FindAllStringSubmatch(string(entry), -1) {
		f := filepath.Join(bundle, name[1])
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "\n  stripShellWrapper,\n") {
			mod, _ = filepath.Abs(f)
			break
		}
	}
	if mod == "" {
		t.Skipf("gemini is not installed in %s (the e2e tests install it)", cache)
	}
	// The subshell's text, as the bundle writes it.
	b, _ := os.ReadFile(mod)
	for _, w := range []string{
		"(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n${trimmed2}" + subshellAfter + "`",
		`BASH_SHOPT_OPTIONS = "promptvars nullglob extglob nocaseglob dotglob"`,
		"if (trimmed2.endsWith(\"\\\\\")) {\n      trimmed2 += \" \";",
		"const strippedCommand = stripShellWrapper(this.params.command);",
		"const commandToExecute = this.wrapCommandForBackgroundPIDs(strippedCommand, tempFilePath, isWindows3);",
	} {
		if !strings.Contains(string(b), w) {
			t.Errorf("the bundle has no %q", w)
		}
	}
	var ins []string
	for _, r := range stripRows {
		ins = append(ins, r.in)
	}
	// Texts of the characters the port takes the double quotes off
	// (every ASCII one but ", \, $ and `, and some others).
	alphabet := []rune("ab ;|&()<>'*?[]{}~#!=%^-+.,:/\t\n\v\u00a0\u0085\ufeff\u2028é😀")
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		var b strings.Builder
		for j := rnd.Intn(12); j >= 0; j-- {
			b.WriteRune(alphabet[rnd.Intn(len(alphabet))])
		}
		ins = append(ins, `bash -c "`+b.String()+`"`, "sh -c '"+b.String()+"'", b.String())
	}
	script := `const m = await import(process.argv[1]);
const ins = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(ins.map((s) => m.stripShellWrapper(s))));`
	script = `import { createRequire } from "node:module"; const require = createRequire(import.meta.url);` + script
	in, _ := json.Marshal(ins)
	cmd := exec.Command(node, "--input-type=module", "-e", script, mod)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(ins) {
		t.Fatalf("node's answer %q: %v", out, err)
	}
	for i, s := range ins {
		got, ok := stripShellWrapper(s)
		if ok && got != want[i] {
			t.Errorf("stripShellWrapper(%q) = %q, Gemini's %q", s, got, want[i])
		}
		if !ok && i < len(stripRows) && !stripRows[i].refused {
			t.Errorf("stripShellWrapper(%q) refused", s)
		}
	}
}
