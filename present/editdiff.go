package present

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/internal/udiff"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/token"
)

// maxDiffFile bounds the file read to show an edit as a diff; a larger one
// is named with its size and no diff.
const maxDiffFile = 8 << 20

// Bounds of a diff shown by Changes without full: a longer one shows its
// head and says how much is left.
const (
	MaxDiffShown = 400
	diffHead     = 300
)

// fileCall is a file tool's call as its descriptor states it.
type fileCall struct {
	tool  string
	in    map[string]any
	path  string // the path the call names
	lands string // where it lands (symlinks resolved by the hook), or path
	state string // the file's SHA-256 when the call was made, or token.Absent
}

// decodeFileCall reads the file tool call in canonical; false for other
// calls.
func decodeFileCall(canonical []byte) (fileCall, bool) {
	v, err := token.Decode(canonical)
	if err != nil {
		return fileCall{}, false
	}
	m, _ := v.(map[string]any)
	tool, _ := m["tool"].(string)
	in, _ := m["input"].(map[string]any)
	t, _ := m["target"].(map[string]any)
	if policy.ToolOf(tool).Changes == "" || in == nil || t == nil {
		return fileCall{}, false
	}
	fc := fileCall{tool: tool, in: in}
	fc.path, _ = t["path"].(string)
	fc.state, _ = t["sha256"].(string)
	fc.lands = fc.path
	if r, _ := t["resolved"].(string); r != "" {
		fc.lands = r
	}
	return fc, fc.path != ""
}

