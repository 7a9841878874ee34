//go:build linux

package confine

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
//   - a replace ref the call made or changed is deleted: no approved git
//     command makes one, and it changes what every other ref names;
//   - a ref the call made or moved (a branch, a tag, the stash, a detached
//     HEAD) whose tree gives a path of executable configuration (or an
//     instruction file, the places policy protects) content other than the
//     worktree's file has is moved back where it was (deleted if new), and
//     the call's commit kept under refs/loopguard-held/, so that nothing
//     is lost and a checkout does not write it;
//   - an index entry of such a path that the call changed, to content
//     other than the worktree's file, is put back as it was.
//
// Each is said. A commit of the user's own change to such a file (the
// worktree's content) is the call's to make and is left alone. Only the
// project's own git directory (.git, a directory) is looked at: a
// submodule's and a linked worktree's are not (docs/confinement.md).
type gitRefs struct {
	git     string // the git the call ran, or git on the user's PATH
	env     []string
	gitDir  string
	project string
	root    int // the project's descriptor (run's), set after the call
	rootID  [2]uint64
	pl      policy.Places
	fixed   map[string]bool // fixedInProject's: the hooks directory, the guard's paths
	run     string          // the launch's directory: the held refs' name
	head    string          // .git/HEAD's text before the call
	refs    map[string]string
	index   []byte // .git/index before the call (nil when there was none)
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
	pl := e.Places.Prepare()
	fixed, _ := fixedInProject(pl, plan.Project)
	g := &gitRefs{gitDir: gitDir, project: plan.Project, root: root, rootID: plan.RootID, pl: pl, fixed: fixed, run: plan.RunDir}
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
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	head, err := readBeneath(root, ".git/HEAD", 4096)
	if err != nil {
		return nil, fmt.Errorf("+git: reading .git/HEAD: %w", err)
	}
	g.head = string(head)
	if g.refs, err = g.listRefs(); err != nil {
		return nil, err
	}
	g.index, err = readBeneath(root, ".git/index", 1<<30)
	if errors.Is(err, unix.ENOENT) {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("+git: reading .git/index: %w", err)
	}
	return g, nil
}

// gitOut runs the user's git with args and returns its standard output.
func (g *gitRefs) gitOut(env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.git, append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)...)
	cmd.Env, cmd.Dir = append(g.env, env...), g.project
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// listRefs is every ref with the object it names (HEAD, when detached, as
// "HEAD"): read from the git directory, or given by git where it is in a
// form readRefs does not read.
func (g *gitRefs) listRefs() (map[string]string, error) {
	refs, err := readRefs(g.root, ".git")
	if !errors.Is(err, errGitFormat) {
		return refs, err
	}
	out, err := g.gitOut(nil, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, err
	}
	refs = map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok {
			refs[name] = id
		}
	}
	if head, err := readBeneath(g.root, ".git/HEAD", 4096); err == nil && !bytes.HasPrefix(head, []byte("ref:")) {
		refs["HEAD"] = strings.TrimSpace(string(head))
	}
	return refs, nil
}

// protectedPath reports whether rel, a path in the project, is executable
// configuration or an instruction file: judged by policy where one of its
// names could be (policy.NameCouldBeProtected) or it lies below one of
// the fixed protected paths.
func (g *gitRefs) protectedPath(rel string) bool {
	abs := g.project + "/" + rel
	maybe := false
	for seg := range strings.SplitSeq(rel, "/") {
		if policy.NameCouldBeProtected(seg) {
			maybe = true
			break
		}
	}
	for p := abs; !maybe && len(p) > len(g.project); p = filepath.Dir(p) {
		maybe = g.fixed[p]
	}
	return maybe && g.pl.Classify(abs).Protected()
}

