package doctor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// TestCheckNetworkGrants: doctor warns about a +network granted before
// ports were named (any port, listening) and about a standing network for
// a program that runs project code; a grant to named ports alone is ok
// (control), and every line says the network also reaches this machine's
// services and the local network.
func TestCheckNetworkGrants(t *testing.T) {
	now := time.Now()
	put := func(t *testing.T, st *state.Store, rules ...string) {
		t.Helper()
		for _, r := range rules {
			g := token.Grant{Principal: "u", Agent: token.MainAgent, Session: token.Any, Tool: "Bash", ArgHash: token.Any, Scope: r, Expiry: now.Add(time.Hour),
				KeyID: strings.Repeat("ab", 8), MAC: make([]byte, 32)}
			if _, err := st.PutGrant(&g, state.GrantRecord{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name  string
		rules []string
		warn  bool
		want  []string
	}{
		{"ports named (control)", []string{"Bash(git fetch *)@/usr/bin/git +git +network:22,443"}, false,
			[]string{"TCP connect to the ports each names", "+network:22,443", "services on this machine and the local network"}},
		{"granted before ports were named", []string{"Bash(git fetch *)@/usr/bin/git +network"}, true,
			[]string{"before ports were named", "any TCP port and listening", "revoke"}},
		{"project code", []string{"Bash(make test)@/usr/bin/make +network:443"}, true,
			[]string{"runs project code", "Makefile", "--ignore-scripts"}},
		{"no network", []string{"Bash(git log *)@/usr/bin/git"}, false, []string{"no live grant gives a program the network"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := state.Open(filepath.Join(t.TempDir(), "state"))
			if err != nil {
				t.Fatal(err)
			}
			put(t, st, c.rules...)
			r := checkNetworkGrants(st, now)
			if (r.status == statusWarn) != c.warn {
				t.Errorf("status %v, want warn %t: %s", r.status, c.warn, r.detail)
			}
			for _, w := range c.want {
				if !strings.Contains(r.detail+" "+r.fix, w) {
					t.Errorf("lacks %q: %s / %s", w, r.detail, r.fix)
				}
			}
		})
	}
}
