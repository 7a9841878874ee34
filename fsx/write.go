package fsx

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// TempPrefix starts the name of every temp file WriteFile creates: a
// reader listing a directory skips names with it (a crash can leave one).
const TempPrefix = ".tmp-"

// WriteFile replaces path with data so that a crash leaves the old file or
// the new one, never a part of either: a new temp file in the same
// directory (O_EXCL under a random name, so a planted file or symlink is
// never written through), written, set to mode (whatever the umask),
// fsynced, renamed over path, and the directory fsynced. With durable
// false both fsyncs are skipped: for files whose loss in a crash costs a
// retry, never one an allow rests on. The directory must exist. The one
// atomic write of loopguard's state, audit head, config and the agents'
// settings files.
func WriteFile(path string, data []byte, mode fs.FileMode, durable bool) error {
	if err := writeRename(path, data, mode, durable); err != nil || !durable {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// WriteFileSynced is WriteFile with the temp file fsynced before the
// rename and the directory not fsynced after it: a crash leaves the old
// file or the new one, whole, but may undo the replacement. For a file
// whose previous version is as good after a crash (the audit head: an
// older seal, behind its log).
func WriteFileSynced(path string, data []byte, mode fs.FileMode) error {
	return writeRename(path, data, mode, true)
}

// writeRename writes data to a new temp file beside path (fsynced if
// sync) and renames it over path.
func writeRename(path string, data []byte, mode fs.FileMode, sync bool) error {
	name, err := tempName()
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), name)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	merr := f.Chmod(mode)
	var serr error
	if sync {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(werr, merr, serr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// tempName is a new temp file's name: TempPrefix and 16 random hex
// digits.
func tempName() (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	return TempPrefix + hex.EncodeToString(rnd[:]), nil
}

// SyncDir fsyncs directory dir, so that a rename or a new file in it
// survives a crash.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		// A directory cannot be fsynced there; the rename itself is
		// atomic (MoveFileEx with MOVEFILE_REPLACE_EXISTING).
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
