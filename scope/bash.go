package scope

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

// specError is a parse error inside a specifier, its offset relative to
// it: shellparse's error for a rule's command, which a Bash specifier's
// words are.
type specError = shellparse.RuleError

func serr(off int, format string, args ...any) *specError {
	return &specError{Off: off, Msg: fmt.Sprintf(format, args...)}
}

// maxBashWords bounds the words of a Bash rule.
const maxBashWords = 256

// bashWord is one word of a Bash rule: literal pieces separated by
// wildcards. A literal word has one piece; the whole-word wildcard "*" has
// two empty pieces.
type bashWord struct {
	lits []string
}

func (w bashWord) literal() bool { return len(w.lits) == 1 }
func (w bashWord) star() bool    { return len(w.lits) == 2 && w.lits[0] == "" && w.lits[1] == "" }

// bashRedir is a redirection named by a rule, with a literal target.
type bashRedir struct {
	op, fd, target string
}

// bashSpec is a parsed Bash specifier.
type bashSpec struct {
	assigns  []shellparse.Assign // NAME=value prefixes, sorted by name
	words    []bashWord          // words[0] is the literal command name
	trailing bool                // a final " *": any number (zero or more) of further words
	redirs   []bashRedir
}

// defaultFd is the descriptor an operator uses when none is written.
func defaultFd(op string) string {
	switch op {
	case ">", ">>", ">|", ">&":
		return "1"
	case "<", "<>", "<&":
		return "0"
	}
	return ""
}

// parseBashSpec reads a Bash specifier with shellparse's rule reader (the
// analysis's own model of bash's quoting) and gives its words a rule's
// meaning: a literal command name, at most maxBashWords words, an open end
// (" *" or Claude Code's legacy ":*"), literal assignments and redirections.
func parseBashSpec(spec string) (bashSpec, error) {
	text := spec
	legacy := false
	if strings.HasSuffix(text, ":*") {
		// Claude Code's legacy prefix form: "npm run test:*" is the words
		// "npm run test" followed by anything.
		legacy = true
		text = text[:len(text)-2]
	}
	rc, re := shellparse.ParseRuleCommand(text)
	if re != nil {
		return bashSpec{}, re
	}
	var bs bashSpec
	for _, as := range rc.Assigns {
		if _, msg := checkText(as.Value); msg != "" {
			return bashSpec{}, serr(as.Off, "%s", msg)
		}
		for _, prev := range bs.assigns {
			if prev.Name == as.Name {
				return bashSpec{}, serr(as.Off, "%s is assigned twice", prev.Name)
			}
		}
		bs.assigns = append(bs.assigns, shellparse.Assign{Name: as.Name, Value: as.Value})
	}
	sort.Slice(bs.assigns, func(i, j int) bool { return bs.assigns[i].Name < bs.assigns[j].Name })
	if len(rc.Words) == 0 {
		return bashSpec{}, serr(0, "no command")
	}
	if len(rc.Words) > maxBashWords {
		return bashSpec{}, serr(rc.Words[maxBashWords].Off, "more than %d words", maxBashWords)
	}
	for i, rw := range rc.Words {
		bw, se := convertWord(rw)
		if se != nil {
			return bashSpec{}, se
		}
		if i == 0 {
			if !bw.literal() {
				if bw.star() && len(rc.Words) == 1 {
					return bashSpec{}, serr(rw.Off, "Bash(*) would cover every command, like a bare Bash; name the command, or approve calls one at a time")
				}
				return bashSpec{}, serr(rw.Off, "the command name must be literal (no wildcard)")
			}
			name := bw.lits[0]
			if name == "" {
				return bashSpec{}, serr(rw.Off, "empty command name")
			}
			if strings.ContainsRune(name, '/') && !filepath.IsAbs(name) {
				return bashSpec{}, serr(rw.Off, "a command path must be absolute or a bare name looked up in PATH")
			}
		}
		bs.words = append(bs.words, bw)
	}
	if last := bs.words[len(bs.words)-1]; len(bs.words) > 1 && last.star() {
		bs.words = bs.words[:len(bs.words)-1]
		bs.trailing = true
	}
	if legacy {
		if bs.trailing {
			return bashSpec{}, serr(len(text), "both ' *' and ':*' at the end")
		}
		bs.trailing = true
	}
	for _, rd := range rc.Redirects {
		r, se := convertRedir(rd)
		if se != nil {
			return bashSpec{}, se
		}
		bs.redirs = append(bs.redirs, r)
	}
	return bs, nil
}

