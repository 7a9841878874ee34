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

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
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

// AliceCustody starts a Vault of the test's own and returns it with the
// team's custody as approver alice holds it.
func AliceCustody(t *testing.T) (*vaulttest.Server, *vault.Custody) {
	t.Helper()
	s := vaulttest.Start(t)
	c, err := approve.VaultCustody(VaultConfig(t, s, s.AddApprover(t, "alice").Token))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// CustodyOf is the team custody of Vault client c at vaulttest's mounts.
func CustodyOf(c *vault.Client) *vault.Custody {
	return &vault.Custody{Transit: &vault.Transit{C: c, Mount: "transit", Key: "loopguard"}, KV: &vault.KV{C: c, Mount: "secret", Prefix: "loopguard"}}
}

// BashPending is an open pending record of the Bash call command in cwd,
// by the main agent of session.
func BashPending(t *testing.T, session, command, cwd string) *state.Pending {
	t.Helper()
	d := token.Descriptor{Tool: "Bash", Cwd: cwd, Input: map[string]any{"command": command}, Executables: map[string]string{"rm": "/usr/bin/rm"}}
	canonical, _, err := d.Encodings()
	if err != nil {
		t.Fatal(err)
	}
	digest := token.DigestOf(canonical)
	return &state.Pending{ID: state.PendingID(session, token.MainAgent, "Bash", digest), Session: session, Agent: token.MainAgent,
		Tool: "Bash", Cwd: cwd, Digest: digest, CallDigest: digest, Descriptor: canonical, Status: state.StatusOpen}
}
