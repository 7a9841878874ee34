//go:build unix

// Package vaulttest starts a real Vault dev server on loopback for tests:
// the pinned binary scripts/vault builds and caches, never a mock.
//
// When the binary is not there the test skips with the reason, unless
// LOOPGUARD_REQUIRE_VAULT=1 (set by `make test`), which turns the skip into a
// failure: CI never passes by not running these tests.
package vaulttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
)

// Server is a running dev server, set up as loopguard deploys Vault:
// transit/ with an hmac key "loopguard", secret/ (KV v2), the agent and
// approver policies from backend/vault/policies, and userpass logins.
type Server struct {
	Addr      string
	RootToken string
	Root      *vault.Client
	cmd       *exec.Cmd
	home      string
	stopOnce  sync.Once
	log       *lockedWriter
	waitExit  chan error
}

// Binary returns the path of the pinned Vault binary, as scripts/vault
// names it (the version is pinned there only).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("LOOPGUARD_VAULT_BIN"); p != "" {
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "scripts", "vault"), "--path").Output()
	if err != nil {
		t.Fatalf("scripts/vault --path: %v", err)
	}
	p := strings.TrimSpace(string(out))
	if _, err := os.Stat(p); err != nil {
		msg := "the pinned Vault server is not built (" + p + " is missing): run scripts/vault (about 15 minutes the first time; make test runs it)"
		if os.Getenv("LOOPGUARD_REQUIRE_VAULT") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "scripts", "vault")); err == nil {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("no module root with scripts/vault above the working directory")
		}
		d = parent
	}
}

// BinaryIn is the pinned binary's path in the repository at root, as
// scripts/vault names it, and whether it is there (for programs that are
// not tests, such as hookbench).
func BinaryIn(root string) (string, error) {
	out, err := exec.Command(filepath.Join(root, "scripts", "vault"), "--path").Output()
	if err != nil {
		return "", fmt.Errorf("scripts/vault --path: %w", err)
	}
	p := strings.TrimSpace(string(out))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the pinned Vault server is not built (%s is missing): run scripts/vault", p)
	}
	return p, nil
}

// Launch starts a dev server set up as Start does, outside a test, with
// its HOME in dir; the caller stops it with Stop.
func Launch(bin, dir string) (*Server, error) {
	var last error
	for range 5 {
		s, err := start(bin, dir)
		if err == nil {
			if err := s.setup(); err != nil {
				s.Stop()
				return nil, fmt.Errorf("vault setup: %v\n%s", err, s.log)
			}
			return s, nil
		}
		last = err
	}
	return nil, fmt.Errorf("vault dev server did not start: %v", last)
}

// Start runs a dev server on a free loopback port and sets it up; it is
// stopped (by its PID) when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	var last error
	for range 5 {
		s, err := start(bin, t.TempDir())
		if err == nil {
			t.Cleanup(s.Stop)
			if err := s.setup(); err != nil {
				t.Fatalf("vault setup: %v\n%s", err, s.log)
			}
			return s
		}
		last = err
	}
	t.Fatalf("vault dev server did not start: %v", last)
	return nil
}

// freePort finds a port p with p+1 free too (the dev server's cluster port).
func freePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		l.Close()
		if err == nil {
			l2.Close()
			return p, nil
		}
	}
	return 0, errors.New("no free pair of loopback ports")
}

func start(bin, home string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	root := "root-" + hex.EncodeToString(b)
	addr := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "server", "-dev", "-dev-root-token-id="+root,
		"-dev-listen-address=127.0.0.1:"+strconv.Itoa(port), "-dev-no-store-token")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "VAULT_LOG_LEVEL=warn"}
	log := &lockedWriter{w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c, err := vault.NewClient(addr, root)
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: addr, RootToken: root, Root: c, cmd: cmd, home: home, log: log}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return nil, fmt.Errorf("exited: %v\n%s", err, log)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Do(ctx, http.MethodGet, "sys/health", nil, nil)
		cancel()
		if err == nil {
			s.waitExit = exited
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.waitExit = exited
	s.Stop()
	return nil, fmt.Errorf("not ready in 60 s\n%s", log)
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Stop kills the server (by its PID) and waits for it.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		if s.waitExit != nil {
			<-s.waitExit
		}
	})
}

func (s *Server) do(method, path string, body any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return s.Root.Do(ctx, method, path, body, nil)
}

func (s *Server) setup() error {
	for _, step := range []struct {
		method, path string
		body         any
	}{
		{"POST", "sys/mounts/transit", map[string]any{"type": "transit"}},
		{"POST", "transit/keys/loopguard", map[string]any{"type": "hmac", "key_size": 32}},
		{"PUT", "sys/policies/acl/loopguard-agent", map[string]any{"policy": vault.AgentPolicy}},
		{"PUT", "sys/policies/acl/loopguard-approver", map[string]any{"policy": vault.ApproverPolicy}},
		{"PUT", "sys/policies/acl/loopguard-enroll", map[string]any{"policy": vault.EnrollPolicy}},
		{"POST", "auth/token/roles/" + vault.AgentRole, vault.AgentRoleConfig},
		{"POST", "sys/auth/userpass", map[string]any{"type": "userpass"}},
	} {
		if err := s.do(step.method, step.path, step.body); err != nil {
			return err
		}
	}
	return nil
}

