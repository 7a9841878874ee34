//go:build linux

package confine

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// A +git call writes git's objects, refs and index, and a checkout by the
// user's own git, later and unconfined, writes what they name into the
// worktree: the thirty-third attack run's +git call could not write
// .githooks/pre-commit (the directory core.hooksPath names), so it wrote
// a blob and `git replace`d the hook's blob with it (every hash the same,
// git status clean); the user's next branch switch wrote the call's hook
// and their next commit ran it. It also committed the hook (a commit with
// HEAD's message, or one whose tree differs there alone), and staged it
// (`git update-index --cacheinfo`, which `git restore` writes out). So
// once the call's last process has exited, the first stage looks at what
// the call changed of the project's refs and index, with the user's git
// (gitRefs.check):
//
//   - a lock the call left is removed (no process of it is left, and git
//     would refuse every put-back below);
//   - a replace ref the call made or changed is deleted: no approved git
//     command makes one, and it changes what every other ref names;
//   - a ref the call made or moved (a branch, a tag, the stash, a detached
//     HEAD, a pseudo-ref such as ORIG_HEAD or MERGE_HEAD) that reaches a
//     commit no ref reached before whose change (against each of its
//     parents: a stash's index and untracked parents too) gives a path of
//     executable configuration (or an instruction file, the places policy
//     protects) content other than the worktree's file has is moved back
//     where it was (deleted if new), and what it named kept under
//     refs/loopguard-held/, so that nothing is lost and a checkout does
//     not write it;
//   - a rebase's or the sequencer's todo the call left that picks such a
//     commit, and a stopped git am's patch that touches such a path (as
//     git reads the patch: amPatches) or names such a commit, are held
//     back (--continue would write them);
//   - an index entry of such a path that the call changed, to content
//     other than the worktree's file, is put back as it was, and the
//     index's cached trees are dropped (git commits a cached tree it
//     takes for valid).
//
// Each is said. Refs and the index are read from .git itself
// (gitread_linux.go), only as git writes them: refs in another form are
// listed by git, and an index in another form is put back whole. A commit
// of the user's own change to such a file (the worktree's content) is the
// call's to make and is left alone. Only the project's own git directory
// (.git, a directory) is looked at: a submodule's and a linked worktree's
// are not (docs/confinement.md).
type gitRefs struct {
	git         string // the git the call ran, or git on the user's PATH
	env         []string
	project     string
	root        int // the project's descriptor (run's), set after the call
	rootID      [2]uint64
	pl          policy.Places
	fixed       map[string]bool // fixedInProject's: the hooks directory, the guard's paths
	run         string          // the launch's directory: the held refs' name
	started     time.Time
	head        string // .git/HEAD's text before the call
	refs        map[string]string
	index       []byte              // .git/index before the call (nil when there was none)
	idLen       int                 // an object's name's length, in bytes (objectIDLen)
	after       map[string]string   // refs after the call (check's)
	objects     *objectWatch        // the object store's watch (gitobjects_linux.go)
	merged      map[string][]string // commits merged by mergedPaths, with what each gave
	mergedHeads string              // the heads they were merged with
	parents     map[string][]string // the new commits' parents (foreignCommits')
	changes     map[string][]change // the new commits' changes where configuration could be (maybeProtected)
	held        []string            // the plan's Held: the worktree's protected entries before the call
	scratch     string              // the launcher's scratch directory (Plan.Scratch)
	wtData      map[string][]byte   // worktreeConfig's files, by object: no object of the store's, perhaps
	wt          []entry             // worktreeConfig's answer, once read (wtRead)
	wtRead      bool
	renamed     map[string][]string // commits judged by renamedPaths, with what each gave
	rrCache     [2]uint64           // .git/rr-cache's device and inode before the call (zero: none)
	// logs are the reflogs before the call: each one's size and the
	// SHA-256 of its bytes (reflogs looks at what the call appended).
	logs map[string]logState
}

// logState is a reflog's size and content's SHA-256.
type logState struct {
	size int
	sum  [sha256.Size]byte
}

// gitTimeout bounds each git the first stage runs here.
const gitTimeout = 10 * time.Second

// snapshotRefs lists the project's refs and keeps its index before a +git
// call (nil when the project has no .git directory: nothing to look at).
func snapshotRefs(s Spec, plan Plan, e Env, root int) (*gitRefs, error) {
	gitDir := filepath.Join(plan.Project, ".git")
	if st, err := fstatBeneath(root, ".git"); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, nil
	}
	// The plan's hooks directories, git's program scripts and what the
	// instruction files and .envrc load, as the plan found them: Env's
	// places have none of them (NewPlan fills its own copy), and the
	// check judged such a path only by its name (the forty-third attack
	// run's directory rename into local/env.sh, which .envrc loads).
	e.Places.HooksPaths, e.Places.Imports = plan.hooksPaths, plan.imports
	pl := e.Places.Prepare()
	fixed, _ := fixedInProject(pl, plan.Project)
	g := &gitRefs{project: plan.Project, root: root, rootID: plan.RootID, pl: pl, fixed: fixed, run: plan.RunDir, started: plan.started,
		held: plan.Held, scratch: plan.Scratch}
	g.git = s.Exe
	if filepath.Base(g.git) != "git" {
		var err error
		if g.git, err = exec.LookPath("git"); err != nil {
			return nil, fmt.Errorf("+git: no git to look at the call's refs with: %w", err)
		}
	}
	// The user's git, as the user runs it, but for what could run code:
	// replace refs are not followed (the objects are looked at as they
	// are), and no hook runs (reference-transaction).
	g.env = []string{"HOME=" + e.Home, "PATH=/usr/bin:/bin", "GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + plan.Project,
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=" + filepath.Join(plan.RunDir, "no-grafts"), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	// A .git that git does not take for a repository (no HEAD, a HEAD it
	// does not read) has no refs for the user's git to follow: its refs
	// are none, and what the call makes of it is looked at whole after.
	if head, err := readBeneath(root, ".git/HEAD", 4096); err == nil {
		g.head = string(head)
	}
	var err error
	if g.refs, err = g.listRefs(); err != nil {
		if _, gerr := g.gitOut(nil, "rev-parse", "--git-dir"); gerr == nil {
			return nil, err // a repository whose refs cannot be read
		}
		g.refs, g.head = map[string]string{}, ""
	}
	g.logs = map[string]logState{}
	_ = g.eachLog(func(rel string, data []byte, err error) error {
		if err != nil {
			return nil
		}
		g.logs[rel] = logState{len(data), sha256.Sum256(data)}
		return nil
	}, time.Time{})
	g.idLen = objectIDLen(root)
	g.index, err = readBeneath(root, ".git/index", 1<<30)
	if errors.Is(err, unix.ENOENT) {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("+git: reading .git/index: %w", err)
	}
	if st, err := fstatBeneath(root, ".git/rr-cache"); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		g.rrCache = [2]uint64{uint64(st.Dev), st.Ino}
	}
	// Last: what the call writes of the object store is heard from here.
	g.objects = watchObjects(plan.Project)
	return g, nil
}

// gitSafeArgs are what the check's git runs with: no hook, no fsmonitor,
// and the commits' own parents (no commit-graph, whose parents a call can
// write apart from the commits': the thirty-sixth attack run's made a
// commit of its own look like HEAD's child and rev-list never reached it).
var gitSafeArgs = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.commitGraph=false"}

