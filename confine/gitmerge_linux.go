//go:build linux

package confine

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A commit whose own change touches no executable configuration can still
// write it when the user's git merges it: git's merges match paths by
// rename, so a commit of the call's that holds the hook's content as
// notes.sh, and a child that changes notes.sh, have the user's cherry-pick,
// revert, rebase, stash pop or merge of the child write the change into
// .githooks/pre-commit (the thirty-seventh attack run: each of those ran
// the call's hook; a root commit did it with nothing deleted anywhere). A
// directory rename and a subtree shift do the same. So the check asks
// git's own merge (merge-tree --write-tree, ort, as the user's git runs
// it) what each of those would write, against HEAD as it was before the
// call and as it is after: a merge's result whose executable configuration
// is content that neither the worktree has nor either side had at that
// path came from elsewhere, and the commit is held like one that changes
// it. Nothing is written to the user's object store: the merges' commits
// and trees go to a directory of their own, which reads the store as an
// alternate.

// maxMerges bounds the merges one check asks git for; past it the check
// holds what it could not look at.
const maxMerges = 512

// merge is one of the user's git operations, as git's merge runs it: a
// three-way merge of trees (base, ours, theirs), or with base "" a merge
// of the commits ours and theirs, from their merge base.
type merge struct{ base, ours, theirs string }

// commitInfo is a commit's tree and parents.
type commitInfo struct {
	tree    string
	parents []string
}

// mergedPaths adds to bad, for each of the commits (new ones, each with
// what rev-list gave), the executable configuration the user's merges of
// it would write with content from elsewhere.
func (g *gitRefs) mergedPaths(commits []string, heads []string, bad map[string][]string) error {
	// A commit the refs' look merged is not merged again for the
	// reflogs' (the thirty-ninth attack run's 200 commits on a branch
	// asked 398 merges, then 993 for the reflogs, past maxMerges).
	if key := strings.Join(heads, " "); g.merged == nil || g.mergedHeads != key {
		g.merged, g.mergedHeads = map[string][]string{}, key
	}
	return judgeOnce(g.merged, commits, bad, func(fresh []string, found map[string][]string) error {
		return g.mergeFresh(fresh, heads, found)
	})
}

// judgeOnce adds to bad what judge finds of commits (each with the paths
// it found), judging only those memo has no answer for, and keeps each
// answer in memo: a check looks at the refs' commits and then at the
// reflogs', which are mostly the same ones.
func judgeOnce(memo map[string][]string, commits []string, bad map[string][]string, judge func(fresh []string, found map[string][]string) error) error {
	var fresh []string
	for _, c := range commits {
		if _, ok := memo[c]; !ok {
			fresh = append(fresh, c)
		}
	}
	found := map[string][]string{}
	if err := judge(fresh, found); err != nil {
		return err
	}
	for _, c := range fresh {
		memo[c] = found[c]
	}
	for _, c := range commits {
		for _, p := range memo[c] {
			if !slices.Contains(bad[c], p) {
				bad[c] = append(bad[c], p)
			}
		}
	}
	return nil
}

// mergeFresh is mergedPaths for commits not merged before.
func (g *gitRefs) mergeFresh(commits []string, heads []string, bad map[string][]string) error {
	if len(commits) == 0 || g.onHeads(commits, heads) {
		return nil
	}
	info, err := g.mergeInfos(commits, heads)
	if err != nil {
		return err
	}
	r := &merging{g: g, info: info, hexLen: 2 * g.idLen, from: map[merge][]string{}}
	if err := r.plan(commits, heads); err != nil || len(r.merges) == 0 {
		return err
	}
	if len(r.merges) > maxMerges {
		return fmt.Errorf("%d merges to look at, more than %d", len(r.merges), maxMerges)
	}
	tmp, env, err := g.privateObjects()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r.tmp, r.env = tmp, env
	results, err := r.run()
	if err != nil {
		return err
	}
	changes, err := r.changes(results)
	if err != nil || len(changes) == 0 {
		return err
	}
	return r.judge(changes, bad)
}

// mergeInfos reads the commits and heads, and the first parents outside
// them (a rebase's onto), in two gits.
func (g *gitRefs) mergeInfos(commits, heads []string) (map[string]commitInfo, error) {
	info, err := g.commitInfos(slices.Concat(commits, heads))
	if err != nil {
		return nil, err
	}
	var more []string
	for _, c := range commits {
		if ci, ok := info[c]; ok && len(ci.parents) > 0 {
			if _, ok := info[ci.parents[0]]; !ok {
				more = append(more, ci.parents[0])
			}
		}
	}
	if len(more) > 0 {
		parents, err := g.commitInfos(more)
		if err != nil {
			return nil, err
		}
		maps.Copy(info, parents)
	}
	return info, nil
}

