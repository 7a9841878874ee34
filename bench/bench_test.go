// Package bench holds the in-process benchmarks of the hook's hot steps, and
// (under cmd/) the whole-process benchmark. Two more live beside the code
// they measure and are not repeated here: shellparse's BenchmarkAnalyze2KB
// (shell analysis of a 2 KB command) and audit's BenchmarkAppend (an append
// to a log of 0 and of 1,000,000 lines). `make bench` runs all of them.
package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/token"
)

// writeInput is the tool_input of a Write of 1 MiB, as Claude Code sends it.
func writeInput(b *testing.B) []byte {
	b.Helper()
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "line %06d: the quick brown fox jumps over the lazy dog, \"quoted\" \u00e9t\u00e9\n", i)
	}
	data, err := json.Marshal(map[string]string{"file_path": "/home/u/project/notes.txt", "content": sb.String()[:1<<20]})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// Canonical encoding of a 1 MiB tool_input: strict decode (duplicate keys,
// invalid UTF-8, depth) and re-encoding with sorted keys.
func BenchmarkCanonical1MB(b *testing.B) {
	in := writeInput(b)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := token.Canonical(in); err != nil {
			b.Fatal(err)
		}
	}
}

// The digest of a Write descriptor holding 1 MiB: encode and SHA-256.
func BenchmarkDescriptorDigest1MB(b *testing.B) {
	v, err := token.Decode(writeInput(b))
	if err != nil {
		b.Fatal(err)
	}
	d := token.Descriptor{Tool: "Write", Input: v, Cwd: "/home/u/project",
		Target: &token.Target{Path: "/home/u/project/notes.txt", SHA256: token.Absent}}
	canon, err := d.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(canon)))
	for b.Loop() {
		if _, err := d.Digest(); err != nil {
			b.Fatal(err)
		}
	}
}

// SHA-256 alone over the same canonical bytes, for comparison.
func BenchmarkDigestOf1MB(b *testing.B) {
	canon, err := token.Canonical(writeInput(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(canon)))
	for b.Loop() {
		_ = token.DigestOf(canon)
	}
}

func testKeys(b *testing.B) *token.Keys {
	b.Helper()
	k, err := token.NewKeys([]byte(strings.Repeat("k", token.MasterKeySize)))
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// MAC verification of an exact grant against a call, and the token parse
// that precedes it when the grant file is read.
func BenchmarkVerifyExact(b *testing.B) {
	keys := testKeys(b)
	now := time.Now()
	digest := token.DigestOf([]byte("call"))
	g, err := keys.Mint(token.Grant{Principal: "alice", Agent: token.MainAgent, Session: "s1", Tool: "Bash",
		ArgHash: digest, Scope: token.ScopeCall, Expiry: now.Add(time.Hour)}, now)
	if err != nil {
		b.Fatal(err)
	}
	call := token.Call{Session: "s1", Agent: token.MainAgent, Tool: "Bash", Digest: digest}
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if err := keys.Verify(&g, call, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	s := g.String()
	b.Run("parse+verify", func(b *testing.B) {
		for b.Loop() {
			p, err := token.Parse(s)
			if err != nil {
				b.Fatal(err)
			}
			if err := keys.Verify(p, call, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Scope matching of one call against 1,000 scoped grants that do not cover
// it (the worst case: every rule is tried), as the engine's scoped step does
// for the grants of one session. "parse+match" includes scope.Parse of each
// rule, which the engine does per call; "match" is matching alone.
func BenchmarkScopeMatch1000(b *testing.B) {
	dir := b.TempDir()
	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		b.Fatal(err)
	}
	env := shellparse.Env{Cwd: project, Path: "/usr/bin:/bin", ProjectDir: project, Home: dir}
	var texts []string
	var rules []scope.Rule
	for i := 0; i < 1000; i++ {
		text := []string{
			fmt.Sprintf("Bash(ls -la src/pkg%d)", i),
			fmt.Sprintf("Edit(src/pkg%d/**)", i),
			fmt.Sprintf("WebFetch(domain:host%d.example.com)", i),
			fmt.Sprintf("mcp__srv%d__get_*", i),
		}[i%4]
		r, err := scope.Parse(text)
		if err != nil {
			b.Fatal(err)
		}
		if r, err = r.Pin(env); err != nil {
			b.Fatalf("pin %s: %v", text, err)
		}
		texts = append(texts, r.String())
		rules = append(rules, r)
	}
	res := shellparse.Analyze("ls -la src/other", env)
	if res.Verdict != shellparse.Simple {
		b.Fatalf("the benchmark command is %s: %s", res.Verdict, res.Reason)
	}
	call := scope.Call{Tool: "Bash", Input: map[string]any{"command": "ls -la src/other"}, Cwd: project,
		ProjectDir: project, Home: dir, Shell: &res}
	// A control: the same call is covered by a rule for it.
	ctl, err := scope.Parse("Bash(ls -la src/other)")
	if err != nil {
		b.Fatal(err)
	}
	if ctl, err = ctl.Pin(env); err != nil {
		b.Fatal(err)
	}
	if err := scope.Match(ctl, call); err != nil {
		b.Fatalf("control rule does not cover the call: %v", err)
	}
	b.Run("match", func(b *testing.B) {
		for b.Loop() {
			for _, r := range rules {
				if r.CoversTool(call.Tool) && scope.Match(r, call) == nil {
					b.Fatal("a rule covers the call")
				}
			}
		}
	})
	b.Run("parse+match", func(b *testing.B) {
		for b.Loop() {
			for _, t := range texts {
				r, err := scope.Parse(t)
				if err != nil {
					b.Fatal(err)
				}
				if r.CoversTool(call.Tool) && scope.Match(r, call) == nil {
					b.Fatal("a rule covers the call")
				}
			}
		}
	})
}
