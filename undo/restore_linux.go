//go:build linux

package undo

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/policy"
	"golang.org/x/sys/unix"
)

// Plan is what undoing one record does: computed under the project's
// lock (Session), shown, then applied.
type Plan struct {
	Meta Meta
	// PutBack are the paths put back as the record saw them before the
	// call, parents first.
	PutBack []Entry
	// Remove are the paths the call created (or turned into something
	// else), children first, as they are now.
	Remove []Entry
	// Changed are paths the call changed that have changed again since:
	// left as they are.
	Changed []string
	// NotRecorded are paths the call changed whose content the record
	// could not keep (Entry.Note says why): left as they are.
	NotRecorded []Entry
	// AfterFrom says what the call's after-state is when its launcher
	// did not record one: the next record's ID, or "now".
	AfterFrom string
	// Ended is when the call's after-state was recorded (zero when it was
	// not): what anyone changed in the project between Meta.Started and
	// it counts as the call's.
	Ended time.Time
	// before is the record's before-state, by path; replaced, the files
	// of the project now that undo replaces or removes (keeper).
	before   map[string]*Entry
	replaced map[string]*Entry
}

// Empty reports whether the plan does nothing.
func (p *Plan) Empty() bool { return len(p.PutBack) == 0 && len(p.Remove) == 0 }

// Session is a store with the project's lock held.
type Session struct {
	s    *Store
	lock *os.File
}

// Lock takes the project's lock without waiting: ErrBusy while a
// confined call runs there.
func (s *Store) Lock() (*Session, error) {
	if _, err := os.Lstat(s.Dir); err != nil {
		return nil, fmt.Errorf("%w for %s", ErrNoRecord, s.Project)
	}
	f, err := s.lock(false, nil)
	if err != nil {
		return nil, err
	}
	return &Session{s: s, lock: f}, nil
}

// Close lets the lock go.
func (u *Session) Close() error { return u.lock.Close() }

// Prepare computes the plan for record id ("" the newest).
func (u *Session) Prepare(id string) (*Plan, error) {
	s := u.s
	metas, bad, err := s.Records()
	if err != nil {
		return nil, err
	}
	if id == "" && len(bad) > 0 && (len(metas) == 0 || bad[0].ID > metas[0].ID) {
		// The last call's record is the one that cannot be read: the
		// newest readable one is an earlier call's, which undo without an
		// ID must not take back in its place.
		return nil, fmt.Errorf("the last call's record, %s, cannot be read (%v): it cannot be undone; undo --list names the records, and undo ID takes back an earlier one", bad[0].ID, bad[0].Err)
	}
	if len(metas) == 0 {
		return nil, fmt.Errorf("%w for %s", ErrNoRecord, s.Project)
	}
	i := 0
	if id != "" {
		i = slices.IndexFunc(metas, func(m Meta) bool { return m.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("%w %s for %s", ErrNoRecord, id, s.Project)
		}
	} else if !metas[0].Undone.IsZero() {
		return nil, &UndoneError{ID: metas[0].ID, At: metas[0].Undone}
	}
	p := &Plan{Meta: metas[i]}
	before, ok, err := s.manifest(p.Meta.Before)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("record %s: its before-state is missing", p.Meta.ID)
	}
	delta, finished, err := s.manifest("records/" + p.Meta.ID + "/after")
	if err != nil {
		return nil, err
	}
	var after []Entry
	if finished {
		after = overlay(before, delta)
		if fi, err := os.Lstat(filepath.Join(s.recordDir(p.Meta.ID), "after")); err == nil {
			p.Ended = fi.ModTime()
		}
	}
	bm := byPath(before)
	cur, err := current(s.Project, bm, byPath(after))
	if err != nil {
		return nil, err
	}
	if !finished {
		// The launcher did not finish (killed): the state at the next
		// record's start, or now, stands for the call's.
		after, p.AfterFrom = cur, "now"
		for j := i - 1; j >= 0; j-- {
			if next, ok, err := s.manifest(metas[j].Before); err == nil && ok {
				after, p.AfterFrom = next, metas[j].ID
				break
			}
		}
	}
	p.before = bm
	p.plan(bm, byPath(after), byPath(cur))
	return p, nil
}

