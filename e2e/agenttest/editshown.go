//go:build unix

package agenttest

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/present"
)

// EditCase is one edit EditShownIsWhatRuns sends: a file's content and
// the edit's old_string and new_string (file_path is the file's), and
// replace_all when ReplaceAll.
type EditCase struct {
	Name, File, Old, New string
	ReplaceAll           bool
	// RefusedBy names the agents (Agent.Name) that refuse an edit
	// loopguard shows, writing nothing: the safe side of a difference.
	RefusedBy []string
}

// EditCases are the edits of EditShownIsWhatRuns: every one has
// old_string in the file byte for byte (loopguard's model of Claude
// Code's Edit), or is one loopguard does not show.
var EditCases = []EditCase{
	{Name: "exact", File: "a\nfoo()\nb\n", Old: "foo()", New: "bar()"},
	{Name: "backslash-n in new_string", File: "x = 1\n", Old: "x = 1", New: `x = "a\n"`},
	{Name: `backslash-t, \" and \\ in both`, File: `s = "a\tb \"q\" \\ c"` + "\n", Old: `"a\tb \"q\" \\ c"`, New: `"a\tb \"r\" \\ d"`},
	{Name: "backslash-quote and backslash-backtick", File: "say \\'hi\\' \\`x\\`\n", Old: "\\'hi\\' \\`x\\`", New: "\\'yo\\' \\`y\\`"},
	{Name: "backslash before a newline", File: "a \\\nb\n", Old: "a \\\nb", New: "c \\\nd"},
	{Name: "dollar patterns in new_string", File: "price\n", Old: "price", New: "$& $1 $$ $' $`"},
	{Name: "tab and emoji", File: "\tfoo \U0001F642\n", Old: "foo \U0001F642", New: "bar \U0001F642"},
	{Name: "no final newline, kept", File: "a  \nb", Old: "a  \nb", New: "c"},
	{Name: "curly quotes beside the straight match", File: "it's\nit\u2019s\n", Old: "it's", New: "it is"},
	{Name: "UTF-8 BOM", File: "\ufefffoo\n", Old: "foo", New: "bar"},
	{Name: "CRLF in new_string", File: "x = 1\n", Old: "x = 1", New: "y = 1\r\nz = 2"},
	{Name: "final newline dropped", File: "a\nb\n", Old: "b\n", New: "c"},
	{Name: "final newline added", File: "a\nb", Old: "b", New: "c\n"},
	{Name: "file emptied", File: "a\n", Old: "a\n", New: ""},
	{Name: "a line's text deleted", File: "a\nfoo\nb\n", Old: "foo", New: ""},
	{Name: "deleted text twice, once before a newline", File: "foo\nfoo", Old: "foo", New: ""},
	{Name: "deleted with replace_all, twice, once before a newline", File: "foo\nfoo\nfoo", Old: "foo", New: "", ReplaceAll: true},
	{Name: "invalid UTF-8 elsewhere in the file", File: "caf\xe9\nfoo\n", Old: "foo", New: "bar"},
	{Name: "non-ASCII into a Latin-1 file", File: "caf\xe9 cr\xe8me br\xfbl\xe9e\nfoo\n", Old: "foo", New: "b\u00e4r"},
	{Name: "twice without replace_all", File: "x\nx\n", Old: "x", New: "y"},
	{Name: "old_string is new_string", File: "x\n", Old: "x", New: "x"},
	{Name: "replace_all, two matches", File: "x\nx\n", Old: "x", New: "y", ReplaceAll: true},
	// Qwen Code does not create a file that exists, empty or not.
	{Name: "empty old_string, empty file", File: "", Old: "", New: "new\n", RefusedBy: []string{"qwen"}},
	{Name: "trailing blanks in old_string", File: "foo()\nb\n", Old: "foo()  \nb", New: "EVIL()\nb"},
	{Name: "curly quote in the file", File: "it\u2019s\n", Old: "it's", New: "EVIL"},
}

