package loopguard

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/e2e/claudetest"
)

// useVault points a guard's config at the Vault server with the token tok.
func useVault(t *testing.T, g *Guard, s *vaulttest.Server, tok string) {
	t.Helper()
	if err := s.WriteConfig(filepath.Join(g.Home, ".config", "loopguard"), tok); err != nil {
		t.Fatal(err)
	}
}

// The real client on "machine A" (one HOME, an agent-policy Vault token)
// is held; alice approves the call from "machine B" (another HOME, her
// Vault login, no state shared with A: only Vault), with `loopguard team
// approve` at a terminal; A's identical retry runs once, under alice's Vault
// identity, and the next retry is consumed.
func TestVaultApprovalFromAnotherMachineRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // machine A: init registers the hooks in the project
	s := vaulttest.Start(t)
	useVault(t, e.g, s, s.AgentToken(t, "agent-machine-a").Token)
	b, err := NewGuard(lgBin, t.TempDir()) // machine B
	if err != nil {
		t.Fatal(err)
	}
	useVault(t, b, s, s.AddApprover(t, "alice").Token)

	runApprovedOnce(t, e, b, "alice", "runs.txt", "toolu_va")
	last, err := e.g.Audit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range last {
		if a.Decision == "allow" && a.Reason == "exact_grant" {
			found = true
		}
	}
	if !found {
		t.Errorf("no exact_grant allow in A's audit log: %+v", last)
	}
}

// reviewTeamOnTTY runs `loopguard review --backend vault` on machine g at a
// terminal: it approves the first call shown with a and the first 4
// characters of its digest, then quits. It returns the screen.
func reviewTeamOnTTY(ctx context.Context, g *Guard, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.Bin, "review", "--backend", "vault")
	cmd.Dir, cmd.Env = dir, g.Env()
	term, err := startOnPTY(cmd)
	if err != nil {
		return "", err
	}
	defer term.close()
	step := func(want, typed string) error {
		if sc, err := term.waitFor(ctx, want); err != nil {
			return fmt.Errorf("review --backend vault: %q did not show: %w\nscreen:\n%s", want, err, sc)
		}
		return term.write(typed)
	}
	screen, err := term.waitFor(ctx, "[q]uit:")
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return screen, fmt.Errorf("review --backend vault showed no call: %w\nscreen:\n%s", err, screen)
	}
	m := regexp.MustCompile(`digest: ([0-9a-f]{64})`).FindStringSubmatch(screen)
	if m == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return screen, fmt.Errorf("no digest on the screen:\n%s", screen)
	}
	for _, s := range [][2]string{{"[q]uit:", "a"}, {"Type the first 4 characters", m[1][:4] + "\r"}, {"Approved ", "q"}} {
		if err := step(s[0], s[1]); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return term.screen(), err
		}
	}
	werr := cmd.Wait()
	screen = term.drain()
	if werr != nil {
		return screen, fmt.Errorf("review --backend vault: %w\nscreen:\n%s", werr, screen)
	}
	return screen, nil
}

