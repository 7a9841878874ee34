//go:build unix

package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// config is one state directory the hook runs against: how many grants it
// holds besides the ones the measured paths need, and how long its audit log
// is.
type config struct {
	name   string
	grants int
	lines  int
	xdg    string // XDG_STATE_HOME for the hook
	st     *state.Store
}

// Grants are spread like this (documented in BENCH.md):
//   - bulk grants: grants/perSession other sessions, each with perSession
//     grants: exactPerDir exact grants in each of 8 (agent, tool) dirs
//     (agents "main" and one subagent; tools Bash, Edit, Write, Read), and
//     the rest scoped grants (Edit and WebFetch rules) bound to the session;
//   - in each session the measured paths use, extraScoped scoped grants that
//     do not cover the measured calls, and extraExact exact grants for other
//     tools (Read, Edit), so the measured session's dirs are not empty;
//   - no grant for any session ("*"): every call of every session reads
//     those, so a user with many would pay for them on each call.
const (
	perSession  = 100
	exactPerDir = 10
	extraScoped = 10
	extraExact  = 10
)

var (
	bulkAgents = []string{token.MainAgent, "a5f0c1d2e3b4a5968"}
	bulkTools  = []string{"Bash", "Edit", "Write", "Read"}
)

// grantFormat is what a grant file looks like on disk, learnt from one file
// state.PutGrant wrote: its directory, version field and name suffix. The
// bulk grants are written with it directly (without an fsync per file), and
// every one is read back with state.ReadGrant at the end, so a change of the
// format cannot slip past.
type grantFormat struct {
	version int
	suffix  string
}

func learnFormat(path string) (grantFormat, error) {
	gf := state.ReadGrant(path)
	if gf.Err != nil {
		return grantFormat{}, gf.Err
	}
	return grantFormat{version: gf.Record.V, suffix: filepath.Ext(path)}, nil
}

// writeGrant writes g next to a file PutGrant wrote in dir.
func (f grantFormat) writeGrant(dir string, g *token.Grant, created time.Time) error {
	rec := state.GrantRecord{V: f.version, Token: g.String(), Created: created}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	name := g.ID()
	if g.Exact() {
		name = g.ArgHash
	}
	return os.WriteFile(filepath.Join(dir, name+f.suffix), data, 0o600)
}

func fakeDigest(parts ...any) string {
	sum := sha256.Sum256([]byte(fmt.Sprint(parts...)))
	return hex.EncodeToString(sum[:])
}

