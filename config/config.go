// Package config reads and writes loopguard's user configuration: which
// executable directories the Bash analysis trusts, who the principal is, and
// where the approval key is kept (the OS keyring, or HashiCorp Vault).
// It lives in $XDG_CONFIG_HOME/loopguard/config.json, a protected resource
// no agent call may touch.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// Version of the file format.
const Version = 1

// maxSize bounds the file.
const maxSize = 64 << 10

// Config is the user's configuration. The zero value means the defaults.
type Config struct {
	V int `json:"v"`
	// TrustedDirs are the executable directories a scoped Bash grant may
	// resolve into. Empty means policy.DefaultTrusted.
	TrustedDirs []string `json:"trusted_dirs,omitempty"`
	// Principal names the human who mints grants. Empty means the OS user.
	// With the Vault backend the principal is the approver's Vault identity
	// and this field is not used.
	Principal string `json:"principal,omitempty"`
	// Backend is where the approval key is kept: BackendKeyring (the
	// default, also when empty) or BackendVault, configured by Vault.
	Backend string `json:"backend,omitempty"`
	Vault   *Vault `json:"vault,omitempty"`
	// Notify says how the human is told that the hook holds a call for
	// them. Absent means the defaults: a desktop notification where a
	// session bus is, no command.
	Notify *Notify `json:"notify,omitempty"`
	// KeyHolder turns the key's holder (package keyring) off when false:
	// the hook then reads the keyring on every call that needs the key,
	// and starts no resident process.
	KeyHolder *bool `json:"key_holder,omitempty"`
}

// KeyHolderOn reports whether the hook may start and ask the key's holder.
func (c Config) KeyHolderOn() bool { return c.KeyHolder == nil || *c.KeyHolder }

// Notify configures the notifications of held calls (package notify).
type Notify struct {
	// Desktop turns the desktop notification off when false.
	Desktop *bool `json:"desktop,omitempty"`
	// Command is run (argv: no shell, an absolute program path) each time a
	// call is held, with the call in LOOPGUARD_* environment variables and
	// as text on stdin: tmux display-message, a phone push script.
	Command []string `json:"command,omitempty"`
	// Ntfy is the user's own ntfy topic, pushed to by loopguard serve when
	// a call is held: the push says only that a call waits and links to
	// the console, never what the call is.
	Ntfy *Ntfy `json:"ntfy,omitempty"`
}

// Ntfy names an ntfy topic (their own server or a public one).
type Ntfy struct {
	// URL is the topic's URL, https://host[:port]/topic (plain http only
	// to a loopback host).
	URL string `json:"url"`
	// TokenFile holds an access token for the topic, if it needs one.
	TokenFile string `json:"token_file,omitempty"`
}

func (n *Ntfy) check() error {
	u, err := url.Parse(n.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		!ntfyTopic().MatchString(strings.TrimPrefix(u.Path, "/")) {
		return fmt.Errorf("notify ntfy url %q is not http(s)://host[:port]/topic (a topic of letters, digits, '-' and '_')", n.URL)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("notify ntfy url %q: plain http is allowed only to a loopback address; use https", n.URL)
	}
	if n.TokenFile != "" && (!filepath.IsAbs(n.TokenFile) || filepath.Clean(n.TokenFile) != n.TokenFile) {
		return fmt.Errorf("notify ntfy token_file %q is not a clean absolute path", n.TokenFile)
	}
	return nil
}

// ntfyTopic is an ntfy topic name, as ntfy accepts it.
var ntfyTopic = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

func loopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

// Limits of a notify command.
const (
	maxNotifyArgs   = 64
	maxNotifyArgLen = 4096
)

// DesktopOn reports whether the desktop notification is wanted.
func (c Config) DesktopOn() bool {
	return c.Notify == nil || c.Notify.Desktop == nil || *c.Notify.Desktop
}

// NotifyNtfy returns the ntfy topic to push to, or nil.
func (c Config) NotifyNtfy() *Ntfy {
	if c.Notify == nil {
		return nil
	}
	return c.Notify.Ntfy
}

// NotifyCommand returns the notify command, or nil.
func (c Config) NotifyCommand() []string {
	if c.Notify == nil {
		return nil
	}
	return c.Notify.Command
}

func (n *Notify) check() error {
	if n == nil {
		return nil
	}
	if n.Ntfy != nil {
		if err := n.Ntfy.check(); err != nil {
			return err
		}
	}
	if len(n.Command) == 0 {
		return nil
	}
	if len(n.Command) > maxNotifyArgs {
		return fmt.Errorf("notify command: more than %d words", maxNotifyArgs)
	}
	if p := n.Command[0]; !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("notify command %q: the program must be a clean absolute path (it runs outside any shell)", p)
	}
	for _, a := range n.Command {
		if len(a) > maxNotifyArgLen || strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("notify command: a word is longer than %d bytes or holds a NUL", maxNotifyArgLen)
		}
	}
	return nil
}

