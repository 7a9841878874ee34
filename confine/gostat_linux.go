//go:build linux

package confine

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// sweepGoStat removes from the plan's Go stat directory every entry the
// call created there that is not a regular .info file: go writes its stat
// there and nothing else (its temporary files are renamed over the
// stat, or removed), and nothing the call wrote there may pass for a
// cached module's go.mod or source.
func sweepGoStat(p Plan) {
	defer removeMade(p.goStatMade)
	if p.GoStatDir == "" {
		return
	}
	fd, err := unix.Open(p.GoStatDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), p.GoStatDir)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return
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
		_ = unix.Unlinkat(fd, name, flags)
	}
}
