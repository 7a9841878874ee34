//go:build linux

package confine

import (
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/policy"
	"golang.org/x/sys/unix"
)

// whyVersionFile: mise and asdf read a version file's path: as the
// directory whose programs are the tool.
const whyVersionFile = "a version file (.nvmrc, .python-version...) this call made or changed that holds path:, ref: or a path, which makes that directory's programs the tool the user's shell runs after its next cd (mise, asdf)"

// versionFileRuns reports whether the version file name, in the
// directory open as fd, makes mise run a program of the file system
// (policy.VersionFileRuns: the ninety-third attack run's .nvmrc of
// path:$PWD/build/nd). One that is no regular file (a link), or that
// cannot be read, counts as one that does; one holding a version (20)
// does not.
func versionFileRuns(fd int, name string) bool {
	f, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(f)
	var st unix.Stat_t
	if unix.Fstat(f, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return true
	}
	buf := make([]byte, 8<<10)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(f, buf[n:])
		if err != nil {
			return true
		}
		if m == 0 {
			break
		}
		n += m
	}
	return policy.VersionFileRuns(buf[:n])
}

// lookVersionFiles judges each version file the plan saw that the call
// changed since: one rewritten in place (printf 'path:...' > .nvmrc)
// changes no directory, so no look at a directory finds it. One that
// makes mise run a program of the file system is held back; one that
// names a version is left (echo 22 > .nvmrc).
func (w *sweeper) lookVersionFiles() {
	for _, path := range w.p.versionFiles {
		rel, ok := strings.CutPrefix(path, w.p.Project+"/")
		if !ok {
			continue
		}
		dir, name := filepath.Dir(rel), filepath.Base(rel)
		if dir == "." {
			dir = ""
		}
		fd, lines, err := reach(w.root, "", dir, unix.O_RDONLY|unix.O_DIRECTORY)
		w.lines = append(w.lines, lines...)
		if err != nil {
			continue
		}
		if since, ok := changedSince(fd, name, w.p.started); ok && since && versionFileRuns(fd, name) {
			w.hold(fd, dir, name, rel, whyVersionFile)
		}
		unix.Close(fd)
	}
}