// Backends.
const (
	BackendKeyring = "keyring"
	BackendVault   = "vault"
)

// Vault configures the Vault backend (backend/vault). Empty fields are the
// defaults of the walk-through and of backend/vault/policies/*.hcl.
type Vault struct {
	// Address is http(s)://host:port; plain http only to a loopback host.
	Address string `json:"address"`
	// TransitMount and Key name the Transit HMAC key ("transit", "loopguard").
	TransitMount string `json:"transit_mount,omitempty"`
	Key          string `json:"key,omitempty"`
	// KVMount and KVPrefix are where claims are kept ("secret", "loopguard").
	KVMount  string `json:"kv_mount,omitempty"`
	KVPrefix string `json:"kv_prefix,omitempty"`
	// TokenFile holds the Vault token this machine uses: on an agent
	// machine a token with only the agent policy, on an approver's the one
	// `vault login` wrote. Empty means ~/.vault-token.
	TokenFile string `json:"token_file,omitempty"`
}

// WithDefaults returns v with its empty fields filled in.
func (v Vault) WithDefaults(home string) Vault {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&v.TransitMount, "transit")
	def(&v.Key, "loopguard")
	def(&v.KVMount, "secret")
	def(&v.KVPrefix, "loopguard")
	def(&v.TokenFile, filepath.Join(home, ".vault-token"))
	return v
}

func (v *Vault) check() error {
	u, err := url.Parse(v.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("vault address %q is not http(s)://host:port", v.Address)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("vault address %q: plain http is allowed only to a loopback address; use https", v.Address)
	}
	for _, f := range []struct{ name, v string }{
		{"transit_mount", v.TransitMount}, {"key", v.Key}, {"kv_mount", v.KVMount}, {"kv_prefix", v.KVPrefix},
	} {
		if f.v != "" && !vaultPath().MatchString(f.v) {
			return fmt.Errorf("vault %s %q: want letters, digits, '-', '_' in '/'-separated segments", f.name, f.v)
		}
	}
	if v.TokenFile != "" && (!filepath.IsAbs(v.TokenFile) || filepath.Clean(v.TokenFile) != v.TokenFile) {
		return fmt.Errorf("vault token_file %q is not a clean absolute path", v.TokenFile)
	}
	return nil
}

