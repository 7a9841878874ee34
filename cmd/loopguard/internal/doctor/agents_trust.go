package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/register"
)

// folderTrust is what an agent's folder trust decides for the folder
// doctor runs in: whether the feature is on (and which file says so),
// whether the folder is trusted, and by what.
type folderTrust struct {
	enabled bool
	// on says where enabled comes from: a settings file, or the default.
	on      string
	trusted bool
	// by says what decided trusted: a rule of the trust file, an
	// environment variable, or that no rule holds the folder.
	by  string
	err error
}

// readFolderTrust reads the settings and the trust file an agent's folder
// trust is decided by (files), with its own reading of the trust file.
func readFolderTrust(settings [3]string, folders string, def bool, dir string, trusted func([]byte, string) (bool, agents.TrustRule, error)) folderTrust {
	var data [3][]byte
	for i, p := range settings {
		data[i], _ = agents.ReadSmall(p)
	}
	ft := folderTrust{}
	var from int
	ft.enabled, from = agents.FolderTrustSetting(def, data[:]...)
	ft.on = fmt.Sprintf("the default, %v", def)
	if from >= 0 {
		ft.on = fmt.Sprintf("security.folderTrust.enabled %v in %s", ft.enabled, settings[from])
	}
	if !ft.enabled {
		ft.trusted = true
		return ft
	}
	b, err := agents.ReadSmall(folders)
	if err != nil {
		ft.err = err
		return ft
	}
	if b == nil {
		ft.by = folders + " does not exist"
		return ft
	}
	ok, rule, err := trusted(b, dir)
	switch {
	case err != nil:
		ft.err = fmt.Errorf("%s: %w", folders, err)
	case rule.Level == "":
		ft.by = "no rule of " + folders + " holds it"
	default:
		ft.by = fmt.Sprintf("%q: %s in %s", rule.Path, rule.Level, folders)
	}
	ft.trusted = ok
	return ft
}

// geminiTrust checks that Gemini CLI trusts the folder doctor runs in,
// where folder trust is on (its default): in a folder it does not trust,
// Gemini registers no hook of its settings files, the user's included,
// and says so only in its debug log, so every call of an interactive
// session runs unguarded (gemini -p refuses to start there: exit 55).
func geminiTrust(env doctorEnv, found []cli.FoundReg) []checkResult {
	if len(found) == 0 {
		return nil
	}
	dir := filepath.Clean(env.settings.Cwd)
	name := "gemini folder trust"
	if v, why := gemini.EnvTrust(os.Getenv); v != "" {
		if v == "trusted" {
			return []checkResult{{status: statusOK, name: name,
				detail: "Gemini trusts every folder while " + why + " is set (as it is here), so it runs loopguard's hooks; without it, it reads " + gemini.TrustFile}}
		}
		return []checkResult{{status: statusFail, name: name,
			detail: why + " is set: Gemini trusts no folder, so it runs no hook of its settings and every call runs unguarded",
			fix:    "unset " + strings.SplitN(why, "=", 2)[0]}}
	}
	files := gemini.Files(env.settings.Home, os.Getenv)
	ft := readFolderTrust(files.Settings, files.Folders, true, dir, gemini.Trusted)
	regs := registrationPaths(found)
	if r, ok := ft.settled(name, "Gemini", dir, regs, files.Folders, gemini.TrustStep); ok {
		return []checkResult{r}
	}
	return []checkResult{{status: statusFail, name: name,
		detail: fmt.Sprintf("Gemini does not trust %s (%s; folder trust is on: %s), so a session here runs no hook of its settings, %s included, without a word: every call of an interactive session here runs unguarded (gemini -p refuses to start here)", dir, ft.by, ft.on, regs),
		fix:    gemini.TrustStep(dir, files.Folders)}}
}

