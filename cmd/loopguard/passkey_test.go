package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	webconsole "github.com/loopguard/loopguard/console"
	"github.com/loopguard/loopguard/state"
)

// TestPasskeyRemoveRun drives passkey remove from its options: a unique
// prefix removes the passkey once, its name escaped, as of the options'
// clock; a second remove and an unknown id are refused.
func TestPasskeyRemoveRun(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := &webconsole.Store{Dir: webconsole.DirIn(st.Dir)}
	created := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, k := range []*webconsole.Passkey{
		{ID: "q7dexxxxxxxxxxxxxxxx", Name: "alice\x1b[2Jphone", RPID: "localhost", Created: created},
		{ID: "zzzzxxxxxxxxxxxxxxxx", Name: "bob", RPID: "localhost", Created: created},
	} {
		if err := cs.PutPasskey(k); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	var out bytes.Buffer
	o := &passkeyRemoveOptions{out: &out, store: st, console: cs, now: func() time.Time { return now }, id: "q7de"}
	if err := passkeyRemoveRun(o); err != nil {
		t.Fatal(err)
	}
	if want := "Removed the passkey q7dexxxxxxxx (alice\\x1b[2Jphone): it signs nothing from now on, and its sign-ins end.\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	keys, err := cs.Passkeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		switch k.ID {
		case "q7dexxxxxxxxxxxxxxxx":
			if !k.Removed.Equal(now) || k.Removed.Location() != time.UTC {
				t.Errorf("removed at %v, want %v in UTC", k.Removed, now)
			}
		default:
			if !k.Active() {
				t.Errorf("control: %s was removed too", k.ID)
			}
		}
	}
	if err := passkeyRemoveRun(o); err == nil || !strings.Contains(err.Error(), "removed already") {
		t.Errorf("second remove: %v", err)
	}
	o.id = "nope"
	if err := passkeyRemoveRun(o); err == nil {
		t.Error("an unknown id was removed")
	}
}