// EditShownIsWhatRuns: the client is the oracle of what its edit tool
// (edit, as loopguard maps it onto Edit: old_string/new_string) writes.
// Each of EditCases is run under an Edit(**) grant, after a read_file of
// the file. Where loopguard shows the edit (present.Applied gives a
// result), the file the client leaves must be exactly the one shown, or
// unchanged where the case names the agent in RefusedBy; where loopguard
// says the client refuses the edit, the file must be unchanged. The
// edits loopguard does not show (present.Unshown) are logged with what
// the client wrote, and the test fails if it wrote none of them: it
// would show nothing of why they are not shown. extra is added to every
// edit's input (Gemini CLI's instruction); the names of the cases not
// shown where the client wrote something other than the exact
// replacement (EditCase.literal) are returned.
func EditShownIsWhatRuns(e *Env, edit string, extra map[string]any) (differ []string) {
	t := e.T
	t.Helper()
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Edit(**)"); err != nil {
		t.Fatal(err)
	}
	s := Script{Tool: edit, Arg: "file_path"}
	ins := make([]map[string]any, len(EditCases))
	for i, c := range EditCases {
		name := fmt.Sprintf("f%d.txt", i)
		e.Write(name, c.File)
		f := filepath.Join(e.Dir, name)
		args := map[string]any{"old_string": c.Old, "new_string": c.New}
		if c.ReplaceAll {
			args["replace_all"] = true
		}
		maps.Copy(args, extra)
		ins[i] = maps.Clone(args)
		ins[i]["file_path"] = f
		s.Commands = append(s.Commands, f, f)
		s.Tools = append(s.Tools, "read_file", edit)
		s.Extra = append(s.Extra, nil, args)
	}
	api := e.RunAnyExit(s)
	unshownWritten := 0
	for i, c := range EditCases {
		got, out := e.Read(fmt.Sprintf("f%d.txt", i)), api.Output(2*i+1)
		want, err := present.Applied("Edit", ins[i], []byte(c.File))
		var u present.Unshown
		switch {
		case errors.As(err, &u):
			t.Logf("%s: not shown (%s); %s wrote %q", c.Name, u.Why, e.Agent.Name, got)
			if got != c.File {
				unshownWritten++
				if lit, ok := c.literal(); !ok {
					t.Logf("%s: there is no exact replacement to compare with", c.Name)
					differ = append(differ, c.Name)
				} else if got != lit {
					t.Logf("%s: that is not the exact replacement (%q)", c.Name, lit)
					differ = append(differ, c.Name)
				}
			}
		case err != nil:
			if got != c.File {
				t.Errorf("%s: loopguard says the client refuses it (%v); %s wrote %q (it reported %q)", c.Name, err, e.Agent.Name, got, out)
			}
		case got == string(want):
		case got == c.File && slices.Contains(c.RefusedBy, e.Agent.Name):
			t.Logf("%s: shown as %q; %s refuses it, as known: %q", c.Name, want, e.Agent.Name, out)
		default:
			t.Errorf("%s: shown as %q, %s wrote %q (it reported %q)", c.Name, want, e.Agent.Name, got, out)
		}
	}
	if unshownWritten == 0 {
		t.Errorf("control: %s applied none of the edits loopguard does not show: the test shows nothing of why they are not", e.Agent.Name)
	}
	return differ
}

// literal is the file as the plain exact replacement of c leaves it: old
// with new once (every time with ReplaceAll); false when old is not in
// the file exactly once (or at all, with ReplaceAll).
func (c EditCase) literal() (string, bool) {
	n := strings.Count(c.File, c.Old)
	switch {
	case c.Old == "" || n == 0 || n > 1 && !c.ReplaceAll:
		return "", false
	case c.ReplaceAll:
		return strings.ReplaceAll(c.File, c.Old, c.New), true
	}
	return strings.Replace(c.File, c.Old, c.New, 1), true
}
