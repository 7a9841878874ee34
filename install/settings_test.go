package install

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/internal/udiff"
)

var opts = Options{Binary: "/opt/bin/loopguard", Mode: "enforce", Deadline: 5 * time.Second}

// other holds hooks and settings of someone else's, in a 4-space layout with
// spellings JSON.stringify would not produce.
const other = `{
    "permissions": {
        "allow": ["Bash(go test ./...)"],
        "deny": ["Read(./.env)"]
    },
    "model": "caf\u00e9",
    "cleanupPeriodDays": 1.50,
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "/usr/local/bin/fmt-check", "timeout": 10}
                ]
            }
        ],
        "Stop": [
            {"hooks": [{"type": "command", "command": "notify-send done"}]}
        ]
    },
    "zeta": null
}
`

func mustMerge(t *testing.T, data []byte, o Options) []byte {
	t.Helper()
	out, _, err := Merge(data, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ours(t *testing.T, data []byte) []Registered {
	t.Helper()
	hs, err := Hooks(data, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []Registered
	for _, h := range hs {
		if h.Ours {
			out = append(out, h)
		}
	}
	return out
}

func TestMergeNewFile(t *testing.T) {
	out := mustMerge(t, nil, opts)
	got := ours(t, out)
	if len(got) != len(Events) || len(got) != 5 {
		t.Fatalf("want 5 loopguard handlers, got %d:\n%s", len(got), out)
	}
	for i, h := range got {
		if h.Event != Events[i] || h.Matcher != DefaultMatcher {
			t.Errorf("handler %d: event %q matcher %q", i, h.Event, h.Matcher)
		}
		hd := h.Handler
		if hd.Command != opts.Binary || hd.OnFailure != "block" || hd.Timeout != 30 || hd.Type != "command" {
			t.Errorf("handler %d: %+v", i, hd)
		}
		want := []string{"hook", "--event", Events[i], "--mode", "enforce"}
		if strings.Join(hd.Args, " ") != strings.Join(want, " ") {
			t.Errorf("handler %d args %q, want %q", i, hd.Args, want)
		}
	}
	if !bytes.HasPrefix(out, []byte("{\n  \"hooks\": {\n    \"PreToolUse\": [\n")) || !bytes.HasSuffix(out, []byte("}\n")) {
		t.Errorf("layout:\n%s", out)
	}
}

// A registration that holds calls (--wait) tells the human in the agent's
// own window: Claude Code shows the statusMessage as the spinner text
// while the hook runs. PostToolUse and PostToolUseFailure hold nothing;
// without a wait nothing is held.
func TestStatusMessage(t *testing.T) {
	held := opts
	held.Wait = 2 * time.Minute
	for _, ev := range Events {
		h := HandlerFor(held, ev)
		if want := map[bool]string{true: "", false: HeldStatus}[After(ev)]; h.StatusMessage != want {
			t.Errorf("%s with a wait: statusMessage %q, want %q", ev, h.StatusMessage, want)
		}
		if h := HandlerFor(opts, ev); h.StatusMessage != "" {
			t.Errorf("%s without a wait: statusMessage %q", ev, h.StatusMessage)
		}
	}
	out := mustMerge(t, nil, held)
	got := ours(t, out)
	if len(got) != len(Events) || got[0].Handler.StatusMessage != HeldStatus || got[2].Handler.StatusMessage != "" || got[3].Handler.StatusMessage != "" || got[4].Handler.StatusMessage != "" {
		t.Errorf("read back: %+v", got)
	}
	// A registration of an older loopguard, without it, is brought up to date.
	old := bytes.ReplaceAll(out, []byte(`,
            "statusMessage": "loopguard: if held, approve it in `+"`loopguard review`"+`"`), nil)
	if bytes.Equal(old, out) {
		t.Fatalf("no statusMessage to take out:\n%s", out)
	}
	if again, changed, err := Merge(old, held); err != nil || !changed || !bytes.Equal(again, out) {
		t.Errorf("merge over the older registration: changed %v, %v\n%s", changed, err, again)
	}
}

// withoutEvent is data with the event's array taken out of "hooks", as
// an older init wrote it before it registered that event.
func withoutEvent(t *testing.T, data []byte, event string) []byte {
	t.Helper()
	root, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	hk := root.get("hooks")
	if hk == nil || hk.get(event) == nil {
		t.Fatalf("no %s to take out:\n%s", event, data)
	}
	hk.del(event)
	return append(encode(root, detectIndent(data)), '\n')
}

// A registration an older init wrote, without PostToolUseFailure and
// SessionEnd (Later), still runs loopguard on every call (CoversEvents: a
// plugin or managed settings holding it keep init from registering a
// second); init brings it up to date, and uninstall takes it out all the
// same.
func TestOlderRegistration(t *testing.T) {
	full := mustMerge(t, []byte(other), opts)
	old := withoutEvent(t, withoutEvent(t, full, SessionEnd), PostToolUseFailure)
	regs, err := Hooks(old, "")
	if err != nil {
		t.Fatal(err)
	}
	if !CoversEvents(regs) {
		t.Errorf("a registration without PostToolUseFailure and SessionEnd does not count:\n%s", old)
	}
	// Control: one without PostToolUse does not.
	regs, _ = Hooks(withoutEvent(t, full, PostToolUse), "")
	if CoversEvents(regs) {
		t.Error("a registration without PostToolUse counts")
	}
	again, changed, err := Merge(old, opts)
	if err != nil || !changed || !bytes.Equal(compact(again), compact(full)) {
		t.Errorf("merge over the older registration: changed %v, %v\n%s", changed, err, again)
	}
	for _, data := range [][]byte{old, full} {
		back, changed, err := Unmerge(data, "")
		if err != nil || !changed || !bytes.Equal(compact(back), compact([]byte(other))) {
			t.Errorf("unmerge: changed %v, %v\n%s", changed, err, back)
		}
	}
}

func TestMergeKeepsOthers(t *testing.T) {
	out, changed, err := Merge([]byte(other), opts)
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	for _, keep := range []string{`"caf\u00e9"`, `1.50`, `"zeta": null`, `"/usr/local/bin/fmt-check"`, `"notify-send done"`, `"Read(./.env)"`} {
		if !bytes.Contains(out, []byte(keep)) {
			t.Errorf("lost %s:\n%s", keep, out)
		}
	}
	// Key order kept: permissions, model, cleanupPeriodDays, hooks, zeta.
	last := -1
	for _, k := range []string{`"permissions"`, `"model"`, `"cleanupPeriodDays"`, `"hooks"`, `"zeta"`} {
		i := bytes.Index(out, []byte(k))
		if i <= last {
			t.Errorf("key %s out of order:\n%s", k, out)
		}
		last = i
	}
	// The 4-space indent unit is kept.
	if !bytes.Contains(out, []byte("\n    \"permissions\"")) {
		t.Errorf("indent not kept:\n%s", out)
	}
	// The other PreToolUse group stays first; loopguard's comes after it.
	hs, _ := Hooks(out, "")
	var pre []string
	for _, h := range hs {
		if h.Event == PreToolUse {
			pre = append(pre, h.Handler.Command)
		}
	}
	if len(pre) != 2 || pre[0] != "/usr/local/bin/fmt-check" || pre[1] != opts.Binary {
		t.Errorf("PreToolUse handlers %q", pre)
	}
	if len(ours(t, out)) != len(Events) {
		t.Errorf("want one of ours an event")
	}
	back, changed, err := Unmerge(out, "")
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	if !bytes.Equal(compact(back), compact([]byte(other))) {
		t.Errorf("unmerge did not give back the settings:\n%s", back)
	}
}

// A compact one-line settings file stays one line; an indented one keeps
// its unit (tabs too); an empty one is indented by two spaces.
func TestMergeKeepsCompact(t *testing.T) {
	for _, c := range []struct{ name, in, wantIndent string }{
		{"one line", `{"permissions":{"allow":["Bash(ls)"]},"model":"opus"}` + "\n", ""},
		{"one line, no newline", `{"model":"opus"}`, ""},
		{"tabs", "{\n\t\"model\": \"opus\"\n}\n", "\t"},
		{"two spaces", "{\n  \"model\": \"opus\"\n}\n", "  "},
		{"empty", "{}\n", "  "},
	} {
		if got := detectIndent([]byte(c.in)); got != c.wantIndent {
			t.Errorf("%s: indent %q, want %q", c.name, got, c.wantIndent)
		}
	}
	in := []byte(`{"permissions":{"allow":["Bash(ls)"]},"model":"opus"}` + "\n")
	out, changed, err := Merge(in, opts)
	if err != nil || !changed {
		t.Fatal(err, changed)
	}
	if bytes.Count(out, []byte("\n")) != 1 || !bytes.HasSuffix(out, []byte("}\n")) || !bytes.HasPrefix(out, []byte(`{"permissions":{"allow":["Bash(ls)"]},"model":"opus","hooks":{`)) {
		t.Errorf("a one-line file did not stay one line:\n%s", out)
	}
	if len(ours(t, out)) != len(Events) {
		t.Errorf("want one of ours an event:\n%s", out)
	}
	back, _, err := Unmerge(out, "")
	if err != nil || bytes.Count(back, []byte("\n")) != 1 {
		t.Errorf("unmerged: %v\n%s", err, back)
	}
}

func TestMergeIdempotent(t *testing.T) {
	renamed := opts
	renamed.Binary = "/opt/bin/lg" // not named loopguard: found as self
	for _, in := range [][]byte{nil, []byte(other), []byte(`{"a":1}`), []byte("{}")} {
		for _, o := range []Options{opts, renamed} {
			once := mustMerge(t, in, o)
			twice, changed, err := Merge(once, o)
			if err != nil {
				t.Fatal(err)
			}
			if changed || !bytes.Equal(once, twice) {
				t.Errorf("second merge changed the file:\n%s\n---\n%s", once, twice)
			}
		}
	}
}

func TestMergeReplacesInPlace(t *testing.T) {
	once := mustMerge(t, []byte(other), opts)
	o := opts
	o.Mode = "ask"
	o.Wait = 2 * time.Minute
	again, changed, err := Merge(once, o)
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	got := ours(t, again)
	if len(got) != len(Events) {
		t.Fatalf("want %d of ours, got %d", len(Events), len(got))
	}
	pre := got[0].Handler
	if strings.Join(pre.Args, " ") != "hook --event PreToolUse --mode ask --wait 2m0s" || pre.Timeout != 150 {
		t.Errorf("PreToolUse handler %+v", pre)
	}
	post := got[2].Handler
	if strings.Join(post.Args, " ") != "hook --event PostToolUse --mode ask" || post.Timeout != 30 {
		t.Errorf("PostToolUse handler %+v", post)
	}
	if fail := got[3].Handler; strings.Join(fail.Args, " ") != "hook --event PostToolUseFailure --mode ask" || fail.Timeout != 30 || fail.OnFailure != OnFailureBlock {
		t.Errorf("PostToolUseFailure handler %+v", fail)
	}
	// Same position: the other group still first.
	if i, j := bytes.Index(again, []byte("fmt-check")), bytes.Index(again, []byte("--wait")); i > j {
		t.Errorf("order changed:\n%s", again)
	}
}

func TestMergeMovesOutOfSharedGroup(t *testing.T) {
	in := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[` +
		`{"type":"command","command":"/old/loopguard","args":["hook"]},` +
		`{"type":"command","command":"/bin/other"}]}]}}`
	out := mustMerge(t, []byte(in), opts)
	hs, _ := Hooks(out, "")
	var pre []Registered
	for _, h := range hs {
		if h.Event == PreToolUse {
			pre = append(pre, h)
		}
	}
	if len(pre) != 2 || pre[0].Handler.Command != "/bin/other" || pre[0].Matcher != "*" || pre[1].Handler.Command != opts.Binary {
		t.Errorf("got %+v\n%s", pre, out)
	}
}

func TestIsLoopguard(t *testing.T) {
	for _, c := range []struct {
		h    Handler
		want bool
	}{
		{Handler{Type: "command", Command: "/usr/bin/loopguard", Args: []string{"hook", "--event", "PreToolUse"}}, true},
		{Handler{Type: "command", Command: "loopguard hook --event PreToolUse"}, true},
		{Handler{Type: "command", Command: `"/x y/loopguard" hook`}, true},
		{Handler{Type: "command", Command: "/opt/lg", Args: []string{"hook"}}, true}, // self
		{Handler{Type: "command", Command: "/opt/lg2", Args: []string{"hook"}}, false},
		// Controls: another binary, another verb, another handler type.
		{Handler{Type: "command", Command: "/usr/bin/loopguard-fork", Args: []string{"hook"}}, false},
		{Handler{Type: "command", Command: "/usr/bin/loopguard", Args: []string{"approve"}}, false},
		{Handler{Type: "command", Command: "notloopguard hook"}, false},
		{Handler{Type: "command", Command: "loopguard"}, false},
		{Handler{Type: "http", Command: "/usr/bin/loopguard", Args: []string{"hook"}}, false},
	} {
		if got := IsLoopguard(c.h, "/opt/lg"); got != c.want {
			t.Errorf("IsLoopguard(%+v) = %v, want %v", c.h, got, c.want)
		}
	}
}

func TestInvalid(t *testing.T) {
	for _, c := range []struct {
		in        string
		line, col int
		msg       string
	}{
		{"{\n  \"a\": 1,\n  \"b\": }\n", 3, 8, "invalid character"},
		{"{\"a\": 1,\n}", 2, 1, "invalid character"},
		{"{\"a\":1, \"a\":2}", 1, 9, "duplicate key"},
		{"", 0, 0, "empty"},
		{"[]", 0, 0, "not a JSON object"},
		{`{"hooks": []}`, 0, 0, `"hooks" is not an object`},
		{`{"hooks": {"PreToolUse": {}}}`, 0, 0, `"hooks.PreToolUse" is not an array`},
		{`{"hooks": {"PreToolUse": [{"hooks": {}}]}}`, 0, 0, `"hooks.PreToolUse[0].hooks" is not an array`},
		{"{\"a\": \"\xff\"}", 1, 8, "invalid UTF-8"},
	} {
		_, _, err := Merge([]byte(c.in), opts)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: want a SyntaxError, got %v", c.in, err)
			continue
		}
		if se.Line != c.line || se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: got %d:%d %q, want %d:%d %q", c.in, se.Line, se.Col, se.Msg, c.line, c.col, c.msg)
		}
	}
	// Control: the same shapes, valid, merge.
	for _, in := range []string{`{"a":1}`, `{"hooks":{}}`, `{"hooks":{"PreToolUse":[]}}`, `{"hooks":{"PreToolUse":[{"hooks":[]}]}}`} {
		if _, _, err := Merge([]byte(in), opts); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestOptionsChecked(t *testing.T) {
	for _, o := range []Options{
		{Binary: "loopguard", Deadline: time.Second},
		{Binary: "/b/loopguard", Mode: "off", Deadline: time.Second},
		{Binary: "/b/loopguard", Wait: -time.Second, Deadline: time.Second},
		{Binary: "/b/loopguard", Wait: 2 * time.Hour, Deadline: time.Second},
		{Binary: "/b/loopguard"},
		{Binary: "/b/loopguard", Deadline: time.Second, Matcher: "Bash\n"},
	} {
		if _, _, err := Merge(nil, o); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
	if _, _, err := Merge(nil, Options{Binary: "/b/loopguard", Deadline: time.Second, Matcher: "Bash"}); err != nil {
		t.Error(err)
	}
}

func TestApplyRemoveByteIdentical(t *testing.T) {
	for name, orig := range map[string]string{
		"four-space": other,
		"compact":    `{"permissions":{"allow":["Bash(ls)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]}}`,
		"no-newline": "{\n  \"hooks\": {}\n}",
		// Sandbox settings of the user's own: kept, strengthened, put back.
		"user-sandbox":  `{"sandbox":{"enabled":false,"allowUnsandboxedCommands":true,"filesystem":{"denyRead":["~/.aws"],"denyWrite":["//opt/state/loopguard"]}},"env":{"GOCACHE":"/mine"}}` + "\n",
		"empty-sandbox": "{\"sandbox\": {}, \"env\": {}}\n",
	} {
		for _, o := range []Options{opts, sandboxOpts} {
			t.Run(fmt.Sprintf("%s/sandbox=%v", name, o.Sandbox != nil), func(t *testing.T) { applyRemoveByteIdentical(t, orig, o) })
		}
	}
}

func applyRemoveByteIdentical(t *testing.T, orig string, opts Options) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	bk := filepath.Join(dir, "state", "install")
	res, err := Apply(path, bk, opts, false)
	if err != nil || !res.Changed {
		t.Fatal(res, err)
	}
	mid, _ := os.ReadFile(path)
	if len(ours(t, mid)) != len(Events) {
		t.Fatalf("not registered:\n%s", mid)
	}
	res2, err := Apply(path, bk, opts, false)
	if err != nil || res2.Changed {
		t.Fatal("second apply changed", err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, mid) {
		t.Fatal("second apply rewrote the file")
	}
	res, err = Remove(path, bk, "", false)
	if err != nil || !res.Restored {
		t.Fatalf("%+v %v", res, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, []byte(orig)) {
		t.Errorf("not byte-identical:\n%s\n---\n%s", orig, after)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	if _, err := os.Stat(res.Backup); !os.IsNotExist(err) {
		t.Errorf("backup record left: %v", err)
	}
}

// installedOver is a settings file holding orig, with loopguard installed
// into it (opts), and its backup directory.
func installedOver(t *testing.T, orig string) (path, bk string) {
	t.Helper()
	dir := t.TempDir()
	path, bk = filepath.Join(dir, "settings.json"), filepath.Join(dir, "bk")
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(path, bk, opts, false); err != nil {
		t.Fatal(err)
	}
	return path, bk
}

func TestRemoveKeepsLaterEdits(t *testing.T) {
	path, bk := installedOver(t, other)
	mid, _ := os.ReadFile(path)
	edited := bytes.Replace(mid, []byte(`"zeta": null`), []byte(`"zeta": true`), 1)
	os.WriteFile(path, edited, 0o644)
	res, err := Remove(path, bk, "", false)
	if err != nil || res.Restored || !res.Changed {
		t.Fatalf("%+v %v", res, err)
	}
	after, _ := os.ReadFile(path)
	if len(ours(t, after)) != 0 || !bytes.Contains(after, []byte(`"zeta": true`)) || !bytes.Contains(after, []byte("fmt-check")) {
		t.Errorf("got:\n%s", after)
	}
}

func TestApplyRemoveCreated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.local.json")
	bk := filepath.Join(dir, "bk")
	res, err := Apply(path, bk, opts, true)
	if err != nil || !res.Changed || res.Existed {
		t.Fatal(res, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatal("dry run created the directory")
	}
	if d := udiff.Diff(path, res.Old, res.New); !strings.HasPrefix(d, "--- /dev/null\n+++ b"+path+"\n@@ -0,0 +1,") || !strings.Contains(d, "+            \"onFailure\": \"block\"") {
		t.Errorf("diff:\n%s", d)
	}
	if _, err := Apply(path, bk, opts, false); err != nil {
		t.Fatal(err)
	}
	res, err = Remove(path, bk, "", false)
	if err != nil || !res.Deleted || !res.DirGone {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Error(".claude directory left behind")
	}
	// Control: a directory that existed before is kept.
	os.MkdirAll(filepath.Dir(path), 0o755)
	Apply(path, bk, opts, false)
	res, err = Remove(path, bk, "", false)
	if err != nil || !res.Deleted || res.DirGone {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		t.Error("pre-existing directory removed")
	}
}

func TestApplyRefuses(t *testing.T) {
	dir := t.TempDir()
	bk := filepath.Join(dir, "bk")
	target := filepath.Join(dir, "real.json")
	os.WriteFile(target, []byte("{}\n"), 0o644)
	link := filepath.Join(dir, "link.json")
	os.Symlink(target, link)
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("{}\n"), 0o444)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"a\": 1,\n}\n"), 0o644)
	for _, p := range []string{link, ro, bad} {
		before, _ := os.ReadFile(p)
		_, err := Apply(p, bk, opts, false)
		if err == nil {
			t.Errorf("%s: accepted", p)
		}
		if !errors.Is(err, ErrRefused) && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", p, err)
		}
		after, _ := os.ReadFile(p)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: changed", p)
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not name the file: %v", err)
		}
	}
	if _, err := Apply(bad, bk, opts, false); !strings.Contains(err.Error(), "bad.json:3:1:") {
		t.Errorf("no position: %v", err)
	}
	// Control: the symlink's target itself is accepted.
	if _, err := Apply(target, bk, opts, false); err != nil {
		t.Error(err)
	}
}