// gitOut runs the user's git with args (env added to its environment)
// and returns its standard output.
func (g *gitRefs) gitOut(env []string, args ...string) ([]byte, error) {
	return g.runGit(env, "", args)
}

// gitIn runs the user's git with args, stdin as its input.
func (g *gitRefs) gitIn(stdin string, args ...string) ([]byte, error) {
	return g.runGit(nil, stdin, args)
}

func (g *gitRefs) runGit(env []string, stdin string, args []string) ([]byte, error) {
	return g.runGitFor(gitTimeout, env, stdin, args)
}

// runGitFor is runGit bounded by timeout.
func (g *gitRefs) runGitFor(timeout time.Duration, env []string, stdin string, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.git, slices.Concat(gitSafeArgs, args)...)
	cmd.Env, cmd.Dir, cmd.Stdin = slices.Concat(g.env, env), g.project, strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// heads are the commits HEAD named before the call and names after it,
// and those of the refs the call made or moved: what the user's next
// merge, cherry-pick or revert takes as ours (a branch of the call's
// checked out first). The user's other branches are not merged onto:
// what a merge there could write through a rename is renamedPaths'.
func (g *gitRefs) heads() []string {
	var out []string
	name := func(text string, refs map[string]string) {
		id := refs["HEAD"]
		if target, ok := strings.CutPrefix(strings.TrimSpace(text), "ref: "); ok {
			id = refs[target]
		}
		if f := strings.Fields(id); len(f) > 0 && !slices.Contains(out, f[0]) {
			out = append(out, f[0])
		}
	}
	name(g.head, g.refs)
	if now, err := readBeneath(g.root, ".git/HEAD", 4096); err == nil {
		name(string(now), g.after)
	}
	for _, ref := range slices.Sorted(maps.Keys(g.after)) {
		if v := g.after[ref]; v != g.refs[ref] && strings.HasPrefix(ref, "refs/heads/") {
			name("ref: "+ref, g.after)
		}
	}
	return out
}

// listRefs is every ref with the object it names (HEAD, when detached, as
// "HEAD"): read from the git directory, or given by git where it is in a
// form readRefs does not read.
func (g *gitRefs) listRefs() (map[string]string, error) {
	refs, err := readRefs(g.root, ".git")
	// Any error is git's to read past: a pseudo-ref the call made a link
	// (ln -s nowhere .git/ORIG_HEAD, which git reads as no ref) failed
	// readRefs with ELOOP, and the check then held nothing, a new branch
	// of the call's hook included (the fortieth attack run).
	if err == nil {
		return refs, nil
	}
	out, err := g.gitOut(nil, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, err
	}
	refs = map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok {
			// A name packed-refs lists twice is listed twice, and git's
			// lookup takes one of them by its binary search, not the last
			// (the thirty-seventh attack run's "clean evil clean": git
			// checked out the middle one): each is what the ref names.
			if was := refs[name]; was != "" && !slices.Contains(strings.Fields(was), id) {
				id = was + " " + id
			} else if was != "" {
				id = was
			}
			refs[name] = id
		}
	}
	if head, err := readBeneath(g.root, ".git/HEAD", 4096); err == nil && !bytes.HasPrefix(head, []byte("ref:")) {
		refs["HEAD"] = strings.TrimSpace(string(head))
	}
	// And the pseudo-refs, as git reads each.
	for _, p := range pseudoRefs {
		// Lstat: a link is one too, which git may follow.
		var st unix.Stat_t
		if err := unix.Fstatat(g.root, ".git/"+p, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			id, err := g.gitOut(nil, "rev-parse", "--verify", "-q", p)
			if err != nil {
				continue // git reads no ref there
			}
			refs[p] = strings.TrimSpace(string(id))
			continue
		}
		if data, err := readBeneath(g.root, ".git/"+p, 1<<20); err == nil && (p == "FETCH_HEAD" || p == "MERGE_HEAD") {
			// Lists: git reads each line's first field (one that is not
			// a file is left to rev-parse, below).
			var ids []string
			for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
				if f := strings.Fields(line); len(f) > 0 {
					ids = append(ids, f[0])
				}
			}
			refs[p] = strings.Join(ids, " ")
			continue
		}
		id, err := g.gitOut(nil, "rev-parse", "--verify", "-q", p)
		if err != nil {
			id = []byte("unreadable")
		}
		refs[p] = strings.TrimSpace(string(id))
	}
	return refs, nil
}

// protectedPath reports whether rel, a path in the project, is executable
// configuration or an instruction file: judged by policy where one of its
// names could be (policy.NameCouldBeProtected) or it lies below one of
// the fixed protected paths.
func (g *gitRefs) protectedPath(rel string) bool {
	return g.maybeProtected(rel) && g.pl.Classify(g.project+"/"+rel).Protected()
}

