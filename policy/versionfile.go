package policy

import (
	"strings"
	"sync"
)

// versionFiles are other tools' version files that mise (and asdf, with
// legacy_version_file) reads as a tool's version where the user enabled
// them (mise's idiomatic_version_file_enable_tools): a version of path:
// there makes that directory's bin the tool, and ref: builds one (the
// ninety-third attack run's .python-version and .nvmrc of
// path:$PWD/build/py made python3 and node the agent's scripts on the
// user's next cd). By content (VersionFileRuns): one that names a
// version (20, 3.12.1, lts/iron aside) stays an ordinary file.
var (
	versionFileOnce sync.Once
	versionFileSet  map[string]bool
)

func versionFiles() map[string]bool {
	versionFileOnce.Do(func() {
		versionFileSet = map[string]bool{
			".python-version": true, ".nvmrc": true, ".node-version": true, ".ruby-version": true, ".go-version": true,
			".java-version": true, ".sdkmanrc": true, ".terraform-version": true, ".bun-version": true, ".yvmrc": true,
			".crystal-version": true, ".packer-version": true,
		}
	})
	return versionFileSet
}

// IsVersionFile reports whether name is one of versionFiles (a file
// whose content VersionFileRuns judges).
func IsVersionFile(name string) bool { return versionFiles()[strings.ToLower(name)] }

// maxVersionFile bounds the version file VersionFileRuns reads: a larger
// one is taken as running something (mise reads it all).
const maxVersionFile = 4 << 10

// VersionFileRuns reports whether a version file's content makes mise or
// asdf run a program of the file system rather than a released version:
// a word with path: or ref: (and prefix:, sub-N:, which mise reads as a
// version's kind), or a path (a / that is no nvm alias's lts/NAME, a ~).
// A comment (# ...) names nothing.
func VersionFileRuns(data []byte) bool {
	if len(data) > maxVersionFile {
		return true
	}
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '=' }) {
			lw := strings.ToLower(w)
			switch {
			case strings.Contains(lw, ":"):
				return true // path:, ref:, prefix:, sub-1:, a drive's c:
			case strings.HasPrefix(lw, "lts/") && !strings.Contains(lw[4:], "/") && !strings.Contains(lw, ".."):
				// nvm's lts/iron, lts/*: a release line.
			case strings.ContainsAny(lw, "/\\~"):
				return true
			}
		}
	}
	return false
}
