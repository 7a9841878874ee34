//go:build linux

package confine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"golang.org/x/sys/unix"
)

// The merges in gitmerge_linux.go are made onto the heads as the call
// leaves them, and a later call can change a head. The fortieth attack
// run's first call made a branch whose first commit removed the hook and
// gave a.txt the hook's content, and whose second changed a.txt (HEAD
// still had a.txt: no rename to follow); the next call committed the
// removal of a.txt on master, an ordinary commit; and the user's git
// cherry-pick side followed the rename into the hook. The same held of a
// cherry-pick onto one of the user's other branches, a remote's branch, a
// tag, and of configuration in the worktree no commit had yet (the
// forty-first run: an untracked .envrc's content as a.txt, .envrc
// committed later).
//
// What such a rename needs does not depend on the head but in one way, and
// that one any later call can give: git's merges pair a path the side
// merged onto removed with a path that side added, by content. So a
// commit's change at P (against the base the merge takes: the commit's
// parent for a cherry-pick, a rebase's pick or a stash pop, the commit
// itself for a revert) reaches executable configuration F only where the
// base lacks F, what is merged onto has F, and git pairs the base's
// content at P with F's. Through a directory's rename, a path the change
// adds follows any path in a directory above it that git pairs so. So the
// check gathers the executable configuration that any ref (but those it
// holds itself) or the worktree has, and for each commit of the call's
// asks git, as its diff pairs renames and copies (-C, each source free for
// every target, no limit), whether any content at a path the change
// touches, or beside one it adds, pairs with such configuration at a path
// the base lacks; such a commit is held as one that changes it, whatever
// the heads become. Configuration a user adds later, with content no ref
// and no file had when the call ended, is not known to it.
//
// What a ref's tree holds where configuration could be is kept in the
// scratch directory (gitexec/, by the ref's object and what could be
// configuration), which no confined program writes: a tag's is listed
// once, and a commit of the call's is its parent's with its own changes.

// maxLikes bounds the sources times targets one check asks git to pair;
// past it the check holds what it could not look at.
const maxLikes = 1 << 18

// maxWorktreeConfig bounds the files of executable configuration in the
// worktree the check reads; past it, it holds what it could not look at.
const maxWorktreeConfig = 1 << 15

// renameCase is one merge's sides as far as the check needs them: the
// commit judged, the base (the commit's parent for a cherry-pick, the
// commit for a revert) and the other side; each a commit, or "" for the
// empty tree (a root commit's parent).
type renameCase struct{ commit, base, theirs string }

// entry is a tree's entry: its mode, object and path.
type entry struct{ mode, id, rel string }

// change is a change diff-tree gave of a commit: its status, and the new
// mode and object (zeros where it removed the path).
type change struct{ status, mode, id, rel string }

// renamedPaths adds to bad, for each of commits (new ones, each with what
// foreignCommits' rev-list and diff-tree gave; read where they gave
// none), the executable configuration that a ref or the worktree has and
// a merge of it could write through a rename, whatever the refs become.
func (g *gitRefs) renamedPaths(commits []string, bad map[string][]string) error {
	if g.renamed == nil {
		g.renamed = map[string][]string{}
	}
	return judgeOnce(g.renamed, commits, bad, g.renamedFresh)
}

// renamedFresh is renamedPaths for commits not judged before in this
// check.
func (g *gitRefs) renamedFresh(commits []string, bad map[string][]string) error {
	if len(commits) == 0 {
		return nil
	}
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
	known, err := g.tipConfig(g.oldTips(parents))
	if err != nil {
		return err
	}
	// A commit of the call's: its parent's, with its own changes.
	for _, c := range commits {
		g.commitConfig(c, parents, known)
	}
	g.keepConfig(commits, known)
	var all []entry
	seen := map[entry]bool{}
	for _, ents := range known {
		for _, e := range ents {
			if !seen[e] && g.protectedPath(e.rel) {
				seen[e] = true
				all = append(all, e)
			}
		}
	}
	wt, err := g.worktreeConfig()
	if err != nil {
		return err
	}
	for _, e := range wt {
		if !seen[e] {
			seen[e] = true
			all = append(all, e)
		}
	}
	if len(all) == 0 {
		return nil
	}
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
			cases = append(cases, renameCase{x, p, x}, renameCase{x, x, p})
		}
	}
	targets, err := g.lacking(cases, all, known)
	if err != nil || len(targets) == 0 {
		return err
	}
	cases = slices.DeleteFunc(cases, func(c renameCase) bool { return len(targets[c.base]) == 0 })
	sources, err := g.renameSources(&diffs{g: g}, cases)
	if err != nil {
		return err
	}
	return g.pairRenames(cases, sources, targets, bad)
}