// UndoneError: the newest record was undone already.
type UndoneError struct {
	ID string
	At time.Time
}

func (e *UndoneError) Error() string {
	return fmt.Sprintf("the last recorded call (%s) was undone already, at %s", e.ID, e.At.Local().Format(time.DateTime))
}

func byPath(ents []Entry) map[string]*Entry {
	m := make(map[string]*Entry, len(ents))
	for i := range ents {
		m[ents[i].Path] = &ents[i]
	}
	return m
}

// current lists the project as it is now.
func current(project string, before, after map[string]*Entry) ([]Entry, error) {
	w := &walker{skip: map[string]bool{".git": true}, targets: func(rel string) (known, recorded bool) {
		// Looked at as the record did: a target directory it recorded
		// (the call made a Cargo.toml beside it since) is compared too.
		if e := before[rel]; e != nil && e.Kind == Dir {
			return true, true
		}
		if e := after[rel]; e != nil && e.Kind == Dir {
			return true, true
		}
		return false, false
	}}
	return w.run(project)
}

// same reports whether x and y are one state of a path: both absent, or
// the same kind with the same identity (for a file: device, inode, size,
// times; a directory: its mode; a link: its inode and target).
func same(x, y *Entry) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	if x.Kind != y.Kind {
		return false
	}
	switch x.Kind {
	case Dir:
		return x.Mode == y.Mode
	case Link:
		return x.Target == y.Target && x.Dev == y.Dev && x.Ino == y.Ino
	}
	return x.key() == y.key()
}

func (p *Plan) plan(before, after, cur map[string]*Entry) {
	paths := make([]string, 0, len(before)+len(after))
	for k := range before {
		paths = append(paths, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			paths = append(paths, k)
		}
	}
	slices.Sort(paths)
	for _, rel := range paths {
		b, a, c := before[rel], after[rel], cur[rel]
		if same(b, a) {
			continue // the call left it alone
		}
		if !same(c, a) {
			p.Changed = append(p.Changed, rel)
			continue
		}
		if b != nil && (b.Kind == Skipped || b.Kind == File && b.Hash == "") {
			p.NotRecorded = append(p.NotRecorded, *b)
			continue
		}
		if b == nil && a != nil && a.Kind == Skipped {
			// Made by the call, and what it holds not looked at (a
			// directory past PATH_MAX, a kernel file system): not
			// removed, and said.
			p.NotRecorded = append(p.NotRecorded, *a)
			continue
		}
		if a != nil && (b == nil || (a.Kind == Dir) != (b.Kind == Dir)) {
			p.Remove = append(p.Remove, *a)
		}
		if b != nil {
			p.PutBack = append(p.PutBack, *b)
		}
		if c != nil && c.Kind == File {
			if p.replaced == nil {
				p.replaced = map[string]*Entry{}
			}
			p.replaced[rel] = c
		}
	}
	slices.Reverse(p.Remove) // children first
}

// Result is what Apply did.
type Result struct {
	PutBack, Removed []string
	// Failed: path → why it was left as it is.
	Failed map[string]string
	// Held: path → where it was moved, and why (heldGitDirs).
	Held map[string]string
	// Kept is the directory that holds a copy of each file undo replaced
	// or removed (KeptFiles of them), "" when none.
	Kept      string
	KeptFiles int
}

