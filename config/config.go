// Package config reads and writes loopguard's user configuration: which
// executable directories the Bash analysis trusts, and who the principal is.
// It lives in $XDG_CONFIG_HOME/loopguard/config.json, a protected resource
// no agent call may touch.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/loopguard/loopguard/shellparse"
)

// Version of the file format.
const Version = 1

// maxSize bounds the file.
const maxSize = 64 << 10

// Config is the user's configuration. The zero value means the defaults.
type Config struct {
	V int `json:"v"`
	// TrustedDirs are the executable directories a scoped Bash grant may
	// resolve into. Empty means shellparse.DefaultTrusted.
	TrustedDirs []string `json:"trusted_dirs,omitempty"`
	// Principal names the human who mints grants. Empty means the OS user.
	Principal string `json:"principal,omitempty"`
}

// Error is a configuration file loopguard refuses, with a hint.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("invalid config %s: %s", e.Path, e.Msg) }

// Hint tells a person how to fix it.
func (e *Error) Hint() string {
	return "fix or remove " + e.Path + " (loopguard init writes a fresh one when there is none)"
}

// DefaultPath is $XDG_CONFIG_HOME/loopguard/config.json, or
// ~/.config/loopguard/config.json.
func DefaultPath() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "loopguard", "config.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("failed to find the home directory: %w", err)
	}
	return filepath.Join(home, ".config", "loopguard", "config.json"), nil
}

// Load reads the configuration at path. A missing file is the defaults; a
// file that is not exactly a valid configuration is an *Error, never a
// silent fallback.
func Load(path string) (Config, bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, false, nil
	}
	if err != nil {
		return Config{}, false, fmt.Errorf("failed to read config: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Config{}, true, &Error{Path: path, Msg: "not a regular file"}
	}
	if fi.Size() > maxSize {
		return Config{}, true, &Error{Path: path, Msg: fmt.Sprintf("larger than %d bytes", maxSize)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, true, fmt.Errorf("failed to read config: %w", err)
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, true, &Error{Path: path, Msg: err.Error()}
	}
	if dec.More() {
		return Config{}, true, &Error{Path: path, Msg: "trailing data"}
	}
	if err := c.Check(); err != nil {
		return Config{}, true, &Error{Path: path, Msg: err.Error()}
	}
	return c, true, nil
}

// Check validates c.
func (c Config) Check() error {
	if c.V != Version {
		return fmt.Errorf("version %d, want %d", c.V, Version)
	}
	for _, d := range c.TrustedDirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return fmt.Errorf("trusted dir %q is not a clean absolute path", d)
		}
	}
	if len(c.Principal) > 64 || strings.IndexFunc(c.Principal, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return errors.New("principal must be at most 64 printable characters")
	}
	return nil
}

// Trusted returns the trusted dirs (the defaults when none are set).
func (c Config) Trusted() []string {
	if len(c.TrustedDirs) == 0 {
		return shellparse.DefaultTrusted
	}
	return c.TrustedDirs
}

// Save writes c atomically (temp file, fsync, rename) with mode 0600.
func Save(path string, c Config) error {
	c.V = Version
	if err := c.Check(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".config-*")
	if err != nil {
		return fmt.Errorf("failed to write config: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("failed to write config: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("failed to write config: %w", err)
	}
	return nil
}

// Toolchains returns the directories, outside the defaults, where the named
// commands (go, node) resolve through path: what init offers to trust.
func Toolchains(path string, names ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range shellparse.DefaultTrusted {
		seen[d] = true
	}
	for _, name := range names {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" || !filepath.IsAbs(dir) {
				continue
			}
			p := filepath.Join(dir, name)
			fi, err := os.Stat(p)
			if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				continue
			}
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			d := filepath.Dir(p)
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
			break
		}
	}
	return out
}