func TestSettingsPath(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "repo", "sub")
	os.MkdirAll(sub, 0o755)
	os.Mkdir(filepath.Join(dir, "repo", ".git"), 0o755)
	env := Env{Home: "/home/u", Cwd: sub}
	for _, c := range []struct {
		s    Scope
		env  Env
		want string
	}{
		{User, env, "/home/u/.claude/settings.json"},
		{User, Env{Home: "/home/u", ConfigDir: "/cfg"}, "/cfg/settings.json"},
		{Project, env, filepath.Join(sub, ".claude", "settings.json")},
		{Local, env, filepath.Join(dir, "repo", ".claude", "settings.local.json")},
	} {
		got, err := SettingsPath(c.s, c.env)
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.s, got, err, c.want)
		}
	}
	if _, err := SettingsPath("global", env); err == nil {
		t.Error("unknown scope accepted")
	}
}

func TestDisablesHooks(t *testing.T) {
	for in, want := range map[string]bool{
		`{"disableAllHooks": true}`:        true,
		`{"disableAllHooks": false}`:       false,
		`{"disableAllHooks": "yes"}`:       false,
		`{"a": {"disableAllHooks": true}}`: false,
		`{}`:                               false,
	} {
		if got := DisablesHooks([]byte(in)); got != want {
			t.Errorf("%s: %v", in, got)
		}
	}
}

