package policy

// The option table checked against the programs it describes. Whether an
// option takes a value decides what the word after it is: a table that lets
// git log's -U take the next word hides that word (--output=Makefile) from
// every check, while git reads it as an option. So every option of every
// table is compared with what the real program on this machine says about
// it: its own self-description where it has one (git's -h, GNU --help, clap's
// help), and its behaviour where the description is missing or wrong (the
// option followed by a word that is not a valid option: did the program
// take it as the value, or refuse it as an option?). mvdan/sh checks its
// parser against bash -n; this is the same idea.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// arity is how an option takes its value.
type arity int

const (
	noValue       arity = iota // takes no value
	nextValue                  // takes a value, attached (-ofile, --out=file) or the next word
	attachedValue              // takes a value only attached (-U5, --unified=5, --format=x)
)

func (a arity) String() string {
	switch a {
	case noValue:
		return "takes no value"
	case nextValue:
		return "takes a value, attached or the next word"
	case attachedValue:
		return "takes a value only attached"
	}
	return "invalid arity"
}

func tableArity(o opt) arity {
	switch {
	case !o.value:
		return noValue
	case o.optional:
		return attachedValue
	}
	return nextValue
}

// fact is what a program says about one of its options.
type fact struct {
	arity arity
	// refusesAttached: the program refuses the attached form as a whole
	// word (git -C5: "unknown option"), so a table that reads it either way
	// cannot hide anything.
	refusesAttached bool
	source          string // where the fact comes from, for the failure message
}

// agrees reports whether the table's arity a agrees with f: whether the
// option takes the next word, and, when attachedMatters, whether it takes
// an attached value. The attached half matters for short options only: the
// rest of a cluster (-Uxyz) is either the value or more options. A long
// option's attached value (--totals=x) is one word whatever the table says,
// so it can hide nothing; it is compared and logged, never failed.
// Where the program refuses the attached form outright (git -C5), the
// table may read it either way.
func (f fact) agrees(a arity, attachedMatters bool) bool {
	if (a == nextValue) != (f.arity == nextValue) {
		return false
	}
	if !attachedMatters || f.refusesAttached {
		return true
	}
	return (a != noValue) == (f.arity != noValue)
}

// ---- self-descriptions ----

var (
	helpName = regexp.MustCompile(`^(--?\[no-\][A-Za-z0-9][A-Za-z0-9._-]*|--?[A-Za-z0-9?#@.][A-Za-z0-9._-]*)`)
	// metavariables: FILE, <file>, <range:file>; a lowercase word after
	// "=" is a literal value (sort --check=quiet).
	helpMeta  = regexp.MustCompile(`^(<[^>]*>|[A-Z][A-Z0-9_-]*)(\.\.\.)?`)
	helpUpper = regexp.MustCompile(`^ [A-Z][A-Z0-9_-]*(\.\.\.)?(,|  |$)`)
	// make -j [N]: an optional value, then the end of the option's spelling
	helpOptional = regexp.MustCompile(`^ \[[^]\-][^]]*\](,|  |$)`)
)

// parseHelp reads option descriptions in the styles of GNU getopt and argp
// (-k, --key=KEYDEF; --check[=WHEN]), make (-C DIRECTORY, -j [N], -O[TYPE]),
// git's parse-options (-U, --unified[=<n>]; -L <range>), clap and curl
// (-A, --after-context <NUM>). Lines indented more than maxIndent are
// descriptions. Options of one line share their value (-k, --key=KEYDEF:
// -k takes one too).
func parseHelp(text string, maxIndent int, source string) map[string]fact {
	out := map[string]fact{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		ind := len(line) - len(strings.TrimLeft(line, " "))
		if ind == 0 || ind > maxIndent {
			continue
		}
		s := line[ind:]
		type item struct {
			names   []string
			a       arity
			meta    bool // a metavariable: the line's other options share it
			literal bool // a literal attached value (--check=quiet)
		}
		var items []item
		for strings.HasPrefix(s, "-") {
			m := helpName.FindString(s)
			if m == "" {
				break
			}
			s = s[len(m):]
			m = strings.TrimRight(m, ".")
			it := item{names: []string{m}}
			if i := strings.Index(m, "[no-]"); i >= 0 {
				it.names = []string{m[:i] + m[i+5:], m[:i] + "no-" + m[i+5:]}
			}
			switch {
			case strings.HasPrefix(s, "[="), strings.HasPrefix(s, "["):
				end := strings.Index(s, "]")
				if end < 0 {
					end = len(s) - 1
				}
				// nested brackets: --stat[=<width>[,<name-width>[,<count>]]]
				for depth, i := 0, 0; i < len(s); i++ {
					if s[i] == '[' {
						depth++
					} else if s[i] == ']' {
						depth--
						if depth == 0 {
							end = i
							break
						}
					}
				}
				s = s[end+1:]
				it.a, it.meta = attachedValue, true
			case strings.HasPrefix(s, "="):
				mv := helpMeta.FindString(s[1:])
				if mv != "" {
					it.a, it.meta = nextValue, true
					s = s[1+len(mv):]
				} else {
					end := strings.IndexAny(s, " ,")
					if end < 0 {
						end = len(s)
					}
					s = s[end:]
					it.a, it.literal = attachedValue, true
				}
			case strings.HasPrefix(s, " <"):
				end := strings.Index(s, ">")
				s = strings.TrimPrefix(s[end+1:], "...")
				it.a, it.meta = nextValue, true
			case helpOptional.MatchString(s):
				s = s[strings.Index(s, "]")+1:]
				it.a, it.meta = attachedValue, true // make -j [N]: see testMake
			case strings.HasPrefix(s, " [") && !strings.HasPrefix(s, " [-"):
				// curl: -x, --proxy [protocol://]host[:port]
				end := strings.IndexByte(s[1:], ' ')
				if end < 0 {
					end = len(s) - 1
				}
				s = s[1+end:]
				it.a, it.meta = nextValue, true
			case helpUpper.MatchString(s):
				mv := helpMeta.FindString(s[1:])
				s = s[1+len(mv):]
				it.a, it.meta = nextValue, true
			case len(s) > 1 && s[0] == ' ' && s[1] != ' ' && s[1] != '-':
				// git add: --chmod (+|-)x; a description is two spaces away
				end := strings.Index(s[1:], "  ")
				if end < 0 {
					end = len(s) - 1
				}
				s = s[1+end:]
				it.a, it.meta = nextValue, true
			}
			items = append(items, it)
			if !strings.HasPrefix(s, ",") {
				break // the description (git merge: --quit  --abort but ...)
			}
			s = strings.TrimLeft(s[1:], " ")
		}
		shared, haveShared := noValue, false
		for _, it := range items {
			if it.meta {
				shared, haveShared = it.a, true
			}
		}
		for _, it := range items {
			a := it.a
			if !it.meta && !it.literal && haveShared {
				a = shared
			}
			for _, n := range it.names {
				if old, ok := out[n]; ok && old.arity >= a {
					// The strongest description wins: --check and
					// --check=quiet make --check take an attached value.
					continue
				}
				out[n] = fact{arity: a, source: source + ": " + strings.TrimSpace(line)}
			}
		}
	}
	return out
}

