package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Package initialisation runs on every tool call before the hook reads its
// payload, whatever the call: a table built at start-up is paid by every
// Read too (issue 39, item 6). policy built its program tables, its
// executable-configuration index and its secrets' texts at start-up (120 KB
// in 574 allocations, a quarter of a millisecond on each call); they are
// built on first use now. This holds loopguard's own packages to what the
// runtime's trace says they allocate at start-up (bytes, not time: bytes do
// not depend on the machine's load). The control: the trace names
// hookmain and policy, so a binary that traced nothing cannot pass.
func TestLoopguardInitIsSmall(t *testing.T) {
	const (
		perPackage = 16 << 10
		total      = 48 << 10
	)
	dir := t.TempDir()
	bin := filepath.Join(dir, "loopguard-hook")
	b := exec.Command("go", "build", "-o", bin, ".")
	b.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := b.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	payload, err := os.ReadFile("../../testdata/payloads/pretooluse-read.json")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "hook", "--event", "PreToolUse")
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "CLAUDE_PROJECT_DIR="+dir, "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // the answer is not this test's; the trace is
	const prefix = "github.com/loopguard/loopguard/"
	seen := map[string]bool{}
	sum := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || !strings.HasPrefix(f[1], prefix) || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("cannot read the trace line %q: %v", line, err)
		}
		pkg := strings.TrimPrefix(f[1], prefix)
		seen[pkg] = true
		sum += n
		if n > perPackage {
			t.Errorf("package %s allocates %d bytes at start-up (at most %d): build its tables on first use (sync.OnceValue)", pkg, n, perPackage)
		}
	}
	for _, want := range []string{"hookmain", "policy"} {
		if !seen[want] {
			t.Fatalf("control: the init trace names no %s (stderr:\n%s)", want, stderr.String())
		}
	}
	if sum > total {
		t.Errorf("loopguard's packages allocate %d bytes at start-up (at most %d)", sum, total)
	}
	t.Logf("loopguard's packages allocate %d bytes at start-up", sum)
}
