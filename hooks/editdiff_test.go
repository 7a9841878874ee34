package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/present"
)

// describeFor builds the canonical descriptor of a file tool call the way
// the hook does (the target resolved, its state recorded).
func (h *harness) describeFor(tool string, in map[string]any) []byte {
	h.t.Helper()
	call := with(h.fixture("pretooluse-edit.json"), func(m map[string]any) {
		m["tool_name"] = tool
		m["tool_input"] = in
	})
	d, err := h.eng().describe(h.call(call))
	if err != nil {
		h.t.Fatal(err)
	}
	return d.canonical
}

func TestChangesPerTool(t *testing.T) {
	h := newHarness(t)
	f := filepath.Join(h.Project, "main.go")
	write := func(s string) {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nb := filepath.Join(h.Project, "n.ipynb")
	os.WriteFile(nb, []byte(`{"cells":[{"id":"c1","cell_type":"code","source":["x = 1\n","print(x)\n"]},{"id":"c2","cell_type":"markdown","source":"# T\n"}]}`), 0o644)
	for _, c := range []struct {
		name    string
		file    string // content before ("": absent)
		tool    string
		in      map[string]any
		want    []string
		notWant []string
	}{
		{"edit", "a\nfoo()\nb\n", "Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()"},
			[]string{"CHANGES: Edit " + f + ": 1 line(s) added, 1 removed", "--- a" + f, "+++ b" + f, "@@ -1,3 +1,3 @@\n a\n-foo()\n+bar()\n b\n"}, []string{"lands at"}},
		{"edit replace_all counts matches", "foo()\nx\nfoo()\nfoo()\n", "Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()", "replace_all": true},
			[]string{"replace_all: 3 match(es) replaced", "-foo()\n+bar()\n x\n-foo()\n-foo()\n+bar()\n+bar()\n"}, nil},
		{"a deletion takes the newline after it", "# hook (old)\nnpm test\n", "Edit", map[string]any{"file_path": f, "old_string": "(old)", "new_string": ""},
			[]string{"-# hook (old)\n-npm test\n+# hook npm test\n"}, nil},
		{"replace_all deletion only where a newline follows", "X\nfooXbar\nX\n", "Edit", map[string]any{"file_path": f, "old_string": "X", "new_string": "", "replace_all": true},
			[]string{"replace_all: 2 match(es) replaced", "-X\n fooXbar\n-X\n"}, nil},
		{"trailing blanks in new_string", "a\n", "Edit", map[string]any{"file_path": f, "old_string": "a", "new_string": "echo \\ \nrm -rf x"},
			[]string{"NOT SHOWN: new_string has a line that ends in blanks"}, []string{"+echo"}},
		{"edit not unique without replace_all", "foo()\nfoo()\n", "Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()"},
			[]string{"old_string occurs 2 times and replace_all is false: Claude Code would refuse the edit"}, []string{"+bar()"}},
		// Where Claude Code matches loosely, no diff and no "would
		// refuse": it may apply the edit (the seventy-eighth attack run).
		{"edit with no match", "a\n", "Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()"},
			[]string{"NOT SHOWN: old_string does not occur in the file byte for byte: Claude Code may still apply the edit"}, []string{"+bar()", "refuse", "would not change"}},
		{"edit with an escape Claude Code decodes", "a\nb\n", "Edit", map[string]any{"file_path": f, "old_string": `a\u000ab`, "new_string": `import os\u000aos.system('x')`},
			[]string{"NOT SHOWN: old_string or new_string holds a unicode escape"}, []string{"refuse", "would not change"}},
		{"edit whose new_string holds an escape the client decodes", "x = 1\n", "Edit", map[string]any{"file_path": f, "old_string": "x = 1", "new_string": `x = "\u0041"`},
			[]string{"NOT SHOWN: old_string or new_string holds a unicode escape"}, []string{"+x ="}},
		{"control: a backslash that is no unicode escape", "x = 1\n", "Edit", map[string]any{"file_path": f, "old_string": "x = 1", "new_string": `x = "\u00g1\n"`},
			[]string{`+x = "\\u00g1\\n"`}, []string{"NOT SHOWN"}},
		{"edit with curly quotes in the file", "it’s\n", "Edit", map[string]any{"file_path": f, "old_string": "it's", "new_string": "evil"},
			[]string{"NOT SHOWN: old_string does not occur"}, []string{"refuse"}},
		{"edit of a file with CRLF line endings", "a\r\nfoo()\r\nfoo()\nfoo()\n", "Edit", map[string]any{"file_path": f, "old_string": "foo()\n", "new_string": "bar()\n", "replace_all": true},
			[]string{"NOT SHOWN: the file has carriage returns"}, []string{"match(es) replaced", "+bar()"}},
		// A deletion takes the newline after old_string with it, as
		// Claude Code and Qwen Code apply it (their e2e tests); where
		// they part ways, or the file is not UTF-8, no diff.
		{"deletion takes the newline after it", "a\nfoo\nb\n", "Edit", map[string]any{"file_path": f, "old_string": "foo", "new_string": ""},
			[]string{"0 line(s) added, 1 removed", "@@ -1,3 +1,2 @@\n a\n-foo\n b\n"}, nil},
		{"deletion with replace_all takes only the matches before a newline", "foo\nfoo\nfoo", "Edit", map[string]any{"file_path": f, "old_string": "foo", "new_string": "", "replace_all": true},
			[]string{"0 line(s) added, 2 removed; replace_all: 2 match(es) replaced"}, nil},
		{"deletion of text there twice, once before a newline", "foo\nfoo", "Edit", map[string]any{"file_path": f, "old_string": "foo", "new_string": ""},
			[]string{"NOT SHOWN: new_string is empty and old_string occurs 2 times, once followed by a newline", "Qwen Code deletes"}, []string{"would refuse"}},
		{"deletion of text twice before a newline", "foo\nfoo\n", "Edit", map[string]any{"file_path": f, "old_string": "foo", "new_string": ""},
			[]string{"old_string occurs 2 times and replace_all is false: Claude Code would refuse the edit"}, []string{"NOT SHOWN"}},
		{"edit of a file that is not UTF-8", "caf\xe9\nfoo\n", "Edit", map[string]any{"file_path": f, "old_string": "foo", "new_string": "b\u00e4r"},
			[]string{"NOT SHOWN: the file is not UTF-8 text"}, []string{"+b"}},
		{"another agent's edit (Gemini CLI's expected_replacements)", "foo()\nfoo()\n", "Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()", "expected_replacements": 2},
			[]string{"NOT SHOWN: the input is not Claude Code's old_string/new_string edit (it has expected_replacements"}, []string{"refuse"}},
		{"another agent's edit (OpenCode's fields)", "foo()\n", "Edit", map[string]any{"file_path": f, "filePath": f, "oldString": "foo()", "newString": "bar()"},
			[]string{"NOT SHOWN: the input is not Claude Code's old_string/new_string edit"}, []string{"refuse"}},
		{"edit of a missing file", "", "Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()"},
			[]string{"the file does not exist: Claude Code would refuse the edit"}, nil},
		{"edit creating a file", "", "Edit", map[string]any{"file_path": f, "old_string": "", "new_string": "package x\n"},
			[]string{"creates it, 1 line(s)", "--- /dev/null", "+package x"}, nil},
		{"multiedit in order", "one\ntwo\n", "MultiEdit", map[string]any{"file_path": f, "edits": []any{
			map[string]any{"old_string": "one", "new_string": "uno"},
			map[string]any{"old_string": "uno\ntwo", "new_string": "uno\ndos"}}},
			[]string{"-one\n-two\n+uno\n+dos\n"}, nil},
		{"multiedit with a failing edit", "one\n", "MultiEdit", map[string]any{"file_path": f, "edits": []any{
			map[string]any{"old_string": "one", "new_string": "uno"},
			map[string]any{"old_string": "zzz", "new_string": "x"}}},
			[]string{"NOT SHOWN: edit 2 of 2: old_string does not occur"}, []string{"+uno", "nothing would change"}},
		{"multiedit refused", "one\n", "MultiEdit", map[string]any{"file_path": f, "edits": []any{
			map[string]any{"old_string": "one", "new_string": "uno"},
			map[string]any{"old_string": "uno", "new_string": "uno"}}},
			[]string{"edit 2 of 2: old_string and new_string are the same: Claude Code would refuse", "nothing would change"}, []string{"+uno"}},
		{"write over a file", "old\nsame\n", "Write", map[string]any{"file_path": f, "content": "new\nsame\n"},
			[]string{"1 line(s) added, 1 removed", "-old\n+new\n same\n"}, nil},
		{"write a new file", "", "Write", map[string]any{"file_path": f, "content": "hello\n"},
			[]string{"creates it, 1 line(s)", "--- /dev/null", "+hello"}, nil},
		{"notebook cell replaced", "", "NotebookEdit", map[string]any{"notebook_path": nb, "cell_id": "c1", "new_source": "x = 2\nprint(x)\n"},
			[]string{"cell 0 replaced", "--- a" + nb + "#cell-0", "-x = 1\n+x = 2\n print(x)\n"}, nil},
		{"notebook cell's type changed, its source not", "", "NotebookEdit", map[string]any{"notebook_path": nb, "cell_id": "c2", "new_source": "# T\n", "cell_type": "code"},
			[]string{"cell 1 replaced, and its type becomes code (it was markdown", "the cell's source would not change"}, []string{"the file would not change"}},
		{"notebook cell replaced, its type named as it is", "", "NotebookEdit", map[string]any{"notebook_path": nb, "cell_id": "c2", "new_source": "# U\n", "cell_type": "markdown"},
			[]string{"cell 1 replaced", "-# T\n+# U\n"}, []string{"type becomes"}},
		{"notebook cell inserted", "", "NotebookEdit", map[string]any{"notebook_path": nb, "cell_id": "c2", "new_source": "y\n", "cell_type": "code", "edit_mode": "insert"},
			[]string{"a new code cell inserted after cell 1", "+y"}, nil},
		{"notebook cell deleted", "", "NotebookEdit", map[string]any{"notebook_path": nb, "cell_id": "c2", "edit_mode": "delete", "new_source": ""},
			[]string{"cell 1 deleted", "-# T"}, nil},
		{"notebook cell type escaped", "", "NotebookEdit", map[string]any{"notebook_path": nb, "new_source": "y\n", "cell_type": "code\x1b[2J", "edit_mode": "insert"},
			[]string{`a new code\x1b[2J cell inserted at the top`}, []string{"\x1b"}},
		{"notebook cell that does not exist", "", "NotebookEdit", map[string]any{"notebook_path": nb, "cell_id": "zz", "new_source": "y"},
			[]string{"cell_id names no cell"}, nil},
	} {
		os.Remove(f)
		if c.file != "" {
			write(c.file)
		}
		wantText(t, c.name, present.Changes(h.describeFor(c.tool, c.in), false, present.Client{}, nil), c.want, c.notWant)
	}
	// Not a file tool: no changes section.
	if got := present.Changes(h.describeFor("WebFetch", map[string]any{"url": "https://x"}), false, present.Client{}, nil); got != "" {
		t.Errorf("WebFetch: %q", got)
	}
}

