package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/register"
)

// Scope names a Claude Code settings file.
type Scope string

// The settings files loopguard can register in.
const (
	User    Scope = "user"    // ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR/settings.json)
	Project Scope = "project" // .claude/settings.json in the working directory
	Local   Scope = "local"   // .claude/settings.local.json at the repository root
)

// Env is where the settings files are looked for.
type Env struct {
	Home      string // the user's home directory
	ConfigDir string // CLAUDE_CONFIG_DIR, when set
	Cwd       string // the project directory Claude Code runs in
	CodexHome string // CODEX_HOME, when set (the other agents' files: Dirs)
}

// Dirs are the user's directories the other agents' user files are found
// under (register.Registration.UserFile).
func (e Env) Dirs() register.Dirs { return register.Dirs{Home: e.Home, CodexHome: e.CodexHome} }

// SettingsPath is the file for scope.
func SettingsPath(scope Scope, env Env) (string, error) {
	switch scope {
	case User:
		if env.ConfigDir != "" {
			if !filepath.IsAbs(env.ConfigDir) {
				return "", fmt.Errorf("CLAUDE_CONFIG_DIR %q is not an absolute path", env.ConfigDir)
			}
			return filepath.Join(env.ConfigDir, "settings.json"), nil
		}
		if !filepath.IsAbs(env.Home) {
			return "", errors.New("no absolute home directory")
		}
		return filepath.Join(env.Home, ".claude", "settings.json"), nil
	case Project:
		if !filepath.IsAbs(env.Cwd) {
			return "", errors.New("no absolute working directory")
		}
		return filepath.Join(env.Cwd, ".claude", "settings.json"), nil
	case Local:
		if !filepath.IsAbs(env.Cwd) {
			return "", errors.New("no absolute working directory")
		}
		return filepath.Join(RepoRoot(env.Cwd), ".claude", "settings.local.json"), nil
	}
	return "", fmt.Errorf("unknown settings scope %q", scope)
}

// RepoRoot is the nearest directory at or above dir holding .git, or dir.
// Claude Code loads settings.local.json from the repository root.
func RepoRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(dir)
		}
		d = parent
	}
}

// FileError is a settings file loopguard refuses to write.
type FileError struct {
	Path   string
	Reason string
	hint   string
}

func (e *FileError) Error() string { return fmt.Sprintf("refusing to edit %s: %s", e.Path, e.Reason) }

// Hint tells a person what to do.
func (e *FileError) Hint() string { return e.hint }

// ErrRefused is wrapped by every FileError (errors.Is).
var ErrRefused = errors.New("settings file refused")

// Is reports whether target is ErrRefused.
func (e *FileError) Is(target error) bool { return target == ErrRefused }

// ReadSettings reads a settings file: data is nil when it does not exist. It
// refuses a symlink (the link and its target could be in different trust
// zones; edit the target itself), anything but a regular file, and a file
// larger than MaxFileSize.
func ReadSettings(path string) (data []byte, mode fs.FileMode, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("failed to stat %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return nil, 0, &FileError{Path: path, Reason: "it is a symlink (to " + target + ")",
			hint: "loopguard does not write through symlinks: register in the file the link points to, or replace the link with a regular file"}
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, &FileError{Path: path, Reason: "it is not a regular file", hint: "move it aside and run the command again"}
	}
	if fi.Size() > MaxFileSize {
		return nil, 0, &FileError{Path: path, Reason: fmt.Sprintf("it is %d bytes, more than the %d accepted", fi.Size(), MaxFileSize),
			hint: "a Claude Code settings file is a few kilobytes; check what wrote this one"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("failed to open %s: %w", path, err)
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, 0, fmt.Errorf("failed to read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, 0, &FileError{Path: path, Reason: "it grew past the size limit while being read"}
	}
	if data == nil {
		data = []byte{}
	}
	return data, fi.Mode().Perm(), nil
}

// Result says what Apply or Remove did (or, on a dry run, would do).
type Result struct {
	Path     string
	Existed  bool   // the file existed before
	Changed  bool   // the file's bytes change
	Old, New []byte // the file's bytes before and after (nil: no file)
	Backup   string // the backup record kept for Remove, when one was written or used
	Restored bool   // Remove put back the original bytes exactly
	Deleted  bool   // Remove deleted the file Apply had created
	DirGone  bool   // Remove deleted the .claude directory Apply had created
	Sandbox  bool   // Remove took out sandbox settings Apply had added
	// Unrecorded: Apply's record of the file was gone (RemoveUnrecorded):
	// what Apply adds was taken out by value, not by the record.
	Unrecorded bool
}

// record is the backup kept in the state directory: the bytes of the file
// before loopguard first registered in it.
type record struct {
	V          int    `json:"v"`
	Path       string `json:"path"`
	Existed    bool   `json:"existed"`
	CreatedDir bool   `json:"created_dir"`
	Original   []byte `json:"original"`
	// Sandbox is every sandbox entry init has merged into the file
	// (UnmergeSandbox takes out those the original lacked).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Managed lists the managed-only switches init --managed added (those
	// the original lacked); Remove takes them out again.
	Managed []string `json:"managed,omitempty"`
}

// recordPath names the record of path inside dir.
func recordPath(dir, path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".json")
}