// renamedOnto are the paths protected by their place alone (g.fixed: the
// hooks directory's hooks, what .envrc and the instruction files load,
// git's program scripts), in a directory of their own and not in the
// worktree, that a new file rel elsewhere under the same name becomes when
// a merge follows a directory's rename: the forty-third attack run's first
// call renamed loc/ to local/ on a branch, a later one committed
// loc/env.sh on master, and the user's merge wrote local/env.sh, which
// .envrc loads. No ref holds such a path, so the rename check has no
// content to pair; a new file of its name anywhere (or below a directory
// of its name) is held instead.
func (g *gitRefs) renamedOnto(rel string) []string {
	var out []string
	names := strings.Split(rel, "/")
	for p := range g.fixed {
		r, ok := strings.CutPrefix(p, g.project+"/")
		// Its name, or a directory's on rel's way (x/hooks/pre-commit,
		// where ci/hooks is the hooks directory: x renamed to ci).
		if !ok || r == rel || !slices.Contains(names, path.Base(r)) || !strings.Contains(r, "/") {
			continue
		}
		if _, err := fstatBeneath(g.root, r); err == nil {
			continue // the worktree has it: the rename check's (a target with content)
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// maybeProtected reports whether rel could be protected: one of its names
// could be (policy.NameCouldBeProtected), or it lies below one of the
// fixed protected paths. Every protected path is one.
func (g *gitRefs) maybeProtected(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if policy.NameCouldBeProtected(seg) {
			return true
		}
	}
	for p := g.project + "/" + rel; len(p) > len(g.project); p = filepath.Dir(p) {
		if g.fixed[p] {
			return true
		}
	}
	return false
}

// check looks at what the call changed, puts back what gave executable
// configuration content of the call's, and returns the lines that say so;
// h holds back what is moved out of the project.
func (g *gitRefs) check(h *holder) []string {
	if g == nil {
		return nil
	}
	var lines []string
	say := func(format string, args ...any) { lines = append(lines, fmt.Sprintf("loopguard: "+format, args...)) }
	// The user's git runs by the project's path: only while it leads to
	// the directory the call began in, and to its own .git directory
	// through no link.
	fd, err := openProject(g.project, g.rootID)
	if err == nil {
		_ = unix.Close(fd)
		if fd, err = openBeneath(g.root, ".git", unix.O_PATH|unix.O_DIRECTORY); err == nil {
			_ = unix.Close(fd)
		}
	}
	if err != nil {
		say("could not look at git's refs and index after this +git call (%v): look at what it committed and staged (git log --all, git diff --cached) before you check anything out", err)
		return lines
	}
	// No process of the call is left: a lock it left would keep every
	// put-back below from being made (the thirty-fifth attack run's
	// refs/heads/feat.lock and index.lock).
	lines = append(lines, g.removeLocks()...)
	lines = append(lines, g.holdLinks(h)...)
	// Objects that are not what their names say, before git reads any.
	lines = append(lines, g.checkObjects(h)...)
	lines = append(lines, g.dropHistoryCaches(h)...)
	lines = append(lines, g.holdResolutions(h)...)
	// A HEAD the call removed or made unreadable is put back: without it
	// git sees no repository, and nothing below would look; with it back,
	// the user's git would follow what the call left (the thirty-sixth
	// attack run's rm .git/HEAD).
	if g.head != "" {
		if now, err := readBeneath(g.root, ".git/HEAD", 4096); err != nil || !bytes.Equal(now, []byte(g.head)) {
			if _, _, terr := refText(now); err != nil || terr != nil {
				lines = append(lines, g.putBackHead()...)
			}
		}
	}
	after, err := g.listRefs()
	g.after = after
	if err != nil {
		if _, gerr := g.gitOut(nil, "rev-parse", "--git-dir"); gerr != nil && g.head == "" {
			return lines // not a repository to git, before the call or after: nothing for the user's git to follow
		}
		say("could not list git's refs after this +git call (%v): look at what it committed (git log --all) before you check anything out", err)
		return lines
	}
	// What changed, and the commits each names that are new.
	changed := map[string][]string{} // ref -> the objects it names now
	for name, v := range after {
		if g.refs[name] == v {
			continue
		}
		if strings.HasPrefix(name, "refs/replace/") {
			if _, err := g.gitOut(nil, "update-ref", "-d", name, v); err != nil {
				say("this +git call made the replace ref %s, and loopguard could not delete it (%v): delete it (git replace -d) before you run git there", name, err)
				continue
			}
			say("deleted the replace ref %s, which this +git call made: it had git show other content in place of object %s wherever it is named (a hook, for your next checkout to write)", name, strings.TrimPrefix(name, "refs/replace/"))
			continue
		}
		changed[name] = strings.Fields(v)
	}
	todos, todoLines := g.todos(h)
	lines = append(lines, todoLines...)
	// The groups looked at: each ref, each todo.
	groups := map[string][]string{}
	for name, ids := range changed {
		groups["ref "+name] = ids
	}
	for _, t := range todos {
		groups["todo "+t.rel] = t.ids
	}
	foreign, _, err := g.foreignCommits(groups)
	if err != nil {
		// What cannot be looked at is held, as what was found to give
		// executable configuration is: a commit git cannot walk kept the
		// thirty-sixth attack run's other branch from being looked at.
		say("could not look at what this +git call committed (%v): every ref, todo and reflog it changed is held", err)
		foreign = map[string][]string{}
		for key := range groups {
			foreign[key] = []string{"(not looked at)"}
		}
	}
	// What the reflogs may name without a look: what a ref named before
	// the call, and what a ref found clean names now (a commit's own
	// reflog lines name only those, and cost no git).
	known := map[string]bool{}
	for name, v := range g.refs {
		if !strings.HasPrefix(name, "refs/loopguard-held/") {
			for _, id := range strings.Fields(v) {
				known[id] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(changed)) {
		if paths := foreign["ref "+name]; len(paths) > 0 {
			lines = append(lines, g.holdRef(name, changed[name], paths)...)
			continue
		}
		for _, id := range changed[name] {
			known[id] = true
		}
	}
	for _, t := range todos {
		if paths := foreign["todo "+t.rel]; len(paths) > 0 {
			lines = append(lines, g.holdTodo(t, paths, h)...)
		}
	}
	// The reflogs, together: one held when it names a new commit of their
	// walk, and that walk found one giving executable configuration.
	logs, failed, lerr := g.reflogs(known)
	if lerr != nil {
		say("could not read the reflogs this +git call wrote (%v): look at git stash list and git reflog before you pop a stash or check out what they name", lerr)
	}
	for _, l := range failed {
		lines = append(lines, g.holdTodo(l, []string{"(not looked at: " + strings.Join(l.ids, "") + ")"}, h)...)
	}
	if len(logs) > 0 {
		var ids []string
		for _, l := range logs {
			ids = append(ids, l.ids...)
		}
		found, reach, err := g.foreignCommits(map[string][]string{"reflogs": ids})
		if err != nil {
			say("could not look at what this +git call's reflogs name (%v): each it wrote is held", err)
		}
		if paths := found["reflogs"]; len(paths) > 0 || err != nil {
			if err != nil {
				paths = []string{"(not looked at)"}
			}
			fresh := map[string]bool{}
			for _, c := range reach["reflogs"] {
				fresh[c] = true
			}
			for _, l := range logs {
				if err != nil || slices.ContainsFunc(l.ids, func(id string) bool { return fresh[id] }) {
					lines = append(lines, g.holdTodo(l, paths, h)...)
				}
			}
		}
	}
	return append(lines, g.checkIndex()...)
}

// holdRef puts the ref name back where it was (deletes it where the call
// made it), keeping what it names under refs/loopguard-held/; a pseudo-ref
// (ORIG_HEAD) is moved out as a file.
func (g *gitRefs) holdRef(name string, ids, paths []string) []string {
	what := fmt.Sprintf("this +git call's %s (%s) gives %s content that is not the worktree's (executable configuration or an instruction file: a checkout, a merge or a reset would write it, and git or an agent run it)", name, strings.Join(ids, " "), strings.Join(paths, ", "))
	held := "refs/loopguard-held/" + filepath.Base(g.run) + "/" + strings.TrimPrefix(name, "refs/")
	for i, id := range ids {
		ref := held
		if len(ids) > 1 {
			ref += "-" + strconv.Itoa(i)
		}
		if _, err := g.gitOut(nil, "update-ref", ref, id); err != nil {
			return []string{fmt.Sprintf("loopguard: %s, and loopguard could not keep it aside (%v): do not check it out", what, err)}
		}
	}
	old, had := g.refs[name]
	var err error
	switch {
	case !strings.HasPrefix(name, "refs/") && name != "HEAD":
		// A pseudo-ref: its file goes (git then has none).
		err = g.unlinkGit(name)
	case len(ids) > 1:
		// A ref packed-refs lists more than once: git deletes one entry
		// a time (the thirty-seventh attack run's delete left the
		// other, its hook, and said it had deleted it). Each goes, then
		// what it named before comes back.
		err = g.deleteEvery(name)
		if err == nil && had && len(strings.Fields(old)) == 1 {
			_, err = g.gitOut(nil, "update-ref", "--no-deref", name, old)
		}
	case had:
		_, err = g.gitOut(nil, "update-ref", "--no-deref", name, old, ids[0])
	default:
		_, err = g.gitOut(nil, "update-ref", "--no-deref", "-d", name, ids[0])
	}
	if err != nil {
		return []string{fmt.Sprintf("loopguard: %s, and loopguard could not move it back (%v): do not check it out; it is kept as %s", what, err, held)}
	}
	was := "deleted it"
	if had && strings.HasPrefix(name, "refs/") || name == "HEAD" && had {
		was = "moved it back to " + old
	}
	return []string{fmt.Sprintf("loopguard: %s; loopguard %s, and keeps what it named as %s", what, was, held)}
}

// deleteEvery deletes the ref name until git lists it no more: git's
// delete of a name packed-refs lists more than once takes one entry, two,
// or none (three entries took three deletions, one of them a no-op), so
// up to twice the entries it lists, plus two, are tried.
func (g *gitRefs) deleteEvery(name string) error {
	tries := 2
	for i := 0; i < tries; i++ {
		out, err := g.gitOut(nil, "for-each-ref", "--format=%(refname)", name)
		if err != nil {
			return err
		}
		listed := 0
		for _, f := range strings.Fields(string(out)) {
			if f == name {
				listed++
			}
		}
		if listed == 0 {
			return nil
		}
		tries = max(tries, min(i+2*listed+2, 4096))
		if _, err := g.gitOut(nil, "update-ref", "--no-deref", "-d", name); err != nil {
			return err
		}
	}
	return fmt.Errorf("git still lists %s after %d deletions", name, tries)
}

// putBackHead writes .git/HEAD back as it was before the call.
func (g *gitRefs) putBackHead() []string {
	err := g.unlinkGit("HEAD.lock") // the call's, if any: none of its processes is left
	if err == nil || errors.Is(err, unix.ENOENT) {
		err = g.writeGit("HEAD", []byte(g.head))
	}
	if err != nil {
		return []string{fmt.Sprintf("loopguard: this +git call removed or broke .git/HEAD, and loopguard could not put it back (%v): look at what it committed (git log --all) before you make it a repository again", err)}
	}
	return []string{"loopguard: put back .git/HEAD, which this +git call removed or broke"}
}

// historyFiles are what git reads commits' parents and trees from besides
// the commits: the commit-graph (a cache, which git writes again), and the
// grafts and shallow lists (the user's, if anyone's). A call that writes
// one makes the user's git walk, and check out, another history than the
// commits hold (the thirty-sixth attack run's graft and commit-graph).
var historyFiles = []string{".git/objects/info/commit-graph", ".git/objects/info/commit-graphs", ".git/info/grafts", ".git/shallow"}

// dropHistoryCaches holds back each of historyFiles the call made or
// changed, and says so.
func (g *gitRefs) dropHistoryCaches(h *holder) []string {
	var lines []string
	for _, rel := range historyFiles {
		if !g.changedInCall(rel) {
			continue
		}
		where, err := g.hold(rel, h)
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call wrote %s, which tells git other parents or trees than the commits hold, and loopguard could not move it (%v): remove it before you run git there", rel, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: held back %s, which this +git call wrote: it tells git other parents or trees than the commits hold (git writes its commit-graph again) (%s)", rel, where))
	}
	return lines
}

// holdResolutions holds back each resolution git's rerere keeps
// (.git/rr-cache/ID/postimage*) that the call made or changed: git enables
// rerere where rr-cache is, and the user's next merge with that conflict
// writes the resolution into the worktree, the hook's path too (the
// thirty-ninth attack run's postimage for the conflict of the user's own
// two versions of .githooks/pre-commit: the merge wrote the call's hook,
// and the user's commit ran it). One the call moved in keeps its time: a
// resolution whose directory (or rr-cache itself, made or moved in during
// the call) changed is held too.
func (g *gitRefs) holdResolutions(h *holder) []string {
	var rels []string
	var st unix.Stat_t
	if statBeneath(g.root, ".git/rr-cache", &st) != nil {
		return nil
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		// A link (git follows it, to resolutions any later call can
		// write) or anything else git does not make there.
		rels = append(rels, ".git/rr-cache")
	default:
		whole := [2]uint64{uint64(st.Dev), st.Ino} != g.rrCache
		_ = g.walkGit(".git/rr-cache", func(dir string) bool { return strings.Count(dir, "/") == 2 }, func(dirfd int, rel string, e fs.DirEntry) error {
			switch strings.Count(rel, "/") {
			case 2: // what git makes a directory of a conflict's
				if e.Type()&fs.ModeSymlink != 0 {
					rels = append(rels, rel)
				}
			case 3:
				if !strings.HasPrefix(e.Name(), "postimage") {
					return nil
				}
				if s, ok := changedSince(dirfd, e.Name(), g.started); whole || !ok || s || !e.Type().IsRegular() {
					rels = append(rels, rel)
				} else if s, ok := changedSince(dirfd, ".", g.started); !ok || s {
					rels = append(rels, rel)
				}
			}
			return nil
		})
	}
	var lines []string
	for _, rel := range rels {
		where, err := g.hold(rel, h)
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call wrote %s, a resolution git's next merge with that conflict writes into the worktree, and loopguard could not move it (%v): remove it before you merge there", rel, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: held back %s, which this +git call wrote: git's next merge with that conflict would write it into the worktree (git rerere) (%s)", rel, where))
	}
	return lines
}

// changedInCall reports whether rel (below the project) was made or
// changed while the call ran (changedSince).
func (g *gitRefs) changedInCall(rel string) bool {
	dir, name := filepath.Split(rel)
	fd, err := openBeneath(g.root, strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	since, ok := changedSince(fd, name, g.started)
	return ok && since
}

// removeLocks removes the lock files the call left in the git directory
// (its index's, its refs', packed-refs'), those made while it ran: no
// process of the call is left to hold them, and git would refuse the
// put-back while they are there. A git of the user's that took a lock
// while the call ran (an editor's status) loses it, and says so when it
// renames.
func (g *gitRefs) removeLocks() []string {
	var lines []string
	_ = g.walkGit(".git", func(dir string) bool { return dir == ".git/refs" || strings.HasPrefix(dir, ".git/refs/") }, func(dirfd int, rel string, e fs.DirEntry) error {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".lock") {
			return nil
		}
		// Made during the call: an older one is not the call's.
		if since, ok := changedSince(dirfd, e.Name(), g.started); ok && since && unix.Unlinkat(dirfd, e.Name(), 0) == nil {
			lines = append(lines, fmt.Sprintf("loopguard: removed %s, a lock this +git call left (no process of it is left)", rel))
		}
		return nil
	})
	return lines
}

// walkGit calls visit with each entry that is not a directory below rel
// (below the project, through no link), its directory open as dirfd,
// going into the directories enter takes (by their path), to 16 levels;
// a directory that cannot be opened is passed over.
func (g *gitRefs) walkGit(rel string, enter func(dir string) bool, visit func(dirfd int, rel string, e fs.DirEntry) error) error {
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		if depth > 16 {
			return nil
		}
		fd, err := openBeneath(g.root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return nil
		}
		d := os.NewFile(uintptr(fd), rel)
		defer d.Close()
		ents, err := d.ReadDir(-1)
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := rel + "/" + e.Name()
			if e.IsDir() {
				if enter(name) {
					if err := walk(name, depth+1); err != nil {
						return err
					}
				}
				continue
			}
			if err := visit(fd, name, e); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(rel, 0)
}

// A todo is the list of what a stopped rebase, cherry-pick or revert does
// on the user's --continue, and the objects it names.
type todo struct {
	rel string // below the project
	ids []string
	// use is the user's command that follows it ("" a --continue's or
	// an --abort's).
	use string
}

// todoFiles are the todos git keeps: an interactive rebase's, the
// sequencer's (cherry-pick, revert).
var todoFiles = []string{".git/rebase-merge/git-rebase-todo", ".git/sequencer/todo",
	// And the objects an --abort, a --continue or a bisect reset goes
	// back to or applies (the thirty-sixth attack run's orig-head,
	// sequencer/head, autostash, MERGE_AUTOSTASH and BISECT_START).
	".git/rebase-merge/orig-head", ".git/rebase-merge/autostash", ".git/rebase-merge/onto", ".git/rebase-merge/stopped-sha",
	".git/rebase-apply/orig-head", ".git/rebase-apply/autostash", ".git/rebase-apply/onto", ".git/rebase-apply/original-commit",
	".git/sequencer/head", ".git/MERGE_AUTOSTASH", ".git/BISECT_START", ".git/BISECT_EXPECTED_REV"}

// todos are the todos the call made or changed, with the commits they
// name; a stopped git am's patches that touch executable configuration
// are held back here too (their text is what --continue applies).
func (g *gitRefs) todos(h *holder) ([]todo, []string) {
	var out []todo
	var lines []string
	for _, rel := range todoFiles {
		if !g.changedInCall(rel) {
			continue
		}
		data, err := readBeneath(g.root, rel, 16<<20)
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: could not read %s, which this +git call left (%v): end the operation with --abort", rel, err))
			continue
		}
		// Every word of every line, as git reads a revision (ID~0,
		// a branch's name): what git resolves it to is looked at.
		var words []string
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, f := range strings.Fields(line) {
				if len(f) <= 256 && !strings.ContainsAny(f, "\x00") {
					words = append(words, f)
				}
			}
		}
		t := todo{rel: rel}
		if len(words) > 0 {
			ids, err := g.resolve(words)
			if err != nil {
				lines = append(lines, g.holdTodo(t, []string{"(not looked at: " + err.Error() + ")"}, h)...)
				continue
			}
			t.ids = ids
		}
		out = append(out, t)
	}
	am, amLines := g.amPatches(h)
	return append(out, am...), append(lines, amLines...)
}