func TestParseHelp(t *testing.T) {
	// Controls for the parser itself: each style read the way its program
	// means it.
	const text = `
  -k, --key=KEYDEF          sort via a key
  -c, --check, --check=diagnose-first  check for sorted input
  -C, --check=quiet, --check=silent  like -c
      --all-repeated[=METHOD]  like -D
  -C DIRECTORY, --directory=DIRECTORY
  -j [N], --jobs[=N]          Allow N jobs at once
  -W[TYPE], --output-sync[=TYPE]
    -U, --unified[=<n>]   generate diffs with <n> lines context
    -L <range>            process only line range
    --stat[=<width>[,<name-width>[,<count>]]]
    -A, --after-context <NUM>
 -o, --output <file>      Write to file
 -x, --proxy [protocol://]host[:port] Use this proxy
     --connect-timeout <fractional seconds> Maximum time
  -O,  --output-document=FILE      write documents to FILE
  -u, --unrestricted...
    --[no-]keep-index
    --chmod (+|-)x        override the executable bit
    --quit                --abort but leave index and working tree alone
              --exclude node_modules
`
	got := parseHelp(text, 8, "t")
	want := map[string]arity{
		"-k": nextValue, "--key": nextValue, "-c": noValue, "--check": attachedValue, "-C": nextValue,
		"--all-repeated": attachedValue, "--directory": nextValue, "-j": attachedValue, "--jobs": attachedValue,
		"-W": attachedValue, "--output-sync": attachedValue, "-U": attachedValue, "--unified": attachedValue,
		"-L": nextValue, "--stat": attachedValue, "-A": nextValue, "--after-context": nextValue,
		"-o": nextValue, "--output": nextValue, "--connect-timeout": nextValue, "--proxy": nextValue, "--output-document": nextValue,
		"-u": noValue, "--unrestricted": noValue, "--keep-index": noValue, "--no-keep-index": noValue,
		"--chmod": nextValue, "--quit": noValue,
	}
	wantArities(t, got, want)
	if _, ok := got["--abort"]; ok {
		t.Error("a description was read as an option")
	}
	if _, ok := got["--exclude"]; ok {
		t.Error("a description line was read as an option")
	}
}

// wantArities reports each option of want that got lacks or reads with
// another arity.
func wantArities(t *testing.T, got map[string]fact, want map[string]arity) {
	t.Helper()
	for n, a := range want {
		if f, ok := got[n]; !ok || f.arity != a {
			t.Errorf("%s: got %v (%v), want %v", n, f.arity, ok, a)
		}
	}
}

// ---- behaviour probes ----

// probeWord is a word no program knows as an option: after an option that
// takes no value it is refused as an unknown option; after one that takes
// the next word it is the value.
const probeWord = "--zzprobe"

// state is what one source could say about an option.
type state int

const (
	known     state = iota
	unknownTo       // the program refuses the option (or its help does not list it)
	unclear         // the program's answers do not fit together
)

type answer struct {
	f   fact
	st  state
	why string // for unknownTo and unclear
}

// prober runs a program with option words in a context where it parses
// them, and reads its complaints.
type prober struct {
	run func(t *testing.T, words ...string) string // combined output
	// refused: out says word was refused as an unknown option (the whole
	// word). refusedShort: out says the character c of a cluster was read
	// as an option and refused. needs: out says opt misses its value.
	// noAttach: out says the long opt refuses an attached value.
	refused      func(out, word string) bool
	refusedShort func(out string, c byte) bool
	needs        func(out, opt string) bool
	noAttach     func(out, opt string) bool
	// tail follows the option words, except when the option is last (git
	// blame's file).
	tail []string
	// longAttached: probe the attached form of long options too (a
	// difference there is only logged: see fact.agrees).
	longAttached bool
	// custom replaces the generic probe (npm).
	custom func(t *testing.T, opt string, short bool) answer
}

func src(words ...string) string { return "behaviour of `" + strings.Join(words, " ") + "`" }

// probe asks the program how opt takes its value: opt followed by
// probeWord (taken as its value, or refused as an option?), opt at the end
// (does the program miss its value?), and opt with an attached value (-U@,
// --unified=x: a value, or more options?). The first two must agree.
func (p *prober) probe(t *testing.T, opt string, short, attached bool) answer {
	if p.custom != nil {
		return p.custom(t, opt, short)
	}
	long := !short
	run := func(words ...string) string { return p.run(t, append(words, p.tail...)...) }
	bare := run(opt, probeWord)
	bareNeeds := p.needs(bare, opt) && !p.refused(bare, probeWord) // git rev-parse --path-format x
	if p.refused(bare, opt) || short && p.refusedShort(bare, opt[1]) || bareNeeds && long {
		if short {
			return answer{st: unknownTo, why: src(opt, probeWord) + ": " + firstLine(bare)}
		}
		att := run(opt + "=x")
		if p.refused(att, opt) || p.refused(att, opt+"=x") || p.needs(att, opt) {
			return answer{st: unknownTo, why: src(opt, probeWord) + ": " + firstLine(bare)}
		}
		return answer{f: fact{arity: attachedValue, source: src(opt) + " refused bare, " + src(opt+"=x") + " accepted"}}
	}
	consumed := !p.refused(bare, probeWord)
	end := p.run(t, opt)
	if p.refused(end, opt) {
		// Accepted before another word, refused alone (git diff
		// --merge-base wants a commit): behaviour cannot tell.
		return answer{st: unclear, why: src(opt) + ": " + firstLine(end)}
	}
	if consumed != p.needs(end, opt) {
		return answer{st: unclear, why: fmt.Sprintf("%s: %q; %s: %q", src(opt, probeWord), firstLine(bare), src(opt), firstLine(end))}
	}
	if consumed {
		return answer{f: fact{arity: nextValue, source: src(opt, probeWord) + " took " + probeWord + " as its value"}}
	}
	f := fact{arity: noValue, source: src(opt, probeWord) + " refused " + probeWord}
	switch {
	case !attached, long && !p.longAttached:
	case long:
		att := run(opt + "=x")
		switch {
		case p.noAttach(att, opt):
			f.source = src(opt+"=x") + ": " + firstLine(att)
		case p.refused(att, opt+"=x"), p.refused(att, opt):
			f.refusesAttached = true
			f.source = src(opt+"=x") + ": " + firstLine(att)
		default:
			f.arity, f.source = attachedValue, src(opt+"=x")+" took x as its value"
		}
	default:
		att := run(opt + "@")
		switch {
		case p.refusedShort(att, '@'):
			f.source = src(opt+"@") + ": read @ as another option"
		case p.refused(att, opt+"@"):
			f.refusesAttached = true
			f.source = src(opt+"@") + ": " + firstLine(att)
		default:
			f.arity, f.source = attachedValue, src(opt+"@")+" took @ as its value"
		}
	}
	return answer{f: f}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

func contains(out string, pats ...string) bool {
	for _, p := range pats {
		if strings.Contains(out, p) {
			return true
		}
	}
	return false
}

// getoptProber reads the complaints of GNU getopt (and argp, and make's
// copy of it).
func getoptProber(run func(t *testing.T, words ...string) string) *prober {
	return &prober{
		run: run, longAttached: true,
		refused: func(out, w string) bool {
			if strings.HasPrefix(w, "--") {
				return contains(out, "unrecognized option '"+w+"'", "option '"+w+"' is ambiguous")
			}
			return len(w) == 2 && contains(out, "invalid option -- '"+w[1:]+"'")
		},
		refusedShort: func(out string, c byte) bool { return contains(out, "invalid option -- '"+string(c)+"'") },
		needs: func(out, o string) bool {
			if strings.HasPrefix(o, "--") {
				return contains(out, "option '"+o+"' requires an argument")
			}
			return contains(out, "option requires an argument -- '"+o[1:]+"'")
		},
		noAttach: func(out, o string) bool { return contains(out, "option '"+o+"' doesn't allow an argument") },
	}
}

// ---- running programs ----

// runIn runs argv in dir with a clean, English environment, no input and a
// deadline; it returns stdout and stderr together.
func runIn(t *testing.T, dir string, env []string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C", "LANG=C", "TERM=dumb",
		"PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false", "SSH_ASKPASS=/bin/false", "GIT_SSH_COMMAND=/bin/false",
		"GIT_ALLOW_PROTOCOL=file", "EDITOR=/bin/false", "GIT_EDITOR=/bin/false", "VISUAL=/bin/false",
		"GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off", "GOENV=off", "GOCACHE=" + goCache(),
		"XDG_CONFIG_HOME=" + goTelemetryOff(),
	}, env...)
	cmd.Stdin = nil
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%q timed out: %s", argv, firstLine(string(out)))
	}
	return string(out)
}

// requireProgram finds name on PATH; a missing program fails the test
// under LOOPGUARD_REQUIRE_TABLED=1 (make test: scripts/deps installs them)
// and skips it otherwise.
func requireProgram(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("LOOPGUARD_REQUIRE_TABLED") == "1" {
		t.Fatalf("%s is not installed (scripts/deps installs it)", names[0])
	}
	t.Skipf("%s is not installed (scripts/deps installs it)", names[0])
	return ""
}

