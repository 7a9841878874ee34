//go:build unix

// Package clitest holds what the tests of the CLI's packages (the root
// command's and its verb families') share: builds of a tiny program that
// differ only by a linked variable, and a Vault configuration whose token
// is in a file. It is for tests only.
package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/config"
)

// GoBuild builds a tiny main package into out with the given -ldflags.
func GoBuild(t *testing.T, src, out, ldflags string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
}

// TwinSource is a tiny main package whose builds differ by -X main.v.
func TwinSource(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module example.com/twin\n\ngo 1.21\n",
		"main.go": "package main\n\nvar v string\n\nfunc main() { println(v) }\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// VaultConfig is the Vault backend's configuration for s, with tok in a
// token file of the test's own.
func VaultConfig(t *testing.T, s *vaulttest.Server, tok string) config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Config{V: config.Version, Backend: config.BackendVault, Vault: &config.Vault{Address: s.Addr, TokenFile: p}}
}
