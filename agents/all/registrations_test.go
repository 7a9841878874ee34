package all

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// TestRegistrationsProtected: every hook file init writes, for the user
// and for a project, with $CODEX_HOME set or not, is one the protected set
// guards (policy.AgentPaths): both come from policy.AgentHome, so an agent
// cannot rewrite the file that makes it run loopguard. The control: with
// $CODEX_HOME set, Codex's file moves there, away from ~/.codex.
func TestRegistrationsProtected(t *testing.T) {
	under := func(path string, ps []policy.AgentPath, agent string) bool {
		for _, p := range ps {
			if p.Agent == agent && (path == p.Path || strings.HasPrefix(path, p.Path+string(filepath.Separator))) {
				return true
			}
		}
		return false
	}
	for _, d := range []register.Dirs{{Home: "/h"}, {Home: "/h", CodexHome: "/c"}} {
		ps := policy.AgentPaths(d.Home, "/p", d.CodexHome)
		for _, reg := range Registrations {
			for _, path := range []string{reg.UserFile(d), reg.ProjectFile("/p")} {
				if !under(path, ps, reg.Agent) {
					t.Errorf("%s (%+v): %s is not protected", reg.Agent, d, path)
				}
			}
		}
	}
	codex, _ := Registration("codex")
	if got := codex.UserFile(register.Dirs{Home: "/h", CodexHome: "/c"}); got != "/c/hooks.json" {
		t.Errorf("with $CODEX_HOME: %s", got)
	}
	if got := codex.UserFile(register.Dirs{Home: "/h"}); got != "/h/.codex/hooks.json" {
		t.Errorf("without $CODEX_HOME: %s", got)
	}
}

// TestHostChecks: doctor names what a host's own rule finds wrong in its
// hook file: Cursor's handler without "failClosed": true (Cursor lets the
// call through when the hook fails), another PreToolUse hook beside
// loopguard's in Codex's (Codex runs them concurrently). The control: the
// handlers init writes pass.
func TestHostChecks(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := register.Options{Binary: bin, Deadline: 5 * time.Second}
	written := func(reg register.Registration) []register.Found {
		var regs []register.Found
		for _, e := range reg.File(o).Entries {
			b, err := json.Marshal(e.Handler)
			if err != nil {
				t.Fatal(err)
			}
			var f map[string]any
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			regs = append(regs, register.Found{Event: e.Event, Matcher: e.Matcher, Fields: f, Ours: true})
		}
		return regs
	}
	for _, c := range []struct {
		agent  string
		change func(regs []register.Found) []register.Found
		want   string
	}{
		{"cursor", func(regs []register.Found) []register.Found {
			for _, r := range regs {
				r.Fields["failClosed"] = false
			}
			return regs
		}, `preToolUse: "failClosed" is not true`},
		{"codex", func(regs []register.Found) []register.Found {
			return append(regs, register.Found{Event: "PreToolUse", Fields: map[string]any{"command": "./other-hook"}})
		}, "PreToolUse: another hook runs too"},
	} {
		reg, err := Registration(c.agent)
		if err != nil {
			t.Fatal(err)
		}
		if p := reg.Check(written(reg), o); len(p) != 0 {
			t.Errorf("%s, control: the handlers init writes: %q", c.agent, p)
		}
		if p := reg.Check(c.change(written(reg)), o); !strings.Contains(strings.Join(p, "\n"), c.want) {
			t.Errorf("%s: want %q, got %q", c.agent, c.want, p)
		}
	}
}