// convertRedir normalises a rule's redirection: the default descriptor is
// not written, and &> takes none.
func convertRedir(rd shellparse.RuleRedirect) (bashRedir, *specError) {
	fd := rd.Fd
	if fd != "" && (rd.Op == "&>" || rd.Op == "&>>") {
		return bashRedir{}, serr(rd.Off, "descriptor before %s", rd.Op)
	}
	if fd == defaultFd(rd.Op) {
		fd = ""
	}
	if _, msg := checkText(rd.Target); msg != "" {
		return bashRedir{}, serr(rd.Off, "%s", msg)
	}
	return bashRedir{op: rd.Op, fd: fd, target: rd.Target}, nil
}

// convertWord checks a rule word's literal pieces.
func convertWord(w shellparse.RuleWord) (bashWord, *specError) {
	for _, l := range w.Lits {
		if _, msg := checkText(l); msg != "" {
			return bashWord{}, serr(w.Off, "%s", msg)
		}
	}
	return bashWord{lits: w.Lits}, nil
}

// String renders the specifier canonically: words quoted only where needed,
// a trailing " *" for the open end, then the redirections.
func (bs bashSpec) String() string {
	var b strings.Builder
	for _, a := range bs.assigns {
		b.WriteString(a.Name)
		b.WriteByte('=')
		b.WriteString(quoteLit(a.Value, false))
		b.WriteByte(' ')
	}
	for i, w := range bs.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		atEnd := i == len(bs.words)-1 && !bs.trailing && len(bs.redirs) == 0
		b.WriteString(renderWord(w, i == 0, atEnd))
	}
	if bs.trailing {
		b.WriteString(" *")
	}
	for _, r := range bs.redirs {
		b.WriteByte(' ')
		b.WriteString(r.fd)
		b.WriteString(r.op)
		b.WriteString(quoteLit(r.target, false))
	}
	return b.String()
}

func renderWord(w bashWord, first, atEnd bool) string {
	if len(w.lits) == 1 {
		return quoteLit(w.lits[0], first)
	}
	var b strings.Builder
	for i, l := range w.lits {
		q := quoteLit(l, false)
		// "a:" followed by the final * would read back as the legacy
		// ":*" suffix: quote it.
		if atEnd && i == len(w.lits)-2 && w.lits[i+1] == "" && strings.HasSuffix(l, ":") {
			q = singleQuote(l)
		}
		if l != "" {
			b.WriteString(q)
		}
		if i < len(w.lits)-1 {
			b.WriteByte('*')
		}
	}
	return b.String()
}

func quoteLit(s string, first bool) string {
	if s == "" {
		return "''"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		safe := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_./:%+,-@", c) >= 0 || (c == '=' && !first)
		if !safe {
			return singleQuote(s)
		}
	}
	return s
}

func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bashSpecOf re-derives the parsed specifier of a Bash rule from its
// canonical text, which Parse has already validated.
func (r Rule) bashSpecOf() (bashSpec, error) {
	if r.kind != kindBash {
		return bashSpec{}, errors.New("not a Bash rule")
	}
	return parseBashSpec(r.spec)
}