// The default matcher, tested as Claude Code does, reaches every tool.
func TestDefaultMatcher(t *testing.T) {
	for _, tool := range []string{"Bash", "Edit", "Write", "TodoWrite", "Read", "Monitor", "CronCreate", "mcp__bank__transfer", "SomeFutureTool"} {
		if !MatcherCovers(DefaultMatcher, tool) {
			t.Errorf("%s not guarded", tool)
		}
	}
}

// MatcherCovers follows Claude Code's three matcher forms.
func TestMatcherCovers(t *testing.T) {
	for _, c := range []struct {
		matcher, tool string
		want          bool
	}{
		{"*", "Monitor", true}, {"", "Monitor", true}, {".*", "Monitor", true},
		{"Bash|Edit", "Bash", true}, {"Bash|Edit", "Monitor", false}, {"Bash, Edit", "Edit", true},
		{"Bash", "BashOutput", false},  // exact list
		{"Write.*", "TodoWrite", true}, // unanchored regex
		{"^(Bash|Edit|Write|MultiEdit|NotebookEdit|WebFetch|mcp__.*)$", "Monitor", false},
		{"^(Bash|Edit|Write|MultiEdit|NotebookEdit|WebFetch|mcp__.*)$", "mcp__a__b", true},
		{"(", "Bash", false}, // does not compile: covers nothing
	} {
		if got := MatcherCovers(c.matcher, c.tool); got != c.want {
			t.Errorf("MatcherCovers(%q, %q) = %v, want %v", c.matcher, c.tool, got, c.want)
		}
	}
}

// init's matcher reaches every tool of the pinned client's recorded list.
func TestDefaultMatcherReachesRecordedTools(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "tools", "claude-code-2.1.332.txt"))
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Fields(string(b))
	if len(names) < 10 {
		t.Fatalf("recorded list too short: %v", names)
	}
	if missed := Unguarded(DefaultMatcher, names); len(missed) > 0 {
		t.Errorf("the default matcher leaves %v unguarded", missed)
	}
	// The old default left these out: the check can fail.
	if missed := Unguarded("^(Bash|Edit|Write|MultiEdit|NotebookEdit|WebFetch|mcp__.*)$", names); !slices.Contains(missed, "Monitor") || !slices.Contains(missed, "CronCreate") {
		t.Errorf("the old matcher's gaps not found: %v", missed)
	}
}
