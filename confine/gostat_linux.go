//go:build linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// sweepGoStat removes from the plan's Go stat directory every entry the
// call created there that is not a regular .info file: go writes its stat
// there and nothing else (its temporary files are renamed over the
// stat, or removed), and nothing the call wrote there may pass for a
// cached module's go.mod or source. The directory is reached as the
// sweep reaches the project's (reach): under project-write a chmod 311 of
// it kept the sweep from reading it, and a go.mod the call planted there
// stayed in the user's module cache. It returns what it says.
func sweepGoStat(p Plan) []string {
	defer removeMade(p.goStatMade)
	if p.GoStatDir == "" {
		return nil
	}
	parent, err := unix.Open(filepath.Dir(p.GoStatDir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	fd, lines, err := reach(parent, filepath.Dir(p.GoStatDir), filepath.Base(p.GoStatDir), unix.O_RDONLY|unix.O_DIRECTORY)
	_ = unix.Close(parent)
	if err != nil {
		if !errors.Is(err, unix.ENOENT) {
			lines = append(lines, fmt.Sprintf("loopguard: could not look in %s after this call (%v): remove what is there but .info files before a go command uses this module", p.GoStatDir, err))
		}
		return lines
	}
	// Its owner's write bit too, to remove what is not a stat (chmod 511).
	if line, ok := ownerMayMove(fd, p.GoStatDir, "what the call left in it is"); ok {
		lines = append(lines, line)
	}
	f := os.NewFile(uintptr(fd), p.GoStatDir)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return append(lines, fmt.Sprintf("loopguard: could not look in %s after this call (%v): remove what is there but .info files before a go command uses this module", p.GoStatDir, err))
	}
	for _, name := range names {
		if p.goStatBefore[name] {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG && strings.HasSuffix(name, ".info") {
			continue
		}
		flags := 0
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			flags = unix.AT_REMOVEDIR
		}
		if err := unix.Unlinkat(fd, name, flags); err != nil && !errors.Is(err, unix.ENOENT) {
			lines = append(lines, fmt.Sprintf("loopguard: could not remove %s, which this call left in the module cache (%v): remove it before a go command uses this module", filepath.Join(p.GoStatDir, name), err))
		}
	}
	return lines
}