// ---- the comparison ----

// source is one place a program describes its options: its help, its
// behaviour in one context (git stash pop, go mod edit), or both.
type source struct {
	name string
	help map[string]fact
	// weak facts are asked only when the probe cannot tell: a usage
	// synopsis, where git's --mirror=<fetch|push> is optional and
	// --git-dir=<path> is not.
	weak  map[string]fact
	probe *prober
	// probeFirst: behaviour decides and the help is a second opinion (the
	// help of some programs is wrong: wget --max-redirect); otherwise the
	// help decides and behaviour fills its gaps.
	probeFirst bool
}

func (s *source) ask(t *testing.T, opt string, short, attached bool) answer {
	h, inHelp := s.help[opt]
	if s.probe == nil || !s.probeFirst && inHelp {
		if inHelp {
			return answer{f: h}
		}
		return answer{st: unknownTo, why: s.name + ": not in its help"}
	}
	a := s.probe.probe(t, opt, short, attached)
	if w, ok := s.weak[opt]; ok && a.st == unclear && !inHelp {
		return answer{f: w}
	}
	switch {
	case a.st != known && inHelp:
		return answer{f: h}
	case a.st == known && inHelp && !h.agrees(a.f.arity, short && attached) && !a.f.refusesAttached:
		t.Logf("%s %s: its help says it %s (%s), its behaviour that it %s", s.name, opt, h.arity, h.source, a.f.arity)
	}
	if a.st != known {
		a.why = s.name + ": " + a.why
	}
	return a
}

// optionCheck is one table checked against the program (or programs, or
// subcommands: git log, git show and git diff share one table) it describes.
type optionCheck struct {
	prog  string // for the count: "git"
	what  string // for messages: "git log"
	table *table
	// attachedMatters: the attached form of short options is checked too
	// (not for go's flag package and gcc, where -flag=x and -Ifoo are one
	// option whatever the table says).
	attachedMatters bool
	// sources: each option must be known to at least one, and every one
	// that knows it must agree with the table.
	sources []*source
	// skip lists options not checked, with why (each one reviewed).
	skip map[string]string
	// extra adds options to check that the table keeps elsewhere (git's
	// anywhere options, checked in the subcommand that has them).
	extra map[string]opt
	// notes names options the table describes as another version of the
	// program has them, with why: where the installed version (version,
	// from --version) matches notesRe, a disagreement is logged, not failed.
	notes   map[string]string
	notesRe string
	version string
	// only, when set, restricts the check to these options; report, when
	// set, receives the failures instead of t (TestOptionCheckCatches).
	only   map[string]bool
	report reporter
}

type reporter interface {
	Errorf(format string, args ...any)
}

// tweak, when set, changes every check before it runs: the controls of
// TestOptionCheckCatches put a wrong arity in a copy of the table and
// collect the failures. Never set in parallel tests.
var tweak func(c *optionCheck)

