//go:build linux

package confine

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The merges in gitmerge_linux.go are made onto the heads as the call
// leaves them, and a later call can change a head. The fortieth attack
// run's first call made a branch whose first commit removed the hook and
// gave a.txt the hook's content, and whose second changed a.txt (HEAD
// still had a.txt: no rename to follow); the next call committed the
// removal of a.txt on master, an ordinary commit; and the user's git
// cherry-pick side followed the rename into the hook. The same holds of a
// cherry-pick onto one of the user's other branches.
//
// What such a rename needs does not depend on the head but in one way, and
// that one any later call can give: git's merges pair a path the side
// merged onto removed with a path that side added, by content. So a
// commit's change at P (against the base the merge takes: the commit's
// parent for a cherry-pick, a rebase's pick or a stash pop, the commit
// itself for a revert) reaches executable configuration F only where the
// base lacks F, a branch has F, and git pairs the base's content at P with
// F's. Through a directory's rename, a path the change adds follows any
// path in a directory above it that git pairs so. So for each commit of
// the call's, the check asks git, as its diff pairs renames and copies
// (-C, each source free for every target, no limit), whether any content
// at a path the change touches, or beside one it adds, pairs with
// executable configuration some branch has and the base lacks; such a
// commit is held as one that changes that configuration, whatever the
// heads become.

// maxLikes bounds the sources times targets one check asks git to pair;
// past it the check holds what it could not look at.
const maxLikes = 1 << 18

// renameCase is one merge's sides as far as the check needs them: the
// commit judged, the base (the commit's parent for a cherry-pick, the
// commit for a revert) and the other side; each a commit, or "" for the
// empty tree (a root commit's parent).
type renameCase struct{ commit, base, theirs string }

// entry is a tree's entry: its mode, object and path.
type entry struct{ mode, id, rel string }

// renamedPaths adds to bad, for each of commits (new ones), the executable
// configuration that one of tips (the user's branches and HEAD) has and a
// merge of it could write through a rename, whatever the tip becomes.
// What rev-list gave of a commit (foreignCommits') is used, and read where
// it gave none.
func (g *gitRefs) renamedPaths(commits, tips []string, bad map[string][]string) error {
	parents := map[string][]string{}
	var read []string
	for _, c := range commits {
		if ps, ok := g.parents[c]; ok {
			parents[c] = ps
		} else {
			read = append(read, c)
		}
	}
	if len(read) > 0 {
		info, err := g.commitInfos(read)
		if err != nil {
			return err
		}
		for c, ci := range info {
			parents[c] = ci.parents
		}
	}
	isNew := func(c string) ([]string, bool) { ps, ok := parents[c]; return ps, ok }
	// Each case and the tips it is merged onto: not a tip the commit is on
	// through the call's commits (what that tip has beyond the base the
	// call's commits added, and each is judged), nor the base; onto its
	// parent, a revert's base lacks what the commit removed, so that is
	// asked only of a commit that removed executable configuration (or
	// one rev-list did not give).
	onto := map[renameCase][]string{}
	var cases []renameCase
	for _, x := range commits {
		ps, ok := parents[x]
		if !ok {
			continue
		}
		if len(ps) == 0 {
			ps = []string{""}
		}
		for _, p := range ps {
			for _, c := range []renameCase{{x, p, x}, {x, x, p}} {
				for _, t := range tips {
					_, walked := g.parents[x]
					if t == c.base || descends(isNew, x, t) || (t == p && walked && !g.drops[x]) || slices.Contains(onto[c], t) {
						continue
					}
					if onto[c] == nil {
						cases = append(cases, c)
					}
					onto[c] = append(onto[c], t)
				}
			}
		}
	}
	if len(cases) == 0 {
		return nil
	}
	d := &diffs{g: g}
	targets, err := g.addedConfig(d, cases, onto)
	if err != nil || len(targets) == 0 {
		return err
	}
	cases = slices.DeleteFunc(cases, func(c renameCase) bool { return len(targets[c.base]) == 0 })
	sources, err := g.renameSources(d, cases)
	if err != nil {
		return err
	}
	return g.pairRenames(cases, sources, targets, bad)
}

// diffs asks diff-tree --stdin for changes between commits (or the empty
// tree): a line of two commits is the second's changes to the first, one
// of trees the first's to the second, read for a commit whose other side
// is the empty tree.
type diffs struct {
	g     *gitRefs
	trees map[string]string
}