// check looks at what the call changed, puts back what gave executable
// configuration content of the call's, and returns the lines that say so.
func (g *gitRefs) check(root int) []string {
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
		if fd, err = openBeneath(root, ".git", unix.O_PATH|unix.O_DIRECTORY); err == nil {
			_ = unix.Close(fd)
		}
	}
	if err != nil {
		say("could not look at git's refs and index after this +git call (%v): look at what it committed and staged (git log --all, git diff --cached) before you check anything out", err)
		return lines
	}
	after, err := g.listRefs()
	if err != nil {
		say("could not list git's refs after this +git call (%v): look at what it committed (git log --all) before you check anything out", err)
		return lines
	}
	headBefore := g.refs["HEAD"]
	if target, ok := strings.CutPrefix(strings.TrimSpace(g.head), "ref: "); ok {
		headBefore = g.refs[target]
	}
	for _, name := range slices.Sorted(maps.Keys(after)) {
		id := after[name]
		old, had := g.refs[name]
		if had && old == id {
			continue
		}
		if strings.HasPrefix(name, "refs/replace/") {
			if _, err := g.gitOut(nil, "update-ref", "-d", name, id); err != nil {
				say("this +git call made the replace ref %s, and loopguard could not delete it (%v): delete it (git replace -d) before you run git there", name, err)
				continue
			}
			say("deleted the replace ref %s, which this +git call made: it had git show other content in place of object %s wherever it is named (a hook, for your next checkout to write)", name, strings.TrimPrefix(name, "refs/replace/"))
			continue
		}
		base := old
		if !had {
			base = headBefore
		}
		paths, err := g.foreignConfig(base, id)
		if err != nil {
			say("could not look at what this +git call's %s (%s) changes (%v): look at it (git show %s) before you check it out", name, id, err, id)
			continue
		}
		if len(paths) == 0 {
			continue
		}
		held := "refs/loopguard-held/" + filepath.Base(g.run) + "/" + strings.TrimPrefix(name, "refs/")
		if _, err := g.gitOut(nil, "update-ref", held, id); err != nil {
			say("this +git call's %s (%s) gives %s content that is not the worktree's, and loopguard could not keep it aside (%v): do not check it out; look at it with git show %s", name, id, strings.Join(paths, ", "), err, id)
			continue
		}
		var uerr error
		if had {
			_, uerr = g.gitOut(nil, "update-ref", "--no-deref", name, old, id)
		} else {
			_, uerr = g.gitOut(nil, "update-ref", "--no-deref", "-d", name, id)
		}
		if uerr != nil {
			say("this +git call's %s (%s) gives %s content that is not the worktree's (executable configuration or an instruction file), and loopguard could not move it back (%v): do not check it out; it is kept as %s", name, id, strings.Join(paths, ", "), uerr, held)
			continue
		}
		was := "deleted it (new)"
		if had {
			was = "moved it back to " + old
		}
		say("this +git call's %s (%s) gives %s content that is not the worktree's (executable configuration or an instruction file: a checkout would write it, and git or an agent run it); loopguard %s, and keeps the call's commit as %s", name, id, strings.Join(paths, ", "), was, held)
	}
	return append(lines, g.checkIndex()...)
}

// foreignConfig is the paths of executable configuration that commit id
// changes from base (every one it holds when base is "") to content other
// than the worktree's (or to an entry the worktree does not have).
func (g *gitRefs) foreignConfig(base, id string) ([]string, error) {
	type blob struct{ rel, id string }
	var blobs []blob
	if base == "" {
		out, err := g.gitOut(nil, "ls-tree", "-r", "-z", id)
		if err != nil {
			return nil, err
		}
		for _, ent := range strings.Split(string(out), "\x00") {
			meta, rel, ok := strings.Cut(ent, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
				blobs = append(blobs, blob{rel, f[2]})
			}
		}
	} else {
		out, err := g.gitOut(nil, "diff-tree", "-r", "-z", "--no-renames", "--raw", "--diff-filter=AMT", base, id)
		if err != nil {
			return nil, err
		}
		// ":OLDMODE NEWMODE OLD NEW STATUS\0PATH\0", each.
		ents := strings.Split(string(out), "\x00")
		for i := 0; i+1 < len(ents); i += 2 {
			if f := strings.Fields(ents[i]); len(f) == 5 {
				blobs = append(blobs, blob{ents[i+1], f[3]})
			}
		}
	}
	var paths []string
	for _, b := range blobs {
		if g.protectedPath(b.rel) && !g.worktreeHas(b.id, b.rel) {
			paths = append(paths, b.rel)
		}
	}
	return paths, nil
}

