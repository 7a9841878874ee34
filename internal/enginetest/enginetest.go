// Package enginetest holds what the engine's test harnesses share (hooks'
// own and agents/all's, which runs the real runner): a world of a project
// dir, a trusted bin dir of stub executables and a real state store under
// one temporary dir, and the fixed master key they sign with in place of
// the keyring. It imports no engine, so hooks' own tests can use it. It is
// for tests only.
package enginetest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Master is the tests' master key.
var Master = bytes.Repeat([]byte{7}, 32)

// World is a temporary dir (Base) holding a project dir, a bin dir of stub
// executables and a state store; Home is the engine's home directory (in
// Base, not made).
type World struct {
	Base    string
	Project string
	Bin     string
	Home    string
	Store   *state.Store
}

// New makes a World whose bin dir holds an empty shell script for each of
// stubs.
func New(t testing.TB, stubs ...string) World {
	t.Helper()
	base := t.TempDir()
	w := World{Base: base, Project: filepath.Join(base, "project"), Bin: filepath.Join(base, "bin"), Home: filepath.Join(base, "home")}
	for _, d := range []string{w.Project, w.Bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range stubs {
		if err := os.WriteFile(filepath.Join(w.Bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st, err := state.Open(filepath.Join(base, "state"))
	if err != nil {
		t.Fatal(err)
	}
	w.Store = st
	return w
}

// LoadKey is an engine's key loader that answers with a copy of Master, or
// with *keyErr when that is set at the time of the call (a test plays a
// broken keyring by setting it).
func LoadKey(keyErr *error) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		if *keyErr != nil {
			return nil, *keyErr
		}
		return bytes.Clone(Master), nil
	}
}

// Pinned is rule parsed and pinned in the world's project, with the bin dir
// as PATH and the one trusted directory, as `loopguard grant` run there
// pins it.
func (w World) Pinned(t testing.TB, rule string) scope.Rule {
	t.Helper()
	r, err := scope.Parse(rule)
	if err != nil {
		t.Fatal(err)
	}
	if r, err = r.Pin(shellparse.Env{Cwd: w.Project, Path: w.Bin, ProjectDir: w.Project, Trusted: []string{w.Bin}, Home: w.Home}); err != nil {
		t.Fatal(err)
	}
	return r
}

// PutScoped mints principal's scoped grant of the pinned rule r for agent
// and session (token.Any: every one), valid for an hour from now, with
// Master and none of grant's refusals, and stores it.
func (w World) PutScoped(t testing.TB, r scope.Rule, principal, agent, session string, now time.Time) *token.Grant {
	t.Helper()
	keys, err := token.NewKeys(Master)
	if err != nil {
		t.Fatal(err)
	}
	g, err := keys.Mint(token.Grant{Principal: principal, Agent: agent, Session: session, Tool: r.Tool(),
		ArgHash: token.Any, Scope: r.String(), Expiry: now.Add(time.Hour)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Store.PutGrant(&g, state.GrantRecord{}); err != nil {
		t.Fatal(err)
	}
	return &g
}