// Recorded reports whether backupDir holds Apply's record for path, that is
// whether loopguard's registration there was made by Apply (init).
func Recorded(backupDir, path string) bool {
	_, err := os.Lstat(recordPath(backupDir, path))
	return err == nil
}

func readRecord(dir, path string) (*record, error) {
	b, _, err := ReadSettings(recordPath(dir, path))
	if err != nil || b == nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil || r.V != 1 || r.Path != path {
		return nil, fmt.Errorf("backup record %s is damaged: %w", recordPath(dir, path), ErrInvalid)
	}
	return &r, nil
}

// Registers reports whether Claude Code settings data register loopguard's
// hook (see IsLoopguard for self).
func Registers(data []byte, self string) bool {
	hs, err := Hooks(data, self)
	if err != nil {
		return false
	}
	for _, h := range hs {
		if h.Ours {
			return true
		}
	}
	return false
}

func checkWritable(path string, data []byte, mode fs.FileMode) error {
	if data != nil && mode&0o200 == 0 {
		return &FileError{Path: path, Reason: fmt.Sprintf("it is read-only (mode %04o)", mode),
			hint: "someone made it read-only on purpose: make it writable (chmod u+w " + path + ") if loopguard may change it"}
	}
	return nil
}

// Apply registers loopguard in the settings file at path. backupDir (in the
// state directory, out of the agent's reach) keeps the original bytes for
// Remove. With dryRun nothing is written, but every check is made.
func Apply(path, backupDir string, o Options, dryRun bool) (*Result, error) {
	return apply(path, backupDir, editor{
		merge:   func(data []byte) ([]byte, bool, error) { return Merge(data, o) },
		hasOurs: func(data []byte) bool { return Registers(data, o.Binary) },
		sandbox: o.Sandbox,
		managed: o.Managed,
	}, dryRun)
}

// editor is what Apply and Remove do to one kind of config file (Claude
// Code's settings here; other agents' hook files in agents.go).
type editor struct {
	merge   func(data []byte) (out []byte, changed bool, err error)
	unmerge func(data []byte) (out []byte, changed bool, err error)
	hasOurs func(data []byte) bool
	// same reports whether two files hold the same configuration once
	// loopguard's entries (and empty containers) are ignored.
	same func(a, b []byte) bool
	// sandbox is what Apply merges into Claude Code's sandbox settings, kept
	// in the record; unmergeSandbox takes it out again on Remove. Both are
	// nil for other agents' files.
	sandbox        *Sandbox
	unmergeSandbox func(data []byte, rec *record) (out []byte, changed bool, err error)
	// managed: Apply sets the managed-only switches (managed.go), and the
	// record keeps which ones were added.
	managed bool
}

func apply(path, backupDir string, ed editor, dryRun bool) (*Result, error) {
	data, mode, err := ReadSettings(path)
	if err != nil {
		return nil, err
	}
	out, changed, err := ed.merge(data)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.Path = path
		}
		return nil, err
	}
	res := &Result{Path: path, Existed: data != nil, Changed: changed, Old: data, New: out}
	if !changed {
		return res, nil
	}
	if err := checkWritable(path, data, mode); err != nil {
		return nil, err
	}
	if dryRun {
		return res, nil
	}
	dir := filepath.Dir(path)
	createdDir := false
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("failed to create %s: %w", dir, err)
		}
		createdDir = true
	}
	// The backup holds the file as it was before loopguard: write it only
	// when the file has nothing of loopguard's yet.
	res.Backup = recordPath(backupDir, path)
	var rec *record
	if data == nil || !ed.hasOurs(data) {
		rec = &record{V: 1, Path: path, Existed: data != nil, CreatedDir: createdDir, Original: data, Sandbox: ed.sandbox}
		if ed.managed {
			rec.Managed = ManagedLocks(data)
		}
	} else if ed.sandbox != nil {
		// Registered before: the record keeps the original, and now also
		// what this run adds to the sandbox settings.
		if rec, err = readRecord(backupDir, path); err != nil {
			return nil, err
		}
		if rec != nil {
			rec.Sandbox = rec.Sandbox.Union(ed.sandbox)
		}
	}
	if rec != nil {
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(backupDir, 0o700); err != nil {
			return nil, fmt.Errorf("failed to create %s: %w", backupDir, err)
		}
		if err := WriteAtomic(res.Backup, b, 0o600); err != nil {
			return nil, fmt.Errorf("failed to write the backup: %w", err)
		}
	}
	if mode == 0 {
		mode = 0o644
	}
	if err := WriteAtomic(path, out, mode); err != nil {
		return nil, err
	}
	return res, nil
}

