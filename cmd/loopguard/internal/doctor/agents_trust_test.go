package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/register"
)

// trustDoctor runs doctor's agent checks for agent (gemini or qwen) in a
// project (home/src/project) where loopguard is registered in the files
// scopes names, with the user's settings holding settings ("" none: the
// client's defaults) before init writes into them, and trustedFolders.json
// holding folders ("" none); PROJECT and HOME in both are the paths. It
// returns doctor's lines.
func trustDoctor(t *testing.T, reg register.Registration, scopes []string, settings, folders string, env map[string]string) string {
	t.Helper()
	for _, v := range []string{"GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_RESTRICTED_MODE",
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH", "QWEN_HOME", "QWEN_CODE_TRUSTED_FOLDERS_PATH", "QWEN_CODE_SYSTEM_SETTINGS_PATH"} {
		t.Setenv(v, "")
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	home := t.TempDir()
	// No system settings of this machine's count.
	t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", filepath.Join(home, "etc", "settings.json"))
	t.Setenv("QWEN_CODE_SYSTEM_SETTINGS_PATH", filepath.Join(home, "etc", "settings.json"))
	project := filepath.Join(home, "src", "project")
	self := filepath.Join(home, "bin", "loopguard")
	testfs.Write(t, self, []byte("#!/bin/sh\n"), 0o755)
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	fill := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "PROJECT", project), "HOME", home)
	}
	de := doctorEnv{self: self, settings: install.Env{Home: home, Cwd: project}}
	userFile := reg.UserFile(de.settings.Dirs())
	if settings != "" {
		testfs.Write(t, userFile, []byte(fill(settings)), 0o600)
	}
	for _, sc := range scopes {
		path := userFile
		if sc == register.ScopeProject {
			path = reg.ProjectFile(project)
		}
		o := register.Options{Binary: self, Mode: "enforce", Deadline: agents.DefaultDeadline, Scope: sc}
		if _, err := install.ApplyAgent(path, t.TempDir(), reg.File(o), false); err != nil {
			t.Fatal(err)
		}
	}
	if folders != "" {
		testfs.Write(t, filepath.Join(filepath.Dir(userFile), "trustedFolders.json"), []byte(fill(folders)), 0o600)
	}
	var b strings.Builder
	for _, r := range checkAgents(de, []string{reg.Agent}) {
		b.WriteString(r.status.String() + "  " + r.name + ": " + r.detail + "\n")
		if r.fix != "" {
			b.WriteString("      fix: " + r.fix + "\n")
		}
	}
	return b.String()
}

type trustDoctorRow struct {
	name              string
	scopes            []string
	settings, folders string
	env               map[string]string
	fail              bool
	says              string
}

func runTrustDoctor(t *testing.T, reg register.Registration, step string, rows []trustDoctorRow) {
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			out := trustDoctor(t, reg, row.scopes, row.settings, row.folders, row.env)
			t.Log(out)
			trustFail := false
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, " folder trust: ") {
					trustFail = trustFail || strings.HasPrefix(l, "FAIL")
				}
			}
			if trustFail != row.fail {
				t.Errorf("trust failure %v, want %v:\n%s", trustFail, row.fail, out)
			}
			if row.fail && row.env == nil && !strings.Contains(out, step) {
				t.Errorf("no step that trusts the folder (%q):\n%s", step, out)
			}
			if row.says != "" && !strings.Contains(out, row.says) {
				t.Errorf("doctor does not say %q:\n%s", row.says, out)
			}
		})
	}
}

// Gemini CLI 0.61.0 runs no hook of its settings in a folder it does not
// trust, the user's own included (folder trust is on by default): doctor
// fails there, with the step that trusts the folder, and passes where
// trustedFolders.json trusts it (as Gemini writes it), where folder trust
// is off, or where the environment trusts every folder.
func TestDoctorGeminiFolderTrust(t *testing.T) {
	trusted := `{"PROJECT": "TRUST_FOLDER"}`
	runTrustDoctor(t, gemini.Registration, `"Do you trust the files in this folder?"`, []trustDoctorRow{
		{name: "user registration, no trustedFolders.json", scopes: []string{"user"}, fail: true},
		{name: "project registration, no trustedFolders.json", scopes: []string{"project"}, fail: true},
		{name: "another folder trusted", scopes: []string{"user"}, folders: `{"HOME/src/other": "TRUST_FOLDER"}`, fail: true},
		{name: "a sibling with the same prefix", scopes: []string{"user"}, folders: `{"HOME/src/proj": "TRUST_FOLDER"}`, fail: true},
		{name: "a folder above trusted, this one not", scopes: []string{"user"}, folders: `{"HOME/src": "TRUST_FOLDER", "PROJECT": "DO_NOT_TRUST"}`, fail: true},
		{name: "restricted mode", scopes: []string{"user"}, folders: trusted, env: map[string]string{"GEMINI_RESTRICTED_MODE": "true"}, fail: true, says: "fix: unset GEMINI_RESTRICTED_MODE"},
		{name: "a level Gemini refuses", scopes: []string{"user"}, folders: `{"PROJECT": "TRUST"}`, fail: true, says: "stops at start-up"},
		{name: "control: the folder trusted", scopes: []string{"user"}, folders: trusted, says: "TRUST_FOLDER in "},
		{name: "control: the project's registration in a trusted folder", scopes: []string{"project"}, folders: trusted},
		{name: "control: a folder above trusted", scopes: []string{"user"}, folders: "// mine\n" + `{"HOME/src": "TRUST_FOLDER"}`},
		{name: "control: trust parent", scopes: []string{"user"}, folders: `{"PROJECT/x": "TRUST_PARENT"}`},
		{name: "control: folder trust off", scopes: []string{"user"}, settings: `{"security": {"folderTrust": {"enabled": false}}}`, says: "folder trust is off"},
		{name: "control: the environment trusts", scopes: []string{"user"}, env: map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}, says: "GEMINI_CLI_TRUST_WORKSPACE=true"},
	})
}

// Qwen Code 0.24.4 drops a project's settings, its hooks included, in a
// folder it does not trust, where folder trust is on (it is off by
// default); the user's registration runs everywhere.
func TestDoctorQwenFolderTrust(t *testing.T) {
	on := `{"security": {"folderTrust": {"enabled": true}}}`
	trusted := `{"PROJECT": "TRUST_FOLDER"}`
	runTrustDoctor(t, qwen.Registration, `"Do you trust this folder?"`, []trustDoctorRow{
		{name: "project only, trust on, nothing trusted", scopes: []string{"project"}, settings: on, fail: true},
		{name: "project only, a sibling with the same prefix", scopes: []string{"project"}, settings: on, folders: `{"HOME/src/proj": "TRUST_FOLDER"}`, fail: true},
		{name: "project only, a tie DO_NOT_TRUST wins", scopes: []string{"project"}, settings: on,
			folders: `{"PROJECT/a-long-name": "TRUST_PARENT", "PROJECT": "DO_NOT_TRUST"}`, fail: true},
		{name: "control: project only, the folder trusted", scopes: []string{"project"}, settings: on, folders: trusted, says: "Qwen Code trusts"},
		{name: "control: project only, trust off (the default)", scopes: []string{"project"}, says: "folder trust is off (the default, false)"},
		{name: "control: the user registration guards an untrusted folder", scopes: []string{"user", "project"}, settings: on, says: "the user registration guards this folder"},
	})
}
