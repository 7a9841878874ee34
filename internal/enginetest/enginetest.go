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

	"github.com/loopguard/loopguard/state"
)

// Master is the tests' master key.
var Master = bytes.Repeat([]byte{7}, 32)

// World is a temporary dir (Base) holding a project dir, a bin dir of stub
// executables and a state store.
type World struct {
	Base    string
	Project string
	Bin     string
	Store   *state.Store
}

// New makes a World whose bin dir holds an empty shell script for each of
// stubs.
func New(t testing.TB, stubs ...string) World {
	t.Helper()
	base := t.TempDir()
	w := World{Base: base, Project: filepath.Join(base, "project"), Bin: filepath.Join(base, "bin")}
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