// lines gives diff-tree's input for the changes from each pair's first
// side to its second.
func (d *diffs) lines(pairs [][2]string) ([]string, error) {
	var need []string
	for _, p := range pairs {
		for _, s := range p {
			if _, ok := d.trees[s]; !ok && s != "" && (p[0] == "" || p[1] == "") {
				need = append(need, s)
			}
		}
	}
	if len(need) > 0 {
		info, err := d.g.commitInfos(need)
		if err != nil {
			return nil, err
		}
		if d.trees == nil {
			d.trees = map[string]string{}
		}
		for _, c := range need {
			ci, ok := info[c]
			if !ok {
				return nil, fmt.Errorf("no commit %s", c)
			}
			d.trees[c] = ci.tree
		}
	}
	var out []string
	for _, p := range pairs {
		if p[0] != "" && p[1] != "" {
			out = append(out, p[1]+" "+p[0])
			continue
		}
		tree := func(s string) string {
			if s == "" {
				return emptyTree(2 * d.g.idLen)
			}
			return d.trees[s]
		}
		out = append(out, tree(p[0])+" "+tree(p[1]))
	}
	return out, nil
}

// run has git give the changes of each pair (args added), and calls f with
// each change: its pair's index, its fields (the leading ':' dropped: old
// mode, new mode, old object, new object, status) and its one or two
// paths.
func (d *diffs) run(pairs [][2]string, args []string, f func(i int, meta, paths []string)) error {
	lines, err := d.lines(pairs)
	if err != nil || len(lines) == 0 {
		return err
	}
	out, err := d.g.gitIn(strings.Join(lines, "\n")+"\n", slices.Concat([]string{"diff-tree", "--stdin", "--always", "-r", "-z", "--raw"}, args)...)
	if err != nil {
		return err
	}
	return eachRaw(out, lines, f)
}

// addedConfig gives, for each case's base, the executable configuration
// (as tree entries) that a tip it is merged onto has and it lacks.
func (g *gitRefs) addedConfig(d *diffs, cases []renameCase, onto map[renameCase][]string) (map[string][]entry, error) {
	var pairs [][2]string
	for _, c := range cases {
		for _, t := range onto[c] {
			if p := [2]string{c.base, t}; !slices.Contains(pairs, p) {
				pairs = append(pairs, p)
			}
		}
	}
	targets := map[string][]entry{}
	err := d.run(pairs, []string{"--no-renames", "--diff-filter=A"}, func(i int, meta, paths []string) {
		base := pairs[i][0]
		if e := (entry{meta[1], meta[3], paths[0]}); g.protectedPath(e.rel) && !slices.Contains(targets[base], e) {
			targets[base] = append(targets[base], e)
		}
	})
	return targets, err
}

