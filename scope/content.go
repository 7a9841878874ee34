package scope

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/token"
)

// contentPrefix starts a content pin in a rule's canonical form:
// Bash(cargo build *)@sha256:HEX:/home/u/.cargo/bin/cargo.
const contentPrefix = "sha256:"

// lastContentTail is the index of the last ")@sha256:HEX:\"" in rule (a
// content pin with a quoted path), or -1. Inside the quoted path every '"'
// is escaped, so the pattern cannot start there.
func lastContentTail(rule string) int {
	const open = ")@" + contentPrefix
	for end := len(rule); ; {
		i := strings.LastIndex(rule[:end], open)
		if i < 0 {
			return -1
		}
		rest := rule[i+len(open):]
		if len(rest) > 66 && token.IsDigest(rest[:64]) && rest[64:66] == ":\"" {
			return i
		}
		end = i
	}
}

// Digest returns the content digest a Bash rule is pinned to, or "" when
// it is pinned by path only.
func (r Rule) Digest() string { return r.digest }

// pinContent adds a content pin when the pinned executable lies where the
// user (so the agent) can write: the file or a directory above it is not
// root's alone (fsx.UserWritable). A binary replaced there later resolves
// to the same path; the digest tells them apart.
func (r Rule) pinContent() (Rule, error) {
	if r.exe == "" || r.exe == pinnedBuiltin || !fsx.UserWritable(r.exe) {
		r.digest = ""
		return r, nil
	}
	d, _, err := fsx.ContentDigest(r.exe)
	if err != nil {
		return Rule{}, err
	}
	r.digest = d
	return r, nil
}

// ContentNote says, for a person granting r, what its content pin covers,
// or "" when it has none.
func (r Rule) ContentNote() string {
	if r.digest == "" {
		return ""
	}
	note := "pinned to the content of " + r.exe + " (sha256 " + r.digest[:12] + "...): it lies where you can write, so a replaced file is refused"
	if isScript(r.exe) {
		note += "; it is a script (#!): the pin covers its own bytes, not the program it runs (pyenv and nvm shims pick that from files such as .python-version or .nvmrc)"
	}
	return note
}

func isScript(p string) bool {
	b, err := fsx.ReadPrefix(p, 2, 0) // never blocks on a FIFO
	return err == nil && bytes.Equal(b, []byte("#!"))
}

// matchContent checks a content-pinned rule's executable. A rule pinned by
// path only covers nothing that now lies where the user can write (a grant
// minted before content pins, or by another tool): fail closed.
func matchContent(r Rule, c Call, exe string) error {
	if r.digest == "" {
		if exe != pinnedBuiltin && fsx.UserWritable(exe) {
			return mismatch(ReasonContentChanged, "%s lies where you can write, and the grant pins its path only, not its content; grant it again", exe)
		}
		return nil
	}
	digest := c.ExeDigest
	if digest == nil {
		digest = func(p string) (string, error) {
			d, _, err := fsx.ContentDigest(p)
			return d, err
		}
	}
	got, err := digest(exe)
	if err != nil {
		return mismatch(ReasonContentChanged, "cannot read %s to compare it with the file the grant was minted for: %v", exe, err)
	}
	if got != r.digest {
		return mismatch(ReasonContentChanged, "%s is not the file the grant was minted for (sha256 %.12s..., the grant pins %.12s...): it was replaced or changed", exe, got, r.digest)
	}
	return nil
}

// gitRepository checks that a git call will use the project's own
// repository (or one above the project), not a repository inside the
// project that the agent could have made: a nested repository's
// .git/config or a bare repository's config (core.fsmonitor, diff.external,
// textconv, gpg.program) run commands in git status, diff, log and show.
// The project's top-level .git is executable configuration for loopguard
// (an exact approval) and read-only in Claude Code's sandbox; a nested
// one is only the former, and a bare repository (HEAD, config, objects/
// in a plain directory) is neither.
func gitRepository(c Call) error {
	proj := c.ProjectDir
	if proj == "" || !filepath.IsAbs(proj) {
		return mismatch(ReasonRepositoryNotCovered, "no project directory: cannot tell which repository git would use")
	}
	cwd := c.Cwd
	if cwd == "" || !filepath.IsAbs(cwd) {
		return mismatch(ReasonRepositoryNotCovered, "no absolute cwd: cannot tell which repository git would use")
	}
	proj, cwd = filepath.Clean(proj), filepath.Clean(cwd)
	if rp, err := filepath.EvalSymlinks(proj); err == nil {
		proj = rp
	}
	if rc, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = rc
	}
	if !within(cwd, proj) {
		return mismatch(ReasonRepositoryNotCovered, "the cwd %s is outside the project %s: git would use whatever repository is there", cwd, proj)
	}
	for d := cwd; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d != proj {
				return mismatch(ReasonRepositoryNotCovered, "git would use the nested repository %s/.git inside the project; its configuration can run commands", d)
			}
			if !fi.IsDir() {
				return gitFileTarget(d, proj)
			}
			return nil
		}
		if looksLikeGitDir(d) {
			return mismatch(ReasonRepositoryNotCovered, "git would use %s as a bare repository inside the project; its config can run commands", d)
		}
		if d == proj {
			return nil // a repository above the project, or none
		}
	}
}

// gitFileTarget accepts a project-root .git file (a worktree, a submodule)
// only when the directory it names is outside the project.
func gitFileTarget(dir, proj string) error {
	data, err := fsx.ReadRegular(filepath.Join(dir, ".git"), 4096, 0)
	if err != nil {
		return mismatch(ReasonRepositoryNotCovered, "cannot read %s/.git", dir)
	}
	target, ok := bytes.CutPrefix(bytes.TrimSpace(data), []byte("gitdir:"))
	if !ok {
		return mismatch(ReasonRepositoryNotCovered, "%s/.git is neither a directory nor a gitdir: file", dir)
	}
	t := string(bytes.TrimSpace(target))
	if !filepath.IsAbs(t) {
		t = filepath.Join(dir, t)
	}
	t = filepath.Clean(t)
	if r, err := filepath.EvalSymlinks(t); err == nil {
		t = r
	}
	if within(t, proj) {
		return mismatch(ReasonRepositoryNotCovered, "%s/.git points to %s, inside the project", dir, t)
	}
	return nil
}

// looksLikeGitDir is git's own test, loosely: HEAD plus objects/ and refs/
// (or a commondir file). Loose is safe here: a false positive only asks for
// an approval.
func looksLikeGitDir(d string) bool {
	if _, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil {
		return false
	}
	for _, n := range []string{"objects", "refs", "commondir", "config"} {
		if _, err := os.Lstat(filepath.Join(d, n)); err == nil {
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool { return fsx.Within(p, dir) }
