package confine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/policy"
	"golang.org/x/sys/unix"
)

// A package.json is written by npm install, so it is no executable
// configuration; but the entries of it that the project's git hooks and
// tools run by name are code the user's next commit runs unconfined
// (husky's default hook is `npm test`: the forty-ninth attack run changed
// scripts.test and the user's commit ran it). Each such package.json is
// kept before the call (policy.PackageScripts names them and their
// entries), and where the call changed one of those entries it is put
// back whole after the call, the call's version held (holder); a change
// to any other entry (a dependency npm install added) stays.

// pkgPin is one package.json as it was before the call.
type pkgPin struct {
	rel  string   // below the project
	keys []string // the entries run by name ("scripts.test", "lint-staged")
	// entry is the name itself (a link is one), as lstat gives it; zero
	// when there is none.
	entry pkgEntry
	data  []byte // what npm reads there (through a link in the project); nil: none, or not a file loopguard reads
	mode  uint32
	vals  map[string]string // each entry as policy.PackageEntries reads it ("" when absent)
}

// pkgEntry is a directory entry's identity, its type and its change time.
type pkgEntry struct {
	dev, ino    uint64
	typ         uint32
	ctime, nsec int64
}

// lstatPkg is rel's entry beneath root (its directory reached through no
// link), or an error (ENOENT: none).
func lstatPkg(root int, rel string) (pkgEntry, error) {
	dir, err := openBeneath(root, filepath.Dir(rel), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return pkgEntry{}, err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if err := unix.Fstatat(dir, filepath.Base(rel), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return pkgEntry{}, err
	}
	return pkgEntry{dev: st.Dev, ino: st.Ino, typ: st.Mode & unix.S_IFMT, ctime: st.Ctim.Sec, nsec: st.Ctim.Nsec}, nil
}

// maxPackageJSON bounds the package.json a pin keeps.
const maxPackageJSON = 8 << 20

// snapshotPkgScripts keeps each package.json the plan names (beneath the
// project's descriptor root): its entry, and what npm reads there.
func snapshotPkgScripts(plan Plan, root int) []pkgPin {
	var pins []pkgPin
	for _, path := range slices.Sorted(maps.Keys(plan.pkgScripts)) {
		rel, ok := strings.CutPrefix(path, plan.Project+"/")
		if !ok {
			continue
		}
		pin := pkgPin{rel: rel, keys: plan.pkgScripts[path]}
		pin.entry, _ = lstatPkg(root, rel)
		if data, mode, err := readPkg(root, rel); err == nil {
			pin.data, pin.mode = data, mode
		}
		pin.vals = policy.PackageEntries(pin.data, pin.keys)
		pins = append(pins, pin)
	}
	return pins
}

// newWorkspacePins are pins, as of no file before the call, for the
// package.json of each workspace the call made (one the plan's
// workspace roots name now and did not name before, before: the
// workspace directories then): npm test --workspaces runs its
// scripts.test, and the fifty-fourth attack run's packages/evil ran on
// the user's next commit. Its entries that the hooks run are then put
// back to none: the file is moved out.
func newWorkspacePins(plan Plan, before map[string]bool, pins []pkgPin) []pkgPin {
	pinned := map[string]bool{}
	for _, p := range pins {
		pinned[p.rel] = true
	}
	var out []pkgPin
	for _, m := range slices.Sorted(maps.Keys(plan.pkgWorkspaces)) {
		keys := plan.pkgWorkspaces[m]
		for _, d := range policy.WorkspaceDirs(m) {
			rel, ok := strings.CutPrefix(filepath.Join(d, "package.json"), plan.Project+"/")
			if !ok || before[d] || pinned[rel] {
				continue
			}
			pinned[rel] = true
			out = append(out, pkgPin{rel: rel, keys: keys, vals: policy.PackageEntries(nil, keys)})
		}
	}
	return out
}

// workspacesNow are the workspace directories the plan's workspace roots
// name now.
func workspacesNow(plan Plan) map[string]bool {
	now := map[string]bool{}
	for m := range plan.pkgWorkspaces {
		for _, d := range policy.WorkspaceDirs(m) {
			now[d] = true
		}
	}
	return now
}

// readPkg reads rel beneath root as npm reads it: a regular file, through
// a link that leads to one in the project (a workspace's shared
// package.json), never out of it.
func readPkg(root int, rel string) ([]byte, uint32, error) {
	fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: uint64(unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, 0, fmt.Errorf("not a regular file")
	}
	if st.Size > maxPackageJSON {
		return nil, 0, fmt.Errorf("larger than %d bytes", maxPackageJSON)
	}
	data := make([]byte, 0, st.Size+1)
	for {
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			break
		}
		data = data[:len(data)+n]
		if len(data) == cap(data) {
			if len(data) > maxPackageJSON {
				return nil, 0, fmt.Errorf("larger than %d bytes", maxPackageJSON)
			}
			data = slices.Grow(data, 4096)
		}
	}
	return data, st.Mode & 0o7777, nil
}

