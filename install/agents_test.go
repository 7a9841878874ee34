package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/register"
)

type testHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

func agentFiles(bin string) map[string]register.AgentFile {
	return map[string]register.AgentFile{
		"nested": {Nested: true, Self: bin, Entries: []register.AgentEntry{
			{Event: "PreToolUse", Matcher: "^(Bash)$", Handler: testHandler{"command", "'" + bin + "' hook codex --event PreToolUse || echo deny", 30}},
			{Event: "PostToolUse", Matcher: "^(Bash)$", Handler: testHandler{"command", bin + " hook codex --event PostToolUse", 30}},
		}},
		"flat": {Version: 1, Self: bin, Entries: []register.AgentEntry{
			{Event: "preToolUse", Handler: testHandler{"command", bin + " hook cursor --event preToolUse", 30}},
		}},
	}
}

// TestAgentFileRoundTrip: init merges into an agent's existing hook file
// keeping everything else, a second init changes nothing, and uninstall
// gives back the original bytes; a file init created is deleted again.
func TestAgentFileRoundTrip(t *testing.T) {
	bin := "/opt/lg/loopguard"
	originals := map[string]string{
		"nested": "{\n    \"model\": \"o3\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"other-guard\"}]}\n        ],\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify 1e3\"}]}]\n    }\n}\n",
		"flat":   "{\"version\":1,\"hooks\":{\"preToolUse\":[{\"command\":\"./audit.sh\"}],\"stop\":[{\"command\":\"x\"}]}}",
	}
	for kind, f := range agentFiles(bin) {
		for _, orig := range []string{originals[kind], ""} {
			dir := t.TempDir()
			path := filepath.Join(dir, "cfg", "hooks.json")
			backups := filepath.Join(dir, "backups")
			if orig != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := ApplyAgent(path, backups, f, false)
			if err != nil || !res.Changed {
				t.Fatalf("%s: apply: %v %+v", kind, err, res)
			}
			data, _ := os.ReadFile(path)
			regs, err := AgentHooks(data, f)
			if err != nil {
				t.Fatal(err)
			}
			ours, others := 0, 0
			for _, r := range regs {
				if r.Ours {
					ours++
				} else {
					others++
				}
			}
			if ours != len(f.Entries) || (orig != "" && others == 0) {
				t.Errorf("%s: after init %d of ours, %d others:\n%s", kind, ours, others, data)
			}
			if orig != "" && (!strings.Contains(string(data), "other-guard") && !strings.Contains(string(data), "audit.sh")) {
				t.Errorf("%s: the other hooks were lost:\n%s", kind, data)
			}
			if res, err := ApplyAgent(path, backups, f, false); err != nil || res.Changed {
				t.Errorf("%s: second init changed the file: %v %+v", kind, err, res)
			}
			if _, err := RemoveAgent(path, backups, f, false); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			switch {
			case orig == "" && !os.IsNotExist(err):
				t.Errorf("%s: the file init created is still there: %q", kind, after)
			case orig != "" && !bytes.Equal(after, []byte(orig)):
				t.Errorf("%s: uninstall did not restore the original:\n got %q\nwant %q", kind, after, orig)
			}
		}
	}
}

// TestAgentFileRefusesBadShapes: a file whose hooks are not the agent's
// shape, or not JSON, is refused and left as it is.
func TestAgentFileRefusesBadShapes(t *testing.T) {
	f := agentFiles("/opt/lg/loopguard")["nested"]
	for _, bad := range []string{`[]`, `{"hooks":[]}`, `{"hooks":{"PreToolUse":{}}}`, `{"hooks":{"PreToolUse":[{"hooks":{}}]}}`, `{"hooks":`, ``} {
		if _, _, err := MergeAgent([]byte(bad), f); err == nil {
			t.Errorf("MergeAgent(%q) = nil error", bad)
		}
	}
	// Control: a good file merges.
	if _, changed, err := MergeAgent([]byte(`{"hooks":{}}`), f); err != nil || !changed {
		t.Errorf("good file: %v %v", changed, err)
	}
}

