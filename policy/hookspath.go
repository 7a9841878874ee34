package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/internal/gitconfig"
)

// hooksPathWhat is what a path HooksPaths gives is, for a person.
const hooksPathWhat = "git hooks or configuration (the directory core.hooksPath names, a file git's configuration includes, or a script a setting runs: core.fsmonitor, a filter, a diff or merge driver, a ! alias; the human's own git runs what they name)"

// gitHookNames are the hooks git runs (githooks(5)).
var gitHookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
	"p4-pre-submit", "post-index-change",
}

// HooksPaths are the paths git runs as hooks in the repository of project
// because core.hooksPath names their directory, in the repository's
// configuration (.git/config, and a worktree's) or the user's (~/.gitconfig,
// $XDG_CONFIG_HOME/git/config or else ~/.config/git/config, and
// $GIT_CONFIG_GLOBAL, which git reads instead of both, when set): absolute,
// cleaned, each once; a symbolic link is given as written and resolved.
// For Places.HooksPaths: each is executable configuration. So is every
// file a configuration file includes from inside the working tree
// (include.path, includeIf.*.path), whether it exists yet or not, and
// every file of the working tree a setting's command runs or names
// (programsIn: core.fsmonitor = ./tools/fsmon.sh, a filter's clean, a
// diff driver's textconv, a ! alias), which HooksPaths gives too.
//
// A relative hooksPath is relative to where git runs hooks, the top of the
// working tree (githooks(5)): the directory above project that holds .git,
// else project. "~/" is the home. A directory that is, or holds, the top
// or the home (hooksPath = ".") is given as its hook names (githooks(5)),
// so that the project is not executable configuration as a whole.
//
// Each file is read with what it includes, as git reads it
// (internal/gitconfig): [include] path and every [includeIf] path,
// whatever its condition, to git's depth of 10. A hooksPath set by the
// system configuration (/etc/gitconfig), by -c or by GIT_CONFIG_* in the
// environment is not seen. A file it cannot read (over 1 MiB, say) names
// no hooksPath, a file git refuses names those before its bad line; it
// never panics. getenv reads $XDG_CONFIG_HOME and $GIT_CONFIG_GLOBAL (nil
// reads nothing).
func HooksPaths(project, home string, getenv func(string) string) []string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if !filepath.IsAbs(home) {
		home = ""
	}
	var top string
	var files []string
	if filepath.IsAbs(project) {
		project = filepath.Clean(project)
		top = project
		if t, gitDir := gitTop(project); t != "" {
			top = t
			files = append(files, repoConfigFiles(gitDir)...)
		}
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
		if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			files = append(files, filepath.Join(x, "git", "config"))
		} else {
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
	}
	if g := getenv("GIT_CONFIG_GLOBAL"); filepath.IsAbs(g) {
		files = append(files, g)
	}
	var dirs, included, programs []string
	chain := gitconfig.Chain[struct{}]{
		Home: home,
		Open: func(p string, _ struct{}) ([]byte, struct{}, bool) {
			// A file the configuration includes from inside the working
			// tree, there or not yet: what it sets, git runs
			// (core.fsmonitor). An attack run wrote the src/inc.cfg a
			// user's includeIf gitdir: named, and git status ran it.
			if top != "" && fsx.Within(p, top) && p != top && !slices.Contains(files, p) {
				included = append(included, p)
			}
			b, err := fsx.ReadRegular(p, gitconfig.MaxFileSize, 0)
			return b, struct{}{}, err == nil
		},
		Setting: func(e gitconfig.Entry, _ struct{}) {
			if e.Name == "core.hookspath" && !e.Bare {
				if d := hooksDir(e.Value, home, top); d != "" {
					dirs = append(dirs, d)
				}
			}
			programs = append(programs, programsIn(e, top)...)
		},
	}
	for _, f := range files {
		chain.Read(f, struct{}{})
	}
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range slices.Concat(included, programs) {
		add(p)
	}
	for _, d := range dirs {
		for _, p := range []string{d, resolved(d)} {
			if p == "" {
				continue
			}
			if (top != "" && fsx.Within(top, p)) || (home != "" && fsx.Within(home, p)) {
				for _, h := range gitHookNames {
					add(filepath.Join(p, h))
				}
				continue
			}
			add(p)
		}
	}
	return out
}

// resolved is p with its symbolic links resolved, "" when that fails or
// changes nothing.
func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == p {
		return ""
	}
	return r
}

// gitTop finds the working tree that holds dir: the nearest directory at
// or above it with a .git, and the git directory that .git is (a worktree's
// .git file names it). "" when there is none.
func gitTop(dir string) (top, gitDir string) {
	for d := dir; ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		if fi, err := os.Lstat(g); err == nil {
			switch {
			case fi.IsDir():
				return d, g
			case fi.Mode().IsRegular():
				b, err := fsx.ReadRegular(g, 4096, 0)
				if err != nil {
					return d, ""
				}
				line, _, _ := strings.Cut(string(b), "\n")
				p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
				if !ok {
					return d, ""
				}
				p = strings.TrimSpace(p)
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				return d, filepath.Clean(p)
			}
			return d, ""
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// repoConfigFiles are the configuration files of the git directory
// gitDir: its config and config.worktree, and, for a linked worktree, those
// of the common directory its commondir names.
func repoConfigFiles(gitDir string) []string {
	if gitDir == "" {
		return nil
	}
	out := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if c := commonDir(gitDir); c != gitDir {
		out = append(out, filepath.Join(c, "config"))
	}
	return out
}

// commonDir is the common git directory of the git directory gitDir: the
// one its commondir names (a linked worktree's, a submodule's), else
// gitDir itself.
func commonDir(gitDir string) string {
	if b, err := fsx.ReadRegular(filepath.Join(gitDir, "commondir"), 4096, 0); err == nil {
		if c := strings.TrimSpace(string(b)); c != "" {
			if !filepath.IsAbs(c) {
				c = filepath.Join(gitDir, c)
			}
			return filepath.Clean(c)
		}
	}
	return gitDir
}

// hooksDir is a core.hooksPath value made absolute: ~/ is the home
// (gitconfig.Expand), a relative path is relative to top. "" for an empty
// value (what git makes of an empty hooksPath has changed across its
// versions; it is never the project as a whole), or one git's expansion
// does not lead to this home (~user/, %(prefix)/).
func hooksDir(v, home, top string) string {
	switch v = gitconfig.Expand(v, home); {
	case v == "":
		return ""
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	case top == "":
		return ""
	}
	return filepath.Join(top, v)
}
