package confine

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/internal/gitconfig"
	"github.com/loopguard/loopguard/policy"
)

// enclosing is the repository a project is a directory of (a monorepo's
// svc/, with no .git of its own), where the launch may read it: its
// working tree's top, its git directories, and the files of the tree it
// reads (files): the ignore and attributes files on the way from the top
// down to the project, and the top's .git file, .mailmap and .gitmodules.
// Never its tree: the other packages' files stay unread (their untracked
// files, an ignored repository of its own inside with its .env).
type enclosing struct {
	top     string
	gitDirs []string
	files   []string
}

// maxEnclosing bounds the directories above a project findEnclosing looks
// in.
const maxEnclosing = 64

// enclosingRepo is, for a project with no .git of its own, the repository
// git finds above it (setup.c): the nearest directory above with a .git
// that is a git directory (HEAD, objects), or a regular file naming one
// (a linked worktree: linkedGitDirs); not past a change of file system
// (GIT_DISCOVERY_ACROSS_FILESYSTEM unset), nor past a directory that is
// a git directory itself (a bare repository, where git stops), nor past
// a .git git would stop at and refuse. "" when there is none.
func enclosingRepo(project string) (top, dot string, gitDirs []string) {
	if !filepath.IsAbs(project) {
		return "", "", nil
	}
	project = filepath.Clean(project)
	if _, err := os.Lstat(filepath.Join(project, ".git")); err == nil || looksGitDir(project) {
		return "", "", nil
	}
	id, err := fsx.StatIdentity(project)
	if err != nil {
		return "", "", nil
	}
	for d, i := filepath.Dir(project), 0; i < maxEnclosing; d, i = filepath.Dir(d), i+1 {
		if up, err := fsx.StatIdentity(d); err != nil || up.Dev != id.Dev {
			return "", "", nil
		}
		dot := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dot); err == nil {
			switch {
			case fi.IsDir() && looksGitDir(dot):
				return d, dot, []string{dot}
			case fi.Mode().IsRegular():
				if g := linkedGitDirs(d); len(g) > 0 {
					return d, dot, g
				}
				return "", "", nil
			case !fi.IsDir():
				return "", "", nil // a link: git follows it, the launch does not
			}
		}
		if looksGitDir(d) || d == filepath.Dir(d) {
			return "", "", nil
		}
	}
	return "", "", nil
}

// looksGitDir: d holds a HEAD file and an objects directory, as git's
// is_git_directory asks.
func looksGitDir(d string) bool {
	fi, err := os.Stat(filepath.Join(d, "objects"))
	return err == nil && fi.IsDir() && isFile(filepath.Join(d, "HEAD"))
}

// findEnclosing is the repository project is a directory of
// (enclosingRepo), where the launch may read it, and otherwise why not
// (doctor says it). Refused, git fails in the project as it did before:
//   - any of its top, its .git and its git directories not owned by the
//     user (git's own safe.directory rule: another user's .git planted in
//     a sticky /tmp above the project, whose configuration would name
//     files for the launch to read);
//   - a top or a git directory, by its path and by its real path, and as
//     the same place under the home where the home is reached through a
//     link, that is the home, holds it, lies in a hidden directory at the
//     home's top (~/.dotfiles, ~/.git), is protected, or is or holds a
//     secret (a repository of dotfiles at the home's real path);
//   - a repository whose configuration names a worktree (core.worktree:
//     a bare repository of dotfiles checked out at ~) or says it is bare.
func findEnclosing(project string, e Env, pl policy.Places) (enclosing, []Unread) {
	top, dot, gitDirs := enclosingRepo(project)
	if top == "" {
		return enclosing{}, nil
	}
	refuse := func(why string) (enclosing, []Unread) {
		return enclosing{}, []Unread{{Path: top, Why: "the repository the project is in, whose " + why}}
	}
	for _, p := range append([]string{top, dot}, gitDirs...) {
		if !pathOwnedBy(p, e.UID) {
			return refuse(p + " is not the user's own")
		}
	}
	for i, p := range append([]string{top}, gitDirs...) {
		if why := placeUnreadable(p, e.Home, pl, i > 0); why != "" {
			return refuse(p + " " + why)
		}
	}
	if worktreeSet(gitDirs, top, e.Home) {
		return refuse("configuration names a worktree (core.worktree) or says it is bare")
	}
	en := enclosing{top: top, gitDirs: gitDirs}
	if dot != gitDirs[0] {
		en.files = append(en.files, dot)
	}
	for _, n := range []string{".mailmap", ".gitmodules"} {
		en.files = append(en.files, filepath.Join(top, n))
	}
	rel, _ := filepath.Rel(top, project)
	d := top
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		en.files = append(en.files, filepath.Join(d, ".gitignore"), filepath.Join(d, ".gitattributes"))
		d = filepath.Join(d, seg)
	}
	// Only those that are regular files: not a link (to ~/.ssh/id_ed25519).
	kept := en.files[:0]
	for _, f := range en.files {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			kept = append(kept, f)
		}
	}
	en.files = kept
	return en, nil
}

