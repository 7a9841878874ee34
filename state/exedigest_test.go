package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func sum(b string) string { s := sha256.Sum256([]byte(b)); return hex.EncodeToString(s[:]) }

// TestExeDigestCache: the cached digest is used while the file is the same,
// and a same-size replacement written in place with its mtime put back is
// still read again (its ctime moved).
func TestExeDigestCache(t *testing.T) {
	old := racyWindow
	racyWindow = 0
	defer func() { racyWindow = old }()
	s := newStore(t)
	exe := filepath.Join(t.TempDir(), "cargo")
	if err := os.WriteFile(exe, []byte("real cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(exe)
	if d, err := s.ExeDigest(exe); err != nil || d != sum("real cargo") {
		t.Fatalf("first read: %s %v", d, err)
	}
	recs, _ := filepath.Glob(filepath.Join(s.Dir, "exedigest", "*.json"))
	if len(recs) != 1 {
		t.Fatalf("cache records: %v", recs)
	}
	// The cache is what answers while the identity holds: a record whose
	// digest was changed is believed (the state dir is the trust anchor:
	// no agent call may write it).
	data, _ := os.ReadFile(recs[0])
	var rec exeDigestRecord
	_ = json.Unmarshal(data, &rec)
	rec.Digest = sum("cached")
	data, _ = json.Marshal(rec)
	_ = os.WriteFile(recs[0], data, 0o600)
	if d, _ := s.ExeDigest(exe); d != sum("cached") {
		t.Fatalf("the cache was not used: %s", d)
	}
	// Same size, same inode, mtime put back: ctime still differs.
	time.Sleep(30 * time.Millisecond)
	f, err := os.OpenFile(exe, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("evil cargo")
	f.Close()
	if err := os.Chtimes(exe, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if d, err := s.ExeDigest(exe); err != nil || d != sum("evil cargo") {
		t.Fatalf("replaced in place: got %s %v, want the new content's digest", d, err)
	}
	// Replaced by rename (a new inode).
	tmp := exe + ".new"
	_ = os.WriteFile(tmp, []byte("evil2 carg"), 0o755)
	_ = os.Rename(tmp, exe)
	_ = os.Chtimes(exe, fi.ModTime(), fi.ModTime())
	if d, _ := s.ExeDigest(exe); d != sum("evil2 carg") {
		t.Fatalf("replaced by rename: got %s", d)
	}
}

// TestExeDigestRacy: a file changed within the racy window is not cached.
func TestExeDigestRacy(t *testing.T) {
	s := newStore(t)
	exe := filepath.Join(t.TempDir(), "tool")
	_ = os.WriteFile(exe, []byte("x"), 0o755)
	if d, err := s.ExeDigest(exe); err != nil || d != sum("x") {
		t.Fatal(d, err)
	}
	if recs, _ := filepath.Glob(filepath.Join(s.Dir, "exedigest", "*.json")); len(recs) != 0 {
		t.Fatalf("a file written just now was cached: %v", recs)
	}
	if _, err := s.ExeDigest(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file has a digest")
	}
}
