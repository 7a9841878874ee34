package shellparse

import (
	"os"
	"path/filepath"
	"testing"
)

// TestShadowed: a program a host looks up by name on PATH is judged as a
// command name is: nil when found in a trusted directory or nowhere;
// refused inside the project, through a relative entry, or in a directory
// that is not trusted (Untrusted set for that case only).
func TestShadowed(t *testing.T) {
	base := t.TempDir()
	trusted, project, other := filepath.Join(base, "bin"), filepath.Join(base, "p"), filepath.Join(base, "other")
	pbin := filepath.Join(project, "node_modules", ".bin")
	for _, d := range []string{trusted, pbin, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe := func(p string) {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe(filepath.Join(trusted, "bash"))
	exe(filepath.Join(pbin, "zsh"))
	exe(filepath.Join(other, "pwsh"))
	path := pbin + ":" + other + ":" + trusted
	env := Env{Cwd: project, ProjectDir: project, Path: path, Trusted: []string{trusted}}
	for _, tc := range []struct {
		name, found string
		untrusted   bool
	}{
		{name: "bash"},
		{name: "sh"}, // found nowhere
		{name: "zsh", found: filepath.Join(pbin, "zsh")},
		{name: "pwsh", found: filepath.Join(other, "pwsh"), untrusted: true},
	} {
		s := Shadowed(tc.name, env)
		if tc.found == "" {
			if s != nil {
				t.Errorf("%s: %+v, want nil", tc.name, s)
			}
			continue
		}
		if s == nil || s.Found != tc.found || s.Untrusted != tc.untrusted || s.Reason == "" {
			t.Errorf("%s: %+v, want found %s, untrusted %v", tc.name, s, tc.found, tc.untrusted)
		}
	}
	env.Path = "node_modules/.bin:" + trusted
	if s := Shadowed("zsh", env); s == nil || s.Untrusted || s.Entry != "node_modules/.bin" {
		t.Errorf("relative entry: %+v, want refused", s)
	}
}
