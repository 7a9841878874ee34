package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/copilot"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/register"
)

// copilotDoctor runs doctor's agent checks for Copilot in a project
// (home/project) where loopguard is registered in the files scopes names
// ("user", "project"; the scope written into the command is scopeOf's),
// with Copilot's config.json config ("" none), and returns its lines.
func copilotDoctor(t *testing.T, scopes []string, scopeOf func(string) string, config string) string {
	t.Helper()
	t.Setenv("COPILOT_HOME", "")
	home := t.TempDir()
	project := filepath.Join(home, "src", "project")
	self := filepath.Join(home, "bin", "loopguard")
	testfs.Write(t, self, []byte("#!/bin/sh\n"), 0o755)
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	env := doctorEnv{self: self, settings: install.Env{Home: home, Cwd: project}}
	for _, sc := range scopes {
		path := copilot.Registration.UserFile(env.settings.Dirs())
		if sc == register.ScopeProject {
			path = copilot.Registration.ProjectFile(project)
		}
		o := register.Options{Binary: self, Mode: "enforce", Deadline: agents.DefaultDeadline, Scope: scopeOf(sc)}
		if _, err := install.ApplyAgent(path, t.TempDir(), copilot.Registration.File(o), false); err != nil {
			t.Fatal(err)
		}
	}
	if config != "" {
		config = strings.ReplaceAll(config, "PROJECT", project)
		config = strings.ReplaceAll(config, "HOME", home)
		testfs.Write(t, filepath.Join(home, ".copilot", "config.json"), []byte(config), 0o600)
	}
	var b strings.Builder
	for _, r := range checkAgents(env, []string{copilot.Name}) {
		b.WriteString(r.status.String() + "  " + r.name + ": " + r.detail + "\n")
		if r.fix != "" {
			b.WriteString("      fix: " + r.fix + "\n")
		}
	}
	return b.String()
}

func same(s string) string { return s }

// Copilot ignores a repository's registration in a folder it does not
// trust, silently: doctor fails then, with the step that trusts it, and
// passes where Copilot's config.json trusts the folder (as Copilot writes
// it, with its comment header; a folder above; the older key).
func TestDoctorCopilotFolderTrust(t *testing.T) {
	const header = "// User settings belong in settings.json.\n// This file is managed automatically.\n"
	rows := []struct {
		name, config string
		scopes       []string
		fail         bool
	}{
		{"project only, no config", "", []string{"project"}, true},
		{"project only, another folder trusted", header + `{"trustedFolders": ["HOME/src/other"]}`, []string{"project"}, true},
		{"project only, a sibling with the same prefix", header + `{"trustedFolders": ["HOME/src/proj"]}`, []string{"project"}, true},
		{"control: the folder trusted", header + `{"trustedFolders": ["PROJECT"]}`, []string{"project"}, false},
		{"control: a folder above trusted", header + `{"trustedFolders": ["HOME/src/"]}`, []string{"project"}, false},
		{"control: the older key", `{"trusted_folders": ["PROJECT"]}`, []string{"project"}, false},
		{"control: the user registration guards an untrusted folder", "", []string{"user", "project"}, false},
		{"control: user only", "", []string{"user"}, false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			out := copilotDoctor(t, row.scopes, same, row.config)
			t.Log(out)
			failed := strings.Contains(out, "FAIL") || strings.Contains(out, "✗")
			trustFail := strings.Contains(out, "does not trust") && strings.Contains(out, "unguarded")
			if trustFail != row.fail {
				t.Errorf("trust failure %v, want %v:\n%s", trustFail, row.fail, out)
			}
			if row.fail && !strings.Contains(out, "Yes, and remember this folder for future sessions") {
				t.Errorf("no step that trusts the folder:\n%s", out)
			}
			if !row.fail && failed {
				t.Errorf("a failure:\n%s", out)
			}
		})
	}
}

// Two registrations of Copilot (the user's and a repository's) that name
// their files pass: the hook tells them apart. Two that do not (written
// before --scope) fail, and the fix never removes the project's file.
func TestDoctorCopilotTwoRegistrations(t *testing.T) {
	trusted := `{"trustedFolders": ["PROJECT"]}`
	out := copilotDoctor(t, []string{"user", "project"}, same, trusted)
	if !strings.Contains(out, "each other follows that answer once") || strings.Contains(out, "fix:") {
		t.Errorf("named registrations:\n%s", out)
	}
	// The repository's file written before --scope beside a user file
	// that names its scope: still told apart.
	out = copilotDoctor(t, []string{"user", "project"}, func(s string) string {
		if s == register.ScopeProject {
			return ""
		}
		return s
	}, trusted)
	if !strings.Contains(out, "each other follows that answer once") || strings.Contains(out, "fix:") {
		t.Errorf("an older project file beside a named user file:\n%s", out)
	}
	// Control: neither names its file.
	out = copilotDoctor(t, []string{"user", "project"}, func(string) string { return "" }, trusted)
	if !strings.Contains(out, "cannot be told apart") || !strings.Contains(out, "fix: run: loopguard init --agent copilot") {
		t.Errorf("unnamed registrations:\n%s", out)
	}
	if strings.Contains(out, "--project") || strings.Contains(out, "answers a call once where the host gives") {
		t.Errorf("the fix removes the project's file, or the text claims what is not so:\n%s", out)
	}
}
