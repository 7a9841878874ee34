package confine

import (
	"os"
	"path/filepath"
	"strings"
)

// Unread is a directory a launch leaves unread although a tool would
// look in it, and why: a directory of the search path in the home that is
// the home itself, a hidden directory of it or one that holds a secret or
// the project; the repository the project is a directory of, where the
// launch may not read it (findEnclosing). doctor says each.
type Unread struct {
	Path, Why string
}

// Bounds of pathRules: the search path's directories looked at, and the
// links of one directory followed (each a readlink, and a veto where it
// leads out of the directory).
const (
	maxPathDirs  = 64
	maxPathLinks = 256
)

// pathRules are the directories of the launch's search path that lie in
// the home (~/.local/bin, ~/go/bin, ~/.cargo/bin, ~/bin, ~/.bun/bin): read,
// never written, so that a tool the user installed there runs in the jail
// as it runs outside it, whatever program the launch starts (a bash -c
// call's program is bash). And what their entries need to run: where a
// link there leads out of the directory (toolRoot: a pipx or uv tool's
// environment, a package of npm's global prefix), and bun's install
// directory when its bin holds bun. rustup's proxies (~/.cargo/bin/cargo)
// need its settings and toolchains, which toolRules reads.
//
// Each through the veto (grant): ~/.cargo/bin, never ~/.cargo, which
// holds credentials.toml; nothing whose mode keeps other users out. An
// entry that is the home, a hidden directory of it (~/.local holds the
// other tools' state, ~/.cargo cargo's token) or a directory that holds
// the project (and the user's other projects beside it) is left unread,
// and said (v.unread). One outside the home is not this rule's: the
// system's are read (systemDirs). A directory a tool's rule reads whole
// already (~/.pyenv/shims, ~/.nvm/versions/node/v22/bin) is not listed.
func (v *homeVet) pathRules(env func(string) string) {
	dirs := filepath.SplitList(env("PATH"))
	if len(dirs) > maxPathDirs {
		dirs = dirs[:maxPathDirs]
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue // the current directory's: the project, read whole
		}
		d = filepath.Clean(d)
		if !within(d, v.home) && !within(d, v.realHome) || v.project != "" && within(d, v.project) {
			continue
		}
		r, ok := v.realpath(d)
		if !ok || v.readWhole(r) {
			continue
		}
		if why := v.pathRefused(d, r); why != "" {
			v.leaveUnread(d, why)
			continue
		}
		if why := notABin(r); why != "" {
			v.leaveUnread(d, why)
			continue
		}
		if _, ok := v.grant(d, dirKind, trustUser); ok {
			v.pathEntries(r, env)
		}
	}
}

// pathRefused is why the search path's directory d (real path r) is not
// read, "" when the veto judges it.
func (v *homeVet) pathRefused(d, r string) string {
	for _, p := range []string{d, r} {
		switch {
		case within(v.home, p) || within(v.realHome, p):
			return "the home itself: everything in it would be read"
		case hiddenInHome(p, v.home) || hiddenInHome(p, v.realHome):
			return "a hidden directory of the home, which holds a tool's other files beside its bin/"
		case v.project != "" && within(v.project, p):
			return "holds the project, and what lies beside it"
		case v.secret(p, true):
			return "holds a secret, or is in one"
		}
	}
	return ""
}

// notABin is why the search path's directory r (a real path) is not
// read whole although the veto would let it be, "" when it may: one that
// holds a directory, a .git or an .env, or a file no one may run, is not
// a directory of programs. A grant of a directory is its whole tree, and
// the ninety-first attack run's PATH with ~/work (or ~/Documents) on it
// read another project's .env (the user's documents) there; a bin/ holds
// programs and links to them.
func notABin(r string) string {
	_, ents, err := readDir(nil, r, true)
	if err != nil {
		return "cannot be listed: " + err.Error()
	}
	for _, e := range ents {
		switch {
		case e.typ&os.ModeDir != 0:
			return "holds directories (" + e.name + "/), so not only programs: read whole, it would be their trees too"
		case e.name == ".git" || e.name == ".env" || strings.HasPrefix(e.name, ".env."):
			return "holds " + e.name + ", so not only programs"
		case e.typ == 0:
			if fi, err := os.Lstat(filepath.Join(r, e.name)); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 == 0 {
				return "holds " + e.name + ", which no one may run: not only programs"
			}
		}
	}
	return ""
}

// grantVenv reads the Python environment venv a link of the search path
// leads into: the directory pipx or uv keeps their tools' environments in
// whole (toolsDir), else the environment's own parts alone (bin, lib,
// lib64, include, pyvenv.cfg): an environment made in a project
// (~/work/legacy, with its .env and .git beside bin/) is not read whole
// (the ninety-first attack run read that .env through a script linked
// from ~/.local/bin).
func (v *homeVet) grantVenv(venv string) {
	if d := toolsDir(venv); d != venv {
		v.grant(d, dirKind, trustUser)
		return
	}
	for _, n := range []string{"bin", "lib", "lib64", "include"} {
		if p := filepath.Join(venv, n); isDir(p) {
			v.grant(p, dirKind, trustUser)
		}
	}
	v.grant(filepath.Join(venv, "pyvenv.cfg"), fileKind, trustUser)
}

