package confine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// homeVet decides which candidates of homeReadsFor are granted. A file's
// mode is a veto, never a grant: a candidate is granted only if, links
// resolved, it and every directory between the home (exclusive) and it
// are open to any other user (o+r for a file, o+rx for a directory; the
// group's bits count for nothing, a POSIX access ACL makes it private),
// and neither it nor the path it resolves to is on the secret list. The
// home's own mode is not asked: under a 0700 home the modes below it only
// reflect the umask, and a confined program reads the home as any other
// local user of a home opened to them could. A candidate outside the home
// (a link's target, a path a variable names) is judged from /.
type homeVet struct {
	home, realHome string
	project        string // "" when unknown
	tempDir        string
	// enclosing is the repository the project is a directory of, where
	// the launch reads it: its configuration is the project's.
	enclosing enclosing
	// secrets are paths (absolute, clean) never granted, nor anything in
	// one, nor a directory that holds one: the guard's secret roots
	// (policy.Places.Roots: its state, its configuration, the keyrings,
	// policy.HomeSecrets), the agents' configuration directories, and the
	// tools' credentials of homeSecrets.
	secrets []string
	// stats caches lstat of each path the resolution visits, and opens
	// the verdict of othersMay.
	stats map[string]statResult
	opens map[string]bool
	seen  map[string]bool
	out   []string
	// private are the candidates in the home refused by their mode, or a
	// directory's on the way (Plan.PrivateHome), each once.
	private []string
	// unread are the search path's directories pathRules refuses, and
	// why (Plan.Unread).
	unread []Unread
	// xdgConfig is $XDG_CONFIG_HOME when set elsewhere than ~/.config.
	xdgConfig string
}

type statResult struct {
	fi  fs.FileInfo
	err error
}

// newHomeVet readies the veto of one launch; pl is e.Places prepared
// (policy.Places.Prepare), as the plan has it.
func newHomeVet(e Env, s Spec, pl policy.Places, env func(string) string) *homeVet {
	home := filepath.Clean(e.Home)
	clean := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return ""
	}
	v := &homeVet{home: home, project: clean(s.Project), tempDir: clean(e.TempDir),
		stats: make(map[string]statResult, 64), opens: make(map[string]bool, 16), seen: make(map[string]bool, 32)}
	v.realHome = home
	if r, ok := v.realpath(home); ok {
		v.realHome = r
	}
	// The guard's own list, asked once: Classify for every candidate
	// cost more than the rest of homeReads together.
	for _, r := range pl.Roots() {
		if r.Secret {
			v.secrets = append(v.secrets, r.Path)
		}
	}
	for _, d := range []string{pl.ClaudeConfigDir, pl.CodexHome} {
		if filepath.IsAbs(d) {
			v.secrets = append(v.secrets, filepath.Clean(d))
		}
	}
	rel := homeSecrets
	if !s.Cap.Network {
		rel = append(append(rel[:len(rel):len(rel)], registryConfig...), networkSecrets...)
	}
	for _, r := range rel {
		v.secrets = append(v.secrets, filepath.Join(home, r))
	}
	// The same files under $XDG_CONFIG_HOME, where the tools put them
	// when it is set.
	if x := env("XDG_CONFIG_HOME"); filepath.IsAbs(x) && filepath.Clean(x) != filepath.Join(home, ".config") {
		v.xdgConfig = filepath.Clean(x)
		for _, r := range rel {
			if after, ok := strings.CutPrefix(r, ".config/"); ok {
				v.secrets = append(v.secrets, filepath.Join(x, after))
			}
		}
	}
	return v
}

// homeSecrets are the tools' credentials in the home (relative to it),
// never granted whatever their mode, nor a directory that holds one: a
// floor under the guard's own list (policy.HomeSecrets, read through
// Places.Roots), which names most of them too: until the two are one,
// a path either names stays unread.
var homeSecrets = []string{
	".ssh", ".gnupg", ".netrc", ".git-credentials", ".config/git/credentials",
	".config/gh/hosts.yml", ".cargo/credentials", ".cargo/credentials.toml",
	".claude.json", ".claude", ".docker/config.json", ".kube", ".aws", ".azure", ".config/gcloud",
	".pypirc", ".password-store", ".vault-token", ".pgpass", ".my.cnf", ".local/share/keyrings",
}