// amPatches judges git am's patches where the call wrote any of its state
// (.git/rebase-apply): a stopped am's --skip or --continue applies the
// next patch, which git builds from the mail (mailinfo decodes it: a
// base64 body hides every +++ line) or, in a rebase --apply, from the
// commit its first line names ("From ID", the thirty-sixth attack run's
// patch of that line alone). So each patch is read by git itself: the
// paths git apply would write, at every -p (a patch's paths need not be
// written b/PATH, and the state's apply-opt gives -p and --directory), and
// a patch naming a protected path at any of them is held back; the
// commit its first line names is looked at as a todo's (returned).
func (g *gitRefs) amPatches(h *holder) ([]todo, []string) {
	const dir = ".git/rebase-apply"
	fd, err := openBeneath(g.root, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		// git reads a patch by its name, with no read bit on the
		// directory (holdGitState gave back those the call took).
		return nil, []string{fmt.Sprintf("loopguard: could not look at %s after this +git call (%v): end the operation with git am --abort", dir, err)}
	}
	f := os.NewFile(uintptr(fd), dir)
	ents, rerr := f.ReadDir(-1)
	changed, _ := changedSince(fd, ".", g.started)
	var patches []string
	for _, e := range ents {
		if c, _ := changedSince(fd, e.Name(), g.started); c {
			changed = true
		}
		if e.Name() == "patch" || (len(e.Name()) >= 4 && strings.Trim(e.Name(), "0123456789") == "") {
			patches = append(patches, e.Name())
		}
	}
	f.Close()
	if !changed {
		return nil, nil
	}
	if rerr != nil {
		return nil, []string{fmt.Sprintf("loopguard: could not read %s, which this +git call wrote (%v): end the operation with git am --abort", dir, rerr)}
	}
	var roots []string // where the paths may lie below: the top, and --directory's
	if opt, err := readBeneath(g.root, dir+"/apply-opt", 1<<20); err == nil {
		roots = applyDirectories(string(opt))
	}
	var out []todo
	var lines []string
	for _, name := range patches {
		rel := dir + "/" + name
		data, err := readBeneath(g.root, rel, 64<<20)
		if err != nil {
			lines = append(lines, g.holdTodo(todo{rel: rel}, []string{"(not looked at: " + err.Error() + ")"}, h)...)
			continue
		}
		if name != "patch" {
			// A rebase --apply's patch is the commit its first line names.
			first, _, _ := bytes.Cut(data, []byte("\n"))
			if id, ok := strings.CutPrefix(string(first), "From "); ok {
				if words := strings.Fields(id); len(words) > 0 && len(words[0]) <= 256 {
					ids, err := g.resolve(words[:1])
					if err != nil {
						lines = append(lines, g.holdTodo(todo{rel: rel}, []string{"(not looked at: " + err.Error() + ")"}, h)...)
						continue
					}
					if len(ids) > 0 {
						out = append(out, todo{rel: rel, ids: ids})
					}
				}
			}
		}
		paths, err := g.patchPaths(data, name != "patch", roots)
		if err != nil {
			paths = []string{"(not looked at: " + err.Error() + ")"}
		}
		if len(paths) > 0 {
			lines = append(lines, g.holdTodo(todo{rel: rel}, paths, h)...)
		}
	}
	// A patch that does not apply is merged, with -3 (the state's
	// threeway), from a tree of the blobs its index lines name: git's
	// rename detection then gives its change to whichever file of HEAD
	// holds that blob (the thirty-ninth attack run's patch of notes.sh,
	// naming the hook's blob, wrote the call's hook). Without threeway
	// git am stops on such a patch, for the user to apply.
	if tw, err := readBeneath(g.root, dir+"/threeway", 64); err == nil && strings.TrimSpace(string(tw)) == "t" && len(patches) > 0 {
		if where, err := g.hold(dir+"/threeway", h); err == nil {
			lines = append(lines, fmt.Sprintf("loopguard: held back %s/threeway, which this +git call left: git am --continue would merge a patch that does not apply by the blobs it names, and git's rename detection can give its change to executable configuration; git am now stops on such a patch for you to apply (%s)", dir, where))
		} else {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call left %s/threeway, and loopguard could not move it (%v): end the operation with git am --abort", dir, err))
		}
	}
	return out, lines
}