func (c *optionCheck) run(t *testing.T) {
	t.Helper()
	if tweak != nil {
		tweak(c)
	}
	var r reporter = t
	if c.report != nil {
		r = c.report
	}
	type entry struct {
		name  string
		short bool
		o     opt
	}
	var entries []entry
	for k, o := range c.table.short {
		entries = append(entries, entry{"-" + string(k), true, o})
	}
	for k, o := range c.table.long {
		entries = append(entries, entry{k, len(k) == 2 && k[0] == '-' && !c.table.goStyle, o})
	}
	for _, p := range c.table.prefixes {
		entries = append(entries, entry{p.prefix, false, p.o})
	}
	for k, o := range c.extra {
		entries = append(entries, entry{k, len(k) == 2 && k[1] != '-', o})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	noted := func(name string) (string, bool) {
		why, ok := c.notes[name]
		return why, ok && regexp.MustCompile(c.notesRe).MatchString(c.version)
	}
	n := 0
	for _, e := range entries {
		if c.only != nil && !c.only[e.name] {
			continue
		}
		if why, ok := c.skip[e.name]; ok {
			t.Logf("%s %s: not checked: %s", c.what, e.name, why)
			continue
		}
		want := tableArity(e.o)
		var whys []string
		knownBy := 0
		for _, s := range c.sources {
			a := s.ask(t, e.name, e.short, c.attachedMatters)
			if a.st != known {
				whys = append(whys, a.why)
				continue
			}
			knownBy++
			switch note, isNoted := noted(e.name); {
			case !a.f.agrees(want, e.short && c.attachedMatters) && isNoted:
				t.Logf("%s %s: the table says it %s, %s that it %s: %s", c.what, e.name, want, s.name, a.f.arity, note)
			case !a.f.agrees(want, e.short && c.attachedMatters):
				r.Errorf("%s %s: the table says it %s; %s says it %s (%s)", c.what, e.name, want, s.name, a.f.arity, a.f.source)
			case !a.f.agrees(want, true):
				t.Logf("%s %s: the table says it %s, %s that it %s (%s): a long option's attached value is one word either way", c.what, e.name, want, s.name, a.f.arity, a.f.source)
			}
		}
		if knownBy > 0 {
			n++
			continue
		}
		if note, isNoted := noted(e.name); isNoted {
			t.Logf("%s %s: not checked: %s (installed: %s)", c.what, e.name, note, firstLine(c.version))
			continue
		}
		r.Errorf("%s %s: cannot check against the program: %s", c.what, e.name, strings.Join(whys, "; "))
	}
	if c.report == nil {
		addChecked(c.prog, n)
	}
}

// checked counts the options compared per program, for the log.
var (
	checkedMu sync.Mutex
	checked   = map[string]int{}
)

func addChecked(prog string, n int) {
	checkedMu.Lock()
	defer checkedMu.Unlock()
	checked[prog] += n
}

// ---- per program ----

func TestOptionTableAgainstPrograms(t *testing.T) {
	loadTables()
	t.Run("coreutils", testCoreutils)
	t.Run("make", testMake)
	t.Run("tar", testTar)
	t.Run("wget", testWget)
	t.Run("curl", testCurl)
	t.Run("rg", testRg)
	t.Run("fd", testFd)
	t.Run("git", testGit)
	t.Run("go", testGo)
	t.Run("npm", testNpm)
	t.Run("cc", testCC)
	t.Run("find", testFind)
	var progs []string
	for p, n := range checked {
		progs = append(progs, fmt.Sprintf("%s %d", p, n))
	}
	sort.Strings(progs)
	t.Logf("options checked: %s", strings.Join(progs, ", "))
}

// simple checks a program with one table, its --help and getopt's
// complaints.
func simple(t *testing.T, name, bin string, pre []string, env []string) *optionCheck {
	dir := t.TempDir()
	return &optionCheck{
		prog: name, what: name, table: tables[name], attachedMatters: true,
		sources: []*source{{
			name: name, probeFirst: true,
			help: parseHelp(runIn(t, dir, env, bin, "--help"), 8, name+" --help"),
			probe: getoptProber(func(t *testing.T, words ...string) string {
				return runIn(t, dir, env, append(append([]string{bin}, pre...), words...)...)
			}),
		}},
	}
}

func testCoreutils(t *testing.T) {
	for _, name := range []string{"sort", "uniq", "tee"} {
		t.Run(name, func(t *testing.T) {
			simple(t, name, requireProgram(t, name), nil, nil).run(t)
		})
	}
}

func testMake(t *testing.T) {
	bin := requireProgram(t, "make")
	// -n: nothing is built whatever the option; -f /dev/null: no makefile
	// of ours is read.
	c := simple(t, "make", bin, []string{"-n", "-f", "/dev/null"}, nil)
	c.run(t)
	// make -j and -l take the next word too when it is a number (make -j
	// 4): the table reads 4 as a target, which is safe, and any other word
	// as what make reads it as.
	if out := runIn(t, t.TempDir(), nil, bin, "-n", "-f", "/dev/null", "-j", "4"); !strings.Contains(out, "No targets") {
		t.Errorf("make -j 4: %s", out)
	}
}

func testTar(t *testing.T) {
	simple(t, "tar", requireProgram(t, "tar"), nil, nil).run(t)
}

func testWget(t *testing.T) {
	bin := requireProgram(t, "wget")
	dir := t.TempDir()
	// wget silences getopt: an unknown option, a missing value and a bad
	// cluster all end in its usage alone. With no URL it says "missing
	// URL" once it has read its options, so usage without that line is a
	// refusal.
	usageOnly := func(out string) bool {
		return strings.HasPrefix(strings.TrimSpace(out), "Usage: wget") && !contains(out, "missing URL")
	}
	env := []string{"WGETRC=" + filepath.Join(dir, "wgetrc")}
	if err := os.WriteFile(filepath.Join(dir, "wgetrc"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &optionCheck{
		prog: "wget", what: "wget", table: tables["wget"], attachedMatters: true,
		sources: []*source{{
			name: "wget", probeFirst: true,
			help: parseHelp(runIn(t, dir, env, bin, "--help"), 8, "wget --help"),
			probe: &prober{
				run: func(t *testing.T, words ...string) string {
					return runIn(t, dir, env, append([]string{bin, "--no-config"}, words...)...)
				},
				refused:      func(out, w string) bool { return w == probeWord && usageOnly(out) },
				refusedShort: func(out string, c byte) bool { return c == '@' && usageOnly(out) },
				needs:        func(out, _ string) bool { return usageOnly(out) },
				noAttach:     func(out, _ string) bool { return usageOnly(out) },
			},
		}},
	}
	c.run(t)
}

func testCurl(t *testing.T) {
	bin := requireProgram(t, "curl")
	dir := t.TempDir()
	c := &optionCheck{
		prog: "curl", what: "curl", table: tables["curl"], attachedMatters: true,
		sources: []*source{{
			name: "curl", probeFirst: true,
			help: parseHelp(runIn(t, dir, nil, bin, "--help", "all"), 8, "curl --help all"),
			probe: &prober{
				run: func(t *testing.T, words ...string) string {
					// -q: no .curlrc; no URL: curl stops after its options.
					return runIn(t, dir, nil, append([]string{bin, "-q"}, words...)...)
				},
				refused:      func(out, w string) bool { return contains(out, "option "+w+": is unknown") },
				refusedShort: func(string, byte) bool { return false }, // curl refuses the whole word: refused
				needs:        func(out, o string) bool { return contains(out, "option "+o+": requires parameter") },
				noAttach:     func(string, string) bool { return false },
			},
		}},
		skip: map[string]string{
			"--help": "curl --help takes the next word, if any, as a help category, prints help and exits without a transfer",
		},
	}
	c.run(t)
}

func testRg(t *testing.T) {
	bin := requireProgram(t, "rg")
	dir := t.TempDir()
	// clap refuses a value that looks like an option, so the help (which
	// clap builds from the same definitions) decides here.
	c := &optionCheck{
		prog: "rg", what: "rg", table: tables["rg"], attachedMatters: true,
		sources: []*source{{name: "rg", help: parseHelp(runIn(t, dir, nil, bin, "--help"), 8, "rg --help")}},
		version: runIn(t, dir, nil, bin, "--version"), notesRe: `^ripgrep 1[0-3]\.`,
		notes: map[string]string{
			"-d": "ripgrep 14 added -d for --max-depth; 13 refuses -d",
		},
	}
	c.run(t)
}

func testFd(t *testing.T) {
	bin := requireProgram(t, "fd", "fdfind")
	dir := t.TempDir()
	c := &optionCheck{
		prog: "fd", what: "fd", table: tables["fd"], attachedMatters: true,
		sources: []*source{{name: "fd", help: parseHelp(runIn(t, dir, nil, bin, "--help"), 8, "fd --help")}},
		version: runIn(t, dir, nil, bin, "--version"), notesRe: `^fd(find)? [0-9]\.`,
		notes: map[string]string{
			"--format":           "fd 10 added --format <fmt>",
			"--strip-cwd-prefix": "fd 9 gave --strip-cwd-prefix an optional attached value (=always|never|auto)",
		},
	}
	c.run(t)
}

// ---- git ----

// parseUsage reads a usage synopsis in brackets, as git and npm print them:
// [-C <path>] [--exec-path[=<path>]] [-v | --version]
// [-w|--workspace <workspace-name> [-w|--workspace <workspace-name> ...]].
// The alternatives of one bracket share a value.
func parseUsage(text, source string) map[string]fact {
	out := map[string]fact{}
	var open []int
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '[':
			open = append(open, i+1)
		case ']':
			if len(open) == 0 {
				continue
			}
			start := open[len(open)-1]
			open = open[:len(open)-1]
			group := strings.TrimSpace(text[start:i])
			if j := strings.Index(group, " ["); j >= 0 {
				group = group[:j] // [-w <x> [-w <x> ...]], [--file=<f> [--nul]]
			}
			// (-m | --message) <message>
			if strings.HasPrefix(group, "(") {
				if j := strings.Index(group, ")"); j > 0 {
					group = group[1:j] + group[j+1:]
				}
			}
			if !strings.HasPrefix(group, "-") {
				continue
			}
			var alts []string // split at | outside <fetch|push>
			for k, depth, from := 0, 0, 0; k <= len(group); k++ {
				switch {
				case k == len(group) || group[k] == '|' && depth == 0:
					alts = append(alts, strings.TrimSpace(group[from:k]))
					from = k + 1
				case group[k] == '<':
					depth++
				case group[k] == '>':
					depth--
				}
			}
			// One line of alternatives: parseHelp shares a metavariable
			// across the options of a line.
			for n, f := range parseHelp("  "+strings.Join(alts, ", "), 2, source) {
				f.source = source + ": [" + strings.TrimSpace(text[start:i]) + "]"
				if old, ok := out[n]; !ok || old.arity < f.arity {
					out[n] = f
				}
			}
		}
	}
	return out
}

func TestParseUsage(t *testing.T) {
	got := parseUsage(`usage: git [-v | --version] [-h | --help] [-C <path>] [-c <name>=<value>]
           [--exec-path[=<path>]] [--git-dir=<path>]
[-w|--workspace <workspace-name> [-w|--workspace <workspace-name> ...]]
[--workspaces] [--script-shell <script-shell>] [-S|--save|--no-save] [--mirror=<fetch|push>]
   or: git stash [push [-p | --patch] [-k | --[no-]keep-index] [(-m | --message) <message>]
                 [--pathspec-from-file=<file> [--pathspec-file-nul]]`, "t")
	want := map[string]arity{
		"-v": noValue, "--version": noValue, "-C": nextValue, "-c": nextValue, "--exec-path": attachedValue,
		"--git-dir": nextValue, "-w": nextValue, "--workspace": nextValue, "--workspaces": noValue,
		"--script-shell": nextValue, "-S": noValue, "--no-save": noValue, "-p": noValue, "--keep-index": noValue,
		"--no-keep-index": noValue, "-m": nextValue, "--message": nextValue, "--pathspec-from-file": nextValue,
		"--pathspec-file-nul": noValue, "--mirror": nextValue,
	}
	wantArities(t, got, want)
}

// gitRepo makes a small repository (two commits of a.txt, no hooks) to
// probe git in.
func gitRepo(t *testing.T, bin string) string {
	t.Helper()
	dir := fastTempDir(t)
	id := []string{"-c", "user.name=p", "-c", "user.email=p@p"}
	runIn(t, dir, nil, bin, "init", "-q", "--template=", "-b", "main", ".")
	runIn(t, dir, nil, append(append([]string{bin}, id...), "commit", "-q", "--allow-empty", "-m", "one")...)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, dir, nil, bin, "add", "a.txt")
	runIn(t, dir, nil, append(append([]string{bin}, id...), "commit", "-q", "-m", "two")...)
	// A stash entry, for git stash show.
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, dir, nil, append(append([]string{bin}, id...), "stash", "-q")...)
	if out := runIn(t, dir, nil, bin, "rev-list", "--count", "HEAD"); strings.TrimSpace(out) != "2" {
		t.Fatalf("the probe repository has %q commits", out)
	}
	return dir
}

var gitNeeds = regexp.MustCompile(`requires a value|requires an argument|expects a |no [a-z ]+ given`)