// networkSecrets are secrets only without the network capability:
// configuration that may hold a registry's password, read by the
// connection the capability grants (registryConfig is npm's).
var networkSecrets = []string{".config/pip/pip.conf", ".pip/pip.conf"}

// grant adds p if it passes: a file or a directory as k says (anyKind:
// either), by a source of trust t.
func (v *homeVet) grant(p string, k kind, t trust) (real string, ok bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	p = filepath.Clean(p)
	// What is not there is granted nothing (most candidates): asked
	// first, the secret list after.
	r, ok := v.realpath(p)
	if !ok {
		return "", false
	}
	// The registry's configuration under +network is read though it is
	// a secret (its one use is the connection the capability grants);
	// not what a link there leads to.
	if t != trustRegistry && r != p && v.secret(p, false) {
		return "", false
	}
	fi := v.lstat(r)
	if fi.err != nil {
		return "", false
	}
	isDir := fi.fi.IsDir()
	switch {
	case !isDir && !fi.fi.Mode().IsRegular(),
		isDir && (k == fileKind || t == trustProject),
		!isDir && k == dirKind,
		within(v.home, r), within(v.realHome, r), // the home, or above it
		(t != trustRegistry || r != p) && v.secret(r, isDir),
		t != trustRegistry && isDir && v.secret(p, true):
		return "", false
	}
	if t != trustRegistry && !v.open(r, isDir) {
		if (within(r, v.home) || within(r, v.realHome)) && !v.seen[r] {
			v.seen[r] = true
			v.private = append(v.private, r)
		}
		return "", false
	}
	if !v.seen[r] {
		v.seen[r] = true
		v.out = append(v.out, r)
	}
	return r, true
}

// secret reports whether p is on the secret list, or lies in something on
// it, or (dir) holds something on it.
func (v *homeVet) secret(p string, dir bool) bool {
	for _, s := range v.secrets {
		if within(p, s) || dir && within(s, p) {
			return true
		}
	}
	b := filepath.Base(p)
	// Claude Code's state and its backups (~/.claude.json.backup), as
	// policy.Places.Classify has them; another project's environment
	// file (.env, .env.local), wherever a configuration points.
	return filepath.Dir(p) == v.home && len(b) >= len(".claude.json") && strings.EqualFold(b[:len(".claude.json")], ".claude.json") ||
		b == ".env" || strings.HasPrefix(b, ".env.")
}

// open reports whether the real path r (no links in it) is open to other
// users: r itself, and every directory between its base and it, where the
// base is the home when r is in it and / otherwise.
func (v *homeVet) open(r string, isDir bool) bool {
	_, private := v.closedAt(r, isDir)
	return !private
}

// closedAt is the first path, r itself or a directory between its base
// (open's) and it, that keeps other users out, and whether there is one.
func (v *homeVet) closedAt(r string, isDir bool) (string, bool) {
	if !v.othersMay(r, isDir) {
		return r, true
	}
	base := "/"
	switch {
	case within(r, v.realHome):
		base = v.realHome
	case within(r, v.home):
		base = v.home
	}
	for d := filepath.Dir(r); d != base && d != "/" && len(d) > len(base); d = filepath.Dir(d) {
		if v.container(d) {
			continue
		}
		if !v.othersMay(d, true) {
			return d, true
		}
	}
	return "", false
}

// PrivateInHome reports whether the jail reads nothing of p, a path in the
// home, because p's mode, or a directory's between the home and it, keeps
// other users out, as a launch's plan judges a file a tool's rule names
// (homeVet): the path whose mode does, and that mode. xdgConfig is
// $XDG_CONFIG_HOME. For the hook's note beside a call the jail refused a
// read of the home (git stops at an include it cannot read, and says its
// ~/.gitconfig has a bad line), and doctor's.
func PrivateInHome(home, xdgConfig, p string) (string, fs.FileMode, bool) {
	if !filepath.IsAbs(home) || !filepath.IsAbs(p) {
		return "", 0, false
	}
	v := &homeVet{home: filepath.Clean(home), stats: map[string]statResult{}, opens: map[string]bool{}}
	v.realHome = v.home
	if r, ok := v.realpath(v.home); ok {
		v.realHome = r
	}
	if filepath.IsAbs(xdgConfig) && filepath.Clean(xdgConfig) != filepath.Join(v.home, ".config") {
		v.xdgConfig = filepath.Clean(xdgConfig)
	}
	r, ok := v.realpath(filepath.Clean(p))
	if !ok || !within(r, v.home) && !within(r, v.realHome) || r == v.home || r == v.realHome {
		return "", 0, false
	}
	st := v.lstat(r)
	if st.err != nil {
		return "", 0, false
	}
	at, private := v.closedAt(r, st.fi.IsDir())
	if !private {
		return "", 0, false
	}
	var mode fs.FileMode
	if st := v.lstat(at); st.err == nil {
		mode = st.fi.Mode().Perm()
	}
	return at, mode, true
}

