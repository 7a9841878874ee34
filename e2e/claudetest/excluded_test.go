package claudetest

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// How Claude Code matches sandbox.excludedCommands (issue 36: the
// approved download must leave its sandbox, and nothing else may), read
// in the 2.1.328 bundle and pinned here. The sandbox is on with
// allowUnsandboxedCommands false in the user's settings; a command
// reports SR=1 inside the sandbox, SR=unset outside. The bundle's
// shouldUseSandbox returns false when every part of the command (split at
// ; && || | and newlines, comments dropped; a command with $(...) or a
// backtick is not split and stays inside) matches an entry. An entry is
// matched against the words as written, after the hook's updatedInput:
// a quoted program word matches no entry. A trailing ":*" is the older
// prefix syntax. CLAUDE_CODE_SHELL_PREFIX wraps an excluded command too,
// outside the sandbox. A project's own entries count, whatever the
// user's allowUnsandboxedCommands says.

// excludedProbe is the program the rows run: it says where it ran.
const excludedProbe = "/tmp/claudetest-excluded/lgx"

// excludedEntry and unconfinedEntry are the entries under test, of
// loopguard's shapes (confine.NetworkExclusion, UnconfinedExclusion,
// GitExclusion).
const (
	excludedEntry   = excludedProbe + " exec --cap project-write+network:* *"
	unconfinedEntry = excludedProbe + " exec --cap unconfined *"
	gitEntry        = excludedProbe + " exec --cap project-write+git *"
)

func TestExcludedCommandsMatching(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bwrap: Claude Code's sandbox cannot start here")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for the rewriting hook")
	}
	claude := Install(t)
	if err := os.MkdirAll(filepath.Dir(excludedProbe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(excludedProbe, []byte("#!/bin/sh\necho \"SR=${SANDBOX_RUNTIME:-unset}\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	form := excludedProbe + " exec --cap project-write+network:443 --project /p -- x"
	quoted := "'" + excludedProbe + "' 'exec' '--cap' 'project-write+network:443' '--project' '/p' '--' 'x'"
	marker := "#loopguard-ticket:0123456789abcdef0123456789abcdef\n"
	free := excludedProbe + " exec --cap unconfined '--project' '/p' '--cwd' '/p' '--' '/usr/bin/bash' 'bash' '-c' 'x'"
	// rw asks the hook to run s in place of the model's command.
	rw := func(s string) string { return "echo rw:" + hex.EncodeToString([]byte(s)) }
	rows := []struct {
		name, cmd string
		outside   bool // SR=unset: every SR the row prints
	}{
		{"the entry's form", form, true},
		{"with the ticket's comment line first", marker + form, true},
		{"the program word quoted", quoted, false},
		{"the hook's rewrite into the form (the model's text matches nothing)", rw(marker + form), true},
		{"the hook's rewrite into the quoted form", rw(quoted), false},
		{"the hook's rewrite into a command no entry names", "echo rw:" + hex.EncodeToString([]byte("echo SR=${SANDBOX_RUNTIME:-unset}")), false},
		{"; another command", form + " ; echo SR=${SANDBOX_RUNTIME:-unset}", false},
		{"&& another command", form + " && echo SR=${SANDBOX_RUNTIME:-unset}", false},
		{"newline, another command", form + "\necho SR=${SANDBOX_RUNTIME:-unset}", false},
		{"$(...) in an argument", form + " $(echo SR=${SANDBOX_RUNTIME:-unset})", false},
		{"the jail's form, the capability in its command", excludedProbe + " exec --cap jail --project /p -- bash -c 'y --cap project-write+network:443 z'", false},
		{"a command the project's entry names", "echo SR=${SANDBOX_RUNTIME:-unset} project-entry", true},
		{"the unconfined form", free, true},
		{"the hook's rewrite into the unconfined form, the ticket's line first", rw(marker + free), true},
		{"the unconfined form, ; another command", free + " ; echo SR=${SANDBOX_RUNTIME:-unset}", false},
		{"the unconfined word quoted", excludedProbe + " exec --cap 'unconfined' --project /p -- x", false},
		{"the git form", excludedProbe + " exec --cap project-write+git '--project' '/p' '--' 'x'", true},
		{"the git form with the network, which no entry names", excludedProbe + " exec --cap project-write+git+network:443 '--project' '/p' '--' 'x'", false},
		{"the git form, && another command", excludedProbe + " exec --cap project-write+git '--project' '/p' '--' 'x' && echo SR=${SANDBOX_RUNTIME:-unset}", false},
	}
	home, dir, pd := t.TempDir(), t.TempDir(), t.TempDir()
	pfx := filepath.Join(pd, "pfx")
	if err := os.WriteFile(pfx, []byte("#!/bin/bash\necho \"PREFIX-SR=${SANDBOX_RUNTIME:-unset}\"\nexec /bin/bash -c \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(pd, "hook.py")
	if err := os.WriteFile(hook, []byte(`import json,sys,binascii
p=json.load(sys.stdin)
cmd=p["tool_input"].get("command","")
o={"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"test"}
if cmd.startswith("echo rw:"):
    ti=dict(p["tool_input"]); ti["command"]=binascii.unhexlify(cmd[8:].strip()).decode()
    o["updatedInput"]=ti
print(json.dumps({"hookSpecificOutput":o}))
`), 0o644); err != nil {
		t.Fatal(err)
	}
	user := map[string]any{
		"sandbox": map[string]any{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false,
			"autoAllowBashIfSandboxed": false, "excludedCommands": []string{excludedEntry, unconfinedEntry, gitEntry}},
		"env": map[string]string{"CLAUDE_CODE_SHELL_PREFIX": pfx},
		"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
			"hooks": []any{map[string]any{"type": "command", "command": "python3", "args": []string{hook}}}}}},
	}
	b, _ := json.Marshal(user)
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The repository's own entry, for the last row only.
	if err := WriteSettings(dir, `{}`); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(`{"sandbox":{"excludedCommands":["echo * project-entry"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var turns []Turn
	for i, r := range rows {
		turns = append(turns, Tools(bashCall(excludedID(i), r.cmd)))
	}
	api := NewFakeAPI(t, Script{Main: append(turns, Text("done"))})
	res := Run(t, Options{Claude: claude, API: api, Dir: dir, Home: home, Timeout: 6 * time.Minute})
	if res.ExitCode != 0 {
		t.Fatalf("claude exit %d\nstderr: %s", res.ExitCode, res.Stderr)
	}
	for i, r := range rows {
		got := mustResult(t, api, excludedID(i)).Content
		want, not := "SR=1", "SR=unset"
		if r.outside {
			want, not = not, want
		}
		if !strings.Contains(got, want) || strings.Contains(got, not) {
			t.Errorf("%s: %q ran %q, want every part %s", r.name, r.cmd, got, map[bool]string{true: "outside the sandbox", false: "inside it"}[r.outside])
		}
		// The prefix wraps the command, inside or outside.
		if !strings.Contains(got, "PREFIX-"+want) {
			t.Errorf("%s: the shell prefix did not run where the command did: %q", r.name, got)
		}
	}
}

func excludedID(i int) string { return "toolu_ex" + string(rune('a'+i)) }
