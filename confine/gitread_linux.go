//go:build linux

package confine

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
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

// readRefs is every ref of the git directory gitDir (below root, through
// no link) with the object it names, loose over packed, and HEAD as
// "HEAD" when it is detached; symbolic refs are left out (what they name
// is listed).
func readRefs(root int, gitDir string) (map[string]string, error) {
	if _, err := fstatBeneath(root, path.Join(gitDir, "reftable")); err == nil {
		return nil, errGitFormat
	}
	refs := map[string]string{}
	if data, err := readBeneath(root, path.Join(gitDir, "packed-refs"), 256<<20); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if id, name, ok := strings.Cut(line, " "); ok && isObjectID(id) && strings.HasPrefix(name, "refs/") {
				refs[name] = id
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
			case e.Type().IsRegular():
				if n++; n > maxRefs {
					return errGitFormat
				}
				data, err := readBeneath(root, path.Join(gitDir, name), 4096)
				if err != nil {
					return err
				}
				if id := strings.TrimSpace(string(data)); isObjectID(id) {
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
	if id := strings.TrimSpace(string(head)); isObjectID(id) {
		refs["HEAD"] = id
	}
	return refs, nil
}

// isObjectID: s is a SHA-1's or a SHA-256's name, in lower-case hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// indexEntry is an index entry's mode and object, as ls-files -s gives
// them ("100644 ID 0"), by path.
type indexEntries map[string]string

// readIndex is the index file data's entries of stage 0 that keep
// reports true for (a path), for object names idLen bytes long. Versions
// 2, 3 and 4 are read; a split index (the "link" extension) is not.
func readIndex(data []byte, idLen int, keep func(string) bool) (indexEntries, error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, errGitFormat
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, errGitFormat
	}
	count := binary.BigEndian.Uint32(data[8:12])
	out := indexEntries{}
	off := 12
	var prev []byte
	for range count {
		fixed := 40 + idLen + 2
		if off+fixed > len(data) {
			return nil, errGitFormat
		}
		mode := binary.BigEndian.Uint32(data[off+24 : off+28])
		id := hex.EncodeToString(data[off+40 : off+40+idLen])
		flags := binary.BigEndian.Uint16(data[off+40+idLen : off+fixed])
		p := off + fixed
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, errGitFormat
			}
			p += 2
		}
		var name []byte
		if version == 4 {
			strip, n := indexVarint(data[p:])
			if n == 0 || strip > uint64(len(prev)) {
				return nil, errGitFormat
			}
			p += n
			end := bytes.IndexByte(data[p:], 0)
			if end < 0 {
				return nil, errGitFormat
			}
			name = append(append([]byte(nil), prev[:uint64(len(prev))-strip]...), data[p:p+end]...)
			off = p + end + 1
		} else {
			end := bytes.IndexByte(data[p:], 0)
			if end < 0 {
				return nil, errGitFormat
			}
			name = data[p : p+end]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off += (p - off + end + 8) &^ 7
		}
		prev = name
		if flags>>12&3 == 0 && keep(string(name)) {
			out[string(name)] = strings.Join([]string{modeOctal(mode), id, "0"}, " ")
		}
	}
	// The extensions: a split index's entries are elsewhere.
	for off+8 <= len(data)-idLen {
		sig := string(data[off : off+4])
		size := int(binary.BigEndian.Uint32(data[off+4 : off+8]))
		if sig == "link" {
			return nil, errGitFormat
		}
		if size < 0 || off+8+size > len(data) {
			break
		}
		off += 8 + size
	}
	return out, nil
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