// patchPaths are the protected paths the patch (a mail when mail is set)
// would have git apply write: each name git apply reads in it (-p0), at
// every depth it could be stripped to, below each of roots.
func (g *gitRefs) patchPaths(data []byte, mail bool, roots []string) ([]string, error) {
	if mail {
		tmp, err := os.MkdirTemp("", "loopguard-am-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if _, err := g.runGit(nil, string(data), []string{"mailinfo", filepath.Join(tmp, "msg"), filepath.Join(tmp, "patch")}); err != nil {
			return nil, err
		}
		if data, err = os.ReadFile(filepath.Join(tmp, "patch")); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	// --recount: the hunk counts a hand-written patch gets wrong do not
	// keep git from naming its paths. A git header with no ---/+++ lines
	// (a rename, a mode, a binary) has no name at -p0, and git am's own
	// apply then cannot take -p0 either: its names at -p1 are those.
	out, err := g.runGit(nil, string(data), []string{"apply", "--numstat", "-z", "-p0", "--recount"})
	if err != nil {
		if out, err = g.runGit(nil, string(data), []string{"apply", "--numstat", "-z", "-p1", "--recount"}); err != nil {
			return nil, err
		}
	}
	var paths []string
	for field := range strings.SplitSeq(string(out), "\x00") {
		// "ADDED\tDELETED\tNAME", or a rename's names alone.
		name := field
		if i := strings.LastIndexByte(field, '\t'); i >= 0 {
			name = field[i+1:]
		}
		name = strings.TrimRight(name, " \t\r")
		for _, root := range roots {
			for p := name; p != ""; {
				if c := path.Join(root, p); g.protectedPath(c) {
					paths = append(paths, c)
				}
				_, rest, ok := strings.Cut(p, "/")
				if !ok {
					break
				}
				p = rest
			}
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(paths))), nil
}

// applyDirectories are the directories git am's apply-opt (git apply's
// options, each quoted as git's sq_quote quotes it) has it write below:
// the top, and a --directory's.
func applyDirectories(opt string) []string {
	dirs := []string{"."}
	var args []string
	var cur strings.Builder
	in, any := false, false
	for i := 0; i < len(opt); i++ {
		switch c := opt[i]; {
		case c == '\'':
			in, any = !in, true
		case in:
			cur.WriteByte(c)
		case c == '\\' && i+1 < len(opt):
			i++
			cur.WriteByte(opt[i])
		case c == ' ' || c == '\t' || c == '\n':
			if any || cur.Len() > 0 {
				args = append(args, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteByte(c)
		}
	}
	if any || cur.Len() > 0 {
		args = append(args, cur.String())
	}
	for i, a := range args {
		if d, ok := strings.CutPrefix(a, "--directory="); ok {
			dirs = append(dirs, d)
		} else if a == "--directory" && i+1 < len(args) {
			dirs = append(dirs, args[i+1])
		}
	}
	return dirs
}

// resolve is what git takes each of words for, as a revision: the objects
// of those it resolves.
func (g *gitRefs) resolve(words []string) ([]string, error) {
	out, err := g.gitIn(strings.Join(words, "\n")+"\n", "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, err
	}
	var ids []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if isObjectID(line) {
			ids = append(ids, line)
		}
	}
	return ids, nil
}

// hold moves rel (below the project) out, as the sweep holds what it
// finds, and says where; ENOENT when it is not there.
func (g *gitRefs) hold(rel string, h *holder) (string, error) {
	dir, name := filepath.Split(rel)
	fd, err := openBeneath(g.root, strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", err
	}
	where, _, err := h.move(fd, name, rel)
	return where, err
}

// holdTodo moves the todo (or a patch of git am's) out of the project.
func (g *gitRefs) holdTodo(t todo, paths []string, h *holder) []string {
	where, err := g.hold(t.rel, h)
	if errors.Is(err, unix.ENOENT) {
		return nil // gone with its ref, moved back or deleted above
	}
	switch {
	case err == nil && t.use != "":
		return []string{fmt.Sprintf("loopguard: held back %s, which this +git call wrote: %s would write %s with content that is not the worktree's (executable configuration or an instruction file) (%s)", t.rel, t.use, strings.Join(paths, ", "), where)}
	case err == nil:
		return []string{fmt.Sprintf("loopguard: held back %s, which this +git call left: your --continue or --abort would write %s with content that is not the worktree's (executable configuration or an instruction file) (%s); end the operation with --abort", t.rel, strings.Join(paths, ", "), where)}
	}
	return []string{fmt.Sprintf("loopguard: this +git call left %s, which would have git write %s with content that is not the worktree's, and loopguard could not move it (%v): remove it before you run git there", t.rel, strings.Join(paths, ", "), err)}
}

// eachLog calls f with each reflog (.git/logs) changed since t (every one
// when t is zero), through no link, or with why it could not be read.
func (g *gitRefs) eachLog(f func(rel string, data []byte, err error) error, t time.Time) error {
	return g.walkGit(".git/logs", func(string) bool { return true }, func(dirfd int, rel string, e fs.DirEntry) error {
		if since, ok := changedSince(dirfd, e.Name(), t); !ok || !since {
			return nil
		}
		data, err := readBeneath(g.root, rel, 64<<20)
		if err != nil {
			return f(rel, nil, err)
		}
		return f(rel, data, nil)
	})
}

// reflogs are the reflogs the call wrote (.git/logs), each with the
// objects the lines it appended name (all its lines', where it changed
// what was there), and the revisions a checkout's line names: git stash
// pop reaches a stash reflog's older entries, git checkout - the "moving
// from X" of HEAD's (the thirty-sixth attack run's two ways). The
// objects known (what a ref named before the call, or names now) are left
// out: a commit's own lines name only those.
func (g *gitRefs) reflogs(known map[string]bool) (out, failed []todo, err error) {
	// .git/logs itself a link (to a directory of the call's in the
	// project): git follows it, the walk below did not, and the
	// fortieth attack run's HEAD reflog there had the user's git
	// checkout - check out the call's hook. Not git's: held.
	var st unix.Stat_t
	if unix.Fstatat(g.root, ".git/logs", &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		failed = append(failed, todo{rel: ".git/logs", use: "git stash pop, git checkout - or a reset to ref@{N}", ids: []string{"not a directory"}})
		return out, failed, nil
	}
	err = g.eachLog(func(rel string, data []byte, err error) error {
		// One that cannot be read, or whose words git will not resolve
		// (the thirty-seventh attack run's "@{u}" line, on which git
		// cat-file dies), is not looked at: the call's, it is held.
		if err != nil {
			failed = append(failed, todo{rel: rel, use: "git stash pop, git checkout - or a reset to ref@{N}", ids: []string{err.Error()}})
			return nil
		}
		if was, ok := g.logs[rel]; ok && len(data) >= was.size && sha256.Sum256(data[:was.size]) == was.sum {
			data = data[was.size:]
		}
		t := todo{rel: rel, use: "git stash pop, git checkout - or a reset to ref@{N}"}
		var words []string
		add := func(w string) {
			switch {
			case known[w] || w == strings.Repeat("0", len(w)):
			case isObjectID(w):
				t.ids = append(t.ids, w)
			case w != "":
				words = append(words, w)
			}
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			head, msg, _ := strings.Cut(line, "\t")
			f := strings.Fields(head)
			if len(f) >= 2 && isObjectID(f[0]) && isObjectID(f[1]) {
				add(f[0])
				add(f[1])
			} else if line != "" {
				for _, w := range f {
					add(w)
				}
			}
			if from, ok := strings.CutPrefix(msg, "checkout: moving from "); ok {
				a, b, _ := strings.Cut(from, " to ")
				add(a)
				add(b)
			}
		}
		if len(words) > 0 {
			ids, err := g.resolve(words)
			if err != nil {
				failed = append(failed, todo{rel: rel, use: t.use, ids: []string{err.Error()}})
				return nil
			}
			for _, id := range ids {
				if !known[id] {
					t.ids = append(t.ids, id)
				}
			}
		}
		if len(t.ids) > 0 {
			t.ids = slices.Compact(slices.Sorted(slices.Values(t.ids)))
			out = append(out, t)
		}
		return nil
	}, g.started)
	return out, failed, err
}

// foreignCommits are, for each of tips (object names), the paths of
// executable configuration that a commit it reaches and no ref reached
// before the call gives content other than the worktree's: every such
// commit's change against each of its parents (a stash's index and
// untracked parents, a merge's), or its whole tree where it has none.
func (g *gitRefs) foreignCommits(groups map[string][]string) (out, reach map[string][]string, err error) {
	out, reach = map[string][]string{}, map[string][]string{}
	var tips []string
	for _, ids := range groups {
		tips = append(tips, ids...)
	}
	if len(tips) == 0 {
		return out, reach, nil
	}
	var not strings.Builder
	for name, v := range g.refs {
		if strings.HasPrefix(name, "refs/loopguard-held/") {
			continue // what an earlier check held is no ref's of the user's (the thirty-sixth attack run's second call named it again)
		}
		for _, id := range strings.Fields(v) {
			not.WriteString("^" + id + "\n")
		}
	}
	// Each group's new commits (rev-list), then every new commit's changes
	// at once (diff-tree).
	var all []string
	tips = slices.Compact(slices.Sorted(slices.Values(tips)))
	// Which are commits (or tags of one), in one git.
	var ask strings.Builder
	for _, t := range tips {
		ask.WriteString(t + "^{commit}\n")
	}
	kinds, err := g.gitIn(ask.String(), "cat-file", "--batch-check")
	if err != nil {
		return nil, nil, err
	}
	answers := strings.Split(strings.TrimSuffix(string(kinds), "\n"), "\n")
	if len(answers) != len(tips) {
		return nil, nil, fmt.Errorf("git cat-file answered %d of %d", len(answers), len(tips))
	}
	treeOf := map[string][]string{} // a tip that is a tree: what it gives
	commit := map[string]bool{}
	for i, t := range tips {
		if strings.HasSuffix(answers[i], " missing") || strings.HasSuffix(answers[i], " ambiguous") {
			// Not a commit: a tree (or a tag of one) is what git
			// checkout TREE -- PATH writes from, whole; a blob no
			// checkout writes.
			if paths, err := g.foreignTree(t); err == nil {
				treeOf[t] = paths
			}
			continue
		}
		commit[t] = true
	}
	for key, ids := range groups {
		var in strings.Builder
		for _, t := range ids {
			out[key] = append(out[key], treeOf[t]...)
			if commit[t] {
				in.WriteString(t + "\n")
			}
		}
		if in.Len() == 0 {
			continue
		}
		list, err := g.gitIn(in.String()+not.String(), "rev-list", "--parents", "--stdin")
		if err != nil {
			return nil, nil, err
		}
		if g.parents == nil {
			g.parents, g.changes = map[string][]string{}, map[string][]change{}
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(list)), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				reach[key] = append(reach[key], f[0])
				g.parents[f[0]] = f[1:]
			}
		}
		all = append(all, reach[key]...)
	}
	if len(all) == 0 {
		return out, reach, nil
	}
	diff, err := g.gitIn(strings.Join(slices.Compact(slices.Sorted(slices.Values(all))), "\n")+"\n",
		"diff-tree", "--stdin", "-r", "-m", "--root", "-z", "--raw", "--no-renames", "--diff-filter=AMTD")
	if err != nil {
		return nil, nil, err
	}
	bad := map[string][]string{}
	toks := strings.Split(string(diff), "\x00")
	at := ""
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		switch {
		case isObjectID(tok):
			at = tok
		case strings.HasPrefix(tok, ":") && i+1 < len(toks):
			rel := toks[i+1]
			i++
			f := strings.Fields(tok)
			if len(f) == 5 && g.maybeProtected(rel) {
				// What renamedPaths builds a new commit's configuration
				// from (its parent's and this).
				g.changes[at] = append(g.changes[at], change{f[4], f[1], f[3], rel})
			}
			if len(f) == 5 && f[4] != "D" && g.protectedPath(rel) && !g.worktreeHas(f[3], rel) && !slices.Contains(bad[at], rel) {
				bad[at] = append(bad[at], rel)
			}
			if len(f) == 5 && f[4] == "A" {
				for _, p := range g.renamedOnto(rel) {
					if !slices.Contains(bad[at], p) {
						bad[at] = append(bad[at], p)
					}
				}
			}
		}
	}
	// And what the user's merges of each would write (gitmerge_linux.go).
	all = slices.Compact(slices.Sorted(slices.Values(all)))
	if err := g.mergedPaths(all, g.heads(), bad); err != nil {
		return nil, nil, err
	}
	// And what a merge of each would write onto a branch as a later
	// call could leave it (gitrename_linux.go).
	if err := g.renamedPaths(all, bad); err != nil {
		return nil, nil, err
	}
	for key, commits := range reach {
		for _, c := range commits {
			for _, p := range bad[c] {
				if !slices.Contains(out[key], p) {
					out[key] = append(out[key], p)
				}
			}
		}
	}
	return out, reach, nil
}

