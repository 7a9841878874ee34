package policy

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// entriesByJoin is entries as it was made before entryBuilder: each path
// joined apart with filepath.Join (and AgentPaths, secretPaths), each
// secret described at once. TestEntriesAsJoined holds entries to it.
func entriesByJoin(pl Places) []entry {
	var out []entry
	add := func(e entry) {
		if e.path != "" && filepath.IsAbs(e.path) {
			e.path = filepath.Clean(e.path)
			out = append(out, e)
		}
	}
	const guardState = "loopguard's state (grants, pending calls, audit log)"
	if pl.StateDir != "" {
		add(entry{path: filepath.Join(pl.StateDir, ConsoleDir), tier: GuardCritical, secret: true, what: guardConsole})
	}
	add(entry{path: pl.StateDir, tier: GuardCritical, secret: true, what: guardState})
	add(entry{path: UndoDir(pl.StateDir), tier: GuardCritical, secret: true, what: "loopguard's undo records (copies of project files that loopguard undo puts back)"})
	add(entry{path: pl.ConfigDir, tier: GuardCritical, secret: true, what: "loopguard's configuration"})
	add(entry{path: pl.Self, tier: GuardCritical, what: "the loopguard binary"})
	for _, f := range pl.Secrets {
		add(entry{path: f, tier: GuardCritical, secret: true, what: "the Vault token of this machine (the team backend's token_file)"})
	}
	if pl.Self != "" {
		full, hook := Binaries(pl.Self)
		for _, b := range []string{full, hook, Launcher(pl.Self), Confiner(pl.Self)} {
			if b != filepath.Clean(pl.Self) {
				add(entry{path: b, tier: GuardCritical, what: "the loopguard binary"})
			}
		}
		for _, b := range Retired(pl.Self) {
			add(entry{path: b, tier: GuardCritical, what: guardRetired})
		}
	}
	for _, d := range filepath.SplitList(pl.Path) {
		if filepath.IsAbs(d) {
			full, hook := Binaries(filepath.Join(d, BinaryName))
			add(entry{path: full, tier: GuardCritical, what: "a loopguard binary in PATH", exact: true})
			add(entry{path: hook, tier: GuardCritical, what: "a loopguard binary in PATH (the plugin's hooks run it)", exact: true})
			add(entry{path: Launcher(full), tier: GuardCritical, what: "a loopguard binary in PATH", exact: true})
			add(entry{path: Confiner(full), tier: GuardCritical, what: "a loopguard binary in PATH", exact: true})
			for _, b := range Retired(full) {
				add(entry{path: b, tier: GuardCritical, what: guardRetired, exact: true})
			}
		}
	}
	for _, d := range ManagedSettingsDirs {
		add(entry{path: d, tier: GuardCritical, what: "Claude Code's managed settings"})
	}
	if pl.ClaudeConfigDir != "" {
		add(entry{path: pl.ClaudeConfigDir, tier: GuardCritical, what: "Claude Code's configuration directory ($CLAUDE_CONFIG_DIR)", claudeDir: true})
	}
	if h := pl.Home; h != "" {
		j := func(p ...string) string { return filepath.Join(append([]string{h}, p...)...) }
		add(entry{path: j(".local", "state", "loopguard", ConsoleDir), tier: GuardCritical, secret: true, what: guardConsole})
		add(entry{path: j(".local", "state", "loopguard"), tier: GuardCritical, secret: true, what: guardState})
		add(entry{path: j(".config", "loopguard"), tier: GuardCritical, secret: true, what: "loopguard's configuration"})
		add(entry{path: j(".local", "share", "keyrings"), tier: GuardCritical, secret: true, what: "the keyring files (the guard's key)"})
		add(entry{path: j("Library", "Keychains"), tier: GuardCritical, secret: true, what: "the keychains (the guard's key)"})
		add(entry{path: j(".claude"), tier: GuardCritical, what: "Claude Code's user configuration directory", claudeDir: true})
		for _, e := range execConfig() {
			if e.Anchor == InHome {
				add(entry{path: j(strings.Split(e.Path, "/")...), tier: ExecConfig, what: e.What})
			}
		}
		for _, s := range homeSecrets {
			for _, p := range pl.secretPaths(s) {
				add(entry{path: p, tier: GuardCritical, secret: true, what: s.What + ", a secret: " + s.Why, exact: true})
			}
		}
	}
	for _, p := range pl.HooksPaths {
		add(entry{path: p, tier: ExecConfig, what: hooksPathWhat})
	}
	for _, a := range AgentPaths(pl.Home, "", pl.CodexHome) {
		add(entry{path: a.Path, tier: GuardCritical, what: a.Why})
	}
	// The same entries at each other path of the home.
	n := len(out)
	for _, other := range OtherHomes(pl.Home) {
		home := filepath.Clean(pl.Home)
		for _, e := range out[:n] {
			if rel, err := filepath.Rel(home, e.path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && (rel != "." || e.path == home) {
				e.path = filepath.Join(other, rel)
				out = append(out, e)
			}
		}
	}
	return out
}

// The protected set entries makes in one buffer is the one filepath.Join
// made path by path: the same paths, in the same order (the first of equals
// is what a refusal names), with the same tiers and descriptions, for
// homes, PATH directories and moved directories written clean or not,
// the root among them. The control: the comparison sees a change (a
// secret's description, a path) when one is made.
func TestEntriesAsJoined(t *testing.T) {
	places := []Places{
		{},
		{Home: "/home/u"},
		{Home: "/home/u", StateDir: "/home/u/.local/state/loopguard", ConfigDir: "/home/u/.config/loopguard", Self: "/usr/local/bin/loopguard-hook",
			Path: "/usr/local/bin:/usr/bin:/bin", XDGConfigHome: "/home/u/xdg", CodexHome: "/home/u/cx", ClaudeConfigDir: "/home/u/cc",
			Secrets: []string{"/etc/vault-token"}, HooksPaths: []string{"/p/.husky/pre-commit"}},
		{Home: "/home/u/", Path: "/usr/bin/:/usr//bin/../sbin:/:rel/bin::/opt/x/.", XDGConfigHome: "/home/u/xdg/", CodexHome: "/home/u//cx/", ClaudeConfigDir: "/home/u/cc/."},
		{Home: "/", Path: "/", XDGConfigHome: "/", CodexHome: "/"},
		{Home: "home/u", Path: "bin", XDGConfigHome: "xdg", CodexHome: "cx", ClaudeConfigDir: "cc"},
		{Home: "/home/u/../v", CodexHome: "relative"},
	}
	same := func(a, b []entry) bool {
		return slices.EqualFunc(a, b, func(x, y entry) bool {
			return x.path == y.path && x.tier == y.tier && x.secret == y.secret && x.desc() == y.desc() &&
				x.claudeDir == y.claudeDir && x.exact == y.exact
		})
	}
	for _, pl := range places {
		got, want := pl.entries(), entriesByJoin(pl)
		if !same(got, want) {
			for i := 0; i < max(len(got), len(want)); i++ {
				var g, w entry
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g.path != w.path || g.desc() != w.desc() {
					t.Errorf("%+v: entry %d is %q (%s), filepath.Join made %q (%s)", pl, i, g.path, g.desc(), w.path, w.desc())
					break
				}
			}
			t.Errorf("%+v: %d entries, filepath.Join made %d", pl, len(got), len(want))
		}
		if p := pl.Prepare(); pl.Home == filepath.Clean(pl.Home) && !same(p.prepared, want) {
			t.Errorf("%+v: Prepare's entries differ from filepath.Join's", pl)
		}
	}
	// Control: the comparison sees a change.
	pl := places[2]
	got := pl.entries()
	for i := range got {
		if got[i].why != "" {
			changed := slices.Clone(got)
			changed[i].why = ""
			if same(changed, entriesByJoin(pl)) {
				t.Fatal("control: a secret without its reason compares equal")
			}
			changed = slices.Clone(got)
			changed[i].path += "x"
			if same(changed, entriesByJoin(pl)) {
				t.Fatal("control: a changed path compares equal")
			}
			return
		}
	}
	t.Fatal("control: no home secret among the entries")
}

// entryBuilder.join writes the tables' paths after a cleaned directory as
// they are: each must be clean, relative and "/"-separated, or a joined path
// would differ from filepath.Join's. The control: a path that is not is
// caught.
func TestEntryTablesAreClean(t *testing.T) {
	bad := func(p string) bool {
		return p == "" || p != path.Clean(p) || path.IsAbs(p) || p == "." || p == ".." || strings.HasPrefix(p, "../")
	}
	var rels []string
	for _, e := range execConfigRows {
		if e.Anchor == InHome {
			rels = append(rels, e.Path)
		}
	}
	for _, s := range homeSecrets {
		rels = append(rels, s.Path)
	}
	for _, f := range agentFiles {
		rels = append(rels, f.parts...)
	}
	for _, h := range agentHomes {
		rels = append(rels, h.dir)
	}
	for _, p := range rels {
		if bad(p) {
			t.Errorf("%q is not a clean relative path", p)
		}
	}
	for _, p := range []string{"a//b", "a/", "/a", "a/../b", "./a"} {
		if !bad(p) {
			t.Errorf("control: %q passes", p)
		}
	}
}

// anyDepthIndex holds, for each first name, the entries a map of lists made
// with strings.Split held (the index before it), in the same order, and
// anyDepth is execConfig's AnyDepth entries in order. The control: a
// changed entry is seen.
func TestAnyDepthIndexAsSplit(t *testing.T) {
	var want []anyDepthEntry
	for _, e := range execConfig() {
		if e.Anchor != AnyDepth || e.Path == claudeDirName || e.Path == gitDirName {
			continue
		}
		want = append(want, anyDepthEntry{parts: strings.Split(strings.ToLower(e.Path), "/"), what: e.What})
	}
	byName := map[string][]anyDepthEntry{}
	for _, e := range want {
		byName[e.parts[0]] = append(byName[e.parts[0]], e)
	}
	same := func(a, b anyDepthEntry) bool { return slices.Equal(a.parts, b.parts) && a.what == b.what }
	if !slices.EqualFunc(anyDepth(), want, same) {
		t.Fatalf("anyDepth: %d entries, strings.Split made %d, or they differ", len(anyDepth()), len(want))
	}
	idx := anyDepthIndex()
	lookup := func(name string) []anyDepthEntry {
		var out []anyDepthEntry
		for k := idx.byName[name]; k != 0; k = idx.all[k-1].next {
			out = append(out, idx.all[k-1])
		}
		return out
	}
	if len(idx.byName) != len(byName) {
		t.Errorf("%d names indexed, %d in the map", len(idx.byName), len(byName))
	}
	multi := ""
	for name, es := range byName {
		if !slices.EqualFunc(lookup(name), es, same) {
			t.Errorf("%s: %v, the map holds %v", name, lookup(name), es)
		}
		if len(es) > 1 {
			multi = name
		}
	}
	if multi == "" {
		t.Fatal("control: no name begins two entries")
	}
	if got := lookup(multi); slices.EqualFunc(got[1:], byName[multi], same) {
		t.Fatal("control: a list short of its first entry compares equal")
	}
	if len(lookup("no-such-name")) != 0 {
		t.Fatal("an unknown name has entries")
	}
}

// lefthookRows is written out; this is the loop that made it (the main
// file and the -local one, each as lefthook.EXT, .lefthook.EXT and
// .config/lefthook.EXT, for every format lefthook reads), row for row. The
// control: a row left out is seen.
func TestLefthookRows(t *testing.T) {
	var want []ExecConfigEntry
	for _, kind := range []string{"lefthook", "lefthook-local"} {
		for _, ext := range []string{"yml", "yaml", "toml", "json", "jsonc"} {
			name := kind + "." + ext
			for _, p := range []string{name, "." + name, ".config/" + name} {
				want = append(want, ExecConfigEntry{p, AnyDepth, "", "lefthook configuration (" + p + ": each hook's run is a command git runs)",
					"https://lefthook.dev/configuration/ (Config file name)"})
			}
		}
	}
	if !slices.Equal(lefthookRows, want) {
		t.Fatalf("lefthookRows: %d rows, the loop makes %d, or they differ", len(lefthookRows), len(want))
	}
	if slices.Equal(lefthookRows[1:], want) {
		t.Fatal("control: a table short of a row compares equal")
	}
	if ec := execConfig(); !slices.Equal(ec[len(ec)-len(want):], want) {
		t.Fatal("execConfig does not end with lefthook's rows")
	}
}

// The program table is read as the linker lays it out (programGroups), no
// longer built into a map whose construction refused a name listed twice:
// no name is in two groups (the first would hide the second), each
// programWhy name is listed, and a keyring tool is one whether the groups
// list it (loopguard: Guard, Keyring) or not (secret-tool). The control:
// a name listed twice is caught.
func TestProgramTable(t *testing.T) {
	dups := func(groups []programGroup) []string {
		seen := map[string]bool{}
		var out []string
		for _, g := range groups {
			for _, n := range g.names {
				if seen[n] {
					out = append(out, n)
				}
				seen[n] = true
			}
		}
		return out
	}
	if d := dups(programGroups); len(d) > 0 {
		t.Errorf("programs listed twice: %v", d)
	}
	withDup := append(slices.Clone(programGroups), programGroup{FileWriter, "x", []string{"bash"}})
	if len(dups(withDup)) != 1 {
		t.Fatal("control: a name listed twice is not caught")
	}
	for _, w := range programWhy {
		if p, ok := lookupName(w.name); !ok || p.Why != w.why {
			t.Errorf("%s: %+v, %v; programWhy says %q", w.name, p, ok, w.why)
		}
	}
	if p, ok := Lookup("loopguard"); !ok || p.Class != Guard || !p.Keyring {
		t.Errorf("loopguard: %+v, %v", p, ok)
	}
	if p, ok := Lookup("secret-tool"); !ok || p.Class != Guard || !p.Keyring || p.Why != keyringWhy {
		t.Errorf("secret-tool: %+v, %v", p, ok)
	}
	if p, ok := Lookup("/usr/bin/Bash5"); !ok || p.Class != Shell || p.Keyring {
		t.Errorf("bash: %+v, %v", p, ok)
	}
	if _, ok := Lookup("no-such-program"); ok {
		t.Error("an unlisted program is listed")
	}
	if !slices.Contains(Names(Guard), "secret-tool") || slices.Contains(Names(Shell), "secret-tool") {
		t.Error("Names: a keyring tool the groups do not list is a Guard")
	}
}