// renameSources gives, for each case, the base's entries git could pair
// with a path the side merged onto added: each the other side changes,
// removes or retypes, and each in a directory above one it adds.
func (g *gitRefs) renameSources(d *diffs, cases []renameCase) (map[renameCase][]entry, error) {
	var pairs [][2]string
	for _, c := range cases {
		if p := [2]string{c.base, c.theirs}; !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
	}
	byPair := map[[2]string][]entry{}
	dirs := map[string][]string{} // a base's top directories with a path added below
	err := d.run(pairs, []string{"--no-renames"}, func(i int, meta, paths []string) {
		base := pairs[i][0]
		if meta[4] == "A" {
			if top, _, ok := strings.Cut(paths[0], "/"); ok && !slices.Contains(dirs[base], top) {
				dirs[base] = append(dirs[base], top)
			}
			return
		}
		byPair[pairs[i]] = append(byPair[pairs[i]], entry{meta[0], meta[2], paths[0]})
	})
	if err != nil {
		return nil, err
	}
	below := map[string][]entry{}
	for base, tops := range dirs {
		if base == "" {
			continue // the empty tree
		}
		list, err := g.gitOut(nil, slices.Concat([]string{"ls-tree", "-r", "-z", "--full-tree", base, "--"}, tops)...)
		if err != nil {
			return nil, err
		}
		for ent := range strings.SplitSeq(string(list), "\x00") {
			meta, rel, ok := strings.Cut(ent, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 {
				below[base] = append(below[base], entry{f[0], f[2], rel})
			}
		}
	}
	sources := map[renameCase][]entry{}
	for _, c := range cases {
		sources[c] = slices.Concat(byPair[[2]string{c.base, c.theirs}], below[c.base])
	}
	return sources, nil
}

// pairRenames asks git which of each case's sources it pairs with which
// of its base's targets, and adds the targets paired to bad for the case's
// commit.
func (g *gitRefs) pairRenames(cases []renameCase, sources map[renameCase][]entry, targets map[string][]entry, bad map[string][]string) error {
	tmp, env, err := g.privateObjects()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var files, want, pairs []string
	tree := func(prefix string, ents []entry) string {
		var data []byte
		for i, e := range ents {
			raw, derr := hex.DecodeString(e.id)
			if derr != nil && err == nil {
				err = derr
			}
			data = append(data, fmt.Sprintf("%s %s%07d\x00", strings.TrimPrefix(e.mode, "0"), prefix, i)...)
			data = append(data, raw...)
		}
		id := objectID("tree", data, 2*g.idLen)
		if slices.Contains(want, id) {
			return id
		}
		name := filepath.Join(tmp, fmt.Sprint(len(files)))
		files, want = append(files, name), append(want, id)
		if err == nil {
			err = os.WriteFile(name, data, 0o600)
		}
		return id
	}
	likes := 0
	of := map[string][]renameCase{} // "SOURCES TARGETS": the cases
	named := map[string][]entry{}   // a targets tree: its entries
	for _, c := range cases {
		var src []entry
		for _, e := range sources[c] {
			if (e.mode == "100644" || e.mode == "100755" || e.mode == "120000") && !slices.ContainsFunc(src, func(s entry) bool { return s.mode == e.mode && s.id == e.id }) {
				src = append(src, e)
			}
		}
		if len(src) == 0 {
			continue
		}
		if likes += len(src) * len(targets[c.base]); likes > maxLikes {
			return fmt.Errorf("more than %d contents to pair with executable configuration", maxLikes)
		}
		s, t := tree("s", src), tree("t", targets[c.base])
		named[t] = targets[c.base]
		pair := s + " " + t
		if of[pair] == nil {
			pairs = append(pairs, pair)
		}
		of[pair] = append(of[pair], c)
	}
	if err != nil {
		return err
	}
	if len(pairs) == 0 {
		return nil
	}
	out, err := g.runGit(env, strings.Join(files, "\n")+"\n", []string{"hash-object", "-t", "tree", "-w", "--stdin-paths"})
	if err != nil {
		return err
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, want) {
		return fmt.Errorf("git hash-object made %d trees other than asked", len(got))
	}
	out, err = g.runGit(env, strings.Join(pairs, "\n")+"\n", []string{"diff-tree", "--stdin", "--always", "-r", "-z", "--raw", "-C", "-M", "-l0"})
	if err != nil {
		return err
	}
	return eachRaw(out, pairs, func(i int, meta, paths []string) {
		if len(paths) != 2 || (meta[4][0] != 'R' && meta[4][0] != 'C') {
			return
		}
		pair := pairs[i]
		_, t, _ := strings.Cut(pair, " ")
		var k int
		if _, err := fmt.Sscanf(paths[1], "t%07d", &k); err != nil || k >= len(named[t]) {
			return
		}
		for _, c := range of[pair] {
			if rel := named[t][k].rel; !slices.Contains(bad[c.commit], rel) {
				bad[c.commit] = append(bad[c.commit], rel)
			}
		}
	})
}

// privateObjects makes a directory whose objects/ git writes to, reading
// the repository's store as an alternate, so that nothing is added to the
// user's; it gives the directory (the caller removes it) and the
// environment that has git use it.
func (g *gitRefs) privateObjects() (string, []string, error) {
	tmp, err := os.MkdirTemp("", "loopguard-merges-")
	if err != nil {
		return "", nil, err
	}
	// git takes a directory for a repository only where its objects are.
	if err := os.Mkdir(filepath.Join(tmp, "objects"), 0o700); err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return tmp, []string{"GIT_OBJECT_DIRECTORY=" + filepath.Join(tmp, "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(g.project, ".git", "objects"), "GIT_NO_REPLACE_OBJECTS=1"}, nil
}

// eachRaw calls f with each change of diff-tree --stdin --always -z
// --raw's output (out) for its input lines (lines, in order: each gives a
// line of its own, its commit's name or the line of trees, then its
// changes): the line's index, the change's fields (the leading ':'
// dropped: old mode, new mode, old object, new object, status) and its one
// or two paths.
func eachRaw(out []byte, lines []string, f func(i int, meta, paths []string)) error {
	toks := strings.Split(string(out), "\x00")
	at := -1
	next := func(head string) error {
		if at+1 >= len(lines) || (head != lines[at+1] && head != strings.Fields(lines[at+1])[0]) {
			return fmt.Errorf("git diff-tree gave %q", head)
		}
		at++
		return nil
	}
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if isObjectID(tok) {
			// A line of two commits: the first's name, alone.
			if err := next(tok); err != nil {
				return err
			}
			continue
		}
		// A line of trees, then, in the same field, the first change.
		for head, rest, ok := strings.Cut(tok, "\n"); ok; head, rest, ok = strings.Cut(tok, "\n") {
			if err := next(head); err != nil {
				return err
			}
			tok = rest
		}
		meta, ok := strings.CutPrefix(tok, ":")
		if !ok {
			if tok != "" {
				return fmt.Errorf("git diff-tree gave %q", tok)
			}
			continue
		}
		fields := strings.Fields(meta)
		if len(fields) != 5 || at < 0 {
			return fmt.Errorf("git diff-tree gave %q", tok)
		}
		n := 1
		if fields[4][0] == 'R' || fields[4][0] == 'C' {
			n = 2
		}
		if i+n >= len(toks) {
			return fmt.Errorf("git diff-tree gave %q with no path", tok)
		}
		f(at, fields, toks[i+1:i+1+n])
		i += n
	}
	if at != len(lines)-1 {
		return fmt.Errorf("git diff-tree answered %d of %d", at+1, len(lines))
	}
	return nil
}