// An edit whose strings (or the file around it) hold terminal escapes, CR
// or bidi controls renders them escaped; the control shows the same edit
// in plain text as it is.
func TestChangesEscaped(t *testing.T) {
	h := newHarness(t)
	f := filepath.Join(h.Project, "main.go")
	os.WriteFile(f, []byte("ctx \x1b]0;own\a\nfoo()\n"), 0o644)
	got := present.Changes(h.describeFor("Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()\x1b[2J\r// ok \u202egnp.exe"}), false, present.Client{}, nil)
	for _, raw := range []string{"\x1b", "\r", "\a", "\u202e"} {
		if strings.Contains(got, raw) {
			t.Errorf("raw %q reached the rendering:\n%q", raw, got)
		}
	}
	for _, want := range []string{`+bar()\x1b[2J\r// ok \u{202e}gnp.exe`, ` ctx \x1b]0;own\x07`} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	// Control: a plain edit shows its text unchanged.
	os.WriteFile(f, []byte("foo()\n"), 0o644)
	if got := present.Changes(h.describeFor("Edit", map[string]any{"file_path": f, "old_string": "foo()", "new_string": "bar()"}), false, present.Client{}, nil); !strings.Contains(got, "\n+bar()\n") {
		t.Errorf("control:\n%s", got)
	}
}

