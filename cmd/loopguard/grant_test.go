package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// TestGrantsShowsAnyPort: grants shows a +network granted before ports
// were named as any port, and a grant to named ports by its ports
// (control); --json keeps each capability's own name.
func TestGrantsShowsAnyPort(t *testing.T) {
	now := time.Now()
	st, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"Bash(git fetch *)@/usr/bin/git +network", "Bash(git pull *)@/usr/bin/git +network:22,443"} {
		g := token.Grant{Principal: "u", Agent: token.MainAgent, Session: token.Any, Tool: "Bash", ArgHash: token.Any, Scope: r, Expiry: now.Add(time.Hour),
			KeyID: strings.Repeat("ab", 8), MAC: make([]byte, 32)}
		if _, err := st.PutGrant(&g, state.GrantRecord{}); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := grantsRun(&grantsOptions{out: &out, store: st, now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "project-write+git+network(any-port)") || !strings.Contains(out.String(), "project-write+git+network:22,443 ") {
		t.Errorf("grants:\n%s", out.String())
	}
	out.Reset()
	if err := grantsRun(&grantsOptions{out: &out, store: st, now: func() time.Time { return now }, json: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"capability": "project-write+git+network"`) && !strings.Contains(out.String(), `"capability":"project-write+git+network"`) {
		t.Errorf("grants --json:\n%s", out.String())
	}
}