// oldTips are what the refs named before the call (but what an earlier
// check held), HEAD before it, and what a ref names after it that is no
// commit of the call's: each object, as named (a tag's own).
func (g *gitRefs) oldTips(isNew map[string][]string) []string {
	var tips []string
	seen := map[string]bool{}
	tip := func(id string) {
		if _, ok := isNew[id]; !ok && !seen[id] {
			seen[id] = true
			tips = append(tips, id)
		}
	}
	for _, refs := range []map[string]string{g.refs, g.after} {
		for name, v := range refs {
			if f := strings.Fields(v); len(f) > 0 && isObjectID(f[0]) && !strings.HasPrefix(name, "refs/loopguard-held/") {
				tip(f[0])
			}
		}
	}
	for _, h := range g.heads() {
		tip(h)
	}
	slices.Sort(tips)
	return tips
}

// configKey is what a record in gitexec/ is good for beside its object:
// the format, what could be configuration by name, and the fixed
// protected paths of this project.
func (g *gitRefs) configKey() string {
	h := sha256.New()
	h.Write([]byte("gitexec 1\x00" + policy.ProtectedNamesDigest() + "\x00"))
	for _, p := range slices.Sorted(maps.Keys(g.fixed)) {
		h.Write([]byte(strings.TrimPrefix(p, g.project+"/") + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// tipConfig gives each of tips' entries where configuration could be
// (maybeProtected): from its record in gitexec/, or listed (one git for
// all) and recorded. An object that is no commit and no tag of one gives
// none.
func (g *gitRefs) tipConfig(tips []string) (map[string][]entry, error) {
	known := map[string][]entry{}
	key := g.configKey()
	var miss []string
	for _, t := range tips {
		if ents, ok := g.readRecord(t, key); ok {
			known[t] = ents
		} else {
			miss = append(miss, t)
		}
	}
	if len(miss) == 0 {
		return known, nil
	}
	var ask strings.Builder
	for _, t := range miss {
		ask.WriteString(t + "^{tree}\n")
	}
	out, err := g.gitIn(ask.String(), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	answers := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(answers) != len(miss) {
		return nil, fmt.Errorf("git cat-file answered %d of %d", len(answers), len(miss))
	}
	var lines []string
	var listed []string
	for i, t := range miss {
		if f := strings.Fields(answers[i]); len(f) == 2 && f[1] == "tree" && isObjectID(f[0]) {
			lines = append(lines, emptyTree(2*g.idLen)+" "+f[0])
			listed = append(listed, t)
		} else {
			known[t] = nil
			g.writeRecord(t, key, nil)
		}
	}
	// Only where configuration could be (git walks each tree whole all
	// the same), some tips at a time, each recorded as it is read: a
	// repository of many tags is read over more than one call, and each
	// call until then holds what it committed.
	start := time.Now()
	spec := g.candidatePathspecs()
	for len(lines) > 0 {
		if time.Since(start) > maxTipListing {
			return nil, fmt.Errorf("the configuration of %d refs is not read yet (each +git call reads more of it)", len(lines))
		}
		n := min(len(lines), tipsAtOnce)
		chunk, tips := lines[:n], listed[:n]
		lines, listed = lines[n:], listed[n:]
		out, err := g.gitIn(strings.Join(chunk, "\n")+"\n", slices.Concat([]string{"diff-tree", "--stdin", "--always", "-r", "-z", "--raw", "--no-renames", "--"}, spec)...)
		if err != nil {
			return nil, err
		}
		err = eachRaw(out, chunk, func(i int, meta, paths []string) {
			if g.maybeProtected(paths[0]) {
				known[tips[i]] = append(known[tips[i]], entry{meta[1], meta[3], paths[0]})
			}
		})
		if err != nil {
			return nil, err
		}
		for _, t := range tips {
			g.writeRecord(t, key, known[t])
		}
	}
	return known, nil
}

// tipsAtOnce is how many refs' trees one git lists; maxTipListing, how
// long one check lists them before it holds what it could not look at.
const (
	tipsAtOnce    = 64
	maxTipListing = 4 * time.Second
)

// candidatePathspecs are git's pathspecs of where configuration could be
// (maybeProtected): a name that starts with ".", one of
// policy.CandidateNames (either case), at any depth, and below, and the
// fixed protected paths.
func (g *gitRefs) candidatePathspecs() []string {
	spec := []string{":(glob)**/.*", ":(glob)**/.*/**"}
	for _, n := range policy.CandidateNames() {
		spec = append(spec, ":(glob,icase)**/"+n, ":(glob,icase)**/"+n+"/**")
	}
	for _, p := range slices.Sorted(maps.Keys(g.fixed)) {
		if r, ok := strings.CutPrefix(p, g.project+"/"); ok {
			spec = append(spec, ":(literal)"+r)
		}
	}
	return spec
}

// commitConfig adds to known the entries of c, a commit of the call's, where
// configuration could be: its parent's (known) with its own changes
// (diff-tree's, against its one parent), where both are known.
func (g *gitRefs) commitConfig(c string, parents map[string][]string, known map[string][]entry) {
	if _, ok := known[c]; ok {
		return
	}
	changes, ok := g.changes[c]
	ps := parents[c]
	if !ok && g.parents[c] == nil || len(ps) > 1 {
		return // not walked, or a merge: its changes are against which parent?
	}
	var ents []entry
	if len(ps) == 1 {
		if _, isNew := parents[ps[0]]; isNew {
			g.commitConfig(ps[0], parents, known)
		}
		base, ok := known[ps[0]]
		if !ok {
			return
		}
		ents = slices.Clone(base)
	}
	for _, ch := range changes {
		ents = slices.DeleteFunc(ents, func(e entry) bool { return e.rel == ch.rel })
		if ch.status != "D" {
			ents = append(ents, entry{ch.mode, ch.id, ch.rel})
		}
	}
	known[c] = ents
}

// keepConfig records what known has of each commit of the call's: the
// next call's HEAD before it is one.
func (g *gitRefs) keepConfig(commits []string, known map[string][]entry) {
	key := g.configKey()
	for _, c := range commits {
		if ents, ok := known[c]; ok {
			g.writeRecord(c, key, ents)
		}
	}
}

// readRecord is gitexec/'s record of object id (nil, false where there is
// none, or it is not one this wrote).
func (g *gitRefs) readRecord(id, key string) ([]entry, bool) {
	if g.scratch == "" {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(g.scratch, gitexecDir, id+"-"+key))
	if err != nil {
		return nil, false
	}
	rest, ok := bytes.CutPrefix(data, []byte("gitexec\x00"))
	if !ok {
		return nil, false
	}
	var ents []entry
	for len(rest) > 0 {
		rec, tail, ok := bytes.Cut(rest, []byte{0})
		meta, rel, ok2 := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || !ok2 || len(f) != 2 || !isObjectID(f[1]) {
			return nil, false
		}
		ents = append(ents, entry{f[0], f[1], rel})
		rest = tail
	}
	return ents, true
}

// writeRecord keeps ents as object id's record (whole or not at all:
// fsx.WriteFile); a record not written is listed again next time.
func (g *gitRefs) writeRecord(id, key string, ents []entry) {
	if g.scratch == "" {
		return
	}
	dir := filepath.Join(g.scratch, gitexecDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return
	}
	data := []byte("gitexec\x00")
	for _, e := range ents {
		data = append(data, e.mode+" "+e.id+"\t"+e.rel+"\x00"...)
	}
	_ = fsx.WriteFile(filepath.Join(dir, id+"-"+key), data, 0o600, false)
}

// worktreeConfig is the worktree's executable configuration before the
// call (the plan's held entries, a directory's files below it but a git
// directory's), each as git would store it.
func (g *gitRefs) worktreeConfig() ([]entry, error) {
	if g.wtRead {
		return g.wt, nil // read once a check
	}
	var out []entry
	var visit func(rel string, depth int) error
	visit = func(rel string, depth int) error {
		if len(out) > maxWorktreeConfig || depth > 64 {
			return fmt.Errorf("more than %d files of executable configuration in the worktree", maxWorktreeConfig)
		}
		data, mode, err := g.worktreeData(rel)
		if err != nil {
			return err
		}
		isDir := mode == "40000"
		if mode != "" && !isDir {
			e := entry{mode, blobID(data, 2*g.idLen), rel}
			out = append(out, e)
			// No object of the repository's, perhaps (an untracked
			// .envrc): git pairs it from the merges' own store.
			if g.wtData == nil {
				g.wtData = map[string][]byte{}
			}
			g.wtData[e.id] = data
			return nil
		}
		if !isDir || path.Base(rel) == ".git" || g.isGitDirAt(rel) {
			return nil
		}
		fd, err := openBeneath(g.root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return nil // gone
		}
		f := os.NewFile(uintptr(fd), rel)
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := visit(rel+"/"+n, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, h := range g.held {
		rel, ok := strings.CutPrefix(h, g.project+"/")
		if !ok || slices.Contains(strings.Split(rel, "/"), ".git") {
			continue // what git stores of a .git is nothing
		}
		if err := visit(rel, 0); err != nil {
			return nil, err
		}
	}
	g.wt, g.wtRead = out, true
	return out, nil
}

// isGitDirAt reports whether the worktree's directory rel is a git
// directory (HEAD and objects/ in it): what git stores of it is nothing.
func (g *gitRefs) isGitDirAt(rel string) bool {
	_, err1 := fstatBeneath(g.root, rel+"/HEAD")
	_, err2 := fstatBeneath(g.root, rel+"/objects")
	return err1 == nil && err2 == nil
}

// lacking gives, for each case's base, the entries of all at a path the
// base lacks: from known where it is there, else asked of git (one for
// all).
func (g *gitRefs) lacking(cases []renameCase, all []entry, known map[string][]entry) (map[string][]entry, error) {
	targets := map[string][]entry{}
	var ask []string
	var asked [][2]string // base, path
	isAsked := map[[2]string]bool{}
	seen := map[string]bool{}
	for _, c := range cases {
		b := c.base
		if seen[b] {
			continue
		}
		seen[b] = true
		if b == "" {
			targets[b] = all // the empty tree lacks every path
			continue
		}
		ents, ok := known[b]
		for _, e := range all {
			switch {
			case ok && !slices.ContainsFunc(ents, func(k entry) bool { return k.rel == e.rel }):
				targets[b] = append(targets[b], e)
			case !ok && !isAsked[[2]string{b, e.rel}]:
				isAsked[[2]string{b, e.rel}] = true
				ask = append(ask, b+":"+e.rel)
				asked = append(asked, [2]string{b, e.rel})
			}
		}
	}
	if len(ask) == 0 {
		return targets, nil
	}
	out, err := g.gitIn(strings.Join(ask, "\n")+"\n", "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, err
	}
	answers := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(answers) != len(ask) {
		return nil, fmt.Errorf("git cat-file answered %d of %d", len(answers), len(ask))
	}
	for i, a := range answers {
		if !strings.HasSuffix(a, " missing") {
			continue
		}
		b, rel := asked[i][0], asked[i][1]
		for _, e := range all {
			if e.rel == rel {
				targets[b] = append(targets[b], e)
			}
		}
	}
	return targets, nil
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
		had := map[[2]string]bool{}
		for _, e := range sources[c] {
			if k := [2]string{e.mode, e.id}; (e.mode == "100644" || e.mode == "100755" || e.mode == "120000") && !had[k] {
				had[k] = true
				src = append(src, e)
			}
		}
		if len(src) == 0 {
			continue
		}
		// git pairs a link only with its like (exact): what it compares
		// is files with files.
		regular := func(ents []entry) int {
			n := 0
			for _, e := range ents {
				if e.mode != "120000" {
					n++
				}
			}
			return n
		}
		if likes += regular(src) * regular(targets[c.base]); likes > maxLikes {
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
	written := map[string]bool{}
	for _, c := range cases {
		for _, e := range targets[c.base] {
			if data, ok := g.wtData[e.id]; ok && !written[e.id] {
				written[e.id] = true
				if err := writeLooseIn(filepath.Join(tmp, "objects"), e.id, data); err != nil {
					return err
				}
			}
		}
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

// writeLooseIn writes the blob data as the loose object id in the object
// directory objects (the merges' own, new: nothing there to replace).
func writeLooseIn(objects, id string, data []byte) error {
	z, err := looseBlob(data)
	if err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(objects, id[:2]), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.WriteFile(filepath.Join(objects, id[:2], id[2:]), z, 0o400)
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