// readWhole reports whether a directory already granted holds r.
func (v *homeVet) readWhole(r string) bool {
	for _, o := range v.out {
		if within(r, o) {
			if st := v.lstat(o); st.err == nil && st.fi.IsDir() {
				return true
			}
		}
	}
	return false
}

// leaveUnread records d as left unread for why, once.
func (v *homeVet) leaveUnread(d, why string) {
	for _, u := range v.unread {
		if u.Path == d {
			return
		}
	}
	v.unread = append(v.unread, Unread{Path: d, Why: why})
}

// pathEntries grants what the entries of dir, a directory of the search
// path (real, granted), need beyond it: a link's target out of it
// (toolRoot), bun's install directory.
func (v *homeVet) pathEntries(dir string, env func(string) string) {
	_, ents, err := readDir(nil, dir, true)
	if err != nil {
		return
	}
	links := 0
	for _, e := range ents {
		switch {
		case e.name == "bun" && e.typ&os.ModeType == 0:
			// bun's install directory (BUN_INSTALL, ~/.bun): its global
			// packages, which the links beside it lead to, and its cache.
			root := filepath.Join(v.home, ".bun")
			if b := env("BUN_INSTALL"); filepath.IsAbs(b) {
				root = filepath.Clean(b)
			}
			if filepath.Join(root, "bin") == dir {
				v.grant(root, dirKind, trustUser)
			}
		case e.typ == os.ModeSymlink:
			if links++; links > maxPathLinks {
				continue
			}
			t, err := os.Readlink(filepath.Join(dir, e.name))
			if err != nil || !strings.Contains(t, "/") {
				continue // beside it (rustup's proxies: cargo -> rustup)
			}
			if !filepath.IsAbs(t) {
				t = dir + "/" + t // dir has no link in it: realpath takes the rest
			}
			// What the path's words already say is read is not
			// resolved (a miss at worst, where a link on the way leads
			// elsewhere: never a grant).
			c := filepath.Clean(t)
			if within(c, dir) || v.readWhole(c) {
				continue
			}
			// A tool's Python environment (pipx's, uv's: most links of
			// ~/.local/bin), judged by the environment's real path alone:
			// where the rest leads is the environment's own.
			if venv := venvOf(c); venv != "" {
				v.grantVenv(venv)
				continue
			}
			r, ok := v.realpath(t)
			if !ok || within(r, dir) || v.project != "" && within(r, v.project) || v.readWhole(r) {
				continue
			}
			if venv := venvOf(r); venv != "" {
				v.grantVenv(venv)
			} else if root := toolRoot(r); root != "" {
				v.grant(root, dirKind, trustUser)
			} else {
				v.grant(r, fileKind, trustUser)
			}
		}
	}
}

// toolRoot is the directory a program at r (a real path) that a link of
// the search path leads to needs whole, "" when only the file: the
// Python environment whose bin/ holds it (pipx's
// ~/.local/share/pipx/venvs/black, uv's ~/.local/share/uv/tools/ruff,
// poetry's installer's ~/.local/share/pypoetry/venv), the package in a
// node_modules that holds it (npm's global prefix:
// ~/.npm-global/lib/node_modules/typescript/bin/tsc), or the bin/ it is
// in. Never the directory above another bin/: that may be anything
// (another project, whose .env is beside its bin/).
func toolRoot(r string) string {
	if venv := venvOf(r); venv != "" {
		return venv
	}
	d := filepath.Dir(r)
	for p, i := d, 0; i < 4 && p != filepath.Dir(p); p, i = filepath.Dir(p), i+1 {
		up := filepath.Dir(p)
		if filepath.Base(up) == "node_modules" && !strings.HasPrefix(filepath.Base(p), "@") && !strings.HasPrefix(filepath.Base(p), ".") {
			return p
		}
		if filepath.Base(filepath.Dir(up)) == "node_modules" && strings.HasPrefix(filepath.Base(up), "@") {
			return p
		}
	}
	if filepath.Base(d) == "bin" {
		return d
	}
	return ""
}

// venvOf is the Python environment whose bin/ holds p (a pyvenv.cfg
// beside that bin/), "" when there is none.
func venvOf(p string) string {
	if d := filepath.Dir(p); filepath.Base(d) == "bin" && toolDir(filepath.Dir(d), "pyvenv.cfg") {
		return filepath.Dir(d)
	}
	return ""
}

// toolsDir is the directory pipx or uv keeps the tools' environments in
// (pipx's ~/.local/share/pipx/venvs or ~/.local/pipx/venvs, uv's
// ~/.local/share/uv/tools) when venv is one of them, else venv: read
// whole, it is one rule for every tool instead of one each (20 tools cost
// the launch about 140 system calls more, each its own rule), and it
// holds nothing but the environments the tool installer made.
func toolsDir(venv string) string {
	d := filepath.Dir(venv)
	switch filepath.Base(d) + "/" + filepath.Base(filepath.Dir(d)) {
	case "venvs/pipx", "tools/uv":
		return d
	}
	return venv
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