// placeUnreadable is why the directory p may not be read for a repository
// the project is in, "" when it may: judged by its path, by its real path,
// and where either lies in the home's real path, as the same place under
// the home (the home's and the secrets' places are lexical).
// A git directory (git) may be executable configuration, as every .git
// is, but not the guard's own place nor a secret.
func placeUnreadable(p, home string, pl policy.Places, git bool) string {
	forms := []string{p}
	if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
		forms = append(forms, r)
	}
	homes := []string{filepath.Clean(home)}
	if r, err := filepath.EvalSymlinks(home); err == nil && r != homes[0] {
		homes = append(homes, r)
		for _, f := range forms {
			if rel, ok := strings.CutPrefix(f, r+"/"); ok {
				forms = append(forms, filepath.Join(home, rel))
			}
		}
	}
	for _, f := range forms {
		for _, h := range homes {
			if !filepath.IsAbs(h) || h == "/" {
				continue
			}
			if within(h, f) {
				return "holds the home directory"
			}
			if rel, ok := strings.CutPrefix(f, h+"/"); ok && strings.HasPrefix(rel, ".") {
				return "lies in a hidden directory of the home"
			}
		}
		if pr, ok := pl.ContainsSecret(f); ok {
			return "holds " + pr.What
		}
		if pr := pl.Classify(f); pr.Secret || pr.Tier == policy.GuardCritical || !git && pr.Protected() {
			return "is " + pr.What
		}
	}
	return ""
}

// worktreeSet reports whether the configuration of the git directories
// (and what it includes) sets core.worktree to another directory than top
// (relative to the git directory, as git takes it), or core.bare to true:
// git then runs in another tree than the one the launch found, or in none.
func worktreeSet(gitDirs []string, top, home string) bool {
	set := false
	c := gitconfig.Chain[struct{}]{Home: home,
		Open: func(p string, _ struct{}) ([]byte, struct{}, bool) {
			b, err := fsx.ReadRegular(p, gitconfig.MaxFileSize, 0)
			return b, struct{}{}, err == nil
		},
		Setting: func(en gitconfig.Entry, _ struct{}) {
			w := gitconfig.Expand(en.Value, home)
			if w != "" && !filepath.IsAbs(w) {
				w = filepath.Join(gitDirs[0], w)
			}
			switch {
			case en.Name == "core.worktree" && (en.Bare || w == "" || filepath.Clean(w) != top),
				en.Name == "core.bare" && (en.Bare || gitBool(en.Value)):
				set = true
			}
		}}
	for _, g := range gitDirs {
		c.Read(filepath.Join(g, "config"), struct{}{})
		c.Read(filepath.Join(g, "config.worktree"), struct{}{})
	}
	return set
}
