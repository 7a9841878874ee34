package doctor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// TestCheckDangerGrants: doctor warns about a live grant only DANGER calls
// match (it covers nothing); a grant whose wildcard can take a DANGER call
// still covers the others, and is no warning (control).
func TestCheckDangerGrants(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		rule string
		warn bool
		want string
	}{
		{"Bash(git reset --hard)@/usr/bin/git +git", true, "git reset --hard discards changes"},
		{"Bash(git push --force *)@/usr/bin/git +git +network:443", true, "git push rewrites or deletes history"},
		{"Bash(git push *)@/usr/bin/git +git +network:443", false, "each is held for an exact approval"},
		{"Bash(git log *)@/usr/bin/git", false, "no grant covers a call with a DANGER line"},
	} {
		st, err := state.Open(filepath.Join(t.TempDir(), "state"))
		if err != nil {
			t.Fatal(err)
		}
		g := token.Grant{Principal: "u", Agent: token.MainAgent, Session: token.Any, Tool: "Bash", ArgHash: token.Any, Scope: c.rule, Expiry: now.Add(time.Hour),
			KeyID: strings.Repeat("ab", 8), MAC: make([]byte, 32)}
		if _, err := st.PutGrant(&g, state.GrantRecord{}); err != nil {
			t.Fatal(err)
		}
		r := checkDangerGrants(st, now)
		if (r.status == statusWarn) != c.warn || !strings.Contains(r.detail, c.want) {
			t.Errorf("%s: %v %s, want warn %t naming %q", c.rule, r.status, r.detail, c.warn, c.want)
		}
	}
}