// qwenTrust checks the registrations of Qwen Code's found in the project
// where folder trust is on (it is off by default): in a folder it does not
// trust, Qwen Code drops the project's settings, their hooks included, and
// runs only the user's. Without a user registration beside them, every
// call runs unguarded.
func qwenTrust(env doctorEnv, found []cli.FoundReg) []checkResult {
	var inProject []cli.FoundReg
	user := false
	for _, f := range found {
		if f.Scope == register.ScopeUser && !f.Claude {
			user = true
		} else {
			inProject = append(inProject, f)
		}
	}
	if len(inProject) == 0 {
		return nil
	}
	dir := filepath.Clean(env.settings.Cwd)
	name := "qwen folder trust"
	files := qwen.Files(env.settings.Dirs().Agent(qwen.Name), dir, os.Getenv)
	ft := readFolderTrust(files.Settings, files.Folders, false, dir, qwen.Trusted)
	regs := registrationPaths(inProject)
	if r, ok := ft.settled(name, "Qwen Code", dir, regs, files.Folders, qwen.TrustStep); ok {
		return []checkResult{r}
	}
	if user {
		return []checkResult{{status: statusOK, name: name,
			detail: fmt.Sprintf("Qwen Code does not trust %s (%s), so it ignores %s; the user registration guards this folder", dir, ft.by, regs)}}
	}
	return []checkResult{{status: statusFail, name: name,
		detail: fmt.Sprintf("Qwen Code does not trust %s (%s; folder trust is on: %s), so it ignores %s without a word: every call here runs unguarded", dir, ft.by, ft.on, regs),
		fix:    qwen.TrustStep(dir, files.Folders)}}
}

// settled is the doctor line of check name where client's folder trust
// decides alike for every client: its trust file cannot be read (the
// client stops at start-up), folder trust is off, or dir is trusted; ok
// is false otherwise (dir is not trusted: each client's own line). regs
// names the registrations the client runs; step is how the user trusts
// dir, recorded in folders.
func (ft folderTrust) settled(name, client, dir, regs, folders string, step func(dir, file string) string) (r checkResult, ok bool) {
	switch {
	case ft.err != nil:
		return checkResult{status: statusFail, name: name,
			detail: fmt.Sprintf("%s cannot read its folder trust (%v): it stops at start-up until the file is fixed", client, ft.err),
			fix:    "fix or remove " + folders + ", then " + step(dir, folders)}, true
	case !ft.enabled:
		return checkResult{status: statusOK, name: name,
			detail: "folder trust is off (" + ft.on + "): " + client + " runs " + regs + " in every folder"}, true
	case ft.trusted:
		return checkResult{status: statusOK, name: name,
			detail: fmt.Sprintf("%s trusts %s (%s), so it runs %s", client, dir, ft.by, regs)}, true
	}
	return checkResult{}, false
}

// registrationPaths names the files found, for a doctor line.
func registrationPaths(found []cli.FoundReg) string {
	var paths []string
	for _, f := range found {
		paths = append(paths, f.Path)
	}
	return strings.Join(paths, " and ")
}

// qwenCoAuthor warns when Qwen Code's co-author rewrite is on in the
// settings it merges here (system defaults, the user's, this folder's,
// the system's): Qwen Code then adds a Co-authored-by trailer to a git
// commit's -m message (and an attribution line to a gh pr create's
// --body) after the hook, so what runs is not byte for byte what was
// decided. The hook refuses a command in which that insertion would land
// outside a quote bash reads; init --agent qwen turns the rewrite off.
func qwenCoAuthor(env doctorEnv, reg register.Registration) checkResult {
	system := os.Getenv("QWEN_CODE_SYSTEM_SETTINGS_PATH")
	if system == "" {
		system = "/etc/qwen-code/settings.json"
	}
	defaults := os.Getenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH")
	if defaults == "" {
		defaults = filepath.Join(filepath.Dir(system), "system-defaults.json")
	}
	var layers [][]byte
	for _, p := range []string{defaults, reg.UserFile(env.settings.Dirs()), reg.ProjectFile(env.settings.Cwd), system} {
		data, _, _ := install.ReadSettings(p)
		layers = append(layers, data)
	}
	name := "qwen co-author"
	commit, pr := qwen.CoAuthor(layers...)
	if !commit && !pr {
		return checkResult{status: statusOK, name: name, detail: "general.gitCoAuthor is off: Qwen Code runs a git commit's and a gh pr create's text as the hook decided it"}
	}
	return checkResult{status: statusWarn, name: name,
		detail: "general.gitCoAuthor is on (commit " + fmt.Sprint(commit) + ", pr " + fmt.Sprint(pr) + "): after the hook, Qwen Code adds a Co-authored-by trailer to a git commit's -m message and an attribution line to a gh pr create's --body, so what runs is not byte for byte what was approved; loopguard refuses a command in which that insertion would land outside a quote bash reads",
		fix:    `run: loopguard init --agent qwen (it sets general.gitCoAuthor.commit and .pr to false), or set them so in ` + reg.UserFile(env.settings.Dirs())}
}