// vaultPath is compiled on first use: every hook call loads the config, and
// only a Vault section needs it.
var vaultPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$`) })

// Error is a configuration file loopguard refuses, with a hint.
type Error struct {
	Path string
	// Line and Col (1-based, the column in characters) say where in the
	// file, when the JSON decoder gives a place; 0 when it does not.
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("invalid config %s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("invalid config %s: %s", e.Path, e.Msg)
}

// Hint tells a person how to fix it.
func (e *Error) Hint() string {
	return "fix or remove " + e.Path + " (loopguard init writes a fresh one when there is none)"
}

// DefaultPath is $XDG_CONFIG_HOME/loopguard/config.json, or
// ~/.config/loopguard/config.json.
func DefaultPath() (string, error) {
	dir, err := policy.ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config.json"), nil
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
		e := &Error{Path: path, Msg: err.Error()}
		e.Line, e.Col = where(data, err)
		return Config{}, true, e
	}
	if dec.More() {
		e := &Error{Path: path, Msg: "trailing data"}
		e.Line, e.Col = lineCol(data, int(dec.InputOffset())+len(leadingSpace(data[dec.InputOffset():])))
		return Config{}, true, e
	}
	if err := c.Check(); err != nil {
		return Config{}, true, &Error{Path: path, Msg: err.Error()}
	}
	return c, true, nil
}

// where is the line and column of the decoder's error err in data: the
// byte a syntax error stopped at, the value of the wrong type, or the key
// of an unknown field (the decoder gives no place for that one: its first
// appearance as a key); 0, 0 when there is none.
func where(data []byte, err error) (line, col int) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return lineCol(data, int(se.Offset)-1)
	case errors.As(err, &te):
		// Offset is just past the value: its last byte.
		return lineCol(data, int(te.Offset)-1)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		key := regexp.MustCompile(regexp.QuoteMeta(name) + `\s*:`)
		if loc := key.FindIndex(data); loc != nil {
			return lineCol(data, loc[0])
		}
	}
	return 0, 0
}

// lineCol turns a byte offset in data into a 1-based line and column (in
// characters).
func lineCol(data []byte, off int) (int, int) {
	off = max(0, min(off, len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, utf8.RuneCount(data[start:off]) + 1
}

func leadingSpace(b []byte) []byte {
	return b[:len(b)-len(bytes.TrimLeft(b, " \t\r\n"))]
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
	switch c.Backend {
	case "", BackendKeyring:
		if c.Vault != nil {
			return errors.New("a vault section needs \"backend\": \"vault\"")
		}
	case BackendVault:
		if c.Vault == nil {
			return errors.New("backend vault needs a vault section with its address")
		}
		if err := c.Vault.check(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown backend %q (want %q or %q)", c.Backend, BackendKeyring, BackendVault)
	}
	if err := c.Notify.check(); err != nil {
		return err
	}
	if len(c.Principal) > 64 || strings.IndexFunc(c.Principal, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return errors.New("principal must be at most 64 printable characters")
	}
	return nil
}

// Trusted returns the trusted dirs (the defaults when none are set).
func (c Config) Trusted() []string {
	if len(c.TrustedDirs) == 0 {
		return policy.DefaultTrusted
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
	if err := fsx.WriteFile(path, append(data, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("failed to write config: %w", err)
	}
	return nil
}

// ToolchainNames are the everyday toolchain commands init looks for in
// PATH directories outside the defaults (~/.cargo/bin, ~/go/bin, pyenv
// shims, nvm, ~/.local/bin) to offer them as trusted directories. A scope
// over a program in a directory the user can write is pinned to the
// program's content (scope.Rule.Pin), so trusting one does not let a
// replaced binary run under an old grant.
var ToolchainNames = []string{"go", "gofmt", "gopls", "staticcheck", "golangci-lint", "node", "npm", "pnpm",
	"yarn", "cargo", "rustc", "rustup", "rustfmt", "pip", "pip3", "python3", "uv", "poetry", "deno", "bun"}

// ToolchainDir is a PATH directory holding some of ToolchainNames.
type ToolchainDir struct {
	Dir   string   // the PATH entry, clean and absolute: what the analysis trusts
	Names []string // the toolchain commands bash finds there first
}

// ToolchainDirs returns the PATH entries outside trusted where bash would
// find one of ToolchainNames, in PATH order: what init offers to trust.
func ToolchainDirs(path string, trusted []string) []ToolchainDir {
	skip := map[string]bool{}
	for _, d := range trusted {
		skip[filepath.Clean(d)] = true
	}
	var out []ToolchainDir
	at := map[string]int{}
	for _, name := range ToolchainNames {
		for _, entry := range filepath.SplitList(path) {
			if entry == "" || !filepath.IsAbs(entry) {
				continue
			}
			dir := filepath.Clean(entry)
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				continue
			}
			if !skip[dir] {
				i, ok := at[dir]
				if !ok {
					i = len(out)
					at[dir] = i
					out = append(out, ToolchainDir{Dir: dir})
				}
				out[i].Names = append(out[i].Names, name)
			}
			break // bash runs the first one found
		}
	}
	return out
}

// Toolchains returns the directories, outside the defaults, where the named
// commands (go, node) resolve through path: what init trusts without asking
// when it cannot ask.
func Toolchains(path string, names ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range policy.DefaultTrusted {
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