// worktreeHas reports whether the worktree's entry rel holds the blob id:
// a file's content, or a link's target, hashed as git hashes a blob. It
// is read from the project's descriptor, through no link on the way.
func (g *gitRefs) worktreeHas(id, rel string) bool {
	dir, name := filepath.Split(rel)
	pfd, err := openBeneath(g.root, strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	var data []byte
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		target, err := fsx.ReadlinkAt(pfd, name)
		if err != nil {
			return false
		}
		data = []byte(target)
	case unix.S_IFREG:
		fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		f := os.NewFile(uintptr(fd), rel)
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxPinned+1)); err != nil || len(data) > maxPinned {
			return false
		}
	default:
		return false
	}
	return blobID(data, len(id)) == id
}

// blobID is git's name of a blob holding data, in the object format whose
// names are idLen hexadecimal digits long (SHA-1's 40, SHA-256's 64).
func blobID(data []byte, idLen int) string {
	h := sha1.New()
	if idLen == 2*sha256.Size {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// checkIndex puts back each index entry of executable configuration the
// call changed to content other than the worktree's file.
func (g *gitRefs) checkIndex() []string {
	now, err := readBeneath(g.root, ".git/index", 1<<30)
	if errors.Is(err, unix.ENOENT) {
		now, err = nil, nil
	}
	if err != nil {
		return []string{fmt.Sprintf("loopguard: could not read git's index after this +git call (%v): look at what it staged (git diff --cached) before you run git restore", err)}
	}
	if bytes.Equal(now, g.index) {
		return nil
	}
	before, after, err := g.indexes(now)
	if err != nil {
		return []string{fmt.Sprintf("loopguard: could not read git's index after this +git call (%v): look at what it staged (git diff --cached) before you run git restore", err)}
	}
	var lines []string
	for _, rel := range slices.Sorted(maps.Keys(after)) {
		meta := after[rel]
		f := strings.Fields(meta) // mode, object, stage
		if before[rel] == meta || len(f) != 3 || g.worktreeHas(f[1], rel) {
			continue // unchanged, the user's staged before the call, or the worktree's
		}
		var uerr error
		if was, ok := before[rel]; ok {
			bf := strings.Fields(was)
			_, uerr = g.gitOut(nil, "update-index", "--cacheinfo", bf[0]+","+bf[1]+","+rel)
		} else {
			_, uerr = g.gitOut(nil, "update-index", "--force-remove", "--", rel)
		}
		if uerr != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call staged %s content that is not the worktree's (%s), and loopguard could not put the index back (%v): run git restore --staged -- %s before git restore or a commit", rel, f[1], uerr, rel))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: put back git's index entry of %s: this +git call staged content that is not the worktree's (%s), executable configuration or an instruction file that git restore would write", rel, f[1]))
	}
	return lines
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

// indexes are the index's protected entries before the call and now:
// read from its bytes (readIndex), or given by git where they are in a
// form readIndex does not read.
func (g *gitRefs) indexes(now []byte) (before, after indexEntries, err error) {
	idLen := sha1.Size
	if cfg, err := readBeneath(g.root, ".git/config", maxPinned); err != nil {
		return nil, nil, err
	} else if sha256Objects(cfg) {
		idLen = sha256.Size
	}
	before, err = readIndex(g.index, idLen, g.protectedPath)
	if g.index == nil {
		before, err = indexEntries{}, nil
	}
	if err == nil {
		after, err = readIndex(now, idLen, g.protectedPath)
	}
	if !errors.Is(err, errGitFormat) {
		return before, after, err
	}
	// By git: the copy before the call in a file of the launch's own.
	ls := func(data []byte) (indexEntries, error) {
		var env []string
		if data != nil {
			f := filepath.Join(g.run, "index")
			if err := os.WriteFile(f, data, 0o600); err != nil {
				return nil, err
			}
			defer os.Remove(f)
			env = []string{"GIT_INDEX_FILE=" + f}
		}
		out, err := g.gitOut(env, "ls-files", "-s", "-z")
		if err != nil {
			return nil, err
		}
		m := indexEntries{}
		for _, ent := range strings.Split(string(out), "\x00") {
			if meta, rel, ok := strings.Cut(ent, "\t"); ok && g.protectedPath(rel) && strings.HasSuffix(meta, " 0") {
				m[rel] = meta
			}
		}
		return m, nil
	}
	before = indexEntries{}
	if g.index != nil {
		if before, err = ls(g.index); err != nil {
			return nil, nil, err
		}
	}
	after, err = ls(nil)
	return before, after, err
}
