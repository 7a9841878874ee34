//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// The Vault backend's rows: the same hook, the same payloads, with
// "backend": "vault" in its config and the pinned Vault dev server on
// loopback (backend/vault/vaulttest, as the tests start it). The hook holds
// an agent-policy token; the approvals and the scoped grant are minted by
// a userpass approver through Transit, the grant published in KV. Only the
// paths that talk to Vault are measured: exact, scoped, no-grant.
var vaultPaths = map[string]bool{"exact": true, "scoped": true, "no-grant": true}

// vaultBench is the running server and the empty state the hook uses.
type vaultBench struct {
	srv    *vaulttest.Server
	cfg    *config
	env    []string // XDG_CONFIG_HOME holding the Vault config
	team   *vault.Custody
	before map[string]func(*config) error
}

var teamPendingRE = regexp.MustCompile(fmt.Sprintf(`loopguard team approve ([a-z2-7]{%d})\b`, state.PendingIDLen))

func startVault(o options, work string, paths []*benchPath, now time.Time) (*vaultBench, error) {
	bin, err := vaulttest.BinaryIn(o.repo)
	if err != nil {
		return nil, fmt.Errorf("%w (or run hookbench with -vault=false)", err)
	}
	dir := filepath.Join(work, "vault")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	srv, err := vaulttest.Launch(bin, dir)
	if err != nil {
		return nil, err
	}
	vb := &vaultBench{srv: srv, before: map[string]func(*config) error{}}
	fail := func(err error) (*vaultBench, error) { srv.Stop(); return nil, err }
	alice, err := srv.NewApprover("alice")
	if err != nil {
		return fail(err)
	}
	agent, err := srv.NewAgentToken("agent-bench")
	if err != nil {
		return fail(err)
	}
	vb.team = &vault.Custody{Transit: &vault.Transit{C: alice, Mount: "transit", Key: "loopguard"},
		KV: &vault.KV{C: alice, Mount: "secret", Prefix: "loopguard"}}
	confDir := filepath.Join(dir, "config")
	if err := srv.WriteConfig(filepath.Join(confDir, "loopguard"), agent.Token); err != nil {
		return fail(err)
	}
	vb.env = []string{"XDG_CONFIG_HOME=" + confDir}
	vb.cfg = &config{name: "Vault backend on loopback, empty state", xdg: filepath.Join(dir, "state")}
	if vb.cfg.st, err = state.Open(filepath.Join(vb.cfg.xdg, "loopguard")); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mint := func(g token.Grant, now time.Time) (token.Grant, error) { return vb.team.Transit.Mint(ctx, g, now) }
	for _, p := range paths {
		if p.name != "scoped" {
			continue
		}
		r, err := scope.Parse(scopedRule)
		if err == nil {
			r, err = r.Pin(envOf(p))
		}
		if err != nil {
			return fail(err)
		}
		g, err := mint(token.Grant{Principal: "vault:userpass-alice", Agent: token.MainAgent, Session: sessionOf(p), Tool: r.Tool(),
			ArgHash: token.Any, Scope: r.String(), Expiry: now.Add(24 * time.Hour)}, now)
		if err != nil {
			return fail(err)
		}
		if err := vb.team.PutGrant(ctx, &g, "", now); err != nil {
			return fail(err)
		}
	}
	return vb, nil
}

// prepareExact makes the exact path's pending record (the first,
// unmeasured call) and approves it through Vault before each measured call.
func (vb *vaultBench) prepareExact(o options, r *runner, p *benchPath) error {
	s, err := r.run(vb.proc(o, p))
	if err != nil {
		return err
	}
	m := teamPendingRE.FindSubmatch(s.stdout)
	if m == nil {
		return fmt.Errorf("vault exact path: the first call made no pending record: %s", s.stdout)
	}
	id := string(m[1])
	// Grants name their expiry in whole seconds: two approvals of one call
	// within a second would be one grant, claimed once in Vault. Each
	// round's approval lives a second longer than the last.
	n := 0
	vb.before[p.name] = func(c *config) error {
		n++
		pend, err := c.st.GetPending(id)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = hooks.ApproveWith(c.st, func(g token.Grant, now time.Time) (token.Grant, error) {
			return vb.team.Transit.Mint(ctx, g, now)
		}, pend, "vault:userpass-alice", 10*time.Minute+time.Duration(n)*time.Second, time.Now())
		return err
	}
	return nil
}

func (vb *vaultBench) proc(o options, p *benchPath) proc {
	q := hookProc(o, p, vb.cfg)
	q.env = append(q.env, vb.env...)
	return q
}

// item is the Vault row's program for path p, or false when p is not
// measured with Vault.
func (vb *vaultBench) item(o options, p *benchPath, into *series) (item, bool) {
	if vb == nil || !vaultPaths[p.name] {
		return item{}, false
	}
	it := item{name: "loopguard vault", proc: vb.proc(o, p), into: into, check: p.want.verify}
	if b := vb.before[p.name]; b != nil {
		it.before = func() error { return b(vb.cfg) }
	}
	return it, true
}