// The real client on machine A (an agent-policy Vault token) is held;
// alice on machine B approves it in `loopguard review --backend vault` at a
// terminal, and grants `Bash(ls *)` with `loopguard grant` under the Vault
// backend: the grant goes to Vault, not to B's disk, and A's next matching
// calls run without a decision, while a call outside the rule still waits.
func TestVaultReviewAndScopedGrantRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := vaulttest.Start(t)
	useVault(t, e.g, s, s.AgentToken(t, "agent-machine-a").Token)
	b, err := NewGuard(lgBin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	useVault(t, b, s, s.AddApprover(t, "alice").Token)

	onB := func() error {
		screen, err := reviewTeamOnTTY(e.ctx, b, b.Home)
		if err != nil {
			return err
		}
		if !strings.Contains(screen, `command: "echo one >> runs.txt"`) || !strings.Contains(screen, "as vault:userpass-alice") {
			return fmt.Errorf("review --backend vault did not show the call or alice:\n%s", screen)
		}
		// The project is the same path on both machines (a checkout).
		screen, err = b.Grant(e.ctx, e.Dir, "Bash(ls *)")
		if err != nil {
			return err
		}
		if !strings.Contains(screen, "Grant, as vault:userpass-alice") || !strings.Contains(screen, "Published in Vault") {
			return fmt.Errorf("grant on B did not grant as alice in Vault:\n%s", screen)
		}
		return nil
	}
	const cmd = "echo one >> runs.txt"
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_vr1", cmd)),
		claudetest.Tools(bash("toolu_vr2", cmd)),      // the retry after B approved
		claudetest.Tools(bash("toolu_vr3", "ls -la")), // under B's grant, no decision
		claudetest.Tools(bash("toolu_vr4", "ls -l")),  // again
		claudetest.Tools(bash("toolu_vr5", "rm -f runs.txt")),
		claudetest.Text("done"),
	}}, func(p *Proxy) { p.OnToolResult("toolu_vr1", onB) })

	wantDenied(t, api, "toolu_vr1", "no_grant")
	wantRan(t, api, "toolu_vr2")
	wantRan(t, api, "toolu_vr3")
	wantRan(t, api, "toolu_vr4")
	wantDenied(t, api, "toolu_vr5", "no_grant")
	if got := e.read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command once and the rm refused", got)
	}
	// No scoped grant on B's disk: it lives in Vault (grants lists it
	// from there, with a vault: path).
	out, err := b.Run(e.ctx, b.Home, "grants", "--json")
	if err != nil || !strings.Contains(out, `"path": "vault:grants/`) || strings.Count(out, `"kind": "scoped"`) != 1 {
		t.Errorf("grants on B: %v\n%s", err, out)
	}
	last, err := e.g.Audit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	scoped := 0
	for _, a := range last {
		if a.Decision == "allow" && a.Reason == "scoped_grant" {
			scoped++
		}
	}
	if scoped != 2 {
		t.Errorf("%d scoped_grant allows in A's audit log, want 2: %+v", scoped, last)
	}
}

// Two-phase enforcement under the Vault backend, through the real client:
// the wrapper answers loopguard's own hook in its process only under the
// local backend (hookmain.InWrapper); under Vault it runs the hook as its
// child, which hands the call to the full binary, and that binary must
// still find the wrapper in front (its parent). The approved call runs
// once on its ticket, which only a hook that found the wrapper in front
// issues (no_wrapper otherwise); the unapproved one and the repeat do not.
func TestTicketVaultBackendRealClient(t *testing.T) {
	t.Parallel()
	e := newTicketEnv(t)
	s := vaulttest.Start(t)
	useVault(t, e.g, s, s.AgentToken(t, "agent-ticket").Token)
	b, err := NewGuard(lgBin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	useVault(t, b, s, s.AddApprover(t, "bob").Token)
	runApprovedOnce(t, e, b, "bob", "out/runs.txt", "toolu_tv")
}

// runApprovedOnce drives the real client through a call of
// `echo one >> file` (ids id1 to id3) on e, machine A: denied with no_grant
// and held, approved by approver on machine b with `loopguard team
// approve` at a terminal, its identical retry run, the next retry
// consumed; file holds one line.
func runApprovedOnce(t *testing.T, e *env, b *Guard, approver, file, id string) {
	t.Helper()
	approveOnB := func() error {
		list, err := b.Run(e.ctx, b.Home, "team", "pending")
		if err != nil {
			return err
		}
		p, err := e.g.OnlyPending(e.ctx) // for the digest prefix the human types
		if err != nil {
			return err
		}
		if !strings.Contains(list, p.ID) {
			return fmt.Errorf("machine B's team pending does not list %s:\n%s", p.ID, list)
		}
		screen, err := b.onTTY(e.ctx, b.Home, func(string) (string, error) { return p.Digest[:8], nil }, "team", "approve", p.ID)
		if err != nil {
			return err
		}
		if !strings.Contains(screen, "Approved "+p.ID) || !strings.Contains(screen, "vault:userpass-"+approver) {
			return fmt.Errorf("team approve did not approve as %s:\n%s", approver, screen)
		}
		return nil
	}
	cmd := "echo one >> " + file
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash(id+"1", cmd)),
		claudetest.Tools(bash(id+"2", cmd)), // the identical retry, after B approved
		claudetest.Tools(bash(id+"3", cmd)), // once more
		claudetest.Text("done"),
	}}, func(p *Proxy) { p.OnToolResult(id+"1", approveOnB) })
	wantDenied(t, api, id+"1", "no_grant")
	wantRan(t, api, id+"2")
	wantDenied(t, api, id+"3", "approval_consumed")
	if got := e.read(file); got != "one\n" {
		t.Errorf("%s = %q; want the approved command to have run exactly once", file, got)
	}
}