// foreignTree is the paths of executable configuration the tree t (or
// what it peels to) gives content other than the worktree's.
func (g *gitRefs) foreignTree(t string) ([]string, error) {
	list, err := g.gitOut(nil, "ls-tree", "-r", "-z", t+"^{tree}")
	if err != nil {
		return nil, err
	}
	var paths []string
	for ent := range strings.SplitSeq(string(list), "\x00") {
		meta, rel, ok := strings.Cut(ent, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && g.protectedPath(rel) && !g.worktreeHas(f[2], rel) {
			paths = append(paths, rel)
		}
	}
	return paths, nil
}

// worktreeHas reports whether the worktree's entry rel holds the blob id:
// a file's content, or a link's target, hashed as git hashes a blob. It
// is read from the project's descriptor, through no link on the way.
func (g *gitRefs) worktreeHas(id, rel string) bool {
	data, mode, err := g.worktreeData(rel)
	return err == nil && mode != "" && mode != "40000" && blobID(data, len(id)) == id
}

// worktreeData is the worktree's entry rel as git would store it: its
// mode ("" for neither a file, a link nor a directory, or gone) and a
// file's content or a link's target. A file larger than maxPinned is an
// error.
func (g *gitRefs) worktreeData(rel string) ([]byte, string, error) {
	dir, name := filepath.Split(rel)
	pfd, err := openBeneath(g.root, strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, "", nil
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return nil, "", nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nil, "40000", nil
	case unix.S_IFLNK:
		target, err := fsx.ReadlinkAt(pfd, name)
		if err != nil {
			return nil, "", nil
		}
		return []byte(target), "120000", nil
	case unix.S_IFREG:
		fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, "", nil
		}
		f := os.NewFile(uintptr(fd), rel)
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxPinned+1))
		if err != nil {
			return nil, "", nil
		}
		if len(data) > maxPinned {
			return nil, "", fmt.Errorf("%s: larger than %d bytes", rel, maxPinned)
		}
		mode := "100644"
		if st.Mode&0o100 != 0 {
			mode = "100755"
		}
		return data, mode, nil
	}
	return nil, "", nil
}

