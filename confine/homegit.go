package confine

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/loopguard/loopguard/internal/gitconfig"
)

// gitRules are the files git reads to run, found as git finds them (git
// 2.39, config.c and dir.c):
//   - the system configuration ($GIT_CONFIG_SYSTEM, /etc/gitconfig; /etc is
//     read whole, but its includes and settings may name the home), the
//     global one ($GIT_CONFIG_GLOBAL, else ~/.gitconfig and
//     $XDG_CONFIG_HOME/git/config or ~/.config/git/config), the
//     repository's (.git/config, config.worktree, the common directory's);
//   - every file these include ([include] path, and every
//     [includeIf "..."] path whatever its condition: a file git might not
//     read is harmless to read when it passes the veto, and a condition
//     judged wrongly would break git), relative to the including file, ~/
//     expanded, to git's depth of 10;
//   - the files their settings name: core.excludesFile (by default
//     $XDG_CONFIG_HOME/git/ignore, where Claude Code writes), core.attributesFile
//     (.../git/attributes), gpg.ssh.allowedSignersFile (log
//     --show-signature), diff.orderFile, mailmap.file, blame.ignoreRevsFile,
//     commit.template; and the directories core.hooksPath (git reads a
//     hook to run it) and init.templateDir.
//
// What the repository's configuration names (a file confined code with
// +git may write) is granted as a file only, never a directory.
func (v *homeVet) gitRules(s Spec, env func(string) string) {
	g := v.gitChain()
	xdg := ""
	switch x := env("XDG_CONFIG_HOME"); {
	case x == "":
		xdg = filepath.Join(v.home, ".config", "git")
	case filepath.IsAbs(x):
		xdg = filepath.Join(x, "git")
	}
	if !gitBool(env("GIT_CONFIG_NOSYSTEM")) {
		sys := env("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		g.Read(sys, trustUser)
	}
	if gl := env("GIT_CONFIG_GLOBAL"); gl != "" {
		g.Read(gitconfig.Expand(gl, v.home), trustUser)
	} else {
		if xdg != "" {
			g.Read(filepath.Join(xdg, "config"), trustUser)
		}
		g.Read(filepath.Join(v.home, ".gitconfig"), trustUser)
	}
	for _, c := range repoConfigs(s.Project, v.enclosing) {
		g.Read(c, trustProject)
	}
	if xdg != "" {
		v.grant(filepath.Join(xdg, "ignore"), fileKind, trustUser)
		v.grant(filepath.Join(xdg, "attributes"), fileKind, trustUser)
	}
}

// repoConfigs are the configuration files of the repository at project:
// .git/config, or, for a worktree or submodule (a .git file), its git
// directory's config.worktree and its common directory's config; for a
// project that is a directory of a repository the launch reads (encl),
// that one's, as the project's own: what they name is read as a file
// only, vetted (trustProject).
func repoConfigs(project string, encl enclosing) []string {
	if project == "" {
		return nil
	}
	dot := filepath.Join(project, ".git")
	if fi, err := os.Stat(dot); err == nil && fi.IsDir() {
		return []string{filepath.Join(dot, "config"), filepath.Join(dot, "config.worktree")}
	}
	dirs := linkedGitDirs(project)
	if encl.top != "" {
		dirs = encl.gitDirs
	}
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"))
	}
	return out
}

// gitBool is git's reading of a boolean variable's value as true.
func gitBool(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// gitFileKeys are the settings that name a file git reads, and
// gitDirKeys a directory (section.key, lower-cased).
var (
	gitFileKeys = map[string]bool{"core.excludesfile": true, "core.attributesfile": true, "gpg.ssh.allowedsignersfile": true,
		"diff.orderfile": true, "mailmap.file": true, "blame.ignorerevsfile": true, "commit.template": true}
	gitDirKeys = map[string]bool{"core.hookspath": true, "init.templatedir": true}
)

// gitChain is one launch's git configuration chain (gitconfig.Chain,
// which bounds its files and depth), each file with its trust.
func (v *homeVet) gitChain() *gitconfig.Chain[trust] {
	return &gitconfig.Chain[trust]{Home: v.home, Open: v.gitFile, Setting: v.gitSetting}
}

// gitFile opens the configuration file at p (as git names it), included
// by a file of trust from, if it is one git could read confined (it
// passes the veto, or it is in the project, which is read whole).
func (v *homeVet) gitFile(p string, from trust) ([]byte, trust, bool) {
	t := v.trustOf(p, from)
	r, ok := v.realpath(p)
	if !ok {
		return nil, t, false
	}
	if v.project != "" && within(r, v.project) {
		// The project is read whole: a regular file of it is read
		// here (not what a link of it leads to outside).
		if st := v.lstat(r); st.err != nil || !st.fi.Mode().IsRegular() {
			return nil, t, false
		}
	} else if r, ok = v.grant(p, fileKind, t); !ok {
		return nil, t, false
	}
	data, _ := readLimited(r, gitconfig.MaxFileSize) // unread, it names nothing
	return data, t, true
}

// gitSetting grants the file or directory a setting names.
func (v *homeVet) gitSetting(e gitconfig.Entry, t trust) {
	switch {
	case e.Bare:
	case gitFileKeys[e.Name]:
		if f := gitconfig.Expand(e.Value, v.home); filepath.IsAbs(f) {
			v.grant(f, fileKind, t)
		}
	case gitDirKeys[e.Name]:
		if d := gitconfig.Expand(e.Value, v.home); filepath.IsAbs(d) {
			v.grant(d, dirKind, t)
		}
	}
}

// readLimited reads up to n bytes of the file p, by plain system calls:
// os.Open's registration with the poller costs more than a small file's
// read, and a launch reads several.
func readLimited(p string, n int) ([]byte, error) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 4096)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := syscall.Read(fd, buf[len(buf):min(cap(buf), n)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		buf = buf[:len(buf)+m]
	}
	return buf, nil
}
