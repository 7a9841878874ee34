package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/loopguard/loopguard/fsx"
)

// Folder trust as Gemini CLI and Qwen Code keep it: a JSON object in the
// user's trustedFolders.json that maps a path to TRUST_FOLDER (that
// folder and every folder below it), TRUST_PARENT (the folder above the
// path, and below) or DO_NOT_TRUST. The two clients share the file format
// (Qwen Code is a fork) but pick the rule that decides a folder each its
// own way (agents/gemini, agents/qwen).

// Trust levels, as the clients spell them.
const (
	TrustFolder = "TRUST_FOLDER"
	TrustParent = "TRUST_PARENT"
	DoNotTrust  = "DO_NOT_TRUST"
)

// TrustRule is one entry of trustedFolders.json, in the file's order.
type TrustRule struct{ Path, Level string }

// Effective is the folder the rule speaks for: its own path, or for
// TRUST_PARENT the folder above it.
func (r TrustRule) Effective() string {
	if r.Level == TrustParent {
		return filepath.Dir(r.Path)
	}
	return r.Path
}

// ReadTrustRules reads trustedFolders.json's bytes: its rules in the
// file's order (JavaScript's Object.entries order, on which a tie between
// two rules can turn), with // and /* */ comments allowed as the clients
// strip them. A value that is not a string is kept as "" (no level).
func ReadTrustRules(data []byte) ([]TrustRule, error) {
	dec := json.NewDecoder(bytes.NewReader(StripJSONComments(data)))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var rules []TrustRule
	seen := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		level, _ := v.(string)
		if i, ok := seen[key]; ok {
			// JSON.parse keeps the last value at the first key's place.
			rules[i].Level = level
			continue
		}
		seen[key] = len(rules)
		rules = append(rules, TrustRule{Path: key, Level: level})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return rules, nil
}

// StripJSONComments blanks // and /* */ comments outside strings, as the
// strip-json-comments package the clients use does (whitespace for each
// byte, so offsets in an error stay right).
func StripJSONComments(data []byte) []byte {
	out := bytes.Clone(data)
	inString, escaped := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	return out
}

// Within reports whether child is dir or below it (both absolute and
// clean), as Node's path.relative reads it.
func Within(dir, child string) bool {
	rel, err := filepath.Rel(dir, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ResolvePath is Node's path.resolve(p) from cwd: absolute and clean.
func ResolvePath(cwd, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// RealPath is p with its symbolic links resolved, or p itself when it
// does not exist or cannot be resolved (Node's realpathSync, caught).
func RealPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// FolderTrustSetting reads security.folderTrust.enabled from the settings
// files in the clients' merge order (system defaults, user, system: the
// project's own file never counts), the last that sets it winning; def
// when none does. A file that is missing or cannot be parsed sets
// nothing.
func FolderTrustSetting(def bool, files ...[]byte) (enabled bool, from int) {
	enabled, from = def, -1
	for i, data := range files {
		if data == nil {
			continue
		}
		var s struct {
			Security struct {
				FolderTrust struct {
					Enabled *bool `json:"enabled"`
				} `json:"folderTrust"`
			} `json:"security"`
		}
		if json.Unmarshal(StripJSONComments(data), &s) != nil || s.Security.FolderTrust.Enabled == nil {
			continue
		}
		enabled, from = *s.Security.FolderTrust.Enabled, i
	}
	return enabled, from
}

// ReadSmall reads a settings file of the client's: nil when it does not
// exist; an error when it cannot be read or is larger than 1 MiB.
func ReadSmall(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Size() > 1<<20 {
		return nil, fmt.Errorf("%s is %d bytes, more than the 1 MiB read", path, fi.Size())
	}
	return fsx.ReadRegular(path, 1<<20, 0) // never blocks on a FIFO swapped in
}

// QuoteDir is dir as a shell word for a step the user types.
func QuoteDir(dir string) string {
	if strings.Trim(dir, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return dir
	}
	return "'" + strings.ReplaceAll(dir, "'", `'\''`) + "'"
}

// TrustFiles are the files a client reads to decide folder trust.
type TrustFiles struct {
	Folders string
	// Settings, in merge order: system defaults, the user's, the system's.
	Settings [3]string
}

// TrustLayout is where a client keeps those files, and the variables that
// move them, as Gemini CLI and Qwen Code name each.
type TrustLayout struct {
	FoldersEnv             string // names another trustedFolders.json
	System, SystemDarwin   string // the system settings file
	SystemEnv, DefaultsEnv string // name another system settings, system defaults file
}

// Files names the files of l for a user whose client directory is dir,
// with the environment getenv.
func (l TrustLayout) Files(dir, trustFile string, getenv func(string) string) TrustFiles {
	f := TrustFiles{Folders: filepath.Join(dir, trustFile)}
	if p := getenv(l.FoldersEnv); p != "" {
		f.Folders = p
	}
	system := l.System
	if runtime.GOOS == "darwin" {
		system = l.SystemDarwin
	}
	if p := getenv(l.SystemEnv); p != "" {
		system = p
	}
	defaults := filepath.Join(filepath.Dir(system), "system-defaults.json")
	if p := getenv(l.DefaultsEnv); p != "" {
		defaults = p
	}
	f.Settings = [3]string{defaults, filepath.Join(dir, "settings.json"), system}
	return f
}