// readCurrent reads the file a call lands on, as it is now: nil with no
// error when it does not exist. Only a regular file is read, and opening
// never blocks: the agent may have put a FIFO there to hang the review.
func readCurrent(path string) ([]byte, error) {
	b, err := fsx.ReadRegular(path, maxDiffFile, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func stateOf(b []byte) string {
	if b == nil {
		return token.Absent
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Changes renders what a file tool's call (Edit, MultiEdit, Write,
// NotebookEdit) would change, as a unified diff against the file as it is
// now, every byte of it escaped; "" for other calls. An edit Claude Code
// would refuse (an old_string that is not in the file, or is there more
// than once without replace_all) is said plainly instead. The diff is a
// rendering: the digest a human confirms covers the call's exact bytes.
// Long diffs show their head unless full. cl is the client that applies
// the call (the zero Client: Claude Code); kept is the copy of the file
// kept when the call was held (state.Store.Snapshot; nil: none), against
// which the diff is shown once the file has changed since the call.
func Changes(canonical []byte, full bool, cl Client, kept []byte) string {
	fc, ok := decodeFileCall(canonical)
	if !ok {
		return ""
	}
	esc := EscapeText
	var b strings.Builder
	where := esc(fc.path)
	if fc.lands != fc.path {
		where += " (lands at " + esc(fc.lands) + ")"
	}
	cur, err := readCurrent(fc.lands)
	if err != nil {
		fmt.Fprintf(&b, "CHANGES: %s %s: no diff, the file cannot be read (%s)\n", fc.tool, where, esc(err.Error()))
		return b.String()
	}
	if now := stateOf(cur); fc.state != "" && fc.state != now {
		// A diff against the file as it is now is not what an approval
		// lets run: it covers the file only as it was, and the agent can
		// put it back (a jailed call needs no approval). The eighty-fourth
		// attack run rewrote net.py so that its verify=True was only in a
		// comment, had a harmless diff approved, put the file back, and
		// the retry turned TLS verification off.
		switch {
		case fc.state == token.Absent:
			cur = nil
		case kept != nil && stateOf(kept) == fc.state:
			cur = kept
		default:
			fmt.Fprintf(&b, "CHANGES: %s %s: NOT SHOWN: the file changed since the call was made (%s then, %s now), and no copy of it as it was is kept (only files up to 1 MiB are): an approval covers the call on the file only as it was, which the agent may put back, so a diff against the file as it is now would not be what runs; deny the call and let the agent send it again\n",
				fc.tool, where, short(fc.state), short(now))
			return b.String()
		}
		fmt.Fprintf(&b, "NOTE: the file changed since the call was made (%s then, %s now): the diff is against the file as it was then, on which alone an approval lets the call run (on the file as it is now, a retry is target_state_drift)\n",
			short(fc.state), short(now))
	}
	ch, err := applyCall(fc, cur)
	var u Unshown
	if errors.As(err, &u) {
		fmt.Fprintf(&b, "CHANGES: %s %s: NOT SHOWN: %s\n", fc.tool, where, esc(u.Why))
		return b.String()
	}
	if err != nil {
		fmt.Fprintf(&b, "CHANGES: %s %s: %s\n", fc.tool, where, esc(err.Error()))
		return b.String()
	}
	if n := cl.writeNote(fc); n != "" {
		b.WriteString("NOTE: " + n + "\n")
	}
	added, removed := udiff.Stat(ch.from, ch.to)
	head := fmt.Sprintf("CHANGES: %s %s", fc.tool, where)
	switch {
	case ch.from == nil && ch.part == "":
		head += fmt.Sprintf(": creates it, %d line(s)", added)
	case ch.to == nil && ch.part == "":
		head += ": deletes it"
	default:
		head += fmt.Sprintf(": %d line(s) added, %d removed", added, removed)
	}
	if ch.note != "" {
		head += "; " + esc(ch.note)
	}
	b.WriteString(head + "\n")
	d := udiff.Unified("a"+fc.lands+ch.part, "b"+fc.lands+ch.part, ch.from, ch.to, esc)
	if d == "" {
		if ch.part != "" && ch.note != "" {
			b.WriteString("(the cell's source would not change)\n")
		} else {
			b.WriteString("(the file would not change)\n")
		}
		return b.String()
	}
	b.WriteString(foldDiff(d, full))
	return b.String()
}

// short names a file's state in a line: its SHA-256's first 12 digits, or
// that it did not exist.
func short(state string) string {
	if state == token.Absent {
		return "no file"
	}
	return "sha256 " + state[:min(12, len(state))]
}

// Drifted reports whether the file a file tool's call changes is no longer
// as the call recorded it (changed, made or removed since).
func Drifted(canonical []byte) bool {
	fc, ok := decodeFileCall(canonical)
	if !ok || fc.state == "" {
		return false
	}
	cur, err := readCurrent(fc.lands)
	return err != nil || stateOf(cur) != fc.state
}

// Snapshot is the content of the file a file tool's call changes, read as
// the call's descriptor recorded it (its digest must match) and at most
// max bytes; nil otherwise. An approval keeps it so that a later
// target_state_drift can show what changed since.
func Snapshot(canonical []byte, max int) []byte {
	fc, ok := decodeFileCall(canonical)
	if !ok {
		return nil
	}
	return SnapshotAt(fc.lands, fc.state, max)
}

// SnapshotAt is Snapshot of the file at lands whose state (its SHA-256, or
// token.Absent) a call recorded, from a descriptor the caller holds
// decoded: the hook's, which a 1 MiB Write's would otherwise decode again.
func SnapshotAt(lands, state string, max int) []byte {
	if lands == "" || state == "" || state == token.Absent {
		return nil
	}
	cur, err := readCurrent(lands)
	if err != nil || cur == nil || len(cur) > max || stateOf(cur) != state {
		return nil
	}
	return cur
}

// DriftChanges renders what changed in the file of a file tool's call
// between before (the file as an approval covered it) and now; "" when the
// call is not a file tool's.
func DriftChanges(canonical, before []byte, full bool) string {
	fc, ok := decodeFileCall(canonical)
	if !ok {
		return ""
	}
	cur, err := readCurrent(fc.lands)
	if err != nil {
		return "SINCE APPROVAL: the file cannot be read now (" + EscapeText(err.Error()) + ")\n"
	}
	d := udiff.Unified("approved"+fc.lands, "now"+fc.lands, before, cur, EscapeText)
	if d == "" {
		return "SINCE APPROVAL: the file is as it was when approved\n"
	}
	added, removed := udiff.Stat(before, cur)
	return fmt.Sprintf("SINCE APPROVAL: %s changed since the call was approved: %d line(s) added, %d removed\n", EscapeText(fc.lands), added, removed) +
		foldDiff(d, full)
}

// foldDiff shows a long diff's head unless full.
func foldDiff(d string, full bool) string {
	lines := strings.SplitAfter(d, "\n")
	if full || len(lines) <= MaxDiffShown {
		return d
	}
	return strings.Join(lines[:diffHead], "") + fmt.Sprintf("... %d more line(s) of the diff not shown: loopguard show --full ID\n", len(lines)-diffHead)
}

// change is what a call would do to its file: from and to (nil: absent),
// part naming a piece of the file (a notebook's cell) when the diff is of
// that piece, and a note on how (replace_all's count).
type change struct {
	from, to []byte
	part     string
	note     string
}

// Applied is the content a file tool's call (Write, Edit, MultiEdit)
// leaves in the file whose content is cur (nil: it does not exist), as
// Claude Code applies it; an error says why Claude Code would refuse it.
func Applied(tool string, in map[string]any, cur []byte) ([]byte, error) {
	if tool == "NotebookEdit" {
		return nil, errors.New("a notebook's cell, not the file's text")
	}
	ch, err := applyCall(fileCall{tool: tool, in: in}, cur)
	return ch.to, err
}

// applyCall is what the call would change in the file whose content is
// cur (nil: it does not exist); an error says why Claude Code would
// refuse the call.
func applyCall(fc fileCall, cur []byte) (change, error) {
	switch fc.tool {
	case "Write":
		s, ok := fc.in["content"].(string)
		if !ok {
			return change{}, errors.New("content is not a string: Claude Code would refuse the call")
		}
		if strippable(fc.in, s) {
			return change{}, Unshown{trailingWhy("content")}
		}
		if cur != nil && (!utf8.Valid(cur) || bytes.IndexByte(cur, 0) >= 0) {
			// The real client wrote UTF-16 behind the file's byte order
			// mark (the eighty-first attack run), and refuses a file with
			// a NUL.
			return change{}, Unshown{"the file is not UTF-8 text (or holds a NUL): Claude Code writes in the file's own encoding, or refuses it, so loopguard cannot show exactly what it writes"}
		}
		if bytes.HasPrefix(cur, []byte("\ufeff")) && !strings.HasPrefix(s, "\ufeff") {
			// The real client wrote the file's byte order mark back
			// before the content (the eightieth attack run).
			return change{}, Unshown{"the file begins with a byte order mark, which Claude Code writes back before the content: loopguard cannot show exactly what it writes"}
		}
		if unicodeEscape(s) {
			// The real client wrote A for \u0041, and é for \u00e9.
			return change{}, Unshown{"content holds a unicode escape (a backslash, u and four hex digits): Claude Code decodes such escapes when it writes the file, so loopguard cannot show exactly what it writes"}
		}
		return change{from: cur, to: []byte(s)}, nil
	case "Edit":
		s, note, err := applyEdit(cur, fc.in)
		return change{from: cur, to: s, note: note}, err
	case "MultiEdit":
		edits, ok := fc.in["edits"].([]any)
		if !ok || len(edits) == 0 {
			return change{}, errors.New("edits is not a list of edits: Claude Code would refuse the call")
		}
		var notes []string
		next := cur
		for i, e := range edits {
			m, ok := e.(map[string]any)
			if !ok {
				return change{}, fmt.Errorf("edit %d of %d is not an object: Claude Code would refuse the call, and nothing would change", i+1, len(edits))
			}
			var note string
			var err error
			if next, note, err = applyEdit(next, m); err != nil {
				var u Unshown
				if errors.As(err, &u) {
					return change{}, Unshown{fmt.Sprintf("edit %d of %d: %s", i+1, len(edits), u.Why)}
				}
				return change{}, fmt.Errorf("edit %d of %d: %w; nothing would change", i+1, len(edits), err)
			}
			if note != "" {
				notes = append(notes, fmt.Sprintf("edit %d: %s", i+1, note))
			}
		}
		return change{from: cur, to: next, note: strings.Join(notes, "; ")}, nil
	case "NotebookEdit":
		return applyNotebook(cur, fc.in)
	}
	return change{}, fmt.Errorf("no diff for %s", fc.tool)
}

// Client is what a host's client does with a file tool's input where it
// differs from Claude Code by settings the hook cannot see (each host's
// agents.Host.Files says it; the zero value is Claude Code's).
type Client struct {
	// Name names the client in what is shown.
	Name string
	// WriteEscapes says when the client writes a Write's content with its
	// backslash escapes decoded (\n as a newline, \" as a quote, \\ as one
	// backslash...), into any file but JSON and notebooks; "" never.
	WriteEscapes string
}

// writeNote is what a human is told beside the diff of fc where cl may
// write other bytes than the diff shows; "" where it writes them.
func (cl Client) writeNote(fc fileCall) string {
	s, _ := fc.in["content"].(string)
	if cl.WriteEscapes == "" || fc.tool != "Write" || !decodableEscape(s) {
		return ""
	}
	switch strings.ToLower(path.Ext(fc.path)) {
	case ".json", ".ipynb", ".jsonc", ".json5":
		return ""
	}
	return cl.Name + " writes this content with its backslash escapes decoded (\\n as a newline, \\\" as a quote, \\\\ as one backslash) " +
		cl.WriteEscapes + ": the diff is the content as sent, which it writes otherwise"
}

// decodableEscape reports whether s holds a backslash before n, t, r, ',
// ", `, a backslash or a newline: what Gemini CLI's unescape of a
// write_file's content (unescapeStringForGeminiBug) changes.
func decodableEscape(s string) bool {
	for i := strings.IndexByte(s, '\\'); i >= 0 && i+1 < len(s); {
		if strings.IndexByte("ntr'\"`\\\n", s[i+1]) >= 0 {
			return true
		}
		j := strings.IndexByte(s[i+1:], '\\')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// Unshown is the error of an edit whose effect loopguard cannot tell
// exactly: the client may apply it, in ways loopguard does not model (a
// loose match), so it is neither shown as a diff nor taken as refused.
type Unshown struct{ Why string }

func (u Unshown) Error() string { return u.Why }

// applyEdit applies one old_string/new_string edit as Claude Code does:
// old_string must occur exactly once unless replace_all is set; an empty
// old_string creates a file that does not exist (or is empty). Where
// Claude Code would match loosely (old_string not in the file byte for
// byte: it then tries curly quotes as straight ones and decodes \uXXXX
// escapes; a file with carriage returns, whose line endings it matches as
// LF and writes back its own way), the result is Unshown, not a guess:
// the seventy-eighth attack run had "nothing would change" shown for edits
// Claude Code applied, and one replacement shown where it made three.
//
// Qwen Code's edit (mapped onto Edit, with the same keys) applies it the
// same way, but for what Unshown still covers, checked against the real
// clients (agenttest.EditShownIsWhatRuns): a file that is not UTF-8, and
// a deletion whose old_string is in the file more than once. An empty
// new_string whose old_string does not end in a newline but is followed
// by one takes that newline too in both (Claude Code 2.1.332 and Qwen
// Code 0.24.4 wrote "a\nb\n" for foo deleted from "a\nfoo\nb\n"). Gemini
// CLI's replace (0.61.0) requires an instruction, so it is another
// agent's edit below; without one Gemini refuses it before any hook.
func applyEdit(cur []byte, in map[string]any) ([]byte, string, error) {
	for k := range in {
		switch k {
		case "file_path", "old_string", "new_string", "replace_all":
		default:
			// Gemini CLI's expected_replacements, OpenCode's oldString,
			// a Codex patch's command: the agent applies it its own way.
			return nil, "", Unshown{"the input is not Claude Code's old_string/new_string edit (it has " + k + ": another agent's edit, applied by that agent's own matching): no diff; what it changes is the input as sent"}
		}
	}
	old, ok1 := in["old_string"].(string)
	repl, ok2 := in["new_string"].(string)
	if !ok1 || !ok2 {
		return nil, "", errors.New("old_string or new_string is not a string: Claude Code would refuse the edit")
	}
	all, _ := in["replace_all"].(bool)
	if old == repl {
		return nil, "", errors.New("old_string and new_string are the same: Claude Code would refuse the edit (no change to make)")
	}
	if unicodeEscape(old) || unicodeEscape(repl) {
		return nil, "", Unshown{"old_string or new_string holds a unicode escape (a backslash, u and four hex digits): Claude Code decodes such escapes, in new_string even when old_string matches as it is (the real client wrote A for one), so loopguard cannot show exactly what it writes"}
	}
	if strippable(in, repl) {
		return nil, "", Unshown{trailingWhy("new_string")}
	}
	if old == "" {
		if len(strings.TrimFunc(string(cur), blank)) == 0 && len(cur) > 0 {
			// Claude Code takes a file of blanks alone for an empty one,
			// and writes new_string over it (the eightieth attack run).
			return nil, "", Unshown{"old_string is empty and the file holds only blanks: Claude Code takes it for an empty file and writes new_string over it"}
		}
		if len(cur) > 0 {
			return nil, "", errors.New("old_string is empty but the file exists and is not empty: Claude Code would refuse the edit")
		}
		return []byte(repl), "", nil
	}
	if cur == nil {
		return nil, "", errors.New("the file does not exist: Claude Code would refuse the edit")
	}
	if bytes.IndexByte(cur, '\r') >= 0 {
		return nil, "", Unshown{"the file has carriage returns (CRLF line endings): Claude Code matches old_string against it with them as LF and writes the line endings back its own way, so loopguard cannot show exactly what the edit changes"}
	}
	if bytes.IndexByte(cur, 0) >= 0 || strings.HasPrefix(old, "\ufeff") {
		// The real client refuses a file with a NUL, and reads a file's
		// byte order mark away before it matches (the eighty-first
		// attack run).
		return nil, "", Unshown{"the file holds a NUL, or old_string begins with a byte order mark: Claude Code refuses the first and reads the mark away before it matches, so loopguard cannot show what it does"}
	}
	if !utf8.Valid(cur) {
		// Claude Code refuses such a file; Qwen Code decodes it in the
		// charset it guesses and writes it back in it (the real client
		// wrote b\xe4r, Latin-1, for a new_string of bär); Gemini CLI
		// writes U+FFFD over every byte that is not UTF-8.
		return nil, "", Unshown{"the file is not UTF-8 text: Claude Code refuses to edit it, but Qwen Code edits it in the legacy charset it guesses (writing new_string in that charset) and Gemini CLI writes every byte of it that is not UTF-8 as U+FFFD, so loopguard cannot show exactly what the edit changes"}
	}
	n := strings.Count(string(cur), old)
	// A deletion takes the newline after old_string with it where the file
	// has one there, and replace_all then removes only those: the real
	// client commented out the line after "# hook (old)" deleted, which a
	// diff of the text alone kept (the seventy-ninth attack run). Claude
	// Code counts old_string, Qwen Code old_string and the newline: with
	// old_string twice and once before a newline, Claude Code refuses and
	// Qwen Code deletes (it wrote "foo" for a deletion of foo from
	// "foo\nfoo").
	if repl == "" && !strings.HasSuffix(old, "\n") && strings.Contains(string(cur), old+"\n") {
		nl := strings.Count(string(cur), old+"\n")
		switch {
		case n > 1 && !all && nl == 1:
			return nil, "", Unshown{fmt.Sprintf("new_string is empty and old_string occurs %d times, once followed by a newline: Claude Code refuses the edit (replace_all is false), but Qwen Code deletes that one with its newline, so loopguard cannot show what the client does", n)}
		case n == 1 || all:
			old, n = old+"\n", nl
		}
	}
	switch {
	case n == 0:
		return nil, "", Unshown{"old_string does not occur in the file byte for byte: Claude Code may still apply the edit, matching loosely (curly quotes as straight ones, unicode escapes in it decoded), where loopguard cannot show"}
	case n > 1 && !all:
		return nil, "", fmt.Errorf("old_string occurs %d times and replace_all is false: Claude Code would refuse the edit", n)
	case all:
		return []byte(strings.ReplaceAll(string(cur), old, repl)), fmt.Sprintf("replace_all: %d match(es) replaced", n), nil
	}
	return []byte(strings.Replace(string(cur), old, repl, 1)), "", nil
}

// strippable reports whether Claude Code would take trailing blanks off
// the lines of text, written to the file the input names: it does so
// outside Markdown (the real client wrote "echo start \" for "echo start
// \ ", joining the next line to it). Every character a JavaScript \s
// matches counts.
func strippable(in map[string]any, text string) bool {
	p, _ := in["file_path"].(string)
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".mdx":
		return false
	}
	// A CR ends a line as an LF does (the eightieth attack run: "\\ \r"
	// became "\\\r").
	for line := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if r, _ := utf8.DecodeLastRuneInString(line); blank(r) {
			return true
		}
	}
	return false
}

// blank is a character JavaScript's trim takes off (a \s), and NEL.
func blank(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }

func trailingWhy(what string) string {
	return what + " has a line that ends in blanks, which Claude Code takes off outside Markdown files: loopguard cannot show exactly what it writes"
}

// unicodeEscape reports whether s holds a backslash, u and four hex
// digits: an escape Claude Code's Edit may decode.
func unicodeEscape(s string) bool {
	for i := strings.Index(s, `\u`); i >= 0; {
		if len(s) >= i+6 && isHex4(s[i+2:i+6]) {
			return true
		}
		j := strings.Index(s[i+2:], `\u`)
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return false
}

func isHex4(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return len(s) == 4
}

// applyNotebook renders a NotebookEdit as the source of the cell it
// changes: the old cell's lines against the new ones (insert: from
// nothing; delete: to nothing).
func applyNotebook(cur []byte, in map[string]any) (change, error) {
	if cur == nil {
		return change{}, errors.New("the notebook does not exist: Claude Code would refuse the edit")
	}
	var nb struct {
		Cells []map[string]any `json:"cells"`
	}
	if err := json.Unmarshal(cur, &nb); err != nil {
		return change{}, fmt.Errorf("the notebook is not JSON Claude Code can edit (%v)", err)
	}
	mode, _ := in["edit_mode"].(string)
	if mode == "" {
		mode = "replace"
	}
	src, _ := in["new_source"].(string)
	if unicodeEscape(src) {
		return change{}, Unshown{"new_source holds a unicode escape (a backslash, u and four hex digits), which Claude Code may decode as it does in an Edit's and a Write's text: loopguard cannot show exactly what it writes"}
	}
	id, _ := in["cell_id"].(string)
	idx := -1
	for i, c := range nb.Cells {
		if cid, _ := c["id"].(string); id != "" && cid == id {
			idx = i
			break
		}
	}
	if idx < 0 && id != "" {
		var n int
		if _, err := fmt.Sscanf(id, "cell-%d", &n); err == nil && n >= 0 && n < len(nb.Cells) && fmt.Sprintf("cell-%d", n) == id {
			idx = n
		}
	}
	if mode == "insert" {
		where := "at the top"
		if id != "" {
			if idx < 0 {
				return change{}, errors.New("cell_id names no cell of the notebook: Claude Code would refuse the edit")
			}
			where = fmt.Sprintf("after cell %d", idx)
		}
		cellType, _ := in["cell_type"].(string)
		return change{to: []byte(src), part: "#new-cell", note: "a new " + cellType + " cell inserted " + where}, nil
	}
	if mode != "replace" && mode != "delete" {
		return change{}, fmt.Errorf("edit_mode %q is not replace, insert or delete: Claude Code would refuse the edit", mode)
	}
	if idx < 0 {
		return change{}, errors.New("cell_id names no cell of the notebook: Claude Code would refuse the edit")
	}
	var old []byte
	switch s := nb.Cells[idx]["source"].(type) {
	case string:
		old = []byte(s)
	case []any:
		var b strings.Builder
		for _, l := range s {
			if t, ok := l.(string); ok {
				b.WriteString(t)
			}
		}
		old = []byte(b.String())
	default:
		old = []byte{}
	}
	part := fmt.Sprintf("#cell-%d", idx)
	if mode == "delete" {
		return change{from: old, part: part, note: fmt.Sprintf("cell %d deleted", idx)}, nil
	}
	note := fmt.Sprintf("cell %d replaced", idx)
	// A replace that names a cell type gives the cell that type (the
	// seventy-eighth attack run turned a markdown cell that held
	// os.system(...) into a code cell with its source unchanged, shown as
	// "the file would not change").
	if t, _ := in["cell_type"].(string); t != "" {
		if was, _ := nb.Cells[idx]["cell_type"].(string); t != was {
			note += fmt.Sprintf(", and its type becomes %s (it was %s; a code cell runs when the notebook runs)", t, was)
		}
	}
	return change{from: old, to: []byte(src), part: part, note: note}, nil
}

// CallDiff shows how a call differs from the approved one, both given as
// canonical input: a unified diff of the two renderings (every byte
// escaped), at most a few lines, after ". What differs:"; "" when the
// renderings are the same.
func CallDiff(approved, now []byte) string {
	diff := udiff.Unified("approved", "this call", []byte(RenderFull(approved)), []byte(RenderFull(now)), nil)
	if diff == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	if len(lines) > 24 {
		lines = append(lines[:24], "...")
	}
	return ". What differs:\n" + strings.Join(lines, "\n")
}
