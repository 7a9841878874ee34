package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/install"
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

// twinSource is a tiny main package whose builds differ by -X main.v.
func twinSource(t *testing.T) string {
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

// doctor accepts loopguard-hook beside this binary only while both are of
// one build: after an upgrade of loopguard alone, the registered hook would
// decide by the old version's rules, and doctor fails.
func TestDoctorChecksHookBinaryBuild(t *testing.T) {
	src := twinSource(t)
	dir := t.TempDir()
	full, hook := filepath.Join(dir, "loopguard"), filepath.Join(dir, "loopguard-hook")
	goBuild(t, src, full, "-X main.v=1")
	goBuild(t, src, hook, "-X main.v=1")
	h := install.HandlerFor(install.Options{Binary: hook, Deadline: agents.DefaultDeadline}, install.PreToolUse)
	check := func() []checkResult {
		return checkHandler(doctorEnv{self: full}, &loadedSettings{scope: "user", path: "settings.json"},
			install.Registered{Event: install.PreToolUse, Matcher: "*", Handler: h, Ours: true})
	}
	for _, r := range check() {
		if r.status != statusOK {
			t.Fatalf("same build: %+v", r)
		}
	}
	goBuild(t, src, full, "-X main.v=2") // loopguard upgraded alone
	failed := false
	for _, r := range check() {
		failed = failed || (r.status == statusFail && strings.Contains(r.detail, "not from the same build"))
	}
	if !failed {
		t.Fatalf("another build: doctor did not fail: %+v", check())
	}
}
