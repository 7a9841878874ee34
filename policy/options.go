package policy

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// OptionClass says what one word of a command line does, for the programs
// in the option table. The order matters: a larger class is worse.
type OptionClass int

const (
	// Safe options and operands do nothing beyond the program's job.
	Safe OptionClass = iota
	// Reads names a file the program reads.
	Reads
	// Unknown is an option the table does not list for a tabled program.
	Unknown
	// Writes names a file the program writes (sort -o, uniq IN OUT,
	// --output=, tar -x).
	Writes
	// Code runs a command or loads code (make --eval, go -toolexec,
	// git -c, rg --pre, fd -x, gcc -wrapper).
	Code
)

// Covered reports whether a scope's wildcard may cover a word of class c.
func (c OptionClass) Covered() bool { return c <= Reads }

func (c OptionClass) String() string {
	switch c {
	case Safe:
		return "safe"
	case Reads:
		return "reads a named file"
	case Unknown:
		return "is not known to be safe"
	case Writes:
		return "writes a named file"
	case Code:
		return "runs code"
	}
	return "invalid"
}

// Finding is one word of a command line that a wildcard may not cover.
type Finding struct {
	Index int         // index in argv
	Word  string      // the word as in argv
	Class OptionClass // Unknown, Writes or Code
	// Why says what it does, for a person: "this option runs code: sort
	// --compress-program runs a program to compress temporary files".
	Why string
}

// CheckArgv reads argv (argv[0] the command name or path) with the option
// table of its program and returns the words a wildcard may not cover:
// options and operands that run code or write a named file, the values they
// take, and, for a program in the table, every option it does not list.
// Words of a program outside the table are checked only against a few
// options that write or run code for most programs (--output=, --exec=).
// Findings are in argv order.
func CheckArgv(argv []string) []Finding {
	if len(argv) == 0 {
		return nil
	}
	w := walker{prog: Base(argv[0]), argv: argv}
	t, ok := tableOf(w.prog)
	if !ok {
		t = genericTable()
	}
	w.walk(t, 1, nil)
	return w.out
}

// Tabled reports whether the option table lists name's options.
func Tabled(name string) bool {
	_, ok := tableBuilders()[Base(name)]
	return ok
}

// SubcommandFirst reports programs whose options before the subcommand can
// run other programs (git -c core.pager=..., make -f, npm --node-options,
// go -C, cargo --config, tar -I, rsync -e): a Bash rule must name the
// subcommand (or first argument) literally.
func SubcommandFirst(name string) bool {
	switch Base(name) {
	case "git", "make", "gmake", "tar", "rsync", "npm", "pnpm", "yarn", "cargo", "go":
		return true
	}
	return false
}

// opt is one option: its class, whether it takes a value, and what it does.
type opt struct {
	class OptionClass
	value bool // takes a value: attached (-ofile, --out=file) or the next word
	// optional: the value is optional and only ever attached (make -j4).
	optional bool
	why      string
	// check refines the class by the option's value (go -ldflags).
	check func(value string) (OptionClass, string)
}

// table is the option grammar of one program or subcommand.
type table struct {
	name  string
	short map[byte]opt
	long  map[string]opt
	// goStyle: options are -name or --name, never clustered (go, gcc).
	goStyle bool
	// prefixes classify goStyle options by prefix, longest first (gcc).
	prefixes []prefixOpt
	// numeric: -NUM is a count (git log -5, head -20).
	numeric bool
	// operand classifies the nth operand (0-based) after the options.
	operand func(nth int, word string) (OptionClass, string)
	// subs are subcommand tables, picked by the first operand; subClass
	// classes subcommands that are themselves code or writes; a first
	// operand in neither makes the rest Unknown options.
	subs     map[string]*table
	subClass map[string]opt
	// modes are tables picked by the first word after the program or
	// subcommand when that word is an option that sets a mode git checks
	// the rest against (git tag -l, git branch --list: listing, where the
	// options that create or delete are refused). The rest of the words
	// are read with the mode's table; a mode written later is read with
	// the table itself.
	modes map[string]*table
	// anywhere are options with the same meaning in every subcommand (git
	// -c), checked before the subcommand's own.
	anywhere map[string]opt
	// passDashDash: the words after "--" go to another program (npm run
	// x -- ARGS, go test -args): options there are Unknown.
	passDashDash bool
	// oldStyle: a first word without a dash is a cluster of short options
	// (tar xzf).
	oldStyle bool
	// open: options the table does not list are Safe (the generic table
	// for programs outside the option table).
	open bool
}

type prefixOpt struct {
	prefix string
	o      opt
}

// walker reads one command line.
type walker struct {
	prog string
	argv []string
	out  []Finding
}

