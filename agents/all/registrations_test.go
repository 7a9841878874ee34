package all

import (
	"path/filepath"
	"strings"
	"testing"

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