// blobID is git's name of a blob holding data, in the object format whose
// names are idLen hexadecimal digits long (SHA-1's 40, SHA-256's 64).
func blobID(data []byte, idLen int) string { return objectID("blob", data, idLen) }

// checkIndex puts back each index entry of executable configuration the
// call changed to content other than the worktree's (a conflict's stage
// too: git checkout --theirs writes it), and drops the cached trees of an
// index the call changed (dropCachedTrees). An index it left that
// readIndex does not read exactly as git writes one is put back whole as
// it was before the call: git reads such an index in more than one way
// (the thirty-fifth attack run's entry whose name was padded past the
// length its flags give: git ls-files named it .envrcX, git commit
// committed it as .envrc).
func (g *gitRefs) checkIndex() []string {
	now, err := readBeneath(g.root, ".git/index", 1<<30)
	if errors.Is(err, unix.ENOENT) {
		now, err = nil, nil
	}
	if err != nil {
		return []string{fmt.Sprintf("loopguard: could not read git's index after this +git call (%v): look at what it staged (git diff --cached) before you run git restore or commit", err)}
	}
	if bytes.Equal(now, g.index) {
		return nil
	}
	idLen := g.idLen
	after := indexEntries{}
	if now != nil {
		if after, _, err = readIndex(now, idLen, g.protectedPath); err != nil {
			return g.restoreIndex(err)
		}
	}
	// An index of the user's that this does not read (a split index) is
	// taken as holding nothing of theirs: what the call staged is judged
	// against the worktree alone.
	before, _, err := readIndex(g.index, idLen, g.protectedPath)
	if err != nil {
		before = indexEntries{}
	}
	var lines []string
	for _, key := range slices.Sorted(maps.Keys(after)) {
		meta := after[key]
		rel, _, _ := strings.Cut(key, "\x00")
		f := strings.Fields(meta) // mode, object, stage
		if before[key] == meta || len(f) != 3 || g.worktreeHas(f[1], rel) {
			continue // unchanged, the user's staged before the call, or the worktree's
		}
		_, uerr := g.gitOut(nil, "update-index", "--force-remove", "--", rel)
		if was, ok := before[rel]; ok && uerr == nil {
			bf := strings.Fields(was)
			_, uerr = g.gitOut(nil, "update-index", "--add", "--cacheinfo", bf[0]+","+bf[1]+","+rel)
		}
		if uerr != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call staged %s content that is not the worktree's (%s), and loopguard could not put the index back (%v): run git restore --staged -- %s before git restore or a commit", rel, f[1], uerr, rel))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: put back git's index entry of %s: this +git call staged content that is not the worktree's (%s), executable configuration or an instruction file that git restore or a checkout of a side would write", rel, f[1]))
	}
	return append(lines, g.dropCachedTrees()...)
}

