//go:build linux

package confine

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
)

// A +git call writes git's object store, and git does not check that a
// blob it checks out is what its name says: the thirty-seventh attack run
// rewrote the hook's own blob in place (its name, every ref and index
// entry as they were, git status clean), and the user's next git reset
// --hard, restore or checkout -f wrote the call's hook; a pack of its own
// whose index gave the hook's name to its blob did the same. So the first
// stage watches the object store while the call runs (inotify, on the
// store, its 256 directories and pack/: an in-place write changes no
// directory) and, after it, reads each loose object the call made or
// changed and checks that its content is its name (and each pack it made
// or changed with git verify-pack); one that is not is held back, and a
// blob the index names whose worktree file is its content is written back.
// A pack's optional files (its reverse index, bitmap, the multi-pack
// index, which maps names to places in the packs) the call made or changed
// are held back: git reads packs without them. Where the watch could not
// be made or lost events, every loose object and pack changed since the
// call began is read.

// objectWatch is the watch on a project's object store during a call.
type objectWatch struct {
	fd   int              // the inotify descriptor (-1: none could be made)
	dirs map[int32]string // each watch's directory, below .git/objects ("" the store)
	pack [2]uint64        // pack/'s device and inode when the watch began
}

// objectWatchMask: what is heard of each directory.
// Not IN_ATTRIB: no change of content is one (git sets an object's time
// when it would write it again, every tree of a commit whose index has no
// cached trees), and a write needs a descriptor opened for writing, whose
// close is heard (IN_CLOSE_WRITE; a shared mapping's writes too, since it
// is closed before the check reads), or a truncate (IN_MODIFY).
const objectWatchMask = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// watchObjects starts watching the project's .git/objects.
func watchObjects(project string) *objectWatch {
	w := &objectWatch{fd: -1, dirs: map[int32]string{}}
	var st unix.Stat_t
	if unix.Lstat(filepath.Join(project, ".git", "objects", "pack"), &st) == nil {
		w.pack = [2]uint64{uint64(st.Dev), st.Ino}
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return w
	}
	store := filepath.Join(project, ".git", "objects")
	names := []string{"", "pack"}
	for i := range 256 {
		names = append(names, fmt.Sprintf("%02x", i))
	}
	for _, n := range names {
		wd, err := unix.InotifyAddWatch(fd, filepath.Join(store, n), objectWatchMask)
		if errors.Is(err, unix.ENOENT) && n != "" {
			continue // a directory made later is heard of in the store's
		}
		if err != nil {
			_ = unix.Close(fd)
			return w // every object is looked at after
		}
		w.dirs[int32(wd)] = n
	}
	w.fd = fd
	return w
}

// objectChanges are what a watch heard: loose objects ("ab/cdef..."),
// directories made whole ("ab"), whether pack/ changed, and whether
// everything must be looked at.
type objectChanges struct {
	loose, dirs map[string]bool
	pack, all   bool
}

// changes reads what the watch heard, and ends it.
func (w *objectWatch) changes() objectChanges {
	c := objectChanges{loose: map[string]bool{}, dirs: map[string]bool{}}
	if w == nil || w.fd < 0 {
		c.all = true
		return c
	}
	defer unix.Close(w.fd)
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n <= 0 || err != nil {
			if !errors.Is(err, unix.EAGAIN) {
				c.all = err != nil
			}
			return c
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			dir, ok := w.dirs[ev.Wd]
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0, ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
				c.all = true // events lost, or a directory watched is gone
			case !ok || ev.Mask&unix.IN_IGNORED != 0:
			case dir == "pack":
				c.pack = true
			case dir == "":
				if ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
					if name == "pack" {
						c.all = true
					} else {
						c.dirs[name] = true
					}
				}
			case ev.Mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) == 0:
				c.loose[dir+"/"+name] = true
			}
		}
	}
}

