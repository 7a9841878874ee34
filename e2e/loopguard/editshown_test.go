package loopguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/present"
)

// TestEditShownIsWhatRuns: the real Claude Code is the oracle of what an
// Edit writes. Every edit loopguard shows as a diff (present.Applied
// gives a result) is run through the real client under an Edit(**)
// grant, and the file it leaves must be exactly the one shown: an exact
// match, replace_all with curly quotes beside the straight ones it
// replaces, a backslash-n in new_string, no final newline, a tab and an
// emoji, a deletion (which takes the newline after old_string with it,
// replace_all or not, and only where the file has one), a Write of LF text
// over a CRLF file. The edits loopguard does not show (present.Unshown:
// old_string not in the file byte for byte, a unicode escape in
// new_string, which the client decoded even where old_string matched as
// it is, as in a Write's content, a line of new text ending in blanks, a
// file with CRLF line endings, a deletion of text that is there twice,
// once before a newline, which Qwen Code applies and the client refuses,
// a file that is not UTF-8) are run
// too, and the test fails if the client left such a file unchanged in
// every one of them: the seventy-eighth attack run had each applied, and
// "nothing would change" shown for it.
func TestEditShownIsWhatRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.g.Grant(e.ctx, e.Dir, "Edit(**)"); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name, file string
		in         map[string]any
		tool       string // "": Edit; "md": Edit of a Markdown file
	}
	cases := []tc{
		{"exact", "a\nfoo()\nb\n", map[string]any{"old_string": "foo()", "new_string": "bar()"}, ""},
		{"replace_all beside curly quotes", "it's\nit\u2019s\nit's\n", map[string]any{"old_string": "it's", "new_string": "it is", "replace_all": true}, ""},
		{"backslash-n in new_string", "x = 1\n", map[string]any{"old_string": "x = 1", "new_string": `x = "a\n"`}, ""},
		{"no final newline, trailing blanks", "a  \nb", map[string]any{"old_string": "a  \nb", "new_string": "c"}, ""},
		{"tab and emoji", "\tfoo \U0001F642\n", map[string]any{"old_string": "foo \U0001F642", "new_string": "bar \U0001F642"}, ""},
		{"a line's text deleted, with its newline", "a\nfoo\nb\n", map[string]any{"old_string": "foo", "new_string": ""}, ""},
		{"deleted with replace_all, twice, once before a newline", "foo\nfoo\nfoo", map[string]any{"old_string": "foo", "new_string": "", "replace_all": true}, ""},
		{"not shown: CRLF", "a\r\nb\r\nb\n", map[string]any{"old_string": "b\n", "new_string": "EVIL\n", "replace_all": true}, ""},
		{"not shown: an escape in new_string", "x = 1\n", map[string]any{"old_string": "x = 1", "new_string": `x = "\u0041"`}, ""},
		{"not shown: escape in old_string", "a\nb\n", map[string]any{"old_string": `a\u000ab`, "new_string": `EVIL\u000ax`}, ""},
		{"not shown: curly quotes in the file", "it\u2019s\n", map[string]any{"old_string": "it's", "new_string": "EVIL"}, ""},
		{"not shown: deleted text twice, once before a newline", "foo\nfoo", map[string]any{"old_string": "foo", "new_string": ""}, ""},
		{"not shown: a file that is not UTF-8", "caf\xe9\nfoo\n", map[string]any{"old_string": "foo", "new_string": "bar"}, ""},
	}
	// Deletions (the seventy-ninth attack run): the newline after
	// old_string goes with it where there is one.
	cases = append(cases,
		tc{"deletion takes the newline", "#!/bin/sh\n# hook (old)\nnpm run lint || exit 1\n", map[string]any{"old_string": "(old)", "new_string": ""}, ""},
		tc{"deletion of a line", "a\nb\nc\n", map[string]any{"old_string": "b", "new_string": ""}, ""},
		tc{"replace_all deletion, only at line ends", "X\nfooXbar\nX\n", map[string]any{"old_string": "X", "new_string": "", "replace_all": true}, ""},
		tc{"deletion at the end, no newline after", "a\nb", map[string]any{"old_string": "b", "new_string": ""}, ""},
		tc{"trailing blanks kept in Markdown", "a\n", map[string]any{"old_string": "a", "new_string": "line one  \nline two"}, "md"},
		tc{"not shown: trailing blanks in new_string", "a\n", map[string]any{"old_string": "a", "new_string": "echo start \\ \n./verify.sh || exit 1"}, ""},
		tc{"not shown: a file with a NUL", "a\x00b\nfoo\n", map[string]any{"old_string": "foo", "new_string": "bar"}, ""},
		tc{"not shown: old_string begins with the file's byte order mark", "\ufeffa\nb\n", map[string]any{"old_string": "\ufeffa", "new_string": "c"}, ""},
		tc{"not shown: a blank before a CR in new_string", "a\n", map[string]any{"old_string": "a", "new_string": "echo start \\ \r./verify.sh || exit 1"}, ""},
		tc{"not shown: an empty old_string in a file of blanks", " \n\u3000\n", map[string]any{"old_string": "", "new_string": "EVIL\n"}, ""},
		tc{"not shown: trailing no-break space in new_string", "a\n", map[string]any{"old_string": "a", "new_string": "x = 'a'\u00a0\ny"}, ""})
	// Write, under the same grant (Edit(...) rules cover it).
	cases = append(cases,
		tc{"write: LF content over a CRLF file", "a\r\nb\r\n", map[string]any{"content": "a\nc\n"}, "Write"},
		tc{"not shown: write over a UTF-16 file", "\xff\xfeo\x00l\x00d\x00\n\x00", map[string]any{"content": "new\n"}, "Write"},
		tc{"not shown: write over a file that begins with a byte order mark", "\ufeffold\n", map[string]any{"content": "new\n"}, "Write"},
		tc{"not shown: write, trailing blanks", "x\n", map[string]any{"content": "echo start \\ \n./verify.sh || exit 1\n"}, "Write"},
		tc{"not shown: write, escapes in content", "x\n", map[string]any{"content": `y = "\u0041 \u00e9 \u2028 \u0022"` + "\n"}, "Write"})
	var reads, edits []claudetest.ToolCall
	for i := range cases {
		c := &cases[i]
		name := fmt.Sprintf("f%d.txt", i)
		if c.tool == "md" {
			name, c.tool = fmt.Sprintf("f%d.md", i), ""
		}
		if c.tool == "" {
			c.tool = "Edit"
		}
		f := e.path(name)
		if err := os.WriteFile(f, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		c.in["file_path"] = f
		reads = append(reads, claudetest.Call(fmt.Sprintf("toolu_r%d", i), "Read", map[string]any{"file_path": f}))
		edits = append(edits, claudetest.Call(fmt.Sprintf("toolu_e%d", i), c.tool, c.in))
	}

	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(reads...), claudetest.Tools(edits...), claudetest.Text("done"),
	}}, nil)
	unshownApplied := 0
	for i, c := range cases {
		r := result(t, api, fmt.Sprintf("toolu_e%d", i))
		got := e.read(filepath.Base(c.in["file_path"].(string)))
		want, err := present.Applied(c.tool, c.in, []byte(c.file))
		var u present.Unshown
		switch {
		case errors.As(err, &u):
			t.Logf("%s: not shown (%s); the client: error %v, wrote %q", c.name, u.Why, r.IsError, got)
			if got != c.file {
				unshownApplied++
			}
		case err != nil:
			t.Errorf("%s: loopguard says the client refuses it (%v); the client: error %v, %q", c.name, err, r.IsError, r.Content)
		default:
			if r.IsError || got != string(want) {
				t.Errorf("%s: shown as %q, the client wrote %q (tool error %v: %q)", c.name, want, got, r.IsError, r.Content)
			}
		}
	}
	if unshownApplied == 0 {
		t.Errorf("control: the client applied none of the edits loopguard does not show: the test shows nothing of why they are not")
	}
}