func (w *walker) find(i int, c OptionClass, why string) {
	if c.Covered() {
		return
	}
	for _, f := range w.out {
		if f.Index == i {
			return
		}
	}
	w.out = append(w.out, Finding{Index: i, Word: w.argv[i], Class: c, Why: why})
}

// argvAt is argv[i], or "" past its end.
func (w *walker) argvAt(i int) string {
	if i < len(w.argv) {
		return w.argv[i]
	}
	return ""
}

func (w *walker) optWhy(o opt, word string) string {
	if o.why != "" {
		return "this option " + o.class.String() + ": " + o.why
	}
	return fmt.Sprintf("this option %s: %s %s", o.class, w.prog, word)
}

func (w *walker) walk(t *table, i int, anywhere map[string]opt) {
	if t.anywhere != nil {
		merged := map[string]opt{}
		for k, v := range anywhere {
			merged[k] = v
		}
		for k, v := range t.anywhere {
			merged[k] = v
		}
		anywhere = merged
	}
	if m, ok := t.modes[w.argvAt(i)]; ok {
		w.walk(m, i+1, anywhere)
		return
	}
	nth := 0
	dashdash := false
	for ; i < len(w.argv); i++ {
		a := w.argv[i]
		if dashdash {
			if t.passDashDash && strings.HasPrefix(a, "-") {
				w.find(i, Unknown, fmt.Sprintf("this option %s: %s passes %s on to another program", Unknown, w.prog, a))
				continue
			}
			w.operand(t, i, nth)
			nth++
			continue
		}
		if a == "--" {
			dashdash = true
			continue
		}
		if len(a) > 1 && a[0] == '-' {
			i = w.option(t, i, anywhere)
			continue
		}
		if nth == 0 && t.oldStyle && i == 1 && a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			i = w.option(t, i, anywhere)
			nth++
			continue
		}
		if nth == 0 && (t.subs != nil || t.subClass != nil) {
			if o, ok := t.subClass[a]; ok {
				w.find(i, o.class, fmt.Sprintf("this subcommand %s: %s", o.class, o.why))
			}
			if sub, ok := t.subs[a]; ok {
				w.walk(sub, i+1, anywhere)
				return
			}
			if _, ok := t.subClass[a]; !ok {
				// A subcommand the table does not know: its options are
				// all Unknown, the dangerous-anywhere ones still named.
				w.walk(&table{name: a, anywhere: anywhere}, i+1, nil)
				return
			}
			w.walk(&table{name: a}, i+1, anywhere)
			return
		}
		w.operand(t, i, nth)
		nth++
	}
}

func (w *walker) operand(t *table, i, nth int) {
	if t.operand == nil {
		return
	}
	if c, why := t.operand(nth, w.argv[i]); !c.Covered() {
		w.find(i, c, why)
	}
}

// option classifies the option at argv[i] and returns the index of its last
// word (its value may be the next word).
func (w *walker) option(t *table, i int, anywhere map[string]opt) int {
	a := w.argv[i]
	if t.numeric && len(a) > 1 && strings.Trim(a[1:], "0123456789") == "" {
		return i
	}
	if strings.HasPrefix(a, "--") || t.goStyle {
		name, val, hasVal := strings.Cut(a, "=")
		key := name
		if t.goStyle {
			key = "-" + strings.TrimLeft(name, "-")
		}
		o, ok := lookupLong(anywhere, key, !t.goStyle)
		if !ok {
			o, ok = lookupLong(t.long, key, !t.goStyle)
		}
		if !ok && t.goStyle && len(key) == 2 {
			o, ok = t.short[key[1]]
		}
		if !ok && t.goStyle {
			for _, p := range t.prefixes {
				if strings.HasPrefix(a, p.prefix) {
					o, ok = p.o, true
					if a != p.prefix {
						hasVal = true // attached: -Idir, -fplugin=x.so
					}
					break
				}
			}
		}
		if !ok {
			if !t.open {
				w.find(i, Unknown, fmt.Sprintf("this option %s: %s %s", Unknown, w.prog, name))
			}
			return i
		}
		last := i
		if o.value && !hasVal && !o.optional {
			if i+1 < len(w.argv) {
				last = i + 1
				val = w.argv[i+1]
			}
		}
		c, why := o.class, w.optWhy(o, name)
		if o.check != nil {
			if c2, why2 := o.check(val); c2 > c {
				c, why = c2, why2
			}
		}
		for j := i; j <= last; j++ {
			w.find(j, c, why)
		}
		return last
	}
	// A cluster of short options: -rn, -ofile, -j4.
	start := 1
	if t.oldStyle && a[0] != '-' {
		start = 0
	}
	next := i // old style (tar xzf FILE): values come from the next words in turn
	for j := start; j < len(a); j++ {
		c := a[j]
		o, ok := anywhere["-"+string(c)]
		if !ok {
			o, ok = t.short[c]
		}
		if !ok {
			if !t.open {
				w.find(i, Unknown, fmt.Sprintf("this option %s: %s -%c", Unknown, w.prog, c))
			}
			return i
		}
		w.find(i, o.class, w.optWhy(o, "-"+string(c)))
		if o.value {
			if start == 0 {
				if next+1 < len(w.argv) {
					next++
					w.find(next, o.class, w.optWhy(o, "-"+string(c)))
				}
				continue
			}
			if j < len(a)-1 || o.optional {
				return i // the rest is the value
			}
			if i+1 < len(w.argv) {
				w.find(i+1, o.class, w.optWhy(o, "-"+string(c)))
				return i + 1
			}
			return i
		}
	}
	return next
}