// restoreIndex puts the index back as it was before the call (none, where
// there was none), for why.
func (g *gitRefs) restoreIndex(why error) []string {
	var err error
	if g.index == nil {
		err = g.unlinkGit("index")
	} else {
		err = g.writeGit("index", g.index)
	}
	if err != nil {
		return []string{fmt.Sprintf("loopguard: this +git call left git's index in a form loopguard does not read as git does (%v), and loopguard could not put it back (%v): run git read-tree HEAD before you commit or restore anything", why, err)}
	}
	return []string{fmt.Sprintf("loopguard: put back git's index as it was before this +git call: the call left it in a form loopguard does not read exactly as git writes one (%v), which git reads in more than one way; what the call staged is not staged", why)}
}

// dropCachedTrees writes the index again without its cached trees, as git
// writes it (index.lock, synced, renamed over the index).
func (g *gitRefs) dropCachedTrees() []string {
	data, err := readBeneath(g.root, ".git/index", 1<<30)
	if err != nil {
		return nil // none left
	}
	idLen := g.idLen
	_, ext, err := readIndex(data, idLen, func(string) bool { return false })
	if err != nil {
		return []string{fmt.Sprintf("loopguard: could not drop the cached trees of git's index, which this +git call changed (%v): run git read-tree HEAD && git add -u before you commit, or look at what you commit", err)}
	}
	// Cached trees and resolve-undo stages as they were (git status
	// refreshing the index keeps them) are the user's.
	var drop []string
	_, bext, berr := readIndex(g.index, idLen, func(string) bool { return false })
	if berr != nil || !bytes.Equal(indexExtension(data, ext, idLen, "TREE"), indexExtension(g.index, bext, idLen, "TREE")) {
		drop = append(drop, "TREE")
	}
	// A resolve-undo record the call changed is dropped where it holds a
	// stage of executable configuration that is not the worktree's (or
	// is not read as git writes one): a merge's conflicts resolved in a
	// call keep theirs.
	if reuc := indexExtension(data, ext, idLen, "REUC"); reuc != nil && (berr != nil || !bytes.Equal(reuc, indexExtension(g.index, bext, idLen, "REUC"))) {
		names, ok := resolveUndoNames(reuc, idLen)
		for rel, ids := range names {
			if g.protectedPath(rel) && slices.ContainsFunc(ids, func(id string) bool { return !g.worktreeHas(id, rel) }) {
				ok = false
			}
		}
		if !ok {
			drop = append(drop, "REUC")
		}
	}
	if len(drop) == 0 {
		return nil
	}
	out, ok := withoutExtensions(data, ext, idLen, drop)
	if !ok {
		return nil
	}
	if err := g.writeGit("index", out); err != nil {
		return []string{fmt.Sprintf("loopguard: could not drop the cached trees of git's index, which this +git call changed (%v): run git read-tree HEAD && git add -u before you commit, or look at what you commit", err)}
	}
	if slices.Contains(drop, "REUC") {
		return []string{"loopguard: dropped the resolve-undo record of git's index, which this +git call changed: git checkout -m (git restore --merge) makes a conflict again from it, writing what it names"}
	}
	return nil
}

// writeGit writes name in the git directory as git does (name.lock,
// synced, renamed over name), keeping the mode name has (0644 where
// there is none).
func (g *gitRefs) writeGit(name string, data []byte) error {
	dir, err := openBeneath(g.root, ".git", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	mode := fs.FileMode(0o644)
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		mode = fs.FileMode(st.Mode & 0o777)
	}
	return fsx.WriteFileAtLocked(dir, name, data, mode)
}

// unlinkGit removes name from the git directory (reached through no
// link).
func (g *gitRefs) unlinkGit(name string) error {
	dir, err := openBeneath(g.root, ".git", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return unix.Unlinkat(dir, name, 0)
}

// objectIDLen is the length of an object's name in the repository, in
// bytes, by its configuration (a pin: read before the call, it is what
// the user left).
func objectIDLen(root int) int {
	if cfg, err := readBeneath(root, ".git/config", maxPinned); err == nil && sha256Objects(cfg) {
		return sha256.Size
	}
	return sha1.Size
}

// sha256Objects reports whether the git configuration cfg names its
// repository's objects by SHA-256 (extensions.objectFormat; .git/config
// is a pin, as the user left it).
func sha256Objects(cfg []byte) bool {
	for line := range strings.SplitSeq(string(cfg), "\n") {
		k, v, ok := strings.Cut(strings.ToLower(line), "=")
		if ok && strings.TrimSpace(k) == "objectformat" && strings.Trim(strings.TrimSpace(v), `"`) == "sha256" {
			return true
		}
	}
	return false
}

// holdLinks holds back each link the call made in the git directory (git
// makes none): git follows one, and what it leads to in the project is
// written by a later call without +git, which no check looks at (the
// fortieth attack run's .git/packed-refs, .git/refs and .git/objects/XX,
// each a link to a directory of the project: a project-write call then
// wrote a branch with the call's hook). Loose objects' directories are
// not entered (the object watch reads those the call changed).
func (g *gitRefs) holdLinks(h *holder) []string {
	var links []string
	_ = g.walkGit(".git", func(dir string) bool {
		parent, base := path.Split(dir)
		return !(strings.HasSuffix(parent, "objects/") && len(base) == 2)
	}, func(dirfd int, rel string, e fs.DirEntry) error {
		if e.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if since, ok := changedSince(dirfd, e.Name(), g.started); ok && since {
			links = append(links, rel)
		}
		return nil
	})
	var lines []string
	for _, rel := range links {
		where, err := g.hold(rel, h)
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call made %s a link, which git follows, and loopguard could not remove it (%v): remove it before you run git there", rel, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: held back %s, a link this +git call made in the git directory: git follows it to what a later call can write without +git (%s)", rel, where))
	}
	return lines
}