// gitProber probes git in its repository: read-only subcommands in repo
// itself, the others in a fresh copy per run (git init --bare, reset --hard).
func gitProber(bin, repo string, ctx []string, readOnly bool) *prober {
	strip := func(w string) string { return strings.TrimLeft(w, "-") }
	revParse := len(ctx) > 0 && ctx[0] == "rev-parse"
	return &prober{
		run: func(t *testing.T, words ...string) string {
			dir := repo
			if !readOnly {
				dir = fastTempDir(t)
				if err := os.CopyFS(dir, os.DirFS(repo)); err != nil {
					t.Fatal(err)
				}
			}
			argv := append(append([]string{bin}, ctx...), words...)
			return runIn(t, dir, []string{"GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@p", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@p"}, argv...)
		},
		refused: func(out, w string) bool {
			if revParse {
				// rev-parse prints the options it does not know; in
				// --verify mode it refuses them.
				return regexp.MustCompile(`(?m)^'?`+regexp.QuoteMeta(w)+`'? ?$`).MatchString(out) ||
					w == probeWord && contains(out, "Needed a single revision")
			}
			if len(w) == 2 && w[0] == '-' && contains(out, "unknown switch `"+w[1:]+"'") {
				return true
			}
			if strings.HasPrefix(out, "usage: git ") && (w == probeWord || strings.HasSuffix(w, "@") || strings.HasSuffix(w, "=x")) {
				// git diff --cached --zzprobe, git stash show -E@: usage
				// alone. (Never taken as the refusal of the option itself.)
				return true
			}
			return contains(out, "unknown option `"+strip(w)+"'", "unknown option `"+w+"'",
				"unrecognized argument: "+w+"\n", "unknown option: "+w+"\n", "invalid option: "+w+"\n")
		},
		refusedShort: func(out string, c byte) bool { return contains(out, "unknown switch `"+string(c)+"'") },
		needs:        func(out, _ string) bool { return gitNeeds.MatchString(out) },
		noAttach: func(out, o string) bool {
			return contains(out, "option `"+strip(o)+"' takes no value", "unrecognized argument: "+o+"=x", "invalid option: "+o+"=x")
		},
	}
}

// gitAnywhere names, for each option of git's anywhere list, the
// subcommand (nil: git itself) where it is checked.
var gitAnywhere = map[string][]string{
	"--output": {"log"}, "-c": nil, "--config": {"clone"}, "--config-env": nil,
	"--upload-pack": {"fetch"}, "--receive-pack": {"push"}, "--exec": {"push"},
	"--open-files-in-pager": {"grep"}, "--ext-diff": {"log"}, "--textconv": {"log"},
	"--extcmd": {"difftool"}, "--tool": {"difftool"}, "--template": {"init"},
	"--separate-git-dir": {"init"}, "--show-signature": {"log"}, "--gpg-sign": {"commit"},
	"--sign": {"tag"}, "--local-user": {"tag"},
}

// gitContexts are the words after the subcommand under which git parses
// the table's options (git remote add -t, git stash pop --index).
// gitProbeWords follow the subcommand when probing: git grep needs a
// pattern for the option alone to be a whole call.
var gitProbeWords = map[string][]string{"grep": {"-e", "zz"}}

var gitContexts = map[string][][]string{
	"remote": {{"add"}, {"update"}, {"set-url"}, {"show"}, {"prune"}, {"set-branches"}, {"get-url"}},
}

var gitReadOnly = map[string]bool{"log": true, "show": true, "diff": true, "shortlog": true, "whatchanged": true,
	"range-diff": true, "blame": true, "rev-parse": true, "ls-files": true, "describe": true, "grep": true, "remote": true,
	"stash show": true, "ls-tree": true, "rev-list": true, "cat-file": true, "show-ref": true, "merge-base": true,
	"worktree list": true, "tag --list": true, "tag -l": true, "branch --list": true, "branch -l": true}

// gitDiffFamily: subcommands that read the diff options (git diff -h
// outside a repository lists them).
var gitDiffFamily = map[string]bool{"log": true, "show": true, "diff": true, "whatchanged": true, "range-diff": true,
	"shortlog": true, "stash show": true, "stash list": true}

var gitSkip = map[string]map[string]string{
	"rev-parse": {
		"--no-flags":  "it stops rev-parse from printing the options it does not know, which is what the probe reads; rev-parse.c compares the whole word (no value)",
		"--revs-only": "it stops rev-parse from printing the options it does not know, which is what the probe reads; rev-parse.c compares the whole word (no value)",
	},
}

var gitNotes = map[string]map[string]string{
	"ls-remote": {"--branches": "git 2.46 added --branches (for --heads)"},
	"push":      {"--branches": "git 2.46 added --branches (for --all)"},
}

const gitNotesRe = `^git version 2\.([0-9]|[1-3][0-9]|4[0-5])\.`

func testGit(t *testing.T) {
	bin := requireProgram(t, "git")
	repo := gitRepo(t, bin)
	outside := t.TempDir() // no repository: git diff -h lists the diff options
	diffHelp := parseHelp(runIn(t, outside, []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(outside)}, bin, "diff", "-h"), 6, "git diff -h (outside a repository)")
	if diffHelp["-U"].arity != attachedValue || diffHelp["--output"].arity != nextValue {
		t.Fatalf("git diff -h lists no diff options: %v", diffHelp)
	}
	top := tables["git"]
	version := runIn(t, repo, nil, bin, "--version")
	t.Run("git", func(t *testing.T) {
		extra := map[string]opt{}
		for k, subs := range gitAnywhere {
			if subs == nil {
				extra[k] = top.anywhere[k]
			}
		}
		c := &optionCheck{
			prog: "git", what: "git", table: top, attachedMatters: true, extra: extra,
			sources: []*source{{name: "git", weak: parseUsage(runIn(t, repo, nil, bin, "-h"), "git -h"), probe: gitProber(bin, repo, nil, false)}},
			version: version, notesRe: gitNotesRe,
			notes: map[string]string{"--no-advice": "git 2.46 added --no-advice"},
		}
		c.run(t)
	})
	// Subcommands that share an option spec are checked together: an
	// option may be unknown to some (git diff --format: git refuses the
	// call), never read otherwise by one that knows it. A subcommand whose
	// own subcommands read other options (git stash show) is checked per
	// subcommand; git remote's one list against each of its subcommands.
	type check struct {
		table *table
		ctxs  [][]string
	}
	var checks []check
	groups := [][]string{{"log", "show", "diff", "whatchanged", "range-diff"}, {"checkout", "switch", "restore"}}
	inGroup := map[string]bool{}
	for _, g := range groups {
		var ctxs [][]string
		for _, s := range g {
			if !sameOptions(top.subs[g[0]], top.subs[s]) {
				t.Fatalf("git %s and git %s are checked as one table but have different options", g[0], s)
			}
			inGroup[s] = true
			ctxs = append(ctxs, []string{s})
		}
		checks = append(checks, check{top.subs[g[0]], ctxs})
	}
	for s, st := range top.subs {
		if inGroup[s] {
			continue
		}
		ctxs := [][]string{{s}}
		for _, c := range gitContexts[s] {
			ctxs = append(ctxs, append([]string{s}, c...))
		}
		checks = append(checks, check{st, ctxs})
		for n, nt := range st.subs {
			if s == "stash" && n == "list" {
				// git stash list hands its options to git log, after
				// its own (-g refs/stash): the log table, checked there.
				if !sameOptions(nt, top.subs["log"]) {
					t.Errorf("git stash list does not read git log's options")
				}
				continue
			}
			checks = append(checks, check{nt, [][]string{{s, n}}})
		}
		// A mode's table (git tag -l) is checked under each word that
		// selects it.
		modes := map[*table][][]string{}
		for m, mt := range st.modes {
			modes[mt] = append(modes[mt], []string{s, m})
		}
		for mt, ctxs := range modes {
			sort.Slice(ctxs, func(i, j int) bool { return ctxs[i][1] < ctxs[j][1] })
			checks = append(checks, check{mt, ctxs})
		}
	}
	// git difftool: outside the table, for the anywhere options only.
	checks = append(checks, check{&table{}, [][]string{{"difftool"}}})
	sort.Slice(checks, func(i, j int) bool {
		return strings.Join(checks[i].ctxs[0], " ") < strings.Join(checks[j].ctxs[0], " ")
	})
	for _, ch := range checks {
		var names []string
		for _, ctx := range ch.ctxs {
			names = append(names, strings.Join(ctx, " "))
		}
		what := "git " + strings.Join(names, ",")
		t.Run(strings.Join(names, ","), func(t *testing.T) {
			first := ch.ctxs[0][0]
			c := &optionCheck{
				prog: "git", what: what, table: ch.table, attachedMatters: true,
				extra: map[string]opt{}, version: version, notesRe: gitNotesRe,
				skip: gitSkip[first], notes: gitNotes[first],
			}
			if len(ch.ctxs[0]) == 1 {
				for k, home := range gitAnywhere {
					if len(home) > 0 && home[0] == first {
						c.extra[k] = top.anywhere[k]
					}
				}
			}
			for _, ctx := range ch.ctxs {
				name := "git " + strings.Join(ctx, " ")
				h := runIn(t, repo, nil, append(append([]string{bin}, ctx...), "-h")...)
				help := map[string]fact{}
				// Inside a repository, git diff -h prints an old summary;
				// git rev-list -h is a hand-written list ("--header |
				// --pretty"), not parse-options' (its probes decide).
				if ctx[0] != "diff" && ctx[0] != "rev-list" {
					help = parseHelp(h, 6, name+" -h")
				}
				if gitDiffFamily[strings.Join(ctx, " ")] {
					for k, f := range diffHelp {
						if _, ok := help[k]; !ok {
							help[k] = f
						}
					}
				}
				p := gitProber(bin, repo, append(ctx, gitProbeWords[ctx[0]]...), gitReadOnly[ctx[0]] || gitReadOnly[strings.Join(ctx, " ")])
				switch ctx[0] {
				case "blame":
					p.tail = []string{"a.txt"}
				case "diff":
					p.tail = []string{"HEAD"} // git diff --merge-base needs a commit
				case "rev-list":
					p.tail = []string{"HEAD"} // with no commit, git rev-list prints its usage
				}
				c.sources = append(c.sources, &source{name: name, help: help, weak: parseUsage(h, name+" -h"), probe: p})
			}
			c.run(t)
		})
	}
}

// sameOptions reports whether two tables list the same options alike.
func sameOptions(a, b *table) bool {
	if a == nil || b == nil || len(a.short) != len(b.short) || len(a.long) != len(b.long) {
		return false
	}
	for k, o := range a.short {
		if p, ok := b.short[k]; !ok || p.class != o.class || tableArity(p) != tableArity(o) {
			return false
		}
	}
	for k, o := range a.long {
		if p, ok := b.long[k]; !ok || p.class != o.class || tableArity(p) != tableArity(o) {
			return false
		}
	}
	return true
}

// fastTempDir is a temporary directory in memory where there is one: the
// git probes copy a repository for every run.
func fastTempDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "loopguard-probe-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// ---- go ----

// goCache is the build cache the go probes share with this test's own go
// (the probes' HOME is a temporary directory).
var goCache = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// goTelemetryOff is a configuration directory whose go/telemetry/mode is
// "off", the probes' XDG_CONFIG_HOME: the go command ignores GOTELEMETRY,
// and in its default mode it writes counters under the probe's HOME from a
// child that outlives it, racing the test's removal of that directory.
// TestMain removes it.
var goTelemetryOff = sync.OnceValue(func() string {
	d, err := os.MkdirTemp("", "loopguard-policy-config-")
	if err != nil {
		return ""
	}
	madeConfig = d
	mode := filepath.Join(d, "go", "telemetry", "mode")
	if os.MkdirAll(filepath.Dir(mode), 0o700) != nil || os.WriteFile(mode, []byte("off\n"), 0o600) != nil {
		return ""
	}
	return d
})

// madeConfig is goTelemetryOff's directory once made, for TestMain to remove.
var madeConfig string

func TestMain(m *testing.M) {
	code := m.Run()
	if madeConfig != "" {
		os.RemoveAll(madeConfig)
	}
	os.Exit(code)
}

// goProber reads cmd/go's flag package: "flag provided but not defined",
// "flag needs an argument". ctx is run in a module with one package.
func goProber(bin, dir string, ctx []string) *prober {
	name := func(w string) string { return "-" + strings.TrimLeft(w, "-") }
	return &prober{
		run: func(t *testing.T, words ...string) string {
			return runIn(t, dir, nil, append(append([]string{bin}, ctx...), words...)...)
		},
		refused: func(out, w string) bool {
			return contains(out, "flag provided but not defined: "+name(w)+"\n", "unknown flag "+w+" cannot be used")
		},
		refusedShort: func(string, byte) bool { return false },
		needs: func(out, o string) bool {
			return contains(out, "flag needs an argument: "+name(o)+"\n", name(o)+" requires a ")
		},
		noAttach: func(string, string) bool { return false },
	}
}

func testGo(t *testing.T) {
	bin := requireProgram(t, "go")
	dir := t.TempDir()
	for name, data := range map[string]string{"go.mod": "module example.com/p\n\ngo 1.22\n", "p.go": "package p\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top := tables["go"]
	// -n: print what would run, build nothing. go test -c: refuse the
	// flags it does not know instead of passing them to the test binary.
	dry := map[string][]string{
		"build": {"-n"}, "install": {"-n"}, "run": {"-n"}, "vet": {"-n"}, "list": {"-n"}, "get": {"-n"},
		"clean": {"-n"}, "fmt": {"-n"}, "test": {"-n", "-c"},
	}
	contexts := map[string][][]string{
		"mod": {{"mod", "edit"}, {"mod", "tidy"}, {"mod", "download"}, {"mod", "graph"}, {"mod", "vendor"},
			{"mod", "why"}, {"mod", "verify"}, {"mod", "init"}},
	}
	var subs []string
	for s := range top.subs {
		subs = append(subs, s)
	}
	sort.Strings(subs)
	for _, sub := range append([]string{""}, subs...) {
		t.Run("go "+sub, func(t *testing.T) {
			tab, ctxs := top, [][]string{nil}
			if sub != "" {
				tab, ctxs = top.subs[sub], [][]string{{sub}}
			}
			if c, ok := contexts[sub]; ok {
				ctxs = c
			}
			c := &optionCheck{prog: "go", what: strings.TrimSpace("go " + sub), table: tab, skip: goSkip[sub]}
			for _, ctx := range ctxs {
				c.sources = append(c.sources, &source{
					name: strings.TrimSpace("go " + strings.Join(ctx, " ")), probeFirst: true,
					probe: goProber(bin, dir, append(ctx, dry[sub]...)),
				})
			}
			c.run(t)
		})
	}
}

var goSkip = map[string]map[string]string{
	"": {
		"-C":     "go -C must be the first word and takes the next (go -C dir build); at the end of a line cmd/go says 'flag provided but not defined'",
		"-h":     "go -h prints the usage and exits",
		"-help":  "go -help prints the usage and exits",
		"--help": "go --help prints the usage and exits",
	},
}

// ---- npm ----

// npmParser runs npm's own option parser (@npmcli/config, with npm's
// definitions and shorthands, as lib/npm.js builds it) over many command
// lines in one node process, and returns the words each leaves as
// operands. npm starts in about half a second; this reads 50 lines in the
// same time. TestNpmParserIsNpm checks it against npm itself.
const npmParserJS = `
const root = process.argv[1]
const Config = require(root + '/node_modules/@npmcli/config')
const { definitions, flatten, nerfDarts, shorthands } = require(root + '/node_modules/@npmcli/config/lib/definitions')
const out = []
for (const argv of JSON.parse(process.argv[2])) {
  const c = new Config({ npmPath: root, definitions, flatten, nerfDarts, shorthands, argv: ['node', 'npm', ...argv], warn: false })
  try {
    c.loadDefaults()
    c.loadCLI()
    out.push(c.parsedArgv.remain)
  } catch (e) {
    out.push(['error: ' + e.message])
  }
}
console.log(JSON.stringify(out))
`

func npmParse(t *testing.T, npmRoot string, lines [][]string) [][]string {
	t.Helper()
	in, err := json.Marshal(lines)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "-e", npmParserJS, npmRoot, string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("npm's option parser: %v: %s", err, stderr.String())
	}
	var remain [][]string
	if err := json.Unmarshal(out, &remain); err != nil || len(remain) != len(lines) {
		t.Fatalf("npm's option parser: %q: %v", out, err)
	}
	return remain
}

// npmRoot is where the installed npm's package is.
func npmRoot(t *testing.T, bin string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(real)) // .../npm/bin/npm-cli.js
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@npmcli", "config")); err != nil {
		t.Fatalf("npm at %s has no @npmcli/config: %v", root, err)
	}
	return root
}