// Remove takes loopguard's registration out of the settings file at path.
// When the rest of the file is what it was before Apply (whitespace aside),
// it restores the original bytes from the backup; a file Apply created is
// deleted again (with its .claude directory, if Apply created it and it is
// empty). Otherwise only loopguard's handlers are removed and the rest is
// kept. self is the running binary (see IsLoopguard). With dryRun nothing
// is written.
func Remove(path, backupDir, self string, dryRun bool) (*Result, error) {
	return remove(path, backupDir, editor{
		unmerge: func(data []byte) ([]byte, bool, error) { return Unmerge(data, self) },
		same:    func(a, b []byte) bool { return sameSettings(a, b, self) },
		unmergeSandbox: func(data []byte, rec *record) ([]byte, bool, error) {
			out, changed, err := UnmergeSandbox(data, rec.Original, rec.Sandbox)
			if err != nil || len(rec.Managed) == 0 {
				return out, changed, err
			}
			out2, mChanged, err := unmergeManaged(out, rec.Managed)
			return out2, changed || mChanged, err
		},
	}, dryRun)
}

func remove(path, backupDir string, ed editor, dryRun bool) (*Result, error) {
	data, mode, err := ReadSettings(path)
	if err != nil {
		return nil, err
	}
	rec, err := readRecord(backupDir, path)
	if err != nil {
		return nil, err
	}
	res := &Result{Path: path, Existed: data != nil, Old: data, New: data}
	if rec != nil {
		res.Backup = recordPath(backupDir, path)
	}
	if data == nil {
		if rec != nil && !dryRun {
			_ = os.Remove(res.Backup)
		}
		return res, nil
	}
	out, changed, err := ed.unmerge(data)
	if err == nil && rec != nil && ed.unmergeSandbox != nil {
		var sbChanged bool
		out, sbChanged, err = ed.unmergeSandbox(out, rec)
		changed = changed || sbChanged
		res.Sandbox = sbChanged
	}
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.Path = path
		}
		return nil, err
	}
	if !changed {
		return res, nil
	}
	res.Changed = true
	res.New = out
	switch {
	case rec != nil && rec.Existed && ed.same(out, rec.Original):
		res.New = rec.Original
		res.Restored = true
	case rec != nil && !rec.Existed && bytes0(out):
		res.New = nil
		res.Deleted = true
	}
	if dryRun {
		return res, nil
	}
	if err := checkWritable(path, data, mode); err != nil {
		return nil, err
	}
	if res.Deleted {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("failed to remove %s: %w", path, err)
		}
		if rec.CreatedDir {
			if os.Remove(filepath.Dir(path)) == nil { // only when empty
				res.DirGone = true
			}
		}
	} else if err := WriteAtomic(path, res.New, mode); err != nil {
		return nil, err
	}
	if rec != nil {
		_ = os.Remove(res.Backup)
	}
	return res, nil
}

// RemoveUnrecorded takes loopguard's registration out of the settings
// file at path when Apply's record of it is gone (the state directory that
// kept it was removed): loopguard's handlers (see IsLoopguard for self),
// and, where there were some, every entry of sb, the sandbox settings
// Apply adds (switches still holding loopguard's value, list entries, env
// values), since nothing says any of them was there before. Containers
// this empties go; a file left with nothing at all is deleted (Claude Code
// reads no file and an empty one alike). Everything else is kept, in the
// file's own style, so that a file Apply changed only by adding comes back
// byte for byte when it was written in that style. With dryRun nothing is
// written.
func RemoveUnrecorded(path, self string, sb *Sandbox, dryRun bool) (*Result, error) {
	data, mode, err := ReadSettings(path)
	if err != nil {
		return nil, err
	}
	res := &Result{Path: path, Existed: data != nil, Old: data, New: data, Unrecorded: true}
	if data == nil {
		return res, nil
	}
	out, changed, err := Unmerge(data, self)
	if err == nil && changed {
		// The hooks were loopguard's: so are the settings that come with them.
		var sbChanged bool
		out, sbChanged, err = UnmergeSandbox(out, nil, sb)
		res.Sandbox = sbChanged
	}
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.Path = path
		}
		return nil, err
	}
	if !changed {
		return res, nil
	}
	res.Changed, res.New = true, out
	if bytes0(out) {
		res.New, res.Deleted = nil, true
	}
	if dryRun {
		return res, nil
	}
	if err := checkWritable(path, data, mode); err != nil {
		return nil, err
	}
	if res.Deleted {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("failed to remove %s: %w", path, err)
		}
		return res, nil
	}
	if err := WriteAtomic(path, out, mode); err != nil {
		return nil, err
	}
	return res, nil
}

// bytes0 reports whether data is an empty JSON object.
func bytes0(data []byte) bool {
	n, err := parse(data)
	return err == nil && n.kind == '{' && len(n.keys) == 0
}

// WriteAtomic writes data to path through a temporary file in the same
// directory: write, fsync, rename, fsync the directory (fsx.WriteFile).
func WriteAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := fsx.WriteFile(path, data, mode, true); err != nil {
		return fmt.Errorf("failed to write %s: %w", path, err)
	}
	return nil
}
