package install

import (
	"bytes"
	"fmt"
	"os"
)

// A file loopguard owns whole (OpenCode's plugin): init writes it, doctor
// compares it with what init would write, uninstall deletes it. A file at
// that path that is not loopguard's is never overwritten.

// ApplyOwned writes content at path (atomically, with a backup record, as
// Apply does), unless it is already there. A file at path that isOurs does
// not recognise is refused.
func ApplyOwned(path, backupDir string, content []byte, isOurs func([]byte) bool, dryRun bool) (*Result, error) {
	return apply(path, backupDir, editor{
		merge: func(data []byte) ([]byte, bool, error) {
			if data != nil && !isOurs(data) {
				return nil, false, &FileError{Path: path, Reason: "a file that is not loopguard's is there",
					hint: "move it aside (or remove it) if loopguard may write its own file there"}
			}
			if bytes.Equal(data, content) {
				return data, false, nil
			}
			return content, true, nil
		},
		hasOurs: isOurs,
	}, dryRun)
}

// RemoveOwned deletes the file at path when it is loopguard's, and its
// backup record.
func RemoveOwned(path, backupDir string, isOurs func([]byte) bool, dryRun bool) (*Result, error) {
	data, _, err := ReadSettings(path)
	if err != nil {
		return nil, err
	}
	res := &Result{Path: path, Existed: data != nil, Old: data, New: data}
	if data == nil || !isOurs(data) {
		return res, nil
	}
	res.Changed, res.New, res.Deleted = true, nil, true
	if dryRun {
		return res, nil
	}
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("failed to remove %s: %w", path, err)
	}
	_ = os.Remove(recordPath(backupDir, path))
	return res, nil
}