// restore puts back each package.json whose entries the call changed
// (or that it made a link or another kind of file), and says so.
func restorePkgScripts(pins []pkgPin, root int, h *holder) []string {
	var lines []string
	for _, pin := range pins {
		entry, lerr := lstatPkg(root, pin.rel)
		data, _, err := readPkg(root, pin.rel)
		var changed []string
		switch {
		case errors.Is(lerr, unix.ENOENT) && pin.data == nil:
			continue // none now, and none loopguard could read before: nothing to put back
		case errors.Is(lerr, unix.ENOENT):
			// Removed: pnpm then reads a package.yaml the call may
			// have written (the fiftieth attack run's).
			changed = []string{"the file itself (removed)"}
		case lerr != nil:
			changed = []string{"the file itself (" + lerr.Error() + ")"}
		case pin.entry.typ != 0 && entry.typ != pin.entry.typ:
			// A link where a file was, a FIFO: rewritten in place or
			// renamed over (sed -i, an editor), a file stays one.
			changed = []string{"the file itself (another kind of file in its place)"}
		case err != nil && pin.data == nil && entry == pin.entry:
			continue // as unreadable as before, and untouched (a link out of the project, a FIFO)
		case err != nil:
			changed = []string{"the file itself (" + err.Error() + ")"}
		default:
			now := policy.PackageEntries(data, pin.keys)
			for _, k := range pin.keys {
				if now[k] != pin.vals[k] {
					changed = append(changed, k)
				}
			}
		}
		if len(changed) == 0 {
			continue
		}
		if err := putBackPkg(pin, root, h, &lines); err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this call changed %s of %s, which the project's git hooks or its configuration run by name, and loopguard could not put it back (%v): check it before you commit or run it", strings.Join(changed, ", "), pin.rel, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: put back %s as it was: this call changed %s, which the project's git hooks or its configuration run by name, unconfined (npm test, npx lint-staged); a change there needs the user's exact approval", pin.rel, strings.Join(changed, ", ")))
	}
	return lines
}

// putBackPkg moves the call's package.json out of the way (h) and writes
// the one from before the call in its place (a new file, synced, renamed
// there: never a partial one).
func putBackPkg(pin pkgPin, root int, h *holder, lines *[]string) error {
	dir, err := openBeneath(root, filepath.Dir(pin.rel), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	name := filepath.Base(pin.rel)
	where, _, err := h.move(dir, name, pin.rel)
	switch {
	case errors.Is(err, unix.ENOENT): // removed by the call: nothing to move
	case err != nil:
		return fmt.Errorf("moving the call's out of the way: %w", err)
	default:
		*lines = append(*lines, "loopguard: the call's "+pin.rel+": "+where)
	}
	if pin.data == nil {
		return nil // none was there before the call
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tmp := name + ".loopguard-" + hex.EncodeToString(b[:])
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, pin.mode)
	if err != nil {
		return err
	}
	werr := unix.Fchmod(fd, pin.mode) // as it was, whatever the umask
	for rest := pin.data; werr == nil && len(rest) > 0; {
		var n int
		n, werr = unix.Write(fd, rest)
		rest = rest[n:]
	}
	if werr == nil {
		werr = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat2(dir, tmp, dir, name, unix.RENAME_NOREPLACE)
	}
	if werr != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
	}
	return werr
}
