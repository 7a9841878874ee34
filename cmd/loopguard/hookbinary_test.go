package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goBuild builds a tiny main package into out with the given -ldflags.
func goBuild(t *testing.T, src, out, ldflags string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
}

// init registers loopguard-hook only when it is beside loopguard and of the
// same build; every other case registers loopguard itself and says why.
func TestHookBinary(t *testing.T) {
	src := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module example.com/twin\n\ngo 1.21\n",
		"main.go": "package main\n\nvar v string\n\nfunc main() { println(v) }\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	full, hook := filepath.Join(dir, "loopguard"), filepath.Join(dir, "loopguard-hook")
	goBuild(t, src, full, "-X main.v=1")

	check := func(what, wantBin, wantWhy string) {
		t.Helper()
		bin, why := hookBinary(full)
		if bin != wantBin || (wantWhy == "") != (why == "") || !strings.Contains(why, wantWhy) {
			t.Errorf("%s: hookBinary = %s, %q; want %s, %q", what, bin, why, wantBin, wantWhy)
		}
	}
	check("absent", full, "is not installed")

	goBuild(t, src, hook, "-X main.v=1")
	check("same build", hook, "")

	goBuild(t, src, hook, "-X main.v=2")
	check("another build", full, "not from the same build")

	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("not a Go binary", full, "cannot read the build")

	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	goBuild(t, src, hook, "-X main.v=1")
	if err := os.Chmod(hook, 0o644); err != nil {
		t.Fatal(err)
	}
	check("not executable", full, "not an executable file")
}
