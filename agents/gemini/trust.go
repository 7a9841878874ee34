package gemini

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
)

// Folder trust, as Gemini CLI 0.61.0 has it (packages/core/src/utils/
// trust.ts and packages/cli/src/config/settings.ts, read in the release's
// own bundle). With folder trust on (security.folderTrust.enabled, true
// unless the system defaults, the user's or the system settings turn it
// off; a project's own settings cannot), Gemini registers the hooks of
// its settings only in a folder it trusts: in any other folder it runs no
// settings hook at all, the user's ~/.gemini/settings.json included, and
// says so only in its debug log. A folder is trusted when the environment
// says so (GEMINI_CLI_TRUST_WORKSPACE=true; GEMINI_RESTRICTED_MODE=true or
// GEMINI_CLI_TRUST_WORKSPACE=false distrust it, before anything else), or
// when the rule of trustedFolders.json that decides it trusts it: of the
// rules whose folder (a TRUST_PARENT rule's: the one above its path)
// holds it, symbolic links resolved on both sides, the one with the
// longest path as written (normalised), the first in the file on a tie.
// No such rule: not trusted.

// TrustFile is the file Gemini keeps folder trust in, in its user
// directory (GEMINI_CLI_TRUSTED_FOLDERS_PATH names another).
const TrustFile = "trustedFolders.json"

// Files names the files Gemini 0.61.0 reads, for a user whose home is home
// (GEMINI_CLI_HOME replaces it), with the environment getenv.
func Files(home string, getenv func(string) string) agents.TrustFiles {
	if h := getenv("GEMINI_CLI_HOME"); h != "" {
		home = h
	}
	return agents.TrustLayout{FoldersEnv: "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
		System: "/etc/gemini-cli/settings.json", SystemDarwin: "/Library/Application Support/GeminiCli/settings.json",
		SystemEnv: "GEMINI_CLI_SYSTEM_SETTINGS_PATH", DefaultsEnv: "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
	}.Files(filepath.Join(home, ".gemini"), TrustFile, getenv)
}

// EnvTrust is what the environment decides for every folder ("" when it
// decides nothing): "trusted" or "untrusted", and the variable that says it.
func EnvTrust(getenv func(string) string) (verdict, why string) {
	switch {
	case getenv("GEMINI_RESTRICTED_MODE") == "true":
		return "untrusted", "GEMINI_RESTRICTED_MODE=true"
	case getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false":
		return "untrusted", "GEMINI_CLI_TRUST_WORKSPACE=false"
	case getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true":
		return "trusted", "GEMINI_CLI_TRUST_WORKSPACE=true"
	}
	return "", ""
}

// Trusted reads trustedFolders.json's bytes as Gemini 0.61.0 does and says
// whether it trusts dir (absolute), with the rule that decided (zero when
// none did: not trusted). A file Gemini refuses (not an object, a level
// it does not know) is an error: Gemini then stops at start-up.
func Trusted(data []byte, dir string) (bool, agents.TrustRule, error) {
	rules, err := agents.ReadTrustRules(data)
	if err != nil {
		return false, agents.TrustRule{}, fmt.Errorf("%s is not a JSON object Gemini reads: %w", TrustFile, err)
	}
	// Gemini normalises each path as it loads the file; a later key that
	// normalises to an earlier one replaces its level in place.
	var norm []agents.TrustRule
	at := map[string]int{}
	for _, r := range rules {
		switch r.Level {
		case agents.TrustFolder, agents.TrustParent, agents.DoNotTrust:
		default:
			return false, agents.TrustRule{}, fmt.Errorf("%s: invalid trust level %q for %q (Gemini accepts TRUST_FOLDER, TRUST_PARENT, DO_NOT_TRUST)", TrustFile, r.Level, r.Path)
		}
		p := agents.ResolvePath(dir, r.Path)
		if i, ok := at[p]; ok {
			norm[i].Level = r.Level
			continue
		}
		at[p] = len(norm)
		norm = append(norm, agents.TrustRule{Path: p, Level: r.Level})
	}
	location := agents.RealPath(dir)
	var win agents.TrustRule
	longest := -1
	for _, r := range norm {
		if !agents.Within(agents.RealPath(r.Effective()), location) {
			continue
		}
		if len(r.Path) > longest {
			longest, win = len(r.Path), r
		}
	}
	return win.Level == agents.TrustFolder || win.Level == agents.TrustParent, win, nil
}

// TrustStep is how the user makes Gemini trust dir.
func TrustStep(dir, file string) string {
	return "run: cd " + agents.QuoteDir(dir) + ` && gemini, and at "Do you trust the files in this folder?" choose "Trust folder (` + filepath.Base(dir) +
		`)" (or type /permissions trust in a Gemini session there); Gemini records it in ` + file + ` as "` + strings.ReplaceAll(dir, `"`, `\"`) + `": "TRUST_FOLDER"`
}
