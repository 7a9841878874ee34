package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/internal/enginetest"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// TestToolchainContentPin: a grant over cargo in ~/.cargo/bin (a trusted
// directory the user can write) is pinned to cargo's content. The agent
// replacing cargo (by rename, or in place with the same size and the old
// mtime put back) is refused with executable_content_changed; the
// untouched cargo runs.
func TestToolchainContentPin(t *testing.T) {
	h := newHarness(t)
	home := h.eng().Env.Home
	cargoBin := filepath.Join(home, ".cargo", "bin")
	if err := os.MkdirAll(cargoBin, 0o755); err != nil {
		t.Fatal(err)
	}
	cargo := filepath.Join(cargoBin, "cargo")
	real := "\x7fELF rustup proxy, the real one\n"
	if err := os.WriteFile(cargo, []byte(real), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	_ = os.Chtimes(cargo, old, old)
	eng := h.eng
	path := cargoBin + ":" + h.Bin
	trusted := []string{h.Bin, cargoBin}
	h.eng = func() *Engine {
		e := eng()
		e.Env.Path, e.Env.Trusted, e.Env.ProjectDir = path, trusted, h.Project
		return e
	}
	r, err := scope.Parse("Bash(cargo build *)")
	if err != nil {
		t.Fatal(err)
	}
	r, err = r.Pin(shellparse.Env{Cwd: h.Project, Path: path, ProjectDir: h.Project, Trusted: trusted, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if r.Digest() == "" || !strings.Contains(r.String(), "@sha256:"+r.Digest()+":"+cargo) {
		t.Fatalf("not content-pinned: %s", r)
	}
	keys, _ := token.NewKeys(enginetest.Master)
	g, err := keys.Mint(token.Grant{Principal: "alice", Agent: token.MainAgent, Session: token.Any, Tool: "Bash",
		ArgHash: token.Any, Scope: r.String(), Expiry: h.now.Add(time.Hour)}, h.now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.PutGrant(&g, state.GrantRecord{}); err != nil {
		t.Fatal(err)
	}
	bash := h.fixture("pretooluse-bash.json")
	run := func(cmd string) Decision {
		return h.decide(withInput(bash, "command", cmd))
	}
	expect(t, "untouched cargo", run("cargo build --release"), Allow, ReasonScopedGrant)
	expect(t, "untouched cargo, cached", run("cargo build"), Allow, ReasonScopedGrant)

	// In place, same size, mtime put back.
	time.Sleep(30 * time.Millisecond)
	evil := "\x7fELF rustup proxy, the evil one\n"
	if len(evil) != len(real) {
		t.Fatal("the replacement must have the same size")
	}
	f, err := os.OpenFile(cargo, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(evil)
	f.Close()
	_ = os.Chtimes(cargo, old, old)
	d := run("cargo build --release")
	expect(t, "cargo replaced in place", d, Deny, ReasonContentChanged)
	if !strings.Contains(d.Message, g.ID()) || !strings.Contains(d.Message, "replaced") {
		t.Errorf("the reason does not name the grant and the replacement: %s", d.Message)
	}
	// Back to the real content: runs again (control for the same path).
	_ = os.WriteFile(cargo, []byte(real), 0o755)
	expect(t, "cargo restored", run("cargo build"), Allow, ReasonScopedGrant)
	// Replaced by rename.
	tmp := filepath.Join(cargoBin, ".cargo.new")
	_ = os.WriteFile(tmp, []byte(evil), 0o755)
	if err := os.Rename(tmp, cargo); err != nil {
		t.Fatal(err)
	}
	expect(t, "cargo replaced by rename", run("cargo build"), Deny, ReasonContentChanged)
	// A grant pinned by path only (minted before content pins, or by hand)
	// covers nothing in a directory the user can write.
	_ = os.WriteFile(cargo, []byte(real), 0o755)
	_ = h.Store.RemoveGrant(mustGrantPath(t, h, g))
	pathOnly, err := scope.Parse("Bash(cargo build *)@" + cargo)
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := keys.Mint(token.Grant{Principal: "alice", Agent: token.MainAgent, Session: token.Any, Tool: "Bash",
		ArgHash: token.Any, Scope: pathOnly.String(), Expiry: h.now.Add(time.Hour)}, h.now)
	if _, err := h.Store.PutGrant(&g2, state.GrantRecord{}); err != nil {
		t.Fatal(err)
	}
	d = run("cargo build")
	expect(t, "path-only pin in a user dir", d, Deny, ReasonContentChanged)
	if !strings.Contains(d.Message, "pins its path only") {
		t.Errorf("reason: %s", d.Message)
	}
	// Removed: nothing resolves, path_shadowed before any grant.
	_ = os.Remove(cargo)
	if d := run("cargo build"); d.Behavior == Allow {
		t.Errorf("removed cargo: %+v", d)
	}
}

// BenchmarkDecideContentPinned is the hook's decision for a call a
// content-pinned grant covers (cargo in ~/.cargo/bin, 16 MiB like rustup's
// proxy): "cached" reads the digest from the state dir's cache (the file's
// identity unchanged), "read" hashes the file on every call (the cache is
// bypassed: a file changed within the racy window is never cached).
// "git" is a git grant in the project's own repository (the repository
// check's few lstat calls).
func BenchmarkDecideContentPinned(b *testing.B) {
	for _, mode := range []string{"cached", "read", "git"} {
		b.Run(mode, func(b *testing.B) {
			h := newHarnessTB(b)
			home := h.eng().Env.Home
			cargoBin := filepath.Join(home, ".cargo", "bin")
			_ = os.MkdirAll(cargoBin, 0o755)
			_ = os.MkdirAll(filepath.Join(h.Project, ".git"), 0o755)
			cargo := filepath.Join(cargoBin, "cargo")
			if err := os.WriteFile(cargo, make([]byte, 16<<20), 0o755); err != nil {
				b.Fatal(err)
			}
			path, trusted := cargoBin+":"+h.Bin, []string{h.Bin, cargoBin}
			eng := h.eng
			e := eng()
			e.Env.Path, e.Env.Trusted, e.Env.ProjectDir = path, trusted, h.Project
			rule, cmd := "Bash(cargo build *)", "cargo build --release"
			if mode == "git" {
				rule, cmd = "Bash(git status *)", "git status -sb"
			}
			r, _ := scope.Parse(rule)
			r, err := r.Pin(shellparse.Env{Cwd: h.Project, Path: path, ProjectDir: h.Project, Trusted: trusted, Home: home})
			if err != nil {
				b.Fatal(err)
			}
			keys, _ := token.NewKeys(enginetest.Master)
			g, _ := keys.Mint(token.Grant{Principal: "alice", Agent: token.MainAgent, Session: token.Any, Tool: "Bash",
				ArgHash: token.Any, Scope: r.String(), Expiry: h.now.Add(time.Hour)}, h.now)
			_, _ = h.Store.PutGrant(&g, state.GrantRecord{})
			c := h.call(withInput(h.fixture("pretooluse-bash.json"), "command", cmd))
			if mode == "cached" {
				// Let the file leave the racy window, then fill the cache.
				time.Sleep(2100 * time.Millisecond)
			}
			if d := e.Decide(context.Background(), c); d.Behavior != Allow {
				b.Fatalf("control: %+v", d)
			}
			for b.Loop() {
				if mode == "read" {
					_ = os.RemoveAll(filepath.Join(h.Store.Dir, "exedigest"))
				}
				if d := e.Decide(context.Background(), c); d.Behavior != Allow {
					b.Fatalf("%+v", d)
				}
			}
		})
	}
}

func mustGrantPath(t *testing.T, h *harness, g token.Grant) string {
	t.Helper()
	all, err := h.Store.AllGrants()
	if err != nil {
		t.Fatal(err)
	}
	for _, gf := range all {
		if gf.Grant != nil && gf.Grant.ID() == g.ID() {
			return gf.Path
		}
	}
	t.Fatalf("grant %s not stored", g.ID())
	return ""
}