// merging is one check's merges: what they are, the commits each judges,
// and where git makes them.
type merging struct {
	g      *gitRefs
	info   map[string]commitInfo
	hexLen int
	merges []merge
	from   map[merge][]string // the commits each merge judges
	tmp    string             // the merges' directory (objects/ their store)
	env    []string
}

// found is a protected path a merge's result changes from ours, with the
// object it gives it.
type found struct {
	m   int
	rel string
	id  string
}

// plan lists the merges of each commit onto each head: a cherry-pick (a
// rebase's pick, a stash pop), a revert, a merge; none whose result is one
// side's.
func (r *merging) plan(commits, heads []string) error {
	isNew := map[string]bool{}
	for _, c := range commits {
		isNew[c] = true
	}
	parents := func(c string) ([]string, bool) { return r.info[c].parents, isNew[c] }
	add := func(m merge, c string) {
		if m.base != "" && (m.base == m.ours || m.base == m.theirs || m.ours == m.theirs) {
			return // the result is one side's, path by path
		}
		if _, ok := r.from[m]; !ok {
			r.merges = append(r.merges, m)
		}
		r.from[m] = append(r.from[m], c)
	}
	for _, x := range commits {
		xi, ok := r.info[x]
		if !ok {
			continue
		}
		parent := emptyTree(r.hexLen)
		if len(xi.parents) > 0 {
			pi, ok := r.info[xi.parents[0]]
			if !ok {
				return fmt.Errorf("no commit %s, the parent of %s", xi.parents[0], x)
			}
			parent = pi.tree
		}
		for _, o := range heads {
			oi, ok := r.info[o]
			if !ok || descends(parents, x, o) {
				continue // o holds x's change already
			}
			add(merge{parent, oi.tree, xi.tree}, x) // cherry-pick, rebase, stash pop
			add(merge{xi.tree, oi.tree, parent}, x) // revert
			if !descends(parents, o, x) {
				add(merge{"", o, x}, x) // merge
			}
		}
	}
	return nil
}

// run has git make each merge, and gives each result's tree. A three-way
// merge of trees is a merge of two commits whose one parent is a commit of
// the base: made in tmp.
func (r *merging) run() ([]string, error) {
	var stdin strings.Builder
	var files, want []string
	var err error
	commit := func(tree, parent string) string {
		text := "tree " + tree + "\n"
		if parent != "" {
			text += "parent " + parent + "\n"
		}
		text += "author loopguard <loopguard> 0 +0000\ncommitter loopguard <loopguard> 0 +0000\n\nloopguard\n"
		name := filepath.Join(r.tmp, strconv.Itoa(len(files)))
		files = append(files, name)
		if err == nil {
			err = os.WriteFile(name, []byte(text), 0o600)
		}
		id := objectID("commit", []byte(text), r.hexLen)
		want = append(want, id)
		return id
	}
	for _, m := range r.merges {
		a, b := m.ours, m.theirs
		if m.base != "" {
			base := commit(m.base, "")
			a, b = commit(m.ours, base), commit(m.theirs, base)
		}
		stdin.WriteString(a + " " + b + "\n")
	}
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		out, err := r.g.runGit(r.env, strings.Join(files, "\n")+"\n", []string{"hash-object", "-t", "commit", "-w", "--stdin-paths"})
		if err != nil {
			return nil, err
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, want) {
			return nil, fmt.Errorf("git hash-object made %d commits other than asked", len(got))
		}
	}
	out, err := r.g.runGit(r.env, stdin.String(), []string{"merge-tree", "--stdin", "-z", "--write-tree", "--no-messages", "--name-only", "--allow-unrelated-histories"})
	if err != nil {
		return nil, err
	}
	// Each merge: its status, its tree, the conflicted names, an empty
	// field.
	var results []string
	toks := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(toks) && len(results) < len(r.merges); {
		if !isObjectID(toks[i+1]) {
			return nil, fmt.Errorf("git merge-tree gave %q", toks[i+1])
		}
		results = append(results, toks[i+1])
		for i += 2; i < len(toks) && toks[i] != ""; i++ {
		}
		i++
	}
	if len(results) != len(r.merges) {
		return nil, fmt.Errorf("git merge-tree answered %d of %d merges", len(results), len(r.merges))
	}
	return results, nil
}

// tree is a merge side's tree (a commit's, for a merge of commits).
func (r *merging) tree(m merge, side string) string {
	if m.base == "" {
		return r.info[side].tree
	}
	return side
}