// checkObjects looks at the objects the call made or changed (what the
// watch heard, or everything changed since the call began), holds back
// those that are not what their names say, and says so.
func (g *gitRefs) checkObjects(h *holder) []string {
	c := g.objects.changes()
	store := ".git/objects"
	var lines []string
	var loose []string
	var packs []string
	since := func(dirfd int, name string) bool {
		s, ok := changedSince(dirfd, name, g.started)
		return ok && s
	}
	list := func(dir string, keep func(dirfd int, name string) bool) []string {
		fd, err := openBeneath(g.root, dir, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return nil
		}
		f := os.NewFile(uintptr(fd), dir)
		defer f.Close()
		names, _ := f.Readdirnames(-1)
		var out []string
		for _, n := range names {
			if keep(fd, n) {
				out = append(out, n)
			}
		}
		return out
	}
	switch {
	case c.all:
		for _, d := range list(store, func(_ int, n string) bool { return len(n) == 2 && isHex(n) }) {
			// A directory made or moved in during the call is read
			// whole: a move keeps its files' times (the thirty-ninth
			// attack run moved in objects/stash/03, written by an
			// earlier call, over the hook's blob's directory).
			keep := since
			if dfd, err := openBeneath(g.root, store, unix.O_PATH|unix.O_DIRECTORY); err == nil {
				if s, ok := changedSince(dfd, d, g.started); !ok || s || c.dirs[d] {
					keep = func(int, string) bool { return true }
				}
				_ = unix.Close(dfd)
			} else {
				keep = func(int, string) bool { return true }
			}
			for _, n := range list(store+"/"+d, keep) {
				loose = append(loose, d+"/"+n)
			}
		}
		c.pack = true
	default:
		for rel := range c.loose {
			loose = append(loose, rel)
		}
		for d := range c.dirs {
			if len(d) == 2 && isHex(d) {
				for _, n := range list(store+"/"+d, func(int, string) bool { return true }) {
					loose = append(loose, d+"/"+n)
				}
			}
		}
	}
	if c.pack {
		// A pack/ other than the one the watch began on (moved in, its
		// files' times kept: the thirty-ninth attack run's, written by
		// an earlier call beside it) is read whole.
		keep := since
		var st unix.Stat_t
		if g.objects == nil || statBeneath(g.root, store+"/pack", &st) != nil || [2]uint64{uint64(st.Dev), st.Ino} != g.objects.pack {
			keep = func(int, string) bool { return true }
		}
		packs = list(store+"/pack", keep)
	}
	hexLen := 2 * g.idLen
	bad := map[string]bool{} // object names held back
	for _, rel := range slices.Compact(slices.Sorted(slices.Values(loose))) {
		d, n, _ := strings.Cut(rel, "/")
		id := d + n
		if len(d) != 2 || len(id) != hexLen || !isHex(id) {
			continue // not an object's name: git reads none there
		}
		err := g.verifyLoose(store+"/"+rel, id)
		if err == nil || errors.Is(err, unix.ENOENT) {
			continue
		}
		where, herr := g.hold(store+"/"+rel, h)
		if herr != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call left .git/objects/%s, which is not the object its name says (%v), and loopguard could not move it (%v): git would check it out as %s; remove it before you run git there", rel, err, herr, id))
			continue
		}
		bad[id] = true
		lines = append(lines, fmt.Sprintf("loopguard: held back .git/objects/%s, which this +git call made or changed: it is not the object its name says (%v), and git would check it out as %s (%s)", rel, err, id, where))
	}
	// Packs: one made or changed is read whole by git; the optional
	// files git can go without are held back.
	for _, n := range packs {
		rel := store + "/pack/" + n
		switch {
		case strings.HasSuffix(n, ".idx"):
			if err := g.verifyPack(g.project + "/" + rel); err != nil {
				lines = append(lines, g.holdPack(strings.TrimSuffix(rel, ".idx"), err, h)...)
			}
		case strings.HasSuffix(n, ".rev"), strings.HasSuffix(n, ".bitmap"), strings.HasPrefix(n, "multi-pack-index"):
			if where, err := g.hold(rel, h); err == nil {
				lines = append(lines, fmt.Sprintf("loopguard: held back .git/objects/pack/%s, which this +git call made or changed: it tells git where objects are, and git reads the packs without it (%s)", n, where))
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return append(lines, g.restoreObjects(bad)...)
}

// verifyLoose reads the loose object rel (below the project) and checks
// that its content is named id.
func (g *gitRefs) verifyLoose(rel, id string) error {
	fd, err := openBeneath(g.root, rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return errors.New("not a file")
	}
	z, err := zlib.NewReader(f)
	if err != nil {
		return errors.New("not a zlib stream")
	}
	var h hash.Hash = sha1.New()
	if len(id) == 2*sha256.Size {
		h = sha256.New()
	}
	// A header git reads ("blob 123\0"), then that many bytes.
	head := make([]byte, 0, 32)
	one := make([]byte, 1)
	for len(head) < 32 {
		if _, err := io.ReadFull(z, one); err != nil {
			return errors.New("no header")
		}
		if one[0] == 0 {
			break
		}
		head = append(head, one[0])
	}
	kind, size, ok := strings.Cut(string(head), " ")
	n, err := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil || n < 0 || !slices.Contains([]string{"blob", "tree", "commit", "tag"}, kind) {
		return fmt.Errorf("a header git does not read (%q)", head)
	}
	h.Write(head)
	h.Write([]byte{0})
	if got, err := io.Copy(h, io.LimitReader(z, n)); err != nil || got != n {
		return fmt.Errorf("%d of %d bytes", got, n)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != id {
		return fmt.Errorf("its content is %s", got)
	}
	return nil
}

// packTimeout bounds git verify-pack, which reads a pack whole.
const packTimeout = 60 * time.Second

// verifyPack has git read the pack of the index idx whole: each object's
// name from its content, against the index.
func (g *gitRefs) verifyPack(idx string) error {
	_, err := g.runGitFor(packTimeout, nil, "", []string{"verify-pack", idx})
	return err
}

// holdPack holds back a pack (rel without .idx) and its files.
func (g *gitRefs) holdPack(rel string, why error, h *holder) []string {
	var lines []string
	for _, ext := range []string{".idx", ".pack", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes"} {
		where, err := g.hold(rel+ext, h)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this +git call made or changed %s%s, whose objects are not what their names say (%v), and loopguard could not move it (%v): remove it before you run git there", rel, ext, why, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: held back %s%s, which this +git call made or changed: its objects are not what their names say (%v) (%s)", rel, ext, why, where))
	}
	return lines
}

// restoreObjects, after objects were held back (bad: the loose ones, by
// name), writes back each blob git's index named before the call that
// git no longer finds, where the worktree file it names has that content:
// the call's rewrite of the hook's blob left the user's history without
// it.
func (g *gitRefs) restoreObjects(bad map[string]bool) []string {
	entries, _, err := readIndex(g.index, g.idLen, func(string) bool { return true })
	if err != nil {
		return []string{"loopguard: could not read git's index to write back what was held (" + err.Error() + "): git may say an object is missing; fetch it again from a clone"}
	}
	var ids, paths []string
	for key, v := range entries {
		if f := strings.Fields(v); len(f) == 3 && f[2] == "0" && !strings.Contains(key, "\x00") {
			ids, paths = append(ids, f[1]), append(paths, key)
		}
	}
	var lines []string
	if len(ids) > 0 {
		out, err := g.gitIn(strings.Join(ids, "\n")+"\n", "cat-file", "--batch-check=%(objecttype)")
		answers := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if err != nil || len(answers) != len(ids) {
			return append(lines, fmt.Sprintf("loopguard: could not ask git which objects are left (%v): git may say an object is missing; fetch it again from a clone", err))
		}
		for i, id := range ids {
			if !strings.HasSuffix(answers[i], " missing") || !g.worktreeHas(id, paths[i]) {
				continue
			}
			data, err := readBeneath(g.root, paths[i], maxPinned)
			if err == nil {
				err = g.writeLoose(id, data)
			}
			if err != nil {
				lines = append(lines, fmt.Sprintf("loopguard: could not write back object %s (%s, as the worktree has it): %v", id, paths[i], err))
				continue
			}
			delete(bad, id)
			lines = append(lines, fmt.Sprintf("loopguard: wrote back object %s from the worktree's %s", id, paths[i]))
		}
	}
	for id := range bad {
		if _, err := g.gitOut(nil, "cat-file", "-e", id); err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: object %s is no longer in the repository (the call's was held back): git will say so where it is needed; fetch it from a clone", id))
		}
	}
	return lines
}

// writeLoose writes the blob data as the loose object id (fsx.WriteFileAt:
// a temp file of a random name, renamed).
func (g *gitRefs) writeLoose(id string, data []byte) error {
	z, err := looseBlob(data)
	if err != nil {
		return err
	}
	dir := ".git/objects/" + id[:2]
	fd, err := openBeneath(g.root, dir, unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		if sfd, serr := openBeneath(g.root, ".git/objects", unix.O_PATH|unix.O_DIRECTORY); serr == nil {
			_ = unix.Mkdirat(sfd, id[:2], 0o755)
			_ = unix.Close(sfd)
		}
		fd, err = openBeneath(g.root, dir, unix.O_PATH|unix.O_DIRECTORY)
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return fsx.WriteFileAt(fd, id[2:], z, 0o444)
}

// looseBlob is a loose object's file of the blob data.
func looseBlob(data []byte) ([]byte, error) {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	fmt.Fprintf(zw, "blob %d\x00", len(data))
	zw.Write(data)
	err := zw.Close()
	return z.Bytes(), err
}

// isHex: s is lower-case hexadecimal.
func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s)%2 == 0 && strings.ToLower(s) == s
}