func testNpm(t *testing.T) {
	bin := requireProgram(t, "npm")
	root := npmRoot(t, bin)
	top := tables["npm"]
	install, run := top.subs["install"], top.subs["run"]
	// npm reads its options alike under every command: the three tables
	// share one list, install adds its own.
	for _, sub := range []*table{top, run} {
		for k, o := range sub.long {
			if i, ok := install.long[k]; !ok || tableArity(i) != tableArity(o) || i.class != o.class {
				t.Errorf("npm %s %s: not as in npm install", sub.name, k)
			}
		}
		for k, o := range sub.short {
			if i, ok := install.short[k]; !ok || tableArity(i) != tableArity(o) || i.class != o.class {
				t.Errorf("npm %s -%c: not as in npm install", sub.name, k)
			}
		}
	}
	var opts []string
	for k := range install.long {
		opts = append(opts, k)
	}
	for k := range install.short {
		opts = append(opts, "-"+string(k))
	}
	sort.Strings(opts)
	// Each option before a word (taken as its value?), and each long one
	// with an attached value (npm makes a value a flag does not take an
	// operand: npm install --json=left-pad installs left-pad).
	var lines [][]string
	for _, o := range opts {
		lines = append(lines, []string{"run", o, "zzword"}, []string{"run", o + "=zzval"})
	}
	remain := npmParse(t, root, lines)
	operand := func(r []string, w string) bool { return slices.Contains(r, w) }
	facts := map[string]fact{}
	for i, o := range opts {
		next, att := remain[2*i], remain[2*i+1]
		f := fact{arity: noValue, refusesAttached: true, source: fmt.Sprintf("npm's parser: run %s zzword leaves %q", o, next)}
		if !operand(next, "zzword") {
			f.arity = nextValue
		}
		facts[o] = f
		if strings.HasPrefix(o, "--") && operand(att, "zzval") {
			// The attached value became an operand: the table must not
			// let a wildcard cover the word.
			argv := []string{"npm", "install", o + "=zzval"}
			if fs := CheckArgv(argv); len(fs) == 0 {
				t.Errorf("npm %s=zzval: npm reads zzval as an operand (npm install would install it), the table covers the word", o)
			}
		}
	}
	pkg, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(pkg, &meta); err != nil {
		t.Fatal(err)
	}
	c := &optionCheck{
		prog: "npm", what: "npm install", table: install,
		sources: []*source{{name: "npm", help: facts}},
		version: meta.Version, notesRe: `^(1[1-9]|[2-9][0-9])\.`,
		notes: map[string]string{
			"--require": "npm 11 reads an option it does not know as a flag; older npm took the next word as its value. The option is refused (code) either way",
			"--import":  "npm 11 reads an option it does not know as a flag; older npm took the next word as its value. The option is refused (code) either way",
			"--loader":  "npm 11 reads an option it does not know as a flag; older npm took the next word as its value. The option is refused (code) either way",
		},
	}
	c.run(t)
}