// TestAgentFileKeepsOtherHooksOnRemove: uninstall after the user changed the
// file removes only loopguard's handlers.
func TestAgentFileKeepsOtherHooksOnRemove(t *testing.T) {
	f := agentFiles("/opt/lg/loopguard")["nested"]
	out, _, err := MergeAgent([]byte(`{"hooks":{"PreToolUse":[{"matcher":"x","hooks":[{"type":"command","command":"a"},{"type":"command","command":"/opt/lg/loopguard hook codex --event PreToolUse"}]}]}}`), f)
	if err != nil {
		t.Fatal(err)
	}
	back, changed, err := UnmergeAgent(out, f)
	if err != nil || !changed {
		t.Fatal(err, changed)
	}
	if !strings.Contains(string(back), `"a"`) || strings.Contains(string(back), "loopguard") {
		t.Errorf("unmerge: %s", back)
	}
}

// TestAgentFileReplacesOldRegistrationInPlace: an older loopguard
// registered its hooks under a list of tool names; init puts the
// catch-all registration in the place of that one (a group of
// loopguard's alone, or its handler in a flat file), whatever its
// matcher, keeping the other hooks where they are, and leaves no second
// registration. Where loopguard shares a group with another hook, it
// leaves that group and is appended (the control).
func TestAgentFileReplacesOldRegistrationInPlace(t *testing.T) {
	bin := "/opt/lg/loopguard"
	f := register.AgentFile{Nested: true, Self: bin, Entries: []register.AgentEntry{
		{Event: "PreToolUse", Matcher: "*", Handler: testHandler{"command", bin + " hook qwen --event PreToolUse", 30}},
	}}
	old := `{"hooks":{"PreToolUse":[` +
		`{"matcher":"a","hooks":[{"type":"command","command":"first"}]},` +
		`{"matcher":"^(run_shell_command|write_file)$","hooks":[{"type":"command","command":"` + bin + ` hook qwen --event PreToolUse","timeout":30}]},` +
		`{"matcher":"b","hooks":[{"type":"command","command":"last"}]}]}}`
	out, changed, err := MergeAgent([]byte(old), f)
	if err != nil || !changed {
		t.Fatal(err, changed)
	}
	regs, err := AgentHooks(out, f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range regs {
		got = append(got, r.Matcher)
	}
	if strings.Join(got, " ") != "a * b" || !regs[1].Ours {
		t.Errorf("after init: matchers %q (ours second?)\n%s", got, out)
	}
	shared := `{"hooks":{"PreToolUse":[{"matcher":"^(x)$","hooks":[{"type":"command","command":"other"},{"type":"command","command":"` + bin + ` hook qwen --event PreToolUse"}]},{"matcher":"b","hooks":[{"type":"command","command":"last"}]}]}}`
	out, _, err = MergeAgent([]byte(shared), f)
	if regs, _ = AgentHooks(out, f); err != nil || len(regs) != 3 || regs[0].Ours || regs[2].Matcher != "*" || !regs[2].Ours {
		t.Errorf("shared group: %v\n%s", err, out)
	}

	flat := register.AgentFile{Version: 1, Self: bin, Entries: []register.AgentEntry{
		{Event: "preToolUse", Handler: testHandler{"command", bin + " hook copilot --event preToolUse", 30}},
	}}
	old = `{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"first"},` +
		`{"type":"command","bash":"` + bin + ` hook copilot --event preToolUse","timeoutSec":30,"matcher":"bash|create"},` +
		`{"type":"command","bash":"last"}]}}`
	out, _, err = MergeAgent([]byte(old), flat)
	if regs, _ = AgentHooks(out, flat); err != nil || len(regs) != 3 || !regs[1].Ours || regs[1].Matcher != "" || strings.Contains(string(out), "bash|create") {
		t.Errorf("flat: %v\n%s", err, out)
	}
}
