//go:build linux

package team

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

// TestTeamApproveRefusesChangedWarnings: the machine holding a call dates
// an approval from Vault when it published the record it holds now, so a
// record published again with another warning of what jailed calls
// changed in the project, while the approver read the first, must not be
// approved as the new one: team approve refuses it. Control: read again,
// it is approved.
func TestTeamApproveRefusesChangedWarnings(t *testing.T) {
	s := vaulttest.Start(t)
	agent := clitest.CustodyOf(s.AgentToken(t, "machine-a"))
	alice := clitest.CustodyOf(s.AddApprover(t, "alice"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := clitest.BashPending(t, "s-warned", "make all", "/work/app")
	p.ProjectDir, p.Reason = "/work/app", "leaves_jail"
	p.SetPlanted("jailed calls changed these files in the project so far; an approved call runs outside the jail and may run or send them: README.md (loopguard undo --list)")
	key := publishRaw(t, agent, "machine-a", p)
	shown, err := approve.TeamGet(ctx, alice, key)
	if err != nil {
		t.Fatal(err)
	}
	p.SetPlanted("jailed calls changed these files in the project so far; an approved call runs outside the jail and may run or send them: README.md, Makefile (loopguard undo --list)")
	publishRaw(t, agent, "machine-a", p)
	m := approve.ForVault(ctx, alice, "vault:userpass-alice")
	if _, _, err := approve.TeamExact(ctx, m, shown, 10*time.Minute, time.Now()); err == nil || !strings.Contains(err.Error(), "changed while it was shown") {
		t.Fatalf("approved a record whose warnings changed while it was shown: %v", err)
	}
	again, err := approve.TeamGet(ctx, alice, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := approve.TeamExact(ctx, m, again, 10*time.Minute, time.Now()); err != nil {
		t.Fatalf("control: the record as it is now: %v", err)
	}
}

// TestTeamApproveCarriesVersionShown: the ninety-fourth attack run's
// repeat publishes the record again with a later Seen and the same words
// (a jailed rewrite of a file they named already); team approve's check
// passes, and the approval carries the Seen of the version shown, which
// its machine dates it by (hooks, fetchApproval), not the later one.
func TestTeamApproveCarriesVersionShown(t *testing.T) {
	s := vaulttest.Start(t)
	agent := clitest.CustodyOf(s.AgentToken(t, "machine-a"))
	alice := clitest.CustodyOf(s.AddApprover(t, "alice"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := clitest.BashPending(t, "s-seen", "make all", "/work/app")
	p.ProjectDir, p.Reason = "/work/app", "leaves_jail"
	p.SetPlanted("jailed calls changed these files in the project so far; an approved call runs outside the jail and may run or send them: Makefile (loopguard undo --list)")
	first := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond).Add(123)
	p.Created, p.Seen = first, first
	key := publishRaw(t, agent, "machine-a", p)
	shown, err := approve.TeamGet(ctx, alice, key)
	if err != nil {
		t.Fatal(err)
	}
	if !shown.Says.Seen.Equal(first) {
		t.Fatalf("the record's Seen read back as %v, published %v", shown.Says.Seen, first)
	}
	p.Seen = first.Add(15 * time.Second) // a repeat: the same words
	publishRaw(t, agent, "machine-a", p)
	m := approve.ForVault(ctx, alice, "vault:userpass-alice")
	if _, _, err := approve.TeamExact(ctx, m, shown, 10*time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	tok, _, at, err := agent.Fetch(ctx, p.ID)
	if err != nil || tok == "" {
		t.Fatalf("the approval: %q, %v", tok, err)
	}
	if !at.Equal(first) {
		t.Errorf("the approval says it was shown the version seen at %v; shown %v, published again at %v", at, first, p.Seen)
	}
}