// TestNpmParserIsNpm checks npmParse against npm itself, on a package
// whose script prints its name: an option that takes the next word takes
// the script's name and nothing runs; a flag leaves it.
func TestNpmParserIsNpm(t *testing.T) {
	bin := requireProgram(t, "npm")
	root := npmRoot(t, bin)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"p","version":"1.0.0","scripts":{"zzword":"echo RAN-$npm_lifecycle_event","zzval":"echo RAN-$npm_lifecycle_event"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := [][]string{{"run", "--json", "zzword"}, {"run", "-w", "zzword"}, {"run", "--script-shell", "zzword"}, {"run", "--json=zzval", "zzword"}}
	remain := npmParse(t, root, lines)
	for i, l := range lines {
		out := runIn(t, dir, []string{"npm_config_update_notifier=false", "npm_config_cache=" + filepath.Join(dir, ".npm")}, append([]string{bin}, l...)...)
		script := "" // what npm ran, if anything
		for _, s := range []string{"zzval", "zzword"} {
			if strings.Contains(out, "RAN-"+s) {
				script = s
				break
			}
		}
		want := ""
		if len(remain[i]) > 1 {
			want = remain[i][1]
		}
		if script != want {
			t.Errorf("npm %s: npm ran %q, its parser says the script is %q (%q)", strings.Join(l, " "), script, want, firstLine(out))
		}
	}
}

// ---- cc ----

func testCC(t *testing.T) {
	bin := requireProgram(t, "gcc")
	dir := t.TempDir()
	quote := func(w string) []string { return []string{"'" + w + "'", "\u2018" + w + "\u2019"} }
	c := &optionCheck{
		prog: "cc", what: "gcc", table: tables["gcc"],
		sources: []*source{{
			name: "gcc", probeFirst: true,
			help: parseHelp(runIn(t, dir, nil, bin, "--help"), 8, "gcc --help"),
			probe: &prober{
				run: func(t *testing.T, words ...string) string {
					return runIn(t, dir, nil, append([]string{bin}, words...)...)
				},
				refused: func(out, w string) bool {
					return contains(out, append(quote(w), "")[0]) && contains(out, "unrecognized command-line option") &&
						contains(out, "unrecognized command-line option "+quote(w)[0], "unrecognized command-line option "+quote(w)[1])
				},
				refusedShort: func(string, byte) bool { return false },
				needs: func(out, o string) bool {
					for _, q := range quote(o) {
						if regexp.MustCompile(`missing[a-z ]* (after|to) ` + regexp.QuoteMeta(q)).MatchString(out) {
							return true
						}
					}
					return false
				},
				noAttach: func(string, string) bool { return false },
			},
		}},
		version: runIn(t, dir, nil, bin, "--version"), notesRe: `^gcc`,
		notes: map[string]string{},
		skip:  map[string]string{},
	}
	for _, p := range []string{"--gcc-toolchain", "-ccc-", "-Xclang", "--ld-path", "-fpass-plugin", "-load", "-MJ"} {
		c.notes[p] = "clang's option, which gcc refuses (clang is not installed here)"
	}
	for _, p := range []string{"-f", "-m", "-std=", "-Wl,", "-Wa,", "-Wp,", "-fplugin", "-fuse-ld", "-print-", "-fdump-", "-fopt-info"} {
		c.skip[p] = "a family of joined options (-fno-common, -Wl,-z,now, -fplugin=x.so): the prefix is no option by itself"
	}
	c.run(t)
}

// ---- go's tools ----

// parseFlagHelp reads the -help of a program built on Go's flag package:
// "  -o file" takes a value, "  -s\tdisable ..." or "  -s" alone does not.
func parseFlagHelp(text, source string) map[string]fact {
	out := map[string]fact{}
	re := regexp.MustCompile(`^  (-[^\s]+)(?: ([A-Za-z][A-Za-z ]*))?(?:\t.*)?$`)
	for _, line := range strings.Split(text, "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := fact{arity: noValue, source: source + ": " + strings.TrimSpace(line)}
		if m[2] != "" {
			f.arity = nextValue
		}
		out[m[1]] = f
	}
	return out
}

// TestGoToolFlagsAgainstTools checks goToolFlags' lists against go tool
// link, compile and asm: every flag listed is one the tool has, and takes
// a value just when the tool says so (goToolFlags finds -o's file by it).
func TestGoToolFlagsAgainstTools(t *testing.T) {
	bin := requireProgram(t, "go")
	loadTables()
	for tool, tab := range map[string]*table{"link": linkFlags, "compile": compileFlags, "asm": asmFlags} {
		t.Run(tool, func(t *testing.T) {
			help := parseFlagHelp(runIn(t, t.TempDir(), nil, bin, "tool", tool, "-help"), "go tool "+tool+" -help")
			if help["-o"].arity != nextValue || len(help) < 10 {
				t.Fatalf("go tool %s -help: read %d flags, -o as %v", tool, len(help), help["-o"].arity)
			}
			c := &optionCheck{prog: "go tool", what: "go tool " + tool, table: tab, sources: []*source{{name: "go tool " + tool, help: help}}}
			c.run(t)
			// Control: -o made to take no value fails the check.
			rec := &recorder{}
			wrong := &optionCheck{what: "go tool " + tool, table: withArity(tab, "-o", noValue), sources: c.sources, only: map[string]bool{"-o": true}, report: rec}
			wrong.run(t)
			if len(rec.errs) != 1 {
				t.Errorf("go tool %s -o made to take no value: the check reported %q", tool, rec.errs)
			}
			// No flag listed as safe takes a file, a directory or a
			// program (a flag not listed is not known to be safe).
			for name, f := range help {
				o, ok := tab.lookup(name)
				if !ok || o.class >= Writes || f.arity != nextValue {
					continue
				}
				if strings.Contains(f.source, " file") || strings.Contains(f.source, " directory") || strings.Contains(f.source, " linker") {
					t.Errorf("go tool %s %s takes a file, directory or program and is listed as %s: %s", tool, name, o.class, f.source)
				}
			}
		})
	}
}

// TestLdflagsOutputIsReal builds a program with -ldflags=-o=... and
// -gcflags=-o=... pointing outside the module: go's tools write there (the
// attack is real), and the table says the words write; the control
// -ldflags=-s writes nothing outside and is covered.
func TestLdflagsOutputIsReal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := requireProgram(t, "go")
	mod, outside := t.TempDir(), t.TempDir()
	for name, data := range map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		argv  []string
		wrote string // the file written outside, "" for none
	}{
		{[]string{"build", "-ldflags=-o=" + filepath.Join(outside, "ld"), "."}, "ld"},
		{[]string{"build", "-ldflags", "-s -o " + filepath.Join(outside, "ld2"), "."}, "ld2"},
		{[]string{"build", "-gcflags=example.com/m=-o=" + filepath.Join(outside, "gc"), "."}, "gc"},
		{[]string{"build", "-ldflags=-s -w", "."}, ""},
	} {
		out := runIn(t, mod, nil, append([]string{bin}, c.argv...)...)
		entries, _ := os.ReadDir(outside)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		argv := append([]string{"go"}, c.argv...)
		fs := CheckArgv(argv)
		switch {
		case c.wrote != "" && !slices.Contains(names, c.wrote):
			t.Errorf("go %q wrote %v outside, not %s: %s", c.argv, names, c.wrote, firstLine(out))
		case c.wrote != "" && (len(fs) == 0 || fs[0].Class != Writes):
			t.Errorf("go %q writes %s outside, the table finds %v", c.argv, c.wrote, fs)
		case c.wrote == "" && len(fs) != 0:
			t.Errorf("control go %q: findings %v", c.argv, fs)
		}
		for _, n := range names {
			os.Remove(filepath.Join(outside, n))
		}
	}
}