// Apply carries the plan out below the project, never following a link:
// every file is written to a temp file beside it, synced and renamed in
// place. What it could not do is in Result.Failed; the record is marked
// undone.
func (u *Session) Apply(p *Plan) (Result, error) {
	res := Result{Failed: map[string]string{}}
	root, err := unix.Open(u.s.Project, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return res, fmt.Errorf("failed to open the project: %w", err)
	}
	defer unix.Close(root)
	keep := u.newKeeper(p.Meta.ID, time.Now())
	kept := func(rel, what string) bool {
		c := p.replaced[rel]
		if c == nil || keep.done[rel] {
			return true
		}
		if err := keep.keep(root, *c); err != nil {
			res.Failed[rel] = fmt.Sprintf("not %s: a copy of it as it is now could not be kept first (%s)", what, errText(err))
			return false
		}
		return true
	}
	for _, e := range p.Remove {
		if !kept(e.Path, "removed") {
			continue
		}
		if err := remove(root, e); err != nil {
			res.Failed[e.Path] = "not removed: " + err.Error()
			continue
		}
		res.Removed = append(res.Removed, e.Path)
	}
	// A directory is made, or kept, writable by its owner while what it
	// holds is put back, and gets its own mode after (deepest first), as
	// tar does: a read-only directory a call removed (chmod -R u+w; rm
	// -rf) came back at 0555 with nothing in it.
	var dirs []Entry
	for _, e := range p.PutBack {
		if !kept(e.Path, "put back") {
			continue
		}
		if err := u.putBack(root, e); err != nil {
			res.Failed[e.Path] = "not put back: " + err.Error()
			continue
		}
		if e.Kind == Dir {
			dirs = append(dirs, e)
		}
		res.PutBack = append(res.PutBack, e.Path)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := setDirMode(root, dirs[i]); err != nil {
			res.Failed[dirs[i].Path] = "put back, but not its mode: " + err.Error()
		}
	}
	if keep.n > 0 {
		res.Kept, res.KeptFiles = keep.dir, keep.n
	}
	res.Held = heldGitDirs(root, p, res)
	maps.Copy(res.Held, heldExtensions(root, p, res))
	p.Meta.Undone = time.Now().UTC()
	if err := u.s.markUndone(p.Meta.ID, p.Meta.Undone); err != nil {
		return res, fmt.Errorf("the project was restored, but the record could not be marked undone: %w", err)
	}
	return res, nil
}

// errLink: a link, or something not a directory, where a parent directory
// should be.
var errLink = errors.New("a link or a file is where a directory of its path was (nothing is written through it)")

// openParent opens rel's parent directory below root, following no link.
func openParent(root int, rel string) (int, error) {
	dir := path.Dir(rel)
	if dir == "." {
		dir = "."
	}
	fd, err := unix.Openat2(root, dir, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
		return -1, errLink
	}
	return fd, err
}

// remove removes e (as the call left it) if it still is as the plan saw
// it.
func remove(root int, e Entry) error {
	pfd, err := openParent(root, e.Path)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	base := path.Base(e.Path)
	err = stillIs(pfd, base, e)
	if errors.Is(err, unix.EACCES) {
		// In a directory the call left its owner unable to search or
		// write (chmod 400): the owner's bits for this removal, its mode
		// put back after.
		if restore, ok := ownerBits(pfd, unix.S_IRWXU); ok {
			defer restore()
			err = stillIs(pfd, base, e)
		}
	}
	if err != nil {
		return err
	}
	flags := 0
	if e.Kind == Dir {
		flags = unix.AT_REMOVEDIR
	}
	err = unix.Unlinkat(pfd, base, flags)
	if errors.Is(err, unix.EACCES) {
		if restore, ok := ownerBits(pfd, unix.S_IRWXU); ok {
			defer restore()
			err = unix.Unlinkat(pfd, base, flags)
		}
	}
	if err != nil {
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return errors.New("the directory holds what was created after the call")
		}
		return err
	}
	return unix.Fsync(pfd)
}

// stillIs checks that name in dirfd is e's state.
func stillIs(dirfd int, name string, e Entry) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	now := Entry{Kind: e.Kind, Mode: st.Mode & 0o7777, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Dev: st.Dev, Ino: st.Ino, Target: e.Target}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		now.Kind = Dir
	} else if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		now.Kind = Link
	} else if st.Mode&unix.S_IFMT == unix.S_IFREG {
		now.Kind = File
	}
	if !same(&now, &e) {
		return errors.New("changed while undo ran")
	}
	return nil
}

func (u *Session) putBack(root int, e Entry) error {
	pfd, err := openParent(root, e.Path)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	base := path.Base(e.Path)
	switch e.Kind {
	case Dir:
		err := unix.Mkdirat(pfd, base, 0o700)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
		fd, err := unix.Openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return errLink
		}
		defer unix.Close(fd)
		// Its own mode once what it holds is back (setDirMode).
		if err := unix.Fchmod(fd, e.Mode|unix.S_IRWXU); err != nil {
			return err
		}
	case Link:
		tmp := tempName(base)
		if err := unix.Symlinkat(e.Target, pfd, tmp); err != nil {
			return err
		}
		if err := unix.Renameat(pfd, tmp, pfd, base); err != nil {
			_ = unix.Unlinkat(pfd, tmp, 0)
			return err
		}
	case File:
		if err := u.writeFile(pfd, base, e); err != nil {
			return err
		}
	default:
		return errors.New("not recorded")
	}
	return unix.Fsync(pfd)
}

