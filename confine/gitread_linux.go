//go:build linux

package confine

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What gitRefs reads of a git directory itself, without starting a git:
// a git is about 6 ms a process here, and a +git call looked at so with
// three of them took 36 ms longer (40 interleaved pairs). Where what it
// finds is not what it knows (a reftable, a split index, a format it does
// not read), it says so (errGitFormat) and the user's git is asked.

// errGitFormat: the refs or the index are in a form readRefs or
// readIndex does not read.
var errGitFormat = errors.New("a form of git's refs or index this does not read")

// maxRefs bounds the loose refs readRefs reads: past it, git is asked.
const maxRefs = 20000

// pseudoRefs are the refs git keeps at the top of its directory that a
// command of the user's reads (git reset --hard ORIG_HEAD, a merge's
// commit of MERGE_HEAD, git merge FETCH_HEAD, --continue): each lists
// one object or more, one a line (FETCH_HEAD's first field).
var pseudoRefs = []string{"ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "BISECT_HEAD"}

// readRefs is every ref of the git directory gitDir (below root, through
// no link) with the objects it names (space-separated; one but for a
// pseudo-ref), loose over packed; HEAD as "HEAD" when it is detached; a
// symbolic ref as what it leads to. It reads only what it knows exactly
// as git writes it: anything else (a loose ref that is a link or holds
// more than an object's name, a name in upper case, a line of
// packed-refs it does not know, a symbolic ref to what is not a ref, a
// reftable) is errGitFormat, for git to be asked: git reads more than
// this does, and what it reads and this did not went unseen (the
// thirty-fifth attack run's "ID junk", upper-case names and a link).
func readRefs(root int, gitDir string) (map[string]string, error) {
	if _, err := fstatBeneath(root, path.Join(gitDir, "reftable")); err == nil {
		return nil, errGitFormat
	}
	refs := map[string]string{}
	symbolic := map[string]string{}
	if data, err := readBeneath(root, path.Join(gitDir, "packed-refs"), 256<<20); err == nil {
		for i, line := range strings.Split(string(data), "\n") {
			id, name, ok := strings.Cut(line, " ")
			switch {
			case line == "" || i == 0 && strings.HasPrefix(line, "# pack-refs with:"):
			case strings.HasPrefix(line, "^") && isObjectID(line[1:]):
			case ok && isObjectID(id) && validRefName(name) && refs[name] == "":
				refs[name] = id
			default:
				return nil, errGitFormat
			}
		}
	} else if !errors.Is(err, unix.ENOENT) {
		return nil, err
	}
	n := 0
	var walk func(rel string) error
	walk = func(rel string) error {
		fd, err := openBeneath(root, path.Join(gitDir, rel), unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), rel)
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := rel + "/" + e.Name()
			switch {
			case e.IsDir():
				if err := walk(name); err != nil {
					return err
				}
			case !e.Type().IsRegular() || !validRefName(name):
				if strings.HasSuffix(name, ".lock") && e.Type().IsRegular() {
					continue // a lock, which gitRefs removes first
				}
				return errGitFormat
			default:
				if n++; n > maxRefs {
					return errGitFormat
				}
				data, err := readBeneath(root, path.Join(gitDir, name), 4096)
				if err != nil {
					return err
				}
				id, target, err := refText(data)
				if err != nil {
					return err
				}
				if target != "" {
					symbolic[name] = target
				} else {
					refs[name] = id
				}
			}
		}
		return nil
	}
	if err := walk("refs"); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, err
	}
	head, err := readBeneath(root, path.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return nil, err
	}
	id, target, err := refText(head)
	if err != nil {
		return nil, err
	}
	if target == "" {
		refs["HEAD"] = id
	}
	for _, p := range pseudoRefs {
		data, err := readBeneath(root, path.Join(gitDir, p), 1<<20)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if p == "FETCH_HEAD" {
				line, _, _ = strings.Cut(line, "\t")
			}
			if !isObjectID(line) {
				return nil, errGitFormat
			}
			ids = append(ids, line)
		}
		refs[p] = strings.Join(ids, " ")
	}
	// A symbolic ref is what it leads to (to 5 links, as git follows).
	for name, target := range symbolic {
		for range 5 {
			if t, ok := symbolic[target]; ok {
				target = t
			}
		}
		id, ok := refs[target]
		if !ok {
			if _, sym := symbolic[target]; sym || !strings.HasPrefix(target, "refs/") {
				return nil, errGitFormat
			}
			continue // a ref not made yet (an unborn branch)
		}
		refs[name] = id
	}
	return refs, nil
}