// ---- the checks can fail ----

type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// withArity is a copy of tb with option name taking its value as a says.
func withArity(tb *table, name string, a arity) *table {
	c := *tb
	c.short, c.long = maps.Clone(tb.short), maps.Clone(tb.long)
	c.prefixes = slices.Clone(tb.prefixes)
	set := func(o opt) opt {
		o.value, o.optional = a != noValue, a == attachedValue
		return o
	}
	switch {
	case len(name) == 2 && c.short != nil && !tb.goStyle:
		c.short[name[1]] = set(c.short[name[1]])
	case tb.prefixes != nil:
		for i, p := range c.prefixes {
			if p.prefix == name {
				c.prefixes[i].o = set(p.o)
			}
		}
	default:
		c.long[name] = set(c.long[name])
	}
	return &c
}

// TestOptionCheckCatches puts each arity the checks once found wrong (and
// a few more, one per way of asking a program) back into a copy of the
// table: the check must fail on it, naming the option.
func TestOptionCheckCatches(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the programs")
	}
	loadTables()
	for _, c := range []struct {
		run  func(*testing.T)
		what string // the check's what
		opt  string
		a    arity
	}{
		{testCoreutils, "sort", "-o", noValue},          // getopt: a value taken for none
		{testCoreutils, "sort", "--reverse", nextValue}, // getopt: a flag read as taking the next word
		{testCoreutils, "uniq", "-f", attachedValue},
		{testMake, "make", "-j", nextValue},
		{testTar, "tar", "-f", noValue},
		{testWget, "wget", "-O", noValue},
		{testCurl, "curl", "-o", attachedValue},
		{testRg, "rg", "-m", noValue}, // clap's help
		{testFd, "fd", "-H", nextValue},
		{testGit, "git log,show,diff,whatchanged,range-diff", "-U", nextValue}, // the bypass of issue 22
		{testGit, "git log,show,diff,whatchanged,range-diff", "--format", nextValue},
		{testGit, "git blame", "--reverse", nextValue},
		{testGit, "git stash show", "-m", nextValue},
		{testGit, "git shortlog", "-n", nextValue},
		{testGit, "git", "-C", noValue},
		{testGit, "git rev-parse", "--path-format", nextValue},
		{testGo, "go build", "-buildvcs", nextValue},
		{testGo, "go test", "-run", noValue},
		{testNpm, "npm install", "-w", noValue},
		{testCC, "gcc", "-l", noValue},
		{testCC, "gcc", "-o", noValue},
	} {
		t.Run(c.what+" "+c.opt, func(t *testing.T) {
			rec := &recorder{}
			tweak = func(ch *optionCheck) {
				ch.report, ch.only = rec, map[string]bool{}
				if ch.what == c.what {
					ch.table, ch.only = withArity(ch.table, c.opt, c.a), map[string]bool{c.opt: true}
				}
			}
			defer func() { tweak = nil }()
			c.run(t)
			ok := len(rec.errs) > 0
			for _, e := range rec.errs {
				// One failure per subcommand that reads the option.
				ok = ok && strings.Contains(e, " "+c.opt+": the table says it "+c.a.String())
			}
			if !ok {
				t.Errorf("%s %s made to say it %s: the check reported %q", c.what, c.opt, c.a, rec.errs)
			}
		})
	}
}

// testFind checks find's table against GNU find: an option or test that
// takes a word consumes a probe word after it, one that takes none leaves
// it to be read as a test ("unknown predicate"). The global options (-H -L
// -P -D -O) go before the starting point; -O's level is attached only.
func testFind(t *testing.T) {
	bin := requireProgram(t, "find")
	dir := t.TempDir()
	tb := tables["find"]
	n := 0
	check := func(name string, o opt, global bool) {
		if name == "-help" || name == "--help" || name == "-version" || name == "--version" || name == "-delete" {
			return // they print and exit, or would act on the starting point
		}
		args := []string{bin, ".", name, "--zzprobe"}
		if global {
			args = []string{bin, name, "--zzprobe", "."}
		}
		out := runIn(t, dir, nil, args...)
		consumed := !strings.Contains(out, "predicate `--zzprobe'")
		if o.optional && strings.Contains(out, "must be immediately followed") {
			consumed = false
		}
		switch {
		case o.value && !o.optional && !consumed:
			t.Errorf("find %s takes the next word in the table, but find does not: %q", name, out)
		case (!o.value || o.optional) && consumed:
			t.Errorf("find %s takes no next word in the table, but find takes one: %q", name, out)
		}
		n++
	}
	for name, o := range tb.long {
		check(name, o, false)
	}
	for c, o := range tb.short {
		check("-"+string(c), o, true)
	}
	checked["find"] += n
	if n < 60 {
		t.Fatalf("only %d find options checked", n)
	}
}
