package fsx

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestContentDigest(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	_ = os.WriteFile(p, []byte("hello"), 0o644)
	d, id, err := ContentDigest(p)
	sum := sha256.Sum256([]byte("hello"))
	if err != nil || d != hex.EncodeToString(sum[:]) || id.Size != 5 {
		t.Fatalf("ContentDigest = %s %+v %v", d, id, err)
	}
	if _, _, err := ContentDigest(filepath.Dir(p)); err == nil {
		t.Error("a directory has a content digest")
	}
}