// lookupLong finds a long option. With abbrev, a unique-or-not prefix of
// known options (GNU getopt accepts --comp for --compress-program) takes
// the worst class among the options it abbreviates (of two as bad, the
// first by name: its why), and takes a value if any of them does. Whatever
// order the map gives them in: tar --ex, of --extract (writes) and
// --exclude= (safe), was found safe when --exclude came last.
func lookupLong(m map[string]opt, name string, abbrev bool) (opt, bool) {
	if o, ok := m[name]; ok {
		return o, true
	}
	if !abbrev || len(name) < 4 {
		return opt{}, false
	}
	var worst opt
	worstKey, found, value := "", false, false
	for k, o := range m {
		if !strings.HasPrefix(k, name) {
			continue
		}
		value = value || o.value
		if !found || o.class > worst.class || o.class == worst.class && k < worstKey {
			worst, worstKey, found = o, k, true
		}
	}
	worst.value = worst.value || value
	return worst, found
}

// parseTable reads the compact option grammar used below:
//
//	"safe: -n -k= --key= ; writes: -o= --output= ; code: --compress-program="
//
// A trailing "=" means the option takes a value, "=?" an optional,
// attached-only value; "-NUM" means counts like -5 are safe. Why texts come
// from whys, keyed by the option as written without "=".
func parseTable(name, spec string, whys map[string]string) *table {
	t := &table{name: name, short: map[byte]opt{}, long: map[string]opt{}}
	for _, section := range strings.Split(spec, ";") {
		head, body, ok := strings.Cut(section, ":")
		if !ok {
			panic("policy: bad option spec section " + section)
		}
		var c OptionClass
		switch strings.TrimSpace(head) {
		case "safe":
			c = Safe
		case "reads":
			c = Reads
		case "writes":
			c = Writes
		case "code":
			c = Code
		default:
			panic("policy: bad option class " + head)
		}
		for _, tok := range strings.Fields(body) {
			if tok == "-NUM" {
				t.numeric = true
				continue
			}
			o := opt{class: c}
			switch {
			case strings.HasSuffix(tok, "=?"):
				tok, o.value, o.optional = strings.TrimSuffix(tok, "=?"), true, true
			case strings.HasSuffix(tok, "="):
				tok, o.value = strings.TrimSuffix(tok, "="), true
			}
			o.why = whys[tok]
			if o.why == "" && c >= Writes && name != "generic" {
				o.why = name + " " + tok
			}
			switch {
			case strings.HasPrefix(tok, "--") || (len(tok) > 2 && tok[0] == '-'):
				t.long[tok] = o
			case len(tok) == 2 && tok[0] == '-':
				t.short[tok[1]] = o
			default:
				panic("policy: bad option " + tok)
			}
		}
	}
	return t
}

// Options lists, for documentation and tests, every tabled program and its
// options of class c, as "prog: -a --bb".
func Options(c OptionClass) []string {
	var out []string
	var walk func(prefix string, t *table)
	walk = func(prefix string, t *table) {
		var names []string
		for k, o := range t.short {
			if o.class == c {
				names = append(names, "-"+string(k))
			}
		}
		for k, o := range t.long {
			if o.class == c {
				names = append(names, k)
			}
		}
		for k, o := range t.anywhere {
			if o.class == c {
				names = append(names, k)
			}
		}
		for k, o := range t.subClass {
			if o.class == c {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		if len(names) > 0 {
			out = append(out, prefix+": "+strings.Join(names, " "))
		}
		for _, m := range []map[string]*table{t.subs, t.modes} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				walk(prefix+" "+k, m[k])
			}
		}
	}
	loadTables()
	var progs []string
	for k := range tables {
		progs = append(progs, k)
	}
	sort.Strings(progs)
	for _, p := range progs {
		walk(p, tables[p])
	}
	return out
}