// Pin binds a Bash rule to the executable its command name resolves to now,
// under env (as the hook will see it), using shellparse's own resolution
// (PATH lookup, trusted directories, symlinks resolved), so that Match
// compares like with like. A bash builtin is pinned as "builtin". The
// pinned path becomes part of String, so it is MACed with the grant, and
// Match then requires the call to resolve to exactly this path. Non-Bash
// rules are returned unchanged.
func (r Rule) Pin(env shellparse.Env) (Rule, error) {
	if r.kind != kindBash {
		return r, nil
	}
	bs, err := r.bashSpecOf()
	if err != nil {
		return Rule{}, fmt.Errorf("failed to pin %s: %w", r, err)
	}
	name := bs.words[0].lits[0]
	res := shellparse.Analyze(quoteLit(name, true), env)
	if res.Verdict != shellparse.Simple {
		return Rule{}, fmt.Errorf("failed to pin %s: %q: %w (%s: %s)", r, name, ErrNotPinnable, res.Verdict, res.Reason)
	}
	exe := res.Executable
	if res.Builtin {
		exe = pinnedBuiltin
	}
	if msg := checkExePath(exe); msg != "" {
		return Rule{}, fmt.Errorf("failed to pin %s: executable %q: %w (%s)", r, exe, ErrNotPinnable, msg)
	}
	r.exe = exe
	pinned, err := r.pinContent()
	if err != nil {
		return Rule{}, fmt.Errorf("failed to pin %s: the content of %q: %w (%v)", r, exe, ErrNotPinnable, err)
	}
	return pinned, nil
}

// ErrNotPinnable is returned (wrapped) by Pin when the command name does not
// resolve to a trusted executable or a builtin.
var ErrNotPinnable = errors.New("command cannot be pinned")

// pinnedBuiltin is what a Bash rule for a bash builtin is pinned to.
const pinnedBuiltin = "builtin"

// checkExePath validates a pinned executable: "builtin", or an absolute,
// clean path of visible characters. It returns "" when acceptable.
func checkExePath(p string) string {
	if p == pinnedBuiltin {
		return ""
	}
	if p == "" {
		return "empty path"
	}
	if !strings.HasPrefix(p, "/") || filepath.Clean(p) != p {
		return "not an absolute, clean path"
	}
	if len(p) > maxPathLen {
		return "path too long"
	}
	if _, msg := checkText(p); msg != "" {
		return msg
	}
	return ""
}