// A Write to a path the human would read as a new file, which is a
// symlink to an existing file elsewhere, shows where it lands and the diff
// against what is there (the hook's resolution, recorded in the
// descriptor, not a second one). Control: a real new file.
func TestChangesThroughSymlink(t *testing.T) {
	h := newHarness(t)
	elsewhere := filepath.Join(t.TempDir(), "authorized_keys")
	os.WriteFile(elsewhere, []byte("ssh-ed25519 AAAA me\n"), 0o600)
	link := filepath.Join(h.Project, "notes.txt")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	got := present.Changes(h.describeFor("Write", map[string]any{"file_path": link, "content": "ssh-ed25519 EVIL attacker\n"}), false, present.Client{}, nil)
	for _, want := range []string{"lands at " + elsewhere, "--- a" + elsewhere, "-ssh-ed25519 AAAA me", "+ssh-ed25519 EVIL attacker"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "creates it") {
		t.Errorf("a replaced file shown as new:\n%s", got)
	}
	plain := filepath.Join(h.Project, "new.txt")
	got = present.Changes(h.describeFor("Write", map[string]any{"file_path": plain, "content": "x\n"}), false, present.Client{}, nil)
	if !strings.Contains(got, "creates it") || strings.Contains(got, "lands at") {
		t.Errorf("control:\n%s", got)
	}
}

