package doctor

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/install"
)

// doctor accepts loopguard-hook beside this binary only while both are of
// one build: after an upgrade of loopguard alone, the registered hook would
// decide by the old version's rules, and doctor fails.
func TestDoctorChecksHookBinaryBuild(t *testing.T) {
	src := clitest.TwinSource(t)
	dir := t.TempDir()
	full, hook := filepath.Join(dir, "loopguard"), filepath.Join(dir, "loopguard-hook")
	clitest.GoBuild(t, src, full, "-X main.v=1")
	clitest.GoBuild(t, src, hook, "-X main.v=1")
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
	clitest.GoBuild(t, src, full, "-X main.v=2") // loopguard upgraded alone
	failed := false
	for _, r := range check() {
		failed = failed || (r.status == statusFail && strings.Contains(r.detail, "not from the same build"))
	}
	if !failed {
		t.Fatalf("another build: doctor did not fail: %+v", check())
	}
}