// container reports whether d is a directory of the home that only holds
// other tools' directories, whose own mode says nothing of what is in
// it: ~/.config ($XDG_CONFIG_HOME), ~/.local, ~/.local/share, ~/.cache.
// Like the home, it is often 0700 because whichever tool made it first
// asked so (glib's and loopguard's own init make it 0700), not because the
// user made its contents private; a 0700 ~/.config made every git command
// fail confined (Claude Code writes ~/.config/git/ignore, which git must
// read), and a 0700 ~/.cache would keep Playwright's browsers unread.
// What is below it is still judged by its own mode, and the secrets in it
// stay refused whatever their modes.
func (v *homeVet) container(d string) bool {
	for _, base := range []string{v.home, v.realHome} {
		switch d {
		case filepath.Join(base, ".config"), filepath.Join(base, ".local"), filepath.Join(base, ".local", "share"), filepath.Join(base, ".cache"):
			return true
		}
	}
	return v.xdgConfig != "" && d == v.xdgConfig
}

// othersMay reports whether any other user may read p (o+r), and search
// it if it is a directory (o+x), and p has no POSIX access ACL.
func (v *homeVet) othersMay(p string, dir bool) bool {
	if ok, seen := v.opens[p]; seen {
		return ok
	}
	st := v.lstat(p)
	want := fs.FileMode(0o004)
	if dir {
		want = 0o005
	}
	ok := st.err == nil && st.fi.Mode().Perm()&want == want && !hasACL(p)
	v.opens[p] = ok
	return ok
}

func (v *homeVet) lstat(p string) statResult {
	if r, ok := v.stats[p]; ok {
		return r
	}
	fi, err := os.Lstat(p)
	r := statResult{fi, err}
	v.stats[p] = r
	return r
}

// maxLinks bounds the links one resolution follows (the kernel's 40).
const maxLinks = 40

// realpath resolves every link in the absolute, clean path p as the
// kernel does (a ".." after a link leaves the link's target), with the
// lstat cache. It fails when a component is missing or is not a
// directory where one is needed, or past maxLinks links.
func (v *homeVet) realpath(p string) (string, bool) {
	cur := "/"
	todo := p
	links := 0
	for todo != "" {
		var seg string
		seg, todo, _ = strings.Cut(strings.TrimLeft(todo, "/"), "/")
		switch seg {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := cur + "/" + seg
		if cur == "/" {
			next = "/" + seg
		}
		st := v.lstat(next)
		if st.err != nil {
			return "", false
		}
		if st.fi.Mode()&fs.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return "", false
			}
			t, err := os.Readlink(next)
			if err != nil || t == "" {
				return "", false
			}
			if filepath.IsAbs(t) {
				cur = "/"
			}
			todo = t + "/" + todo
			continue
		}
		if todo != "" && strings.Trim(todo, "/") != "" && !st.fi.IsDir() {
			return "", false
		}
		cur = next
	}
	return cur, true
}

// trustOf is what a configuration file at p is believed: the project and
// the temp directory are written by confined code.
func (v *homeVet) trustOf(p string, parent trust) trust {
	if parent == trustProject {
		return trustProject
	}
	if v.project != "" && within(p, v.project) || v.tempDir != "" && within(p, v.tempDir) {
		return trustProject
	}
	return parent
}

// within is fsx.Within for clean absolute paths, without allocating.
func within(p, dir string) bool {
	return p == dir || dir == "/" || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}
