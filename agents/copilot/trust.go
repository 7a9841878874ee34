package copilot

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Copilot CLI runs a repository's hooks (.github/hooks/*.json, and the
// hooks of its .claude/settings files) only in a folder the user trusts,
// and then without a word when it does not: the call runs unguarded. It
// keeps the folders trusted for good in config.json in its home
// (~/.copilot, or $COPILOT_HOME), a JSON file headed by // comment lines,
// as "trustedFolders" (once "trusted_folders", still read); a folder is
// trusted when it or a folder above it is listed. It adds one when the
// user answers "Yes, and remember this folder for future sessions" to
// "Confirm folder trust" at the start of an interactive session there;
// --trust-folder trusts the folder for one -p run only, and `copilot
// config` does not set it. Checked on 1.0.102 against its own
// folderTrustIsTrusted (a listed parent, a trailing slash and the old key
// count; settings.json and XDG_CONFIG_HOME do not).

// ConfigFile is the file Copilot keeps trusted folders in, under its home.
const ConfigFile = "config.json"

// Trusted reports whether config, the bytes of Copilot's config.json,
// lists dir or a folder above it as trusted. dir is absolute and clean.
func Trusted(config []byte, dir string) (bool, error) {
	var c struct {
		TrustedFolders []string `json:"trustedFolders"`
		Legacy         []string `json:"trusted_folders"`
	}
	if err := json.Unmarshal(stripLineComments(config), &c); err != nil {
		return false, err
	}
	for _, t := range append(c.TrustedFolders, c.Legacy...) {
		if t == "" || !filepath.IsAbs(t) {
			continue
		}
		t = filepath.Clean(t)
		if dir == t || strings.HasPrefix(dir, strings.TrimSuffix(t, string(filepath.Separator))+string(filepath.Separator)) {
			return true, nil
		}
	}
	return false, nil
}

// stripLineComments blanks the lines of data that are // comments (the
// header Copilot writes), keeping the rest as it is.
func stripLineComments(data []byte) []byte {
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "//") {
			lines[i] = ""
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// TrustStep is how the user trusts dir for Copilot for good.
func TrustStep(dir string) string {
	return "run: cd " + quoteDir(dir) + " && copilot, and at \"Confirm folder trust\" choose \"Yes, and remember this folder for future sessions\" (Copilot records it in ~/.copilot/config.json, \"trustedFolders\"; --trust-folder lasts one run only)"
}

func quoteDir(dir string) string {
	if strings.Trim(dir, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return dir
	}
	return "'" + strings.ReplaceAll(dir, "'", `'\''`) + "'"
}
