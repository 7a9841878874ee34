//go:build linux

package confine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/loopguard/loopguard/fsx"
	"golang.org/x/sys/unix"
)

// HoldLinksOut judges, after loopguard undo put the project back, every
// link in it as a call's sweep judges the links a call made or changed
// the way of (linkJudge): one that leads now into a launcher's scratch
// directory (whose caches outlast a call) or loopguard's state directory,
// or whose text cannot be read, is held back, and said in what it
// returns. Undo's
// result mixes a call's before-state with the project now: the
// eighteenth attack run had a call replace src/u by a link, a later call
// make src/l to u/../../.., which the sweep judged while u was a link,
// and undo of the first call turn u back into a directory, so that l led
// into the Go cache, where the first call had left a git directory: the
// user's git status through l ran its config. The scratch directories
// judged are those of the user's temp directory, of /tmp and of Claude
// Code's sandbox (TMPDIR/claude-UID), whichever the agent ran with. The
// walk goes through no link, and not into .git.
func HoldLinksOut(project string, uid int) []string {
	e := envOf()
	root, err := openProject(project, [2]uint64{})
	if err != nil {
		return []string{fmt.Sprintf("loopguard: could not look at the project's links after undo (%v): run no git through a link in it before you look", err)}
	}
	defer unix.Close(root)
	var b [8]byte
	_, _ = rand.Read(b[:])
	p := Plan{Project: project, Root: project, RunDir: "undo-" + hex.EncodeToString(b[:])}
	held := &holder{p: p, e: e}
	defer held.close()
	w := newSweeper(p, e, held, root)
	// The scratch directories and the state directory, not /proc and
	// /dev/fd (which a call's sweep also keeps links from): a link of the
	// user's own to /dev/stdin in testdata/ is not undo's to remove.
	var outs []string
	for _, tmp := range ScratchRoots(e.TempDir, uid) {
		outs = append(outs, outsOf(ScratchDirIn(tmp, uid), e.Places.StateDir)...)
	}
	outs = slices.DeleteFunc(outs, func(o string) bool { return o == "/proc" || o == "/dev/fd" })
	slices.Sort(outs)
	w.judge.outs = slices.Compact(outs)
	w.holdLinksBelow("")
	return w.lines
}

// holdLinksBelow holds back each link in the directory rel, and below it,
// that leads out (HoldLinksOut).
func (w *sweeper) holdLinksBelow(rel string) {
	// Not w.read: a directory its owner cannot list is the user's to
	// keep so here (undo gives back no bits), and is passed over.
	fd, err := openBeneath(w.root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return
	}
	for _, d := range des {
		name := d.Name()
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := fsx.ReadlinkAt(fd, name)
			out, why := true, whyLink
			if err == nil {
				out, why = w.judge.judge(filepath.Join(w.real, filepath.Dir(crel)), target, false)
			}
			if out {
				w.hold(fd, rel, name, crel, why)
			}
		case d.IsDir() && !(rel == "" && name == ".git") && len(crel) < unix.PathMax:
			w.holdLinksBelow(crel)
		}
	}
}