// changes are the protected paths each result changes from ours, as the
// user's worktree would.
func (r *merging) changes(results []string) ([]found, error) {
	var pairs []string
	pairOf := map[string][]int{} // "OURS RESULT": the merges
	for i, m := range r.merges {
		pair := r.tree(m, m.ours) + " " + results[i]
		if pairOf[pair] == nil {
			pairs = append(pairs, pair)
		}
		pairOf[pair] = append(pairOf[pair], i)
	}
	diff, err := r.g.runGit(r.env, strings.Join(pairs, "\n")+"\n", []string{"diff-tree", "--stdin", "-r", "-z", "--raw", "--no-renames", "--diff-filter=AMT"})
	if err != nil {
		return nil, err
	}
	var changes []found
	err = eachRaw(diff, pairs, func(i int, meta, paths []string) {
		if r.g.protectedPath(paths[0]) {
			for _, m := range pairOf[pairs[i]] {
				changes = append(changes, found{m, paths[0], meta[3]})
			}
		}
	})
	return changes, err
}

// judge adds to bad each change whose content neither the worktree has
// nor either side had at that path (a side's own change there is judged as
// that commit's), for each commit its merge judges.
func (r *merging) judge(changes []found, bad map[string][]string) error {
	var ask strings.Builder
	for _, c := range changes {
		m := r.merges[c.m]
		theirs := r.tree(m, m.theirs)
		ask.WriteString(theirs + ":" + c.rel + "\n")
		base := m.base
		if base == "" {
			base = theirs
		}
		ask.WriteString(base + ":" + c.rel + "\n")
	}
	had, err := r.g.runGit(r.env, ask.String(), []string{"cat-file", "--batch-check=%(objectname)"})
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(had), "\n"), "\n")
	if len(lines) != 2*len(changes) {
		return fmt.Errorf("git cat-file answered %d of %d", len(lines), 2*len(changes))
	}
	for i, c := range changes {
		if lines[2*i] == c.id || lines[2*i+1] == c.id || r.g.worktreeHas(c.id, c.rel) {
			continue
		}
		for _, x := range r.from[r.merges[c.m]] {
			if !slices.Contains(bad[x], c.rel) {
				bad[x] = append(bad[x], c.rel)
			}
		}
	}
	return nil
}

// onHeads reports whether each of commits is, for each of heads, one the
// head holds already or a child of the head: every merge the user's git
// could make of it there has one side's result, and no git is asked (a
// commit on HEAD, the everyday case). By the parents rev-list gave.
func (g *gitRefs) onHeads(commits, heads []string) bool {
	parents := func(c string) ([]string, bool) { ps, ok := g.parents[c]; return ps, ok }
	for _, c := range commits {
		ps, ok := g.parents[c]
		if !ok {
			return false
		}
		for _, h := range heads {
			if !descends(parents, c, h) && (len(ps) == 0 || ps[0] != h) {
				return false
			}
		}
	}
	return true
}

// descends reports whether a is b or one of b's ancestors through the
// call's commits, whose parents parents gives (ok false for a commit not
// the call's: an older commit is none of a new one's descendants).
func descends(parents func(string) ([]string, bool), a, b string) bool {
	seen := map[string]bool{}
	for stack := []string{b}; len(stack) > 0; {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c == a {
			return true
		}
		ps, isNew := parents(c)
		if seen[c] || !isNew {
			continue
		}
		seen[c] = true
		stack = append(stack, ps...)
	}
	return false
}

// commitInfos reads each of commits (as stored: no replace object) for
// its tree and parents.
func (g *gitRefs) commitInfos(commits []string) (map[string]commitInfo, error) {
	commits = slices.Compact(slices.Sorted(slices.Values(commits)))
	out, err := g.runGit([]string{"GIT_NO_REPLACE_OBJECTS=1"}, strings.Join(commits, "\n")+"\n", []string{"cat-file", "--batch"})
	if err != nil {
		return nil, err
	}
	infos := map[string]commitInfo{}
	r := bufio.NewReader(bytes.NewReader(out))
	for range commits {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %v", err)
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			continue // missing
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || size >= len(out) {
			return nil, fmt.Errorf("git cat-file gave %q", head)
		}
		body := make([]byte, size+1)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("git cat-file: %v", err)
		}
		if f[1] != "commit" {
			continue
		}
		var ci commitInfo
		for line := range strings.SplitSeq(string(body[:size]), "\n") {
			if line == "" {
				break
			}
			if t, ok := strings.CutPrefix(line, "tree "); ok {
				ci.tree = t
			} else if p, ok := strings.CutPrefix(line, "parent "); ok {
				ci.parents = append(ci.parents, p)
			}
		}
		if isObjectID(ci.tree) {
			infos[f[0]] = ci
		}
	}
	return infos, nil
}

// objectID is the name git gives an object of kind with data, of idLen
// hex digits (SHA-1 or SHA-256).
func objectID(kind string, data []byte, idLen int) string {
	h := sha1.New()
	if idLen == 2*sha256.Size {
		h = sha256.New()
	}
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// emptyTree is the empty tree's name.
func emptyTree(idLen int) string { return objectID("tree", nil, idLen) }
