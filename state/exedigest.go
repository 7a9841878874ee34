package state

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/loopguard/loopguard/fsx"
)

// racyWindow: a file whose ctime is this recent is not cached. The kernel
// stamps ctime with a coarse clock (a few milliseconds), so two writes in
// one tick leave the same identity; git's index has the same "racy clean"
// rule.
var racyWindow = 2 * time.Second

// exeDigestRecord caches the content digest of one executable under the
// identity the file had when it was read.
type exeDigestRecord struct {
	V      int          `json:"v"`
	Path   string       `json:"path"`
	ID     fsx.Identity `json:"id"`
	Digest string       `json:"digest"`
}

// ExeDigest returns the SHA-256 (hex) of the executable at path, from the
// cache when the file's identity (device, inode, size, mtime, ctime, mode)
// is the one recorded with the digest, else read and cached.
//
// The cache lives in the state dir, which no agent call may write: the
// hook denies every tool that touches it, whatever grants exist, and
// Claude Code's sandbox mounts it read-only. ctime is in the identity
// because nothing short of root can set it: replacing the file in place,
// same size, with the old mtime put back, still moves it.
func (s *Store) ExeDigest(path string) (string, error) {
	name := hashKey("exe", path) + ".json"
	dir := s.path("exedigest")
	id, err := fsx.StatIdentity(path)
	if err != nil {
		return "", err
	}
	if data, err := readFile(filepath.Join(dir, name), 4096); err == nil && id.Ctime > 0 {
		var rec exeDigestRecord
		if json.Unmarshal(data, &rec) == nil && rec.V == 1 && rec.Path == path && rec.ID == id && len(rec.Digest) == 64 {
			return rec.Digest, nil
		}
	}
	digest, readID, err := fsx.ContentDigest(path)
	if err != nil {
		return "", err
	}
	if time.Since(time.Unix(0, readID.Ctime)) < racyWindow {
		return digest, nil
	}
	if data, err := json.Marshal(exeDigestRecord{V: 1, Path: path, ID: readID, Digest: digest}); err == nil {
		// A lost cache entry costs one more read: no fsync.
		_ = writeFile(dir, name, data, false)
	}
	return digest, nil
}
