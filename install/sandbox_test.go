package install

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var sandboxOpts = func() Options {
	o := opts
	o.Sandbox = &Sandbox{
		DenyWrite:  []string{"//opt/state/loopguard", "//opt/config/loopguard", "//opt/bin/loopguard"},
		DenyRead:   []string{"//opt/state/loopguard", "~/.local/share/keyrings"},
		AllowWrite: []string{"//opt/cache/loopguard-sandbox"},
		Env:        []EnvVar{{"GOCACHE", "/opt/cache/loopguard-sandbox/go-build"}},
	}
	return o
}()

// sandboxOf decodes the "sandbox" and "env" objects of a settings file.
func sandboxOf(t *testing.T, data []byte) (sb map[string]any, env map[string]any) {
	t.Helper()
	var v struct {
		Sandbox map[string]any `json:"sandbox"`
		Env     map[string]any `json:"env"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v.Sandbox, v.Env
}

func TestMergeSandboxNewFile(t *testing.T) {
	out := mustMerge(t, nil, sandboxOpts)
	sb, env := sandboxOf(t, out)
	for _, sw := range SandboxSwitches {
		if sb[sw.Key] != sw.Value {
			t.Errorf("%s = %v, want %v", sw.Key, sb[sw.Key], sw.Value)
		}
	}
	fs, _ := sb["filesystem"].(map[string]any)
	if len(fs["denyWrite"].([]any)) != 3 || len(fs["denyRead"].([]any)) != 2 || len(fs["allowWrite"].([]any)) != 1 {
		t.Errorf("filesystem: %v", fs)
	}
	if env["GOCACHE"] != "/opt/cache/loopguard-sandbox/go-build" {
		t.Errorf("env: %v", env)
	}
	if len(ours(t, out)) != len(Events) {
		t.Error("hooks not registered")
	}
	// Control: without a Sandbox, Merge writes no sandbox settings.
	if bytes.Contains(mustMerge(t, nil, opts), []byte(`"sandbox"`)) {
		t.Error("sandbox written without being asked for")
	}
}

// Merge never weakens what is there: weaker switches become loopguard's,
// entries of the user's own stay, an env value of the user's is kept.
func TestMergeSandboxStrengthensOnly(t *testing.T) {
	in := `{"sandbox":{"network":{"allowedDomains":["example.org"]},"enabled":false,"failIfUnavailable":"yes","allowUnsandboxedCommands":true,"filesystem":{"denyWrite":["~/.ssh","//opt/state/loopguard"]}},"env":{"GOCACHE":"/mine"}}`
	out := mustMerge(t, []byte(in), sandboxOpts)
	sb, env := sandboxOf(t, out)
	for _, sw := range SandboxSwitches {
		if sb[sw.Key] != sw.Value {
			t.Errorf("%s = %v, want %v", sw.Key, sb[sw.Key], sw.Value)
		}
	}
	dw := sb["filesystem"].(map[string]any)["denyWrite"].([]any)
	want := []any{"~/.ssh", "//opt/state/loopguard", "//opt/config/loopguard", "//opt/bin/loopguard"}
	if !slices.Equal(dw, want) {
		t.Errorf("denyWrite %v, want %v", dw, want)
	}
	if env["GOCACHE"] != "/mine" {
		t.Errorf("the user's GOCACHE replaced: %v", env)
	}
	if !strings.HasPrefix(string(compact(out)), `{"sandbox":{"network":{"allowedDomains":["example.org"]},"enabled":true`) {
		t.Errorf("order not kept:\n%s", out)
	}
}

func TestMergeSandboxRefusesShapes(t *testing.T) {
	for _, in := range []string{
		`{"sandbox":true}`,
		`{"sandbox":{"filesystem":[]}}`,
		`{"sandbox":{"filesystem":{"denyWrite":"~/x"}}}`,
		`{"env":[]}`,
	} {
		if _, _, err := Merge([]byte(in), sandboxOpts); err == nil {
			t.Errorf("%s: accepted", in)
		}
		// Control: without the sandbox, only the hooks' shape matters.
		if _, _, err := Merge([]byte(in), opts); err != nil {
			t.Errorf("%s without sandbox: %v", in, err)
		}
	}
	bad := sandboxOpts
	bad.Sandbox = &Sandbox{DenyWrite: []string{"a\nb"}}
	if _, _, err := Merge(nil, bad); err == nil {
		t.Error("a path with a newline accepted")
	}
}

// An install made before the sandbox existed (hooks only) gets the sandbox
// on the next init, and uninstall still puts the original back exactly.
func TestApplySandboxLaterRemoveByteIdentical(t *testing.T) {
	path, bk := installedOver(t, other)
	res, err := Apply(path, bk, sandboxOpts, false)
	if err != nil || !res.Changed {
		t.Fatal(res, err)
	}
	if sb, _ := sandboxOf(t, res.New); sb["enabled"] != true {
		t.Fatal("sandbox not added")
	}
	res, err = Remove(path, bk, "", false)
	if err != nil || !res.Restored {
		t.Fatalf("%+v %v", res, err)
	}
	if after, _ := os.ReadFile(path); string(after) != other {
		t.Errorf("not byte-identical:\n%s", after)
	}
}

// Edits made after init are kept: a denyRead entry of the user's and a
// switch the user changed stay; loopguard's own entries go.
func TestRemoveSandboxKeepsLaterEdits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	bk := filepath.Join(dir, "bk")
	if _, err := Apply(path, bk, sandboxOpts, false); err != nil {
		t.Fatal(err)
	}
	mid, _ := os.ReadFile(path)
	edited := bytes.Replace(mid, []byte(`"~/.local/share/keyrings"`), []byte(`"~/.local/share/keyrings", "~/.aws"`), 1)
	edited = bytes.Replace(edited, []byte(`"autoAllowBashIfSandboxed": false`), []byte(`"autoAllowBashIfSandboxed": true`), 1)
	if bytes.Equal(edited, mid) {
		t.Fatal("test edit did not apply")
	}
	os.WriteFile(path, edited, 0o644)
	res, err := Remove(path, bk, "", false)
	if err != nil || res.Restored || res.Deleted || !res.Changed {
		t.Fatalf("%+v %v", res, err)
	}
	got := string(res.New)
	want := "{\n  \"sandbox\": {\n    \"autoAllowBashIfSandboxed\": true,\n    \"filesystem\": {\n      \"denyRead\": [\n        \"~/.aws\"\n      ]\n    }\n  }\n}\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSandboxPathReadings(t *testing.T) {
	for _, c := range []struct {
		entry string
		want  []string
	}{
		{"//opt/x", []string{"/opt/x"}},
		{"~/.cache/x", []string{"/home/u/.cache/x"}},
		{"~", []string{"/home/u"}},
		{"~/**", []string{"/home/u"}},
		{"/opt/x", []string{"/opt/x", "/home/u/.claude/opt/x", "/p/opt/x"}},
		{"build/**", []string{"/p/build"}},
		{"**", []string{"/p"}},
		{"//home/u/.local/state/loopguard/*.json", []string{"/home/u/.local/state/loopguard"}},
	} {
		got := SandboxPathReadings(c.entry, "/home/u", "/home/u/.claude", "/p")
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.entry, got, c.want)
		}
	}
	if SandboxPath("/opt/x/") != "//opt/x" {
		t.Error(SandboxPath("/opt/x/"))
	}
}

func TestReadSandbox(t *testing.T) {
	s, err := ReadSandbox([]byte(`{"sandbox":{"enabled":true,"network":{"allowAllUnixSockets":true},"excludedCommands":["git *"],"filesystem":{"allowWrite":["~"]}},"permissions":{"allow":["Edit(~/.bashrc)","Bash(ls)"]},"env":{"GOCACHE":"/c"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Present || !s.Bools["enabled"] || !s.Bools["network.allowAllUnixSockets"] ||
		!slices.Equal(s.Lists["excludedCommands"], []string{"git *"}) || !slices.Equal(s.Lists["filesystem.allowWrite"], []string{"~"}) ||
		!slices.Equal(s.EditRule, []string{"~/.bashrc"}) || s.Env["GOCACHE"] != "/c" {
		t.Errorf("%+v", s)
	}
}

// TestRemoveUnrecorded: with init's record gone (the state directory was
// removed), Remove by the record leaves the sandbox block and GOCACHE
// behind; RemoveUnrecorded takes out exactly what Apply added, by value,
// and a file in Claude Code's own layout (JSON.stringify, two spaces) with
// other content comes back byte for byte. A file Apply created is deleted.
func TestRemoveUnrecorded(t *testing.T) {
	const claudeStyle = `{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm run lint)"
    ]
  },
  "env": {
    "EDITOR": "vim"
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  }
}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(path, []byte(claudeStyle), 0o644); err != nil {
		t.Fatal(err)
	}
	bk := filepath.Join(dir, "state", "install")
	if _, err := Apply(path, bk, sandboxOpts, false); err != nil {
		t.Fatal(err)
	}
	applied, _ := os.ReadFile(path)
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	// Control: by the record alone (there is none) the sandbox block stays.
	res, err := Remove(path, bk, opts.Binary, true)
	if err != nil || !res.Changed {
		t.Fatalf("control: %+v %v", res, err)
	}
	if sb, env := sandboxOf(t, res.New); sb == nil || env["GOCACHE"] == nil {
		t.Fatalf("control: Remove without the record took the sandbox out:\n%s", res.New)
	}
	res, err = RemoveUnrecorded(path, opts.Binary, sandboxOpts.Sandbox, false)
	if err != nil || !res.Changed || !res.Sandbox || !res.Unrecorded || res.Deleted {
		t.Fatalf("%+v %v", res, err)
	}
	if after, _ := os.ReadFile(path); string(after) != claudeStyle {
		t.Errorf("not byte-identical to before Apply:\n%s\napplied was:\n%s", after, applied)
	}
	// Nothing of loopguard's left: nothing to do.
	if res, err := RemoveUnrecorded(path, opts.Binary, sandboxOpts.Sandbox, false); err != nil || res.Changed {
		t.Errorf("second run: %+v %v", res, err)
	}

	// A file Apply created holds nothing else: it goes.
	created := filepath.Join(dir, "new", "settings.json")
	if _, err := Apply(created, filepath.Join(dir, "state2"), sandboxOpts, false); err != nil {
		t.Fatal(err)
	}
	if res, err := RemoveUnrecorded(created, opts.Binary, sandboxOpts.Sandbox, false); err != nil || !res.Deleted {
		t.Fatalf("created file: %+v %v", res, err)
	}
	if _, err := os.Lstat(created); err == nil {
		t.Error("the file Apply created is still there")
	}

	// A file whose hooks are not loopguard's keeps its sandbox settings.
	theirs := filepath.Join(dir, "theirs.json")
	own := `{"sandbox": {"enabled": true}, "env": {"GOCACHE": "/opt/cache/loopguard-sandbox/go-build"}}`
	if err := os.WriteFile(theirs, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := RemoveUnrecorded(theirs, opts.Binary, sandboxOpts.Sandbox, false); err != nil || res.Changed {
		t.Errorf("no hooks of loopguard's, yet changed: %+v %v", res, err)
	}
}

// The network escalation's excludedCommands entry: added beside the
// user's own entries, which stay; taken out by uninstall, byte for byte
// when nothing else changed; a file whose excludedCommands is not a list
// is refused.
func TestSandboxExcludeRoundTrip(t *testing.T) {
	const entry = "/opt/bin/loopguard-exec exec --cap project-write+network:* *"
	o := sandboxOpts
	sb := *o.Sandbox
	sb.Exclude = []string{entry}
	o.Sandbox = &sb
	orig := `{"sandbox": {"excludedCommands": ["docker *"]}}` + "\n"
	path, bk := installedOver(t, orig)
	res, err := Apply(path, bk, o, false)
	if err != nil || !res.Changed {
		t.Fatal(res, err)
	}
	applied := res.New
	got, _ := sandboxOf(t, res.New)
	if l, _ := got["excludedCommands"].([]any); len(l) != 2 || l[0] != "docker *" || l[1] != entry {
		t.Fatalf("excludedCommands = %v", got["excludedCommands"])
	}
	if res, err := Apply(path, bk, o, false); err != nil || res.Changed {
		t.Fatalf("a second init changed the file: %+v %v", res, err)
	}
	// Taken out with later edits kept (the unmerge path).
	out, changed, err := UnmergeSandbox(res.New, []byte(orig), &sb)
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	if left, _ := sandboxOf(t, out); !slices.Equal(anyStrings(left["excludedCommands"]), []string{"docker *"}) {
		t.Errorf("after the unmerge, excludedCommands = %v", left["excludedCommands"])
	}
	res, err = Remove(path, bk, "", false)
	if err != nil || !res.Restored {
		t.Fatalf("%+v %v", res, err)
	}
	if after, _ := os.ReadFile(path); string(after) != orig {
		t.Errorf("not byte-identical:\n%s", after)
	}
	// An init without two-phase enforcement takes the entry out, and
	// keeps the user's own.
	off := sandboxOpts
	sbOff := *off.Sandbox
	sbOff.Unexclude = []string{entry}
	off.Sandbox = &sbOff
	out2, _, err := Merge(applied, off)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := sandboxOf(t, out2); !slices.Equal(anyStrings(left["excludedCommands"]), []string{"docker *"}) {
		t.Errorf("after an init without the entry, excludedCommands = %v", left["excludedCommands"])
	}
	if _, _, err := Merge([]byte(`{"sandbox": {"excludedCommands": "x"}}`), o); err == nil {
		t.Error("an excludedCommands that is not a list was accepted")
	}
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}