// AddApprover creates a userpass user with the approver policy and returns
// a client logged in as that user.
func (s *Server) AddApprover(t testing.TB, user string) *vault.Client {
	t.Helper()
	c, err := s.NewApprover(user)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewApprover is AddApprover outside a test.
func (s *Server) NewApprover(user string) (*vault.Client, error) {
	pass := "pw-" + user
	if err := s.do("POST", "auth/userpass/users/"+user, map[string]any{"password": pass, "token_policies": "loopguard-approver"}); err != nil {
		return nil, err
	}
	c, _ := vault.NewClient(s.Addr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tok, err := c.LoginUserpass(ctx, "userpass", user, pass)
	if err != nil {
		return nil, err
	}
	c.Token = tok
	return c, nil
}

// AgentToken enrolls agent machine name as `loopguard team enroll` does
// (the token role, an identity of its own named name) and returns a client
// with its token. The same name is the same machine: another token of one
// identity.
func (s *Server) AgentToken(t testing.TB, name string) *vault.Client {
	t.Helper()
	c, err := s.NewAgentToken(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewAgentToken is AgentToken outside a test.
func (s *Server) NewAgentToken(name string) (*vault.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := vault.Enroll(ctx, s.Root, name, time.Hour)
	if err != nil {
		return nil, err
	}
	return vault.NewClient(s.Addr, e.Token)
}

// UnenrolledAgentToken makes a token with the agent policy and no identity
// (as agent tokens were made before `team enroll`): the templated paths
// match nothing for it.
func (s *Server) UnenrolledAgentToken(t testing.TB, name string) *vault.Client {
	t.Helper()
	var out struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	s.Do(t, "POST", "auth/token/create", map[string]any{
		"policies": []string{"loopguard-agent"}, "no_default_policy": true, "ttl": "1h", "display_name": name,
	}, &out)
	c, err := vault.NewClient(s.Addr, out.Auth.ClientToken)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Enroller creates a userpass user with only the enroll policy (an
// administrator who sets up agent machines) and returns its client.
func (s *Server) Enroller(t testing.TB, user string) *vault.Client {
	t.Helper()
	pass := "pw-" + user
	s.Do(t, "POST", "auth/userpass/users/"+user, map[string]any{"password": pass, "token_policies": "loopguard-enroll"}, nil)
	c, _ := vault.NewClient(s.Addr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tok, err := c.LoginUserpass(ctx, "userpass", user, pass)
	if err != nil {
		t.Fatal(err)
	}
	c.Token = tok
	return c
}

// Seal seals the server (root token).
func (s *Server) Seal(t testing.TB) {
	t.Helper()
	if err := s.do("PUT", "sys/seal", nil); err != nil {
		t.Fatal(err)
	}
}

// Revoke revokes a token (root token).
func (s *Server) Revoke(t testing.TB, tok string) {
	t.Helper()
	if err := s.do("POST", "auth/token/revoke", map[string]any{"token": tok}); err != nil {
		t.Fatal(err)
	}
}

// EnableAudit turns on Vault's file audit device (as a deployment does)
// and returns the file it writes: one JSON object a line, a request and a
// response for every call, secrets (tokens, request and response strings)
// HMACed by Vault unless it is told otherwise.
func (s *Server) EnableAudit(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vault-audit.log")
	if err := s.do("PUT", "sys/audit/file", map[string]any{"type": "file", "options": map[string]any{"file_path": path}}); err != nil {
		t.Fatal(err)
	}
	return path
}

// Do runs one request with the root token (set-up steps of a test).
func (s *Server) Do(t testing.TB, method, path string, body, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Root.Do(ctx, method, path, body, out); err != nil {
		t.Fatal(err)
	}
}

// Log is the server's output so far.
func (s *Server) Log() string { return s.log.String() }

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// SilentListener accepts connections on loopback and never answers, until
// the test ends: a Vault that hangs. It returns its address.
func SilentListener(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// WriteConfig makes dir (a loopguard config directory, as
// $XDG_CONFIG_HOME/loopguard) use this server with Vault token tok: the
// token in dir/vault-token, and a config.json with backend vault naming it.
func (s *Server) WriteConfig(dir, tok string) error { return WriteConfig(dir, s.Addr, tok) }

// WriteConfig makes dir a loopguard config directory whose config names the
// Vault backend at addr with token tok (for a test in which no server
// answers, any address).
func WriteConfig(dir, addr, tok string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tokFile := filepath.Join(dir, "vault-token")
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`{"v":1,"backend":"vault","vault":{"address":%q,"token_file":%q}}`, addr, tokFile)
	return os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600)
}