// The file changed after the call was recorded: the diff is against the
// copy kept when the call was held, the file an approval lets the call run
// on, and without one it is not shown. The eighty-fourth attack run
// rewrote net.py (a jailed call) so that the edit's old_string was only in
// a comment, had that harmless diff approved, put the file back, and the
// retry turned TLS verification off.
func TestChangesFileChangedSince(t *testing.T) {
	h := newHarness(t)
	f := filepath.Join(h.Project, "net.py")
	const was = "r = get(url, verify=True)\n"
	os.WriteFile(f, []byte(was), 0o644)
	desc := h.describeFor("Edit", map[string]any{"file_path": f, "old_string": "verify=True)", "new_string": "verify=False)"})
	real := "-r = get(url, verify=True)\n+r = get(url, verify=False)\n"
	if got := present.Changes(desc, false, present.Client{}, nil); strings.Contains(got, "changed since") || !strings.Contains(got, real) { // control
		t.Errorf("unchanged file:\n%s", got)
	}
	before := present.Snapshot(desc, 1<<20)
	if string(before) != was {
		t.Fatalf("snapshot %q", before)
	}
	os.WriteFile(f, []byte("r = get(url)  # was get(url, verify=True)\n"), 0o644)
	got := present.Changes(desc, false, present.Client{}, nil)
	if !strings.Contains(got, "NOT SHOWN: the file changed since the call was made") || strings.Contains(got, "+r = get(url)  # was get(url, verify=False)") {
		t.Errorf("drift without a kept copy: want NOT SHOWN, not a diff against the file now:\n%s", got)
	}
	got = present.Changes(desc, false, present.Client{}, before)
	if !strings.Contains(got, "NOTE: the file changed since the call was made") || !strings.Contains(got, real) || strings.Contains(got, "# was") {
		t.Errorf("drift with the kept copy: want the diff against it:\n%s", got)
	}
	if got := present.Changes(desc, false, present.Client{}, []byte("r = 1\n")); !strings.Contains(got, "NOT SHOWN") {
		t.Errorf("a kept copy that is not the file as the call recorded it was used:\n%s", got)
	}
	if !present.Drifted(desc) {
		t.Error("Drifted: false for a changed file")
	}
	if present.Snapshot(desc, 1<<20) != nil {
		t.Error("a snapshot of a file that no longer matches the call")
	}
	os.WriteFile(f, []byte("r = get(url)  # was get(url, verify=True)\nevil()\n"), 0o644)
	got = present.DriftChanges(desc, before, false)
	if !strings.Contains(got, "SINCE APPROVAL") || !strings.Contains(got, "\n+evil()\n") {
		t.Errorf("drift diff:\n%s", got)
	}
}