// heldGitDirs looks at each directory undo put back or changed what it
// holds: one that is now a git directory (policy.IsGitDir) and was not in
// the record's before-state has its HEAD moved aside, beside itself under
// a name git does not read (HEAD.loopguard-held-RANDOM), and is named in
// what it returns. Undo's result mixes the call's before-state with the
// project now: the eighteenth attack run had one call write src/HEAD and
// src/config (no git directory yet), a second remove HEAD and make
// src/objects and src/refs, with what undo does not record in them; undo
// of the second put HEAD back, could not remove the two, and the user's
// git status in src ran the config's fsmonitor.
func heldGitDirs(root int, p *Plan, res Result) map[string]string {
	touched := map[string]bool{}
	for _, rel := range append(slices.Clone(res.PutBack), res.Removed...) {
		touched[path.Dir(rel)] = true
		if e := p.before[rel]; e != nil && e.Kind == Dir {
			touched[rel] = true
		}
	}
	held := map[string]string{}
	for _, d := range slices.Sorted(maps.Keys(touched)) {
		if wasGitDir(p.before, d) {
			continue
		}
		fd, err := unix.Openat2(root, d, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), d)
		des, _ := f.ReadDir(-1)
		isGit := policy.IsGitDir(func(yield func(string, os.FileMode) bool) {
			for _, de := range des {
				if !yield(de.Name(), de.Type()) {
					return
				}
			}
		})
		if isGit {
			head := path.Join(d, "HEAD")
			aside, err := moveAside(fd, "HEAD")
			if err != nil {
				held[head] = fmt.Sprintf("could not be moved aside (%v): with what undo put back, %s is a git directory, whose config git would run: remove it before you run git there", err, d)
			} else {
				held[head] = fmt.Sprintf("moved to %s: with what undo put back, %s was a git directory, whose config git would run", path.Join(d, aside), d)
			}
		}
		f.Close()
	}
	return held
}

// heldExtensions looks at each directory undo put something back in: an
// extension module there (NAME.so, NAME.cpython-311-x86_64-linux-gnu.so)
// that has a module's source or package beside it now (NAME.py, a
// directory NAME), the two not side by side in the record's
// before-state, and one of them put back by undo, is moved aside, beside
// itself under a name python does not import
// (NAME.so.loopguard-held-RANDOM), and named in what it returns. The
// extension module is what python imports in place of the source: the
// eighty-sixth attack run removed app/util.py in one call and built
// app/util.cpython-311-x86_64-linux-gnu.so in a second (no source beside
// it, so not held); undo of the first put util.py back beside it, git
// status was clean, and the user's python ran the .so. The launcher's
// sweep judges a pair a call makes so (extensionsBesideNew); undo's is
// judged here, as heldGitDirs judges a git directory undo assembles.
func heldExtensions(root int, p *Plan, res Result) map[string]string {
	back := map[string]bool{}
	dirs := map[string]bool{}
	for _, rel := range res.PutBack {
		back[rel] = true
		dirs[path.Dir(rel)] = true
	}
	held := map[string]string{}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		fd, err := unix.Openat2(root, d, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), d)
		des, _ := f.ReadDir(-1)
		kinds := map[string]os.FileMode{}
		for _, de := range des {
			kinds[de.Name()] = de.Type()
		}
		rel := func(name string) string { return path.Join(d, name) }
		for _, de := range des {
			name := de.Name()
			stem, _, _ := strings.Cut(name, ".")
			if stem == "" || !strings.HasSuffix(name, ".so") || de.Type()&^os.ModeSymlink != 0 {
				continue
			}
			src := ""
			if typ, ok := kinds[stem+".py"]; ok && typ&^os.ModeSymlink == 0 {
				src = stem + ".py"
			} else if typ, ok := kinds[stem]; ok && typ.IsDir() {
				src = stem
			}
			if src == "" || !back[rel(name)] && !back[rel(src)] {
				continue
			}
			if b, s := p.before[rel(name)], p.before[rel(src)]; b != nil && s != nil && b.Kind != Dir && (s.Kind == Dir) == (src == stem) {
				continue // side by side before the call: the user's own
			}
			aside, err := moveAside(fd, name)
			if err != nil {
				held[rel(name)] = fmt.Sprintf("could not be moved aside (%v): with what undo put back, it is an extension module beside %s, which python would import in place of that source: remove it before you run python there", err, rel(src))
			} else {
				held[rel(name)] = fmt.Sprintf("moved to %s: with what undo put back, it was an extension module beside %s, which python would import in place of that source", rel(aside), rel(src))
			}
		}
		f.Close()
	}
	return held
}

