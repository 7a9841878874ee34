package hookmain

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/shelltool"
)

// The hook refuses Gemini's shell calls unless the user's settings put
// loopguard's shell tool in place and no settings file above them names
// another discovery or call command.
func TestShellToolSettingsProblem(t *testing.T) {
	const wrapper = "/opt/lg/loopguard-exec"
	write := func(t *testing.T, path string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setup := func(t *testing.T) (home, project string) {
		home, project = t.TempDir(), t.TempDir()
		t.Setenv("GEMINI_CLI_HOME", home)
		t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", filepath.Join(t.TempDir(), "none.json"))
		write(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{"tools": shelltool.Settings(wrapper)})
		return home, project
	}
	t.Run("control", func(t *testing.T) {
		_, project := setup(t)
		if why := shellHosts[gemini.Name].settingsProblem(wrapper, project, project); why != "" {
			t.Fatal(why)
		}
	})
	t.Run("control with comments and the same commands in the project", func(t *testing.T) {
		_, project := setup(t)
		b, _ := json.Marshal(map[string]any{"tools": map[string]any{"callCommand": wrapper}})
		p := filepath.Join(project, ".gemini", "settings.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("// the team's\n/* settings */"+string(b)), 0o600); err != nil {
			t.Fatal(err)
		}
		if why := shellHosts[gemini.Name].settingsProblem(wrapper, project, project); why != "" {
			t.Fatal(why)
		}
	})
	for _, c := range []struct {
		name string
		edit func(t *testing.T, home, project string)
		want string
	}{
		{"project replaces the call command", func(t *testing.T, _, project string) {
			write(t, filepath.Join(project, ".gemini", "settings.json"), map[string]any{"tools": map[string]any{"callCommand": "/bin/sh"}})
		}, "sets tools.callCommand"},
		{"project replaces the discovery", func(t *testing.T, _, project string) {
			write(t, filepath.Join(project, ".gemini", "settings.json"), map[string]any{"tools": map[string]any{"discoveryCommand": "./tools.sh"}})
		}, "sets tools.discoveryCommand"},
		{"system settings replace the call command", func(t *testing.T, _, _ string) {
			p := filepath.Join(t.TempDir(), "system.json")
			write(t, p, map[string]any{"tools": map[string]any{"callCommand": ""}})
			t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", p)
		}, "sets tools.callCommand"},
		{"project settings that do not parse", func(t *testing.T, _, project string) {
			p := filepath.Join(project, ".gemini", "settings.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(`{"tools": {`), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "cannot be read"},
		{"user settings do not exclude the built-in shell", func(t *testing.T, home, _ string) {
			s := shelltool.Settings(wrapper)
			s["exclude"] = []string{}
			write(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{"tools": s})
		}, "does not put loopguard's shell tool"},
		{"user settings name another call command", func(t *testing.T, home, _ string) {
			s := shelltool.Settings(wrapper)
			s["callCommand"] = "/tmp/x"
			write(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{"tools": s})
		}, "does not put loopguard's shell tool"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, project := setup(t)
			c.edit(t, home, project)
			if why := shellHosts[gemini.Name].settingsProblem(wrapper, project, project); !strings.Contains(why, c.want) {
				t.Errorf("got %q, want %q", why, c.want)
			}
		})
	}
}