// plainExePath reports whether a pinned path can be written unquoted.
func plainExePath(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._+-@", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// matchBash checks a simple command from shellparse against the rule.
func matchBash(r Rule, c Call) error {
	if c.Tool != toolBash {
		return mismatch(ReasonToolMismatch, "rule %s does not cover tool %q", r, c.Tool)
	}
	res := c.Shell
	if res == nil {
		return mismatch(ReasonMalformedInput, "no shell analysis for the Bash call")
	}
	if res.Verdict != shellparse.Simple {
		why := string(res.Verdict)
		if res.Reason != "" {
			why += ": " + res.Reason
		}
		return mismatch(ReasonNotSimple, "only a simple command can be covered by a scope (%s)", why)
	}
	bs, err := r.bashSpecOf()
	if err != nil {
		return mismatch(ReasonMalformedInput, "rule: %v", err)
	}
	argv := res.Argv
	if len(argv) == 0 {
		return mismatch(ReasonMalformedInput, "empty command")
	}
	argv, cwd, dir, err := gitFront(bs, c, argv)
	if err != nil {
		return err
	}
	c.Cwd = cwd
	err = matchArgv(r, bs, c, argv)
	var me *MatchError
	if dir != "" && errors.As(err, &me) && me.Word == "" && (me.Code == ReasonPathEscapes || me.Code == ReasonRepositoryNotCovered) {
		// Judged from where git -C goes: that is the word to name.
		me.Word, me.Near = "-C "+shownWord(dir), bs.named()
	}
	return err
}

// named is how many words the rule names before its first wildcard.
func (bs bashSpec) named() int {
	n := 0
	for n < len(bs.words) && bs.words[n].literal() {
		n++
	}
	return n
}

// matchArgv checks the words of a simple command (argv, judged in c.Cwd)
// and what the analysis found about it against the rule.
func matchArgv(r Rule, bs bashSpec, c Call, argv []shellparse.Word) error {
	res := c.Shell
	n := len(bs.words)
	if bs.trailing {
		if len(argv) < n {
			return mismatch(ReasonArgvMismatch, "command has %d words, rule needs at least %d", len(argv), n)
		}
	} else if len(argv) != n {
		// A glob word could expand to any count; say so when it is the cause.
		if i := firstGlob(argv); i >= 0 {
			return mismatch(ReasonGlobWord, "word %d %q has unquoted glob characters and the rule has no trailing wildcard", i, argv[i].Value)
		}
		if len(argv) > n && prefixMatches(bs, argv) {
			return nearMiss(ReasonArgvMismatch, bs.named(), shownWord(argv[n].Value), "the rule ends before it",
				"command has %d words, rule has %d", len(argv), n)
		}
		return mismatch(ReasonArgvMismatch, "command has %d words, rule has %d", len(argv), n)
	}
	for i, w := range bs.words {
		a := argv[i]
		if a.Glob {
			return mismatch(ReasonGlobWord, "word %d %q has unquoted glob characters; only the rule's trailing * may cover it", i, a.Value)
		}
		if !matchWord(w, a.Value) {
			return mismatch(ReasonArgvMismatch, "word %d %q does not match %s", i, a.Value, renderWord(w, i == 0, false))
		}
	}
	if err := matchAssigns(bs.assigns, res.Assigns); err != nil {
		return err
	}
	if err := matchOptions(r, bs, argv); err != nil {
		return err
	}
	if r.exe == "" {
		return mismatch(ReasonExecutableChanged, "rule is not pinned to an executable")
	}
	got := res.Executable
	switch {
	case res.Builtin && got == "":
		got = pinnedBuiltin
	case res.Builtin || got == "":
		got = "" // inconsistent analysis: fail closed
	}
	if got == "" || got != r.exe {
		if got == "" {
			got = "nothing"
		}
		return mismatch(ReasonExecutableChanged, "%q resolves to %s, the grant was minted for %s", argv[0].Value, got, r.exe)
	}
	for _, rd := range res.Redirects {
		if benignRedirect(rd) {
			continue
		}
		if !ruleNamesRedirect(bs, rd) {
			fd := rd.Fd
			return nearMiss(ReasonRedirectNotCovered, bs.named(), fd+rd.Op+shownWord(rd.Target), "the rule names no such redirection",
				"redirection %s%s %q is not named by the rule", fd, rd.Op, rd.Target)
		}
	}
	// What is on disk comes last: the file system is read only for a call
	// the rule covers in every other way.
	if err := matchContent(r, c, got); err != nil {
		return err
	}
	if PresetOf(r) != "" {
		if err := matchPreset(bs, c, argv); err != nil {
			return err
		}
	}
	if policy.Base(got) == "git" {
		return gitRepository(c)
	}
	return nil
}

// prefixMatches reports whether the rule's words match the first words of
// argv (which has more).
func prefixMatches(bs bashSpec, argv []shellparse.Word) bool {
	for i, w := range bs.words {
		if argv[i].Glob || !matchWord(w, argv[i].Value) {
			return false
		}
	}
	return true
}

// WildcardNote says, for a person granting r, how its wildcards are
// narrowed (see matchOptions), or "" when r has no wildcard.
func (r Rule) WildcardNote() string {
	bs, err := r.bashSpecOf()
	if err != nil {
		return ""
	}
	wild := bs.trailing
	for _, w := range bs.words[1:] {
		wild = wild || !w.literal()
	}
	if !wild {
		return ""
	}
	name := bs.words[0].lits[0]
	if policy.Tabled(name) || r.exe != "" && r.exe != pinnedBuiltin && policy.Tabled(r.exe) {
		return fmt.Sprintf("its * never covers options that run code or write a named file, nor options of %s that loopguard's option table does not list", policy.Base(name))
	}
	return "its * never covers options that run code or write a named file (--output=, --exec=, ...)"
}

// matchOptions narrows the rule's wildcards: a word a wildcard matched (the
// trailing * or a word with a * in it) may not be an option or operand
// that runs code or writes a named file, nor, for a program in policy's
// option table, an option the table does not know. Words the rule names
// literally were seen by the human when granting (and refused there if
// they run code).
func matchOptions(r Rule, bs bashSpec, argv []shellparse.Word) error {
	values := make([]string, len(argv))
	for i, w := range argv {
		values[i] = w.Value
	}
	wild := func(i int) bool { return i >= len(bs.words) || !bs.words[i].literal() }
	check := func(argv []string) error {
		for _, f := range policy.CheckArgv(argv) {
			if wild(f.Index) {
				why := f.Why
				if f.Class == policy.Unknown {
					why = "not in loopguard's option table"
					if PresetOf(r) != "" {
						why = "not in the read-only option table"
					}
				}
				return nearMiss(ReasonOptionNotCovered, bs.named(), shownWord(f.Word), why,
					"word %d %q: %s; the rule's wildcard does not cover it", f.Index, f.Word, f.Why)
			}
		}
		return nil
	}
	if err := check(values); err != nil {
		return err
	}
	// The pinned program may be known under another name (cc -> gcc).
	if r.exe != "" && r.exe != pinnedBuiltin && policy.Base(r.exe) != policy.Base(values[0]) {
		values[0] = r.exe
		return check(values)
	}
	return nil
}

func firstGlob(argv []shellparse.Word) int {
	for i, a := range argv {
		if a.Glob {
			return i
		}
	}
	return -1
}

// matchWord matches one call word against one rule word; a wildcard matches
// any run of characters inside the word (never across words).
func matchWord(w bashWord, s string) bool {
	if len(w.lits) == 1 {
		return s == w.lits[0]
	}
	first, last := w.lits[0], w.lits[len(w.lits)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, l := range w.lits[1 : len(w.lits)-1] {
		i := strings.Index(mid, l)
		if i < 0 {
			return false
		}
		mid = mid[i+len(l):]
	}
	return true
}

// benignRedirect reports redirections that touch no file: descriptor
// duplication or closing (2>&1, >&2, <&0, >&-) and /dev/null.
func benignRedirect(rd shellparse.Redirect) bool {
	switch rd.Op {
	case ">&", "<&":
		t := rd.Target
		return t == "-" || t != "" && strings.Trim(t, "0123456789") == ""
	case ">", ">>", ">|", "&>", "&>>", "<":
		return rd.Target == "/dev/null"
	}
	return false
}

func ruleNamesRedirect(bs bashSpec, rd shellparse.Redirect) bool {
	fd := rd.Fd
	if fd == defaultFd(rd.Op) {
		fd = ""
	}
	for _, r := range bs.redirs {
		if r.op == rd.Op && r.fd == fd && r.target == rd.Target {
			return true
		}
	}
	return false
}

// matchAssigns requires the call's assignment prefixes to be exactly the
// rule's: same names, same values, none missing, none extra.
func matchAssigns(want, got []shellparse.Assign) error {
	g := append([]shellparse.Assign(nil), got...)
	sort.SliceStable(g, func(i, j int) bool { return g[i].Name < g[j].Name })
	for i := 1; i < len(g); i++ {
		if g[i].Name == g[i-1].Name {
			return mismatch(ReasonArgvMismatch, "%s is assigned twice", g[i].Name)
		}
	}
	if len(g) != len(want) {
		return mismatch(ReasonArgvMismatch, "the command has %d assignment prefixes, the rule %d", len(g), len(want))
	}
	for i := range g {
		if g[i] != want[i] {
			return mismatch(ReasonArgvMismatch, "assignment %s=%q is not the rule's %s=%q", g[i].Name, g[i].Value, want[i].Name, want[i].Value)
		}
	}
	return nil
}