// moveAside renames name, in the directory open as fd, beside itself
// under a name no program loads it by (NAME.loopguard-held-RANDOM, or
// loopguard-held-RANDOM where that is too long), never over another, and
// returns that name. A directory whose mode leaves its owner no write bit
// (chmod 500 by the call) is given it for the rename and put back.
func moveAside(fd int, name string) (string, error) {
	var r [4]byte
	_, _ = rand.Read(r[:])
	aside := name + ".loopguard-held-" + hex.EncodeToString(r[:])
	if len(aside) > 255 {
		aside = "loopguard-held-" + hex.EncodeToString(r[:])
	}
	err := unix.Renameat2(fd, name, fd, aside, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EACCES) {
		if restore, ok := ownerBits(fd, unix.S_IRWXU); ok {
			err = unix.Renameat2(fd, name, fd, aside, unix.RENAME_NOREPLACE)
			restore()
		}
	}
	return aside, err
}

// wasGitDir reports whether the directory d was a git directory in the
// before-state (a bare repository that is the project itself).
func wasGitDir(before map[string]*Entry, d string) bool {
	return policy.IsGitDir(func(yield func(string, os.FileMode) bool) {
		for _, name := range []string{"HEAD", "objects", "refs", "commondir"} {
			e := before[path.Join(d, name)]
			if e == nil {
				continue
			}
			typ := os.ModeDevice
			switch e.Kind {
			case File:
				typ = 0
			case Link:
				typ = os.ModeSymlink
			case Dir:
				typ = os.ModeDir
			}
			if !yield(name, typ) {
				return
			}
		}
	})
}

// setDirMode gives the directory e, put back, its mode, not following a
// link on its way.
func setDirMode(root int, e Entry) error {
	pfd, err := openParent(root, e.Path)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	fd, err := unix.Openat(pfd, path.Base(e.Path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errLink
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, e.Mode)
}

// writeFile writes e's content, checked against its hash, to a temp file
// in dirfd, syncs it, and renames it to name.
func (u *Session) writeFile(dirfd int, name string, e Entry) error {
	if len(e.Hash) != 64 {
		return errors.New("no content recorded")
	}
	src, err := os.Open(u.s.blobPath(e.Hash))
	if err != nil {
		return fmt.Errorf("its recorded content is missing: %w", err)
	}
	defer src.Close()
	tmp := tempName(name)
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		f.Close()
		if !ok {
			_ = unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(src, MaxFileSize+1)); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != e.Hash {
		return errors.New("its recorded content does not match its hash")
	}
	if err := f.Chmod(os.FileMode(e.Mode & 0o777)); err != nil {
		return err
	}
	if e.Mode&0o7000 != 0 {
		if err := unix.Fchmod(fd, e.Mode); err != nil {
			return err
		}
	}
	ts := []unix.Timespec{unix.NsecToTimespec(e.Mtime), unix.NsecToTimespec(e.Mtime)}
	if err := unix.UtimesNanoAt(dirfd, tmp, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		return err
	}
	ok = true
	return nil
}

// tempName is a name beside name for what replaces it.
func tempName(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	t := "." + name
	if len(t) > 200 {
		t = t[:200]
	}
	return t + ".loopguard-undo-" + hex.EncodeToString(b[:])
}