// fillGrants adds n bulk grants to st, spread over n/perSession sessions.
func fillGrants(st *state.Store, keys *token.Keys, n int, now time.Time) error {
	sessions := n / perSession
	expiry := now.Add(24 * time.Hour)
	work := make(chan int)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	// The first grant of each directory goes through PutGrant, whose fsyncs
	// dominate: run several at once.
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				if err := fillSession(st, keys, s, now, expiry); err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			}
		}()
	}
	for s := 0; s < sessions; s++ {
		work <- s
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

func fillSession(st *state.Store, keys *token.Keys, s int, now, expiry time.Time) error {
	session := fmt.Sprintf("bench-%08x-0000-4000-8000-%012x", s, s)
	count := 0
	put := func(g token.Grant, first *string, f *grantFormat) error {
		m, err := keys.Mint(g, now)
		if err != nil {
			return err
		}
		count++
		if *first == "" {
			p, err := st.PutGrant(&m, state.GrantRecord{Created: now.UTC()})
			if err != nil {
				return err
			}
			if *f, err = learnFormat(p); err != nil {
				return err
			}
			*first = filepath.Dir(p)
			return nil
		}
		return f.writeGrant(*first, &m, now.UTC())
	}
	for _, agent := range bulkAgents {
		for _, tool := range bulkTools {
			var dir string
			var f grantFormat
			for i := 0; i < exactPerDir; i++ {
				g := token.Grant{Principal: "bench", Agent: agent, Session: session, Tool: tool,
					ArgHash: fakeDigest(session, agent, tool, i), Scope: token.ScopeCall, Expiry: expiry}
				if err := put(g, &dir, &f); err != nil {
					return err
				}
			}
		}
	}
	var dir string
	var f grantFormat
	for i := 0; count < perSession; i++ {
		text := fmt.Sprintf("Edit(src/pkg%d/**)", i)
		if i%2 == 1 {
			text = fmt.Sprintf("WebFetch(domain:host%d.example.com)", i)
		}
		r, err := scope.Parse(text)
		if err != nil {
			return err
		}
		g := token.Grant{Principal: "bench", Agent: token.MainAgent, Session: session, Tool: r.Tool(),
			ArgHash: token.Any, Scope: r.String(), Expiry: expiry}
		if err := put(g, &dir, &f); err != nil {
			return err
		}
	}
	return nil
}

// scopedGrant mints and stores a scoped grant for rule, pinned as
// `loopguard grant` pins it.
func scopedGrant(st *state.Store, keys *token.Keys, session, rule string, env shellparse.Env, now time.Time) error {
	r, err := scope.Parse(rule)
	if err != nil {
		return err
	}
	if r, err = r.Pin(env); err != nil {
		return fmt.Errorf("pin %s: %w", rule, err)
	}
	g, err := keys.Mint(token.Grant{Principal: "bench", Agent: token.MainAgent, Session: session, Tool: r.Tool(),
		ArgHash: token.Any, Scope: r.String(), Expiry: now.Add(24 * time.Hour)}, now)
	if err != nil {
		return err
	}
	_, err = st.PutGrant(&g, state.GrantRecord{Created: now.UTC()})
	return err
}

// sessionExtras gives a measured session grants that cover none of the
// measured calls.
func sessionExtras(st *state.Store, keys *token.Keys, session string, env shellparse.Env, now time.Time) error {
	for i := 0; i < extraScoped; i++ {
		rule := fmt.Sprintf("Edit(docs/part%d/**)", i)
		if i%2 == 1 {
			rule = fmt.Sprintf("Bash(go test ./pkg%d/...)", i)
		}
		if err := scopedGrant(st, keys, session, rule, env, now); err != nil {
			return err
		}
	}
	for i := 0; i < extraExact; i++ {
		tool := []string{"Read", "Edit"}[i%2]
		g, err := keys.Mint(token.Grant{Principal: "bench", Agent: token.MainAgent, Session: session, Tool: tool,
			ArgHash: fakeDigest("extra", session, i), Scope: token.ScopeCall, Expiry: now.Add(24 * time.Hour)}, now)
		if err != nil {
			return err
		}
		if _, err := st.PutGrant(&g, state.GrantRecord{Created: now.UTC()}); err != nil {
			return err
		}
	}
	return nil
}

// countGrants reads every grant back through the state package and checks
// that it parses and verifies.
func countGrants(st *state.Store, keys *token.Keys, now time.Time) (int, error) {
	all, err := st.AllGrants()
	if err != nil {
		return 0, err
	}
	for _, gf := range all {
		if gf.Err != nil {
			return 0, fmt.Errorf("grant %s: %w", gf.Path, gf.Err)
		}
		g := gf.Grant
		c := token.Call{Session: g.Session, Agent: g.Agent, Tool: g.Tool}
		if g.Exact() {
			c.Digest = g.ArgHash
		}
		if err := keys.Verify(g, c, now); err != nil {
			return 0, fmt.Errorf("grant %s does not verify: %w", gf.Path, err)
		}
	}
	return len(all), nil
}

// fillAudit makes dir an audit log of n entries like the hook's, sealed with
// sealKey. The log is sealed empty first (as `loopguard init` does), the
// lines are written in one pass with the chain the audit package documents
// (each entry's prev is the SHA-256 of the line before), and Seal then moves
// the head to the end, reading only the last line. Verify checks the whole
// chain and the head afterwards, so a drift in the format fails the run.
func fillAudit(dir string, n int, sealKey []byte, now time.Time) error {
	l := audit.Open(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := l.Seal(sealKey); err != nil {
		return fmt.Errorf("seal the empty log: %w", err)
	}
	if n == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("the audit log's file name changed? %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	prev := strings.Repeat("0", 64)
	t0 := now.Add(-time.Duration(n) * time.Second).UTC()
	reasons := []string{"no_grant", "exact_grant", "scoped_grant", "chained_command"}
	for i := 1; i <= n; i++ {
		e := audit.Entry{Seq: i, Time: t0.Add(time.Duration(i) * time.Second), Prev: prev, Event: "PreToolUse",
			Session: fmt.Sprintf("bench-%08x-0000-4000-8000-%012x", i/500, i/500), Agent: token.MainAgent, Tool: "Bash",
			Digest: fakeDigest("audit", i), Decision: "deny", Reason: reasons[i%len(reasons)], Mode: "enforce"}
		if e.Reason == "exact_grant" || e.Reason == "scoped_grant" {
			e.Decision, e.Grant, e.Principal = "allow", fakeDigest("g", i)[:16], "bench"
		} else {
			e.Pending = "abcdefgh"
		}
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(line)
		prev = hex.EncodeToString(sum[:])
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return err
	}
	if err := l.Seal(sealKey); err != nil {
		return fmt.Errorf("seal the filled log: %w", err)
	}
	rep, err := l.Verify(sealKey)
	if err != nil {
		return err
	}
	if !rep.OK() || rep.Entries != n || rep.SealedSeq != n {
		return fmt.Errorf("the generated audit log does not verify: %d entries, sealed at %d, problems %v", rep.Entries, rep.SealedSeq, rep.Problems)
	}
	return nil
}
