package qwen

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
)

// Folder trust, as Qwen Code 0.24.4 has it (packages/cli/src/config/
// trustedFolders.ts and trust-precedence.ts, read in the release's own
// bundle). Folder trust is off unless security.folderTrust.enabled is
// true in the system defaults, the user's or the system settings (a
// project's own settings cannot turn it on or off); off, every folder is
// trusted. On, Qwen Code drops the project's .qwen/settings.json, its
// hooks included, in a folder it does not trust, and runs the user's
// ~/.qwen/settings.json hooks everywhere. A folder is trusted when the
// rule of trustedFolders.json that decides it trusts it: of the rules
// whose folder (a TRUST_PARENT rule's: the one above its path) holds it,
// the path as written and with its links resolved both counting, the
// deepest; on a tie DO_NOT_TRUST wins. A level it does not know is no
// rule. No rule: not trusted.

// TrustFile is the file Qwen Code keeps folder trust in, in its user
// directory (QWEN_CODE_TRUSTED_FOLDERS_PATH names another).
const TrustFile = "trustedFolders.json"

// Files names the files Qwen Code 0.24.4 reads, for a user whose Qwen
// directory is qwenDir (QWEN_HOME replaces it), with the environment getenv.
func Files(qwenDir, cwd string, getenv func(string) string) agents.TrustFiles {
	if h := getenv("QWEN_HOME"); h != "" {
		qwenDir = agents.ResolvePath(cwd, h)
	}
	return agents.TrustLayout{FoldersEnv: "QWEN_CODE_TRUSTED_FOLDERS_PATH",
		System: "/etc/qwen-code/settings.json", SystemDarwin: "/Library/Application Support/QwenCode/settings.json",
		SystemEnv: "QWEN_CODE_SYSTEM_SETTINGS_PATH", DefaultsEnv: "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
	}.Files(qwenDir, TrustFile, getenv)
}

// Trusted reads trustedFolders.json's bytes as Qwen Code 0.24.4 does and
// says whether it trusts dir (absolute), with the rule that decided (zero
// when none did: not trusted). A file that is not a JSON object is an
// error: Qwen Code stops at start-up.
func Trusted(data []byte, dir string) (bool, agents.TrustRule, error) {
	rules, err := agents.ReadTrustRules(data)
	if err != nil {
		return false, agents.TrustRule{}, fmt.Errorf("%s is not a JSON object Qwen Code reads: %w", TrustFile, err)
	}
	location := variants(dir, dir)
	var win agents.TrustRule
	winDepth := -1
	for _, r := range rules {
		switch r.Level {
		case agents.TrustFolder, agents.TrustParent, agents.DoNotTrust:
		default:
			continue
		}
		depth := -1
		for _, l := range location {
			for _, v := range variants(dir, r.Effective()) {
				if agents.Within(v, l) {
					depth = max(depth, pathDepth(v))
				}
			}
		}
		if depth < 0 {
			continue
		}
		if depth > winDepth || depth == winDepth && r.Level == agents.DoNotTrust && win.Level != agents.DoNotTrust {
			win, winDepth = r, depth
		}
	}
	return winDepth >= 0 && win.Level != agents.DoNotTrust, win, nil
}

// variants are p resolved from cwd, and that with its links resolved.
func variants(cwd, p string) []string {
	p = agents.ResolvePath(cwd, p)
	if r := agents.RealPath(p); r != p {
		return []string{p, r}
	}
	return []string{p}
}

// pathDepth is how many names p has below the root.
func pathDepth(p string) int {
	rel := strings.Trim(filepath.ToSlash(filepath.Clean(p)), "/")
	if rel == "" {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

// TrustStep is how the user makes Qwen Code trust dir.
func TrustStep(dir, file string) string {
	return "run: cd " + agents.QuoteDir(dir) + ` && qwen, and at "Do you trust this folder?" choose "Trust folder (` + filepath.Base(dir) +
		`)" (or type /trust in a Qwen Code session there); Qwen Code records it in ` + file + ` as "` + strings.ReplaceAll(dir, `"`, `\"`) + `": "TRUST_FOLDER"`
}