// refText reads a loose ref's text as git writes it: an object's name or
// "ref: " and a ref's name, and a newline.
func refText(data []byte) (id, target string, err error) {
	text, ok := strings.CutSuffix(string(data), "\n")
	if !ok {
		return "", "", errGitFormat
	}
	if t, ok := strings.CutPrefix(text, "ref: "); ok {
		if !validRefName(t) {
			return "", "", errGitFormat
		}
		return "", t, nil
	}
	if !isObjectID(text) {
		return "", "", errGitFormat
	}
	return text, "", nil
}

// validRefName: name is a ref below refs/ whose every component git
// allows (no "..", no control or special characters, none starting with
// a dot or ending in .lock).
func validRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") || strings.HasSuffix(name, "/") {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	for comp := range strings.SplitSeq(name, "/") {
		if comp == "" || strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}

// isObjectID: s is a SHA-1's or a SHA-256's name, in lower-case hex.
func isObjectID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && isHex(s)
}

// indexEntries are index entries' modes, objects and stages, as ls-files
// -s gives them ("100644 ID 0"), by path (a conflict's stage 1 to 3 by
// the path, a NUL and the stage: indexKey).
type indexEntries map[string]string

// indexKey is an entry's key in indexEntries.
func indexKey(rel string, stage int) string {
	if stage == 0 {
		return rel
	}
	return rel + "\x00" + strconv.Itoa(stage)
}

// readIndex is the index file data's entries that keep reports true for
// (a path), for object names idLen bytes long, and where its extensions
// begin. Versions 2, 3 and 4 are read, each entry's name by the length
// its flags give as git reads it (the thirty-fifth attack run padded a
// name with bytes this read as the name's and git did not); a split index
// (the "link" extension) is not.
func readIndex(data []byte, idLen int, keep func(string) bool) (indexEntries, int, error) {
	fail := func() (indexEntries, int, error) { return nil, 0, errGitFormat }
	if len(data) < 12+idLen || string(data[:4]) != "DIRC" {
		return fail()
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return fail()
	}
	count := binary.BigEndian.Uint32(data[8:12])
	out := indexEntries{}
	off := 12
	var prev []byte
	for range count {
		fixed := 40 + idLen + 2
		if off+fixed > len(data) {
			return fail()
		}
		mode := binary.BigEndian.Uint32(data[off+24 : off+28])
		id := hex.EncodeToString(data[off+40 : off+40+idLen])
		flags := binary.BigEndian.Uint16(data[off+40+idLen : off+fixed])
		nameLen := int(flags & 0xfff)
		p := off + fixed
		var extFlags uint16
		if flags&0x4000 != 0 {
			if version < 3 || p+2 > len(data) {
				return fail()
			}
			extFlags = binary.BigEndian.Uint16(data[p : p+2])
			p += 2
		}
		if p > len(data) {
			return fail()
		}
		var name []byte
		if version == 4 {
			strip, n := indexVarint(data[p:])
			if n == 0 || strip > uint64(len(prev)) {
				return fail()
			}
			p += n
			end := bytes.IndexByte(data[p:], 0)
			if end < 0 {
				return fail()
			}
			name = append(append([]byte(nil), prev[:uint64(len(prev))-strip]...), data[p:p+end]...)
			off = p + end + 1
		} else {
			end := bytes.IndexByte(data[p:], 0)
			if end < 0 {
				return fail()
			}
			name = data[p : p+end]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off += (p - off + end + 8) &^ 7
			if off > len(data) {
				return fail()
			}
		}
		if nameLen < 0xfff && len(name) != nameLen || nameLen == 0xfff && len(name) < 0xfff {
			return fail()
		}
		// A sparse directory entry (a tree, mode 040000) stands for what
		// it holds, and a skip-worktree entry of what keep wants is
		// committed as staged whatever the worktree holds: neither is read
		// here (the thirty-sixth attack run's .githooks/ entry, a tree of
		// its own, committed its hook).
		if mode&0o170000 == 0o040000 {
			return fail()
		}
		prev = name
		if keep(string(name)) && extFlags&0x4000 != 0 {
			return fail()
		}
		if keep(string(name)) {
			out[indexKey(string(name), int(flags>>12&3))] = strings.Join([]string{modeOctal(mode), id, strconv.Itoa(int(flags >> 12 & 3))}, " ")
		}
	}
	ext := off
	// The extensions: a split index's entries are elsewhere.
	for off+8 <= len(data)-idLen {
		sig := string(data[off : off+4])
		size := int(binary.BigEndian.Uint32(data[off+4 : off+8]))
		if sig == "link" || size < 0 || off+8+size > len(data)-idLen {
			return fail()
		}
		off += 8 + size
	}
	if off != len(data)-idLen {
		return fail()
	}
	return out, ext, nil
}