// A long diff shows its head and says how to see the rest.
func TestChangesFolded(t *testing.T) {
	h := newHarness(t)
	f := filepath.Join(h.Project, "big.txt")
	content := strings.Repeat("line\n", 1000)
	desc := h.describeFor("Write", map[string]any{"file_path": f, "content": content})
	got := present.Changes(desc, false, present.Client{}, nil)
	if !strings.Contains(got, "more line(s) of the diff not shown: loopguard show --full ID") || strings.Count(got, "\n+line") > present.MaxDiffShown {
		t.Errorf("not folded: %d lines", strings.Count(got, "\n"))
	}
	if full := present.Changes(desc, true, present.Client{}, nil); strings.Count(full, "\n+line") != 1000 {
		t.Errorf("full: %d lines", strings.Count(full, "\n+line"))
	}
}

// Ask mode's reason fits Claude Code's dialog: its first line says why,
// an edit comes as its diff, and a huge Write stays a few KB.
func TestAskModeShowsDiff(t *testing.T) {
	h := newHarness(t)
	f := filepath.Join(h.Project, "main.go")
	os.WriteFile(f, []byte("a\nfoo()\n"), 0o644)
	e := h.eng()
	e.Mode = ModeAsk
	call := with(h.fixture("pretooluse-edit.json"), func(m map[string]any) {
		input(m)["file_path"] = f
	})
	d := e.Decide(context.Background(), h.call(call))
	expect(t, "ask", d, Ask, ReasonNoGrant)
	first, rest, _ := strings.Cut(d.Message, "\n")
	if first != "loopguard (ask mode): no_grant: no approval covers this call" {
		t.Errorf("first line: %q", first)
	}
	for _, want := range []string{"digest: ", "CHANGES: Edit " + f, "-foo()\n+bar()", "The exact call:"} {
		if !strings.Contains(rest, want) {
			t.Errorf("lacks %q:\n%s", want, d.Message)
		}
	}
	// What the agent may see of an ask (other agents show an ask's reason
	// to the model, or turn it into a deny) holds the reason, not the
	// file's lines: an Edit of a file the agent may not read must not
	// read it to the agent.
	if fa := d.ForAgent(); fa != first || strings.Contains(fa, "foo()") {
		t.Errorf("ForAgent of an ask: %q, want the first line alone", fa)
	}
	big := with(h.fixture("pretooluse-write.json"), func(m map[string]any) {
		input(m)["content"] = strings.Repeat("line\n", 100000)
	})
	d = e.Decide(context.Background(), h.call(big))
	if d.Behavior != Ask || len(d.Message) > 3*askBudget || !strings.Contains(d.Message, "diff cut here") {
		t.Errorf("a huge write: %s, %d bytes", d.Behavior, len(d.Message))
	}
}

// A target the agent made a FIFO (or a device) is not read: opening it
// would hang the review. The regular files above are the control.
func TestChangesFIFO(t *testing.T) {
	h := newHarness(t)
	fifo := filepath.Join(h.Project, "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan string, 1)
	go func() {
		done <- present.Changes(h.describeFor("Write", map[string]any{"file_path": fifo, "content": "x\n"}), false, present.Client{}, nil)
	}()
	select {
	case got := <-done:
		if !strings.Contains(got, "the file cannot be read") {
			t.Errorf("a FIFO: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rendering an edit of a FIFO hangs")
	}
	if got := present.Changes(h.describeFor("Write", map[string]any{"file_path": "/dev/zero", "content": "x\n"}), false, present.Client{}, nil); !strings.Contains(got, "cannot be read") {
		t.Errorf("/dev/zero: %s", got)
	}
}
