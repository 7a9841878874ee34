package keyring

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestAnchorItem: the anchor of a state directory is an item of its own
// beside the key, one per directory path; LoadWithAnchor reads both, and a
// directory without one reads "" with the key (control: another
// directory's anchor is not read).
func TestAnchorItem(t *testing.T) {
	f := newFake()
	useFake(t, f)
	ctx := context.Background()
	if _, err := Create(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := AnchorAccount("/home/u/.local/state/loopguard"), AnchorAccount("/tmp/other/loopguard")
	if a == b || a == Account || !strings.HasPrefix(a, anchorPrefix) || AnchorAccount("/home/u/.local/state/loopguard/") != a {
		t.Fatalf("accounts %q %q", a, b)
	}
	key, rec, err := LoadWithAnchor(ctx, a)
	if err != nil || len(key) != KeySize || rec != "" {
		t.Fatalf("no anchor yet: %d-byte key, %q, %v", len(key), rec, err)
	}
	if err := StoreAnchor(ctx, a, `{"v":1}`); err != nil {
		t.Fatal(err)
	}
	key2, rec, err := LoadWithAnchor(ctx, a)
	if err != nil || rec != `{"v":1}` || string(key2) != string(key) {
		t.Fatalf("with the anchor: %q %v", rec, err)
	}
	if rec, err := LoadAnchor(ctx, b); err != nil || rec != "" {
		t.Fatalf("control: another directory's anchor read: %q %v", rec, err)
	}
	if got, _ := LoadAnchor(ctx, a); got != `{"v":1}` {
		t.Fatalf("LoadAnchor = %q", got)
	}
	for _, bad := range []string{"", "a\nb", strings.Repeat("x", maxAnchorLen+1)} {
		if err := StoreAnchor(ctx, a, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("StoreAnchor(%q...) = %v", bad[:min(len(bad), 8)], err)
		}
	}
	if err := DeleteAnchor(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := DeleteAnchor(ctx, a); err != nil {
		t.Fatalf("deleting no anchor: %v", err)
	}
	if _, rec, err := LoadWithAnchor(ctx, a); err != nil || rec != "" {
		t.Fatalf("after delete: %q %v", rec, err)
	}
	// The key is untouched by all of it; without a key, no anchor either.
	if err := Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadWithAnchor(ctx, a); !errors.Is(err, ErrNoKey) {
		t.Fatalf("no key: %v", err)
	}
}
