package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Scoped grants cross machines through KV v2 too, under the prefix:
//
//	grants/<binding>/<grant id>  an approver writes a scoped grant's token
//
// where <binding> names the session the grant is bound to (a hash of the
// session id, of "project:<dir>", or "any"), so a hook lists only the
// grants that could cover its call. Only an approver writes or deletes
// there; the hook's token may read and list, never write: a grant it finds
// is one an approver's Transit key MACed and an approver put there. Revoking
// deletes the grant's latest version: the hook takes only live grants from
// Vault (never from its own disk), so a revoked grant stops covering calls
// on every machine at once, whatever copies exist.

// bindingDir is the KV directory of grants bound to session.
func bindingDir(session string) string {
	if session == token.Any {
		return "grants/any"
	}
	sum := sha256.Sum256([]byte("loopguard grant binding\x00" + session))
	return "grants/" + hex.EncodeToString(sum[:16])
}

// PutGrant publishes scoped grant g (an approver's token): the hooks on
// every machine sharing the Vault find it. A grant id is written once.
// preset names the preset it was minted with (grant --preset), or "": a note
// for grants and revoke --preset, outside the MAC (the rule is in the token).
func (c *Custody) PutGrant(ctx context.Context, g *token.Grant, preset string, now time.Time) error {
	if g.Exact() {
		return errors.New("only scoped grants are published; an exact approval travels with its pending call")
	}
	return c.KV.Create(ctx, bindingDir(g.Session)+"/"+g.ID(), map[string]any{
		"token": g.String(), "principal": g.Principal, "scope": g.Scope,
		"time": now.UTC().Format(time.RFC3339), "preset": preset,
	})
}

// ScopedGrants returns the live scoped grants bound to any of sessions and
// to every session (token.Any). A record that does not hold a scoped grant
// of the binding it is filed under comes back with Err set (a path, not a
// file, in Path); a Vault that
// does not answer is an error (the hook denies with its reason).
func (c *Custody) ScopedGrants(ctx context.Context, sessions ...string) ([]state.GrantFile, error) {
	var bindings []string
	for _, s := range append(sessions, token.Any) {
		if s != "" && !slices.Contains(bindings, s) {
			bindings = append(bindings, s)
		}
	}
	// One round trip's time for all bindings, not one each: the hook
	// asks on every call a scoped grant could cover.
	type result struct {
		gs  []state.GrantFile
		err error
	}
	res := make([]result, len(bindings))
	var wg sync.WaitGroup
	for i, s := range bindings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].gs, res[i].err = c.grantsIn(ctx, bindingDir(s), s)
		}()
	}
	wg.Wait()
	var out []state.GrantFile
	for _, r := range res {
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, r.gs...)
	}
	return out, nil
}

// grantsIn reads the live grants of one binding directory; session is the
// binding they must name ("" to take the one each is filed under on trust
// of the hash, as listings do).
func (c *Custody) grantsIn(ctx context.Context, dir, session string) ([]state.GrantFile, error) {
	ids, err := c.KV.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []state.GrantFile
	for _, id := range ids {
		if strings.HasSuffix(id, "/") {
			continue
		}
		path := dir + "/" + id
		m, err := c.KV.Get(ctx, path)
		if errors.Is(err, ErrNotFound) {
			continue // revoked
		}
		if err != nil {
			return nil, err
		}
		// Path is the KV path under the prefix (RevokeGrant takes it).
		tg := state.GrantFile{Path: path}
		tok, _ := m["token"].(string)
		tg.Record.Token = tok
		if at, ok := m["time"].(string); ok {
			tg.Record.Created, _ = time.Parse(time.RFC3339, at)
		}
		tg.Record.Preset, _ = m["preset"].(string)
		g, err := token.Parse(tok)
		switch {
		case err != nil:
			tg.Err = fmt.Errorf("grant record %s: %w", path, err)
		case g.Exact() || g.ID() != id || bindingDir(g.Session) != dir || (session != "" && g.Session != session):
			tg.Err = fmt.Errorf("grant record %s does not hold a scoped grant of its binding", path)
		default:
			tg.Grant = g
		}
		out = append(out, tg)
	}
	return out, nil
}

// AllGrants returns every live scoped grant in Vault (approver side: the
// listing needs the approver's list capability on the grants directory).
func (c *Custody) AllGrants(ctx context.Context) ([]state.GrantFile, error) {
	dirs, err := c.KV.List(ctx, "grants")
	if err != nil {
		return nil, err
	}
	var out []state.GrantFile
	for _, d := range dirs {
		d = strings.TrimSuffix(d, "/")
		if d == "" || strings.Contains(d, "/") {
			continue
		}
		gs, err := c.grantsIn(ctx, "grants/"+d, "")
		if err != nil {
			return nil, err
		}
		out = append(out, gs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Record.Created.After(out[j].Record.Created) })
	return out, nil
}

// RevokeGrant deletes the grant at path (from AllGrants) for every machine:
// its latest version is deleted, which the hook's token cannot undo.
func (c *Custody) RevokeGrant(ctx context.Context, path string) error {
	p, err := c.KV.data(path)
	if err != nil {
		return err
	}
	return c.KV.C.Do(ctx, http.MethodDelete, p, nil, nil)
}