// indexExtension is the index data's extension sig (TREE, REUC), whose
// extensions begin at ext; nil when it has none.
func indexExtension(data []byte, ext, idLen int, sig string) []byte {
	for off := ext; off+8 <= len(data)-idLen; {
		size := int(binary.BigEndian.Uint32(data[off+4 : off+8]))
		if string(data[off:off+4]) == sig {
			return data[off : off+8+size]
		}
		off += 8 + size
	}
	return nil
}

// resolveUndoNames is the paths the index's resolve-undo record (a REUC
// extension, whole, as indexExtension gives it) holds stages of, with the
// objects of each; ok is false where it is not as git writes one.
func resolveUndoNames(reuc []byte, idLen int) (names map[string][]string, ok bool) {
	names = map[string][]string{}
	if len(reuc) < 8 {
		return names, reuc == nil
	}
	b := reuc[8:]
	for len(b) > 0 {
		end := bytes.IndexByte(b, 0)
		if end < 0 {
			return nil, false
		}
		name := string(b[:end])
		b = b[end+1:]
		var modes [3]uint64
		for i := range modes {
			end := bytes.IndexByte(b, 0)
			if end < 0 {
				return nil, false
			}
			m, err := strconv.ParseUint(string(b[:end]), 8, 32)
			if err != nil {
				return nil, false
			}
			modes[i] = m
			b = b[end+1:]
		}
		for _, m := range modes {
			if m == 0 {
				continue
			}
			if len(b) < idLen {
				return nil, false
			}
			names[name] = append(names[name], hex.EncodeToString(b[:idLen]))
			b = b[idLen:]
		}
	}
	return names, true
}

// withoutExtensions is the index data (whose extensions begin at ext)
// without the extensions drop names, and its checksum made again; ok is
// false when it had none of them. git takes a cached tree (TREE) it finds
// valid for what it commits: the thirty-fifth attack run's call left the
// entries as they were and put a tree of its own, holding its hook, as
// .githooks' cached tree, and the user's next commit committed it. And
// git checkout -m (git restore --merge) makes a conflict again from the
// resolve-undo stages (REUC): the thirty-seventh attack run's call
// recorded its hook as all three, and the user's checkout -m -- . wrote
// it.
func withoutExtensions(data []byte, ext, idLen int, drop []string) (out []byte, ok bool) {
	out = append([]byte(nil), data[:ext]...)
	for off := ext; off+8 <= len(data)-idLen; {
		size := int(binary.BigEndian.Uint32(data[off+4 : off+8]))
		if slices.Contains(drop, string(data[off:off+4])) {
			ok = true
		} else {
			out = append(out, data[off:off+8+size]...)
		}
		off += 8 + size
	}
	h := sha1.New()
	if idLen == sha256.Size {
		h = sha256.New()
	}
	h.Write(out)
	return h.Sum(out), ok
}

// indexVarint is git's offset encoding (index format version 4), and the
// bytes it took (0: none).
func indexVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	n := 1
	for c&128 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		c = b[n]
		n++
		v = (v+1)<<7 | uint64(c&127)
	}
	return v, n
}

func modeOctal(m uint32) string {
	const digits = "01234567"
	var b [6]byte
	for i := 5; i >= 0; i-- {
		b[i] = digits[m&7]
		m >>= 3
	}
	return string(b[:])
}

// readBeneath reads the regular file rel below root (through no link), at
// most max bytes.
func readBeneath(root int, rel string, max int64) ([]byte, error) {
	fd, err := openBeneath(root, rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errGitFormat
	}
	data, err := io.ReadAll(bufio.NewReader(io.LimitReader(f, max+1)))
	if err == nil && int64(len(data)) > max {
		return nil, errGitFormat
	}
	return data, err
}

// fstatBeneath is rel's stat below root, through no link.
func fstatBeneath(root int, rel string) (unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := openBeneath(root, rel, unix.O_PATH)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	return st, unix.Fstat(fd, &st)
}
