//go:build linux

package confine

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

// vetoWorld is a home of mode 0700 under a root others may search, and a
// directory outside the home (pub, 0755); what they hold is up to each
// test.
func vetoWorld(t *testing.T) (root, home string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for d := root; d != "/"; d = filepath.Dir(d) {
		if d == os.TempDir() || d == filepath.Dir(os.TempDir()) {
			break
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home = filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return root, home
}

// setACL gives p a POSIX access ACL that lets uid read it besides its
// owner, its group and others (r--): the mode still says 0644.
func setACL(t *testing.T, p string, uid uint32) {
	t.Helper()
	var b []byte
	le := binary.LittleEndian
	b = le.AppendUint32(b, 2) // POSIX_ACL_XATTR_VERSION
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, 0xffffffff}, {0x02, 4, uid}, {0x04, 4, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 4, 0xffffffff}} {
		b = le.AppendUint16(b, e.tag)
		b = le.AppendUint16(b, e.perm)
		b = le.AppendUint32(b, e.id)
	}
	if err := unix.Setxattr(p, "system.posix_acl_access", b, 0); err != nil {
		t.Skipf("the file system takes no POSIX ACL: %v", err)
	}
	if !hasACL(p) {
		t.Fatal("the ACL was set, hasACL says none")
	}
}

// TestHomeVeto: what ~/.gitconfig includes and names is granted only
// when its mode, and the modes of the directories above it in the home,
// let any other user read it, and it is no secret; a link is judged by
// where it leads. Each refusal has a granted control beside it.
func TestHomeVeto(t *testing.T) {
	root, home := vetoWorld(t)
	pub := filepath.Join(root, "pub")
	priv := filepath.Join(root, "priv")
	j := func(rel string) string { return filepath.Join(home, rel) }
	gitconfig := `[include]
	path = ~/inc/open
	path = ~/inc/private
	path = ~/inc/group
	path = ~/inc/acl
	path = ~/closed/inc
	path = ~/inc/link-open
	path = ~/inc/link-ssh
	path = ~/inc/link-pub
	path = ~/inc/link-priv
	path = ~/inc/link-loop
	path = ~/.npmrc
	path = ~/.claude.json
	path = ~/other/.env
	path = ~/.local/state/loopguard/grants/g
	path = ~/.config/gh/hosts.yml
	path = ~/.ssh/config
[core]
	hooksPath = ~/hooks
	excludesFile = ~/.config/git/ignore
[init]
	templateDir = ~
`
	testHome(t, home, map[string]string{
		".gitconfig": gitconfig, "inc/open": "", "inc/private": "", "inc/group": "", "inc/acl": "",
		"closed/inc": "", "dotfiles/gitconfig": "", ".npmrc": "//r/:_authToken=t\n", ".claude.json": "{}", "other/.env": "K=v\n",
		".local/state/loopguard/grants/g": "", ".config/gh/hosts.yml": "", ".config/gh/config.yml": "", ".config/git/ignore": "",
		".ssh/config": "", "hooks/pre-commit": "",
		"proj/.git/config":  "[core]\n\thooksPath = ~/hooks2\n\tattributesFile = ~/attrs\n",
		"hooks2/pre-commit": "", "attrs": "",
	})
	testfs.Write(t, filepath.Join(pub, "inc"), nil, 0o644)
	testfs.Write(t, filepath.Join(priv, "inc"), nil, 0o644)
	for p, m := range map[string]os.FileMode{j("inc/private"): 0o600, j("inc/group"): 0o640, j("closed"): 0o711, j(".ssh"): 0o700,
		pub: 0o755, filepath.Join(pub, "inc"): 0o644, priv: 0o700} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	setACL(t, j("inc/acl"), 4242)
	for link, target := range map[string]string{"inc/link-open": "../dotfiles/gitconfig", "inc/link-ssh": j(".ssh/config"),
		"inc/link-pub": filepath.Join(pub, "inc"), "inc/link-priv": filepath.Join(priv, "inc"), "inc/link-loop": "link-loop"} {
		if err := os.Symlink(target, j(link)); err != nil {
			t.Fatal(err)
		}
	}
	places := policy.Places{Home: home, StateDir: j(".local/state/loopguard"), ConfigDir: j(".config/loopguard")}
	e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: places, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	reads := func(c policy.Capability) []string {
		return homeReadsFor(e, Spec{Cap: c, Project: j("proj")})
	}
	got := reads(policy.Capability{})
	for _, c := range []struct {
		path string
		want bool
		why  string
	}{
		{j(".gitconfig"), true, "the global configuration (control)"},
		{j("inc/open"), true, "a 0644 include (control)"},
		{j("inc/private"), false, "a 0600 include"},
		{j("inc/group"), false, "a 0640 include: the group's bits count for nothing"},
		{j("inc/acl"), false, "a 0644 include with a POSIX ACL"},
		{j("closed/inc"), false, "a 0644 include in a 0711 directory (others cannot list it)"},
		{j("dotfiles/gitconfig"), true, "a link's target in the home, by its real path"},
		{j("inc/link-open"), false, "the link itself: its target is what is granted"},
		{j(".ssh/config"), false, "a link's target in ~/.ssh, and ~/.ssh/config named"},
		{filepath.Join(pub, "inc"), true, "a link's target outside the home, open from / down"},
		{filepath.Join(priv, "inc"), false, "a link's target outside the home in a 0700 directory"},
		{j(".npmrc"), false, "npm's token, 0644, without the network"},
		{j(".claude.json"), false, "Claude Code's state, 0644"},
		{j("other/.env"), false, "another project's .env, 0644"},
		{j(".local/state/loopguard/grants/g"), false, "the guard's state"},
		{j(".config/gh/hosts.yml"), false, "gh's tokens, 0644"},
		{j("hooks"), true, "core.hooksPath of the user's configuration"},
		{j("hooks2"), false, "core.hooksPath of the repository's configuration: never a directory"},
		{j("attrs"), true, "a file the repository's configuration names (control)"},
		{home, false, "init.templateDir = ~: never the home"},
		{j(".config/git/ignore"), true, "the excludes file (control)"},
	} {
		if slices.Contains(got, c.path) != c.want {
			t.Errorf("%s: %s granted %v, want %v (%q)", c.why, c.path, !c.want, c.want, got)
		}
	}
	pl := places.Prepare()
	for _, p := range got {
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s: not a real path (%v)", p, err)
		}
		// The veto reads the guard's secrets from Roots, once: what it
		// grants must be no secret to Classify either.
		if pr := pl.Classify(p); pr.Secret {
			t.Errorf("%s: granted, and a secret to Classify (%s)", p, pr.What)
		}
	}
	// With the network, npm's configuration is read whatever its mode
	// (npm login writes it 0600); the rest is as above.
	if err := os.Chmod(j(".npmrc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := reads(policy.Capability{Write: true, Network: true}); !slices.Contains(got, j(".npmrc")) || slices.Contains(got, j(".claude.json")) {
		t.Errorf("+network: ~/.npmrc granted %v (want true), ~/.claude.json %v (want false)", slices.Contains(got, j(".npmrc")), slices.Contains(got, j(".claude.json")))
	}
}

// TestHomeToolchains: each tool's own configuration and toolchains are
// read, never the credentials beside them; the variables that move them
// (GIT_CONFIG_GLOBAL, CARGO_HOME), which every capability keeps, are
// followed.
func TestHomeToolchains(t *testing.T) {
	root, home := vetoWorld(t)
	j := func(rel string) string { return filepath.Join(home, rel) }
	testHome(t, home, map[string]string{
		".config/go/env": "GOFLAGS=-mod=mod\n", ".cargo/config.toml": "", ".cargo/credentials.toml": "", ".cargo/registry/index/x": "",
		".rustup/settings.toml": "", ".rustup/toolchains/stable/bin/cargo": "", ".nvm/versions/node/v22/bin/node": "",
		".nvm/alias/default": "", ".pyenv/versions/3.12/bin/python": "", ".local/lib/python3.12/site-packages/x.py": "",
		".local/share/uv/python/cpython-3.12/bin/python": "", ".config/gh/config.yml": "", ".config/gh/hosts.yml": "",
		".npmrc": "", ".terminfo/x/xterm-kitty": "", "alt.gitconfig": "", ".gitconfig": "", "altcargo/config.toml": "",
		"src/go.work": "", "src/proj/go.mod": "",
	})
	e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: policy.Places{Home: home}}
	vars := map[string]string{"HOME": home, "GIT_CONFIG_GLOBAL": j("alt.gitconfig"), "CARGO_HOME": j("altcargo")}
	e.Getenv = func(k string) string { return vars[k] }
	reads := func(c policy.Capability) []string {
		return homeReadsFor(e, Spec{Cap: c, Project: j("src/proj")})
	}
	ro := reads(policy.Capability{})
	for _, c := range []struct {
		path string
		want bool
	}{
		{".config/go/env", true}, {".cargo/config.toml", false}, {".cargo/registry", false}, {".cargo/credentials.toml", false},
		{".rustup/settings.toml", true}, {".rustup/toolchains", true}, {".nvm/versions", true}, {".nvm/alias", false},
		{".pyenv", true}, {".local/lib/python3.12", true}, {".local/share/uv/python", true}, {".config/gh/config.yml", true},
		{".config/gh/hosts.yml", false}, {".config/gh", false}, {".npmrc", false}, {".terminfo", true},
		{".gitconfig", false}, {"alt.gitconfig", true}, {"altcargo/config.toml", true}, {"src/go.work", true},
	} {
		if slices.Contains(ro, j(c.path)) != c.want {
			t.Errorf("read-only: ~/%s granted %v, want %v (%q)", c.path, !c.want, c.want, ro)
		}
	}
	rw := reads(policy.Capability{Write: true})
	for p, want := range map[string]bool{"alt.gitconfig": true, ".gitconfig": false, "altcargo/config.toml": true, ".cargo/config.toml": false} {
		if slices.Contains(rw, j(p)) != want {
			t.Errorf("project-write with GIT_CONFIG_GLOBAL and CARGO_HOME set: ~/%s granted %v, want %v (%q)", p, !want, want, rw)
		}
	}
}

// TestHomeConfigContainer: ~/.config made 0700 by whichever tool created
// it first (loopguard init does) does not make git's own files below it
// private: ~/.config/git/ignore as Claude Code writes it (0644 in a 0755
// directory) is read, or every git command fails confined; a 0700 tool
// directory below it stays closed, and a secret there stays refused
// whatever its mode.
func TestHomeConfigContainer(t *testing.T) {
	root, home := vetoWorld(t)
	j := func(rel string) string { return filepath.Join(home, rel) }
	testHome(t, home, map[string]string{
		".config/git/ignore": "**/.claude/settings.local.json\n", ".config/gh/config.yml": "", ".config/gh/hosts.yml": "token\n",
		".config/go/env": "", ".gitconfig": "[core]\n\tattributesFile = ~/.config/private/attributes\n", ".config/private/attributes": "",
	})
	for p, m := range map[string]os.FileMode{j(".config"): 0o700, j(".config/git"): 0o755, j(".config/gh"): 0o755, j(".config/private"): 0o700,
		j(".config/gh/hosts.yml"): 0o644} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: policy.Places{Home: home}}
	e.Getenv = func(k string) string { return map[string]string{"HOME": home}[k] }
	got := homeReadsFor(e, Spec{Cap: policy.Capability{}, Project: filepath.Join(root, "proj")})
	for rel, want := range map[string]bool{".config/git/ignore": true, ".config/gh/config.yml": true, ".config/go/env": true,
		".config/private/attributes": false, ".config/gh/hosts.yml": false} {
		if slices.Contains(got, j(rel)) != want {
			t.Errorf("~/%s granted %v, want %v (%q)", rel, !want, want, got)
		}
	}
}

// TestHomePathDirs: the directories of the launch's search path in the
// home are read with what their tools need (a pipx and a uv tool's
// environment, a package of npm's global prefix, bun's install
// directory), through the veto: ~/.cargo/bin but never ~/.cargo (cargo's
// token beside it), nothing a link leads to that is a secret or another
// project's directory, and a search path entry that is the home, a hidden
// directory of it, a secret or a directory holding the project is left
// unread and said. Each refusal has a granted control beside it.
func TestHomePathDirs(t *testing.T) {
	root, home := vetoWorld(t)
	j := func(rel string) string { return filepath.Join(home, rel) }
	testHome(t, home, map[string]string{
		".local/bin/plain": "#!/bin/sh\n", ".local/share/pipx/venvs/black/pyvenv.cfg": "", ".local/share/pipx/venvs/black/bin/black": "",
		".local/share/uv/tools/ruff/pyvenv.cfg": "", ".local/share/uv/tools/ruff/bin/ruff": "",
		".local/share/uv/python/cpython-3.12/bin/python3": "", ".local/share/uv/credentials/credentials.toml": "",
		".local/share/pypoetry/venv/pyvenv.cfg": "", ".local/share/pypoetry/venv/bin/poetry": "",
		".npm-global/lib/node_modules/typescript/bin/tsc": "", ".npm-global/lib/node_modules/@angular/cli/bin/ng.js": "",
		"go/bin/staticcheck": "", ".cargo/bin/rustup": "", ".cargo/credentials.toml": "[registry]\ntoken = \"x\"\n",
		".rustup/settings.toml": "", ".rustup/toolchains/stable/bin/cargo": "",
		"bin/mine": "", ".bun/bin/bun": "", ".bun/install/global/node_modules/prettier/bin/prettier.cjs": "",
		"work/other/tool.sh": "", "work/other/.env": "TOKEN=x\n", "work/other/bin/x": "", "work/proj/go.mod": "",
		".ssh/id_rsa": "", ".ssh/bin/k": "", "priv/bin/p": "", ".aws/credentials": "",
		".cache/ms-playwright/chromium-1140/chrome": "",
		"work/legacy/pyvenv.cfg":                    "", "work/legacy/bin/legacy-cli": "", "work/legacy/lib/python3/site-packages/x.py": "",
		"work/legacy/.env": "TOKEN=x\n", "work/legacy/.git/HEAD": "ref: refs/heads/main\n",
		"projects/a/.env": "TOKEN=x\n", "Documents/taxes.txt": "",
	})
	// Programs are executable (testHome writes 0644): a directory of the
	// search path that holds a file no one may run is not a bin/.
	for _, f := range []string{".local/bin/plain", "go/bin/staticcheck", ".cargo/bin/rustup", "bin/mine", ".bun/bin/bun", "priv/bin/p", ".ssh/bin/k"} {
		if err := os.Chmod(j(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		".local/bin/black": "../share/pipx/venvs/black/bin/black", ".local/bin/ruff": j(".local/share/uv/tools/ruff/bin/ruff"),
		".local/bin/poetry":   "../share/pypoetry/venv/bin/poetry",
		".npm-global/bin/tsc": "../lib/node_modules/typescript/bin/tsc", ".npm-global/bin/ng": "../lib/node_modules/@angular/cli/bin/ng.js",
		".cargo/bin/cargo": "rustup", ".bun/bin/prettier": "../install/global/node_modules/prettier/bin/prettier.cjs",
		"bin/other": j("work/other/tool.sh"), "bin/otherbin": j("work/other/bin/x"), "bin/key": j(".ssh/id_rsa"),
		"bin/aws": j(".aws/credentials"), "bin/legacy-cli": j("work/legacy/bin/legacy-cli"),
	} {
		if err := os.MkdirAll(filepath.Dir(j(link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, j(link)); err != nil {
			t.Fatal(err)
		}
	}
	for p, m := range map[string]os.FileMode{j(".ssh"): 0o700, j("priv/bin"): 0o700, j(".cache"): 0o700} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{".local/bin", "go/bin", ".cargo/bin", "bin", ".bun/bin", ".npm-global/bin", "priv/bin", "", ".local", ".cargo", ".ssh/bin", "work", "work/proj/node_modules/.bin",
		"projects", "Documents"}
	var path []string
	for _, d := range dirs {
		path = append(path, j(d))
	}
	path = append(path, "/usr/bin", "/bin", "relative/bin")
	places := policy.Places{Home: home, StateDir: j(".local/state/loopguard"), ConfigDir: j(".config/loopguard")}
	vars := map[string]string{"HOME": home, "PATH": strings.Join(path, ":")}
	e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: places, Getenv: func(k string) string { return vars[k] }}
	pl := places.Prepare()
	for _, c := range []policy.Capability{{}, policy.JailCapability} {
		s := Spec{Cap: c, Project: j("work/proj")}
		got, private, unread := homeReadsWith(e, s, pl, enclosing{})
		for _, w := range []struct {
			path string
			want bool
			why  string
		}{
			{".local/bin", true, "pipx's and uv's links (control)"},
			{".local/share/pipx/venvs", true, "pipx's tools' environments, where its links lead"},
			{".local/share/uv/tools", true, "uv's tools' environments"},
			{".local/share/uv", false, "never more than uv's tools"},
			{".local/share/pypoetry/venv/bin", true, "poetry's installer's environment, where its link leads: its parts"},
			{".local/share/pypoetry/venv", false, "an environment outside pipx's and uv's directories is read by its parts, not whole"},
			{".npm-global/bin", true, "npm's global prefix's bin (control)"},
			{".npm-global/lib/node_modules/typescript", true, "the package a link of npm's global bin leads into"},
			{".npm-global/lib/node_modules/@angular/cli", true, "a scoped package"},
			{"go/bin", true, "go install's (control)"},
			{".cargo/bin", true, "rustup's proxies, cargo install's"},
			{".cargo", false, "~/.cargo holds credentials.toml, cargo login's token"},
			{".cargo/credentials.toml", false, "cargo's token"},
			{".rustup/toolchains", true, "what rustup's proxies run (toolRules)"},
			{"bin", true, "~/bin (control)"},
			{".bun", true, "bun's install directory, beside its bin holding bun"},
			{"work/other/tool.sh", true, "a link's target outside a bin/: the file alone"},
			{"work/other", false, "never the directory of a link's target: another project, with its .env"},
			{"work/other/bin", true, "the bin/ a link leads into (control)"},
			{".ssh/id_rsa", false, "a link to a key"},
			{".aws/credentials", false, "a link to the cloud's credentials"},
			{".ssh/bin", false, "a search path entry in ~/.ssh"},
			{"priv/bin", false, "a 0700 directory of the search path"},
			{"work", false, "a search path entry that holds the project"},
			{".local", false, "a hidden directory of the home on the search path"},
			{".cache/ms-playwright", c.Write, "Playwright's browsers for a test run, under a 0700 ~/.cache (a container)"},
			{"work/legacy/bin", true, "the bin/ of a Python environment a link leads into (control)"},
			{"work/legacy/lib", true, "its lib/ (control: the tool imports from it)"},
			{"work/legacy", false, "never an environment made in a project whole: its .env and .git are beside bin/ (the ninety-first attack run)"},
			{"projects", false, "a search path entry that holds directories (the user's other projects)"},
			{"Documents", false, "a search path entry that holds files no one may run (the user's documents)"},
		} {
			if slices.Contains(got, j(w.path)) != w.want {
				t.Errorf("%s: %s: ~/%s granted %v, want %v (%q)", c, w.why, w.path, !w.want, w.want, got)
			}
		}
		if slices.Contains(got, home) || slices.Contains(got, j("work/proj/node_modules/.bin")) {
			t.Errorf("%s: the home, or a directory of the project, granted: %q", c, got)
		}
		if !slices.Contains(private, j("priv/bin")) {
			t.Errorf("%s: the 0700 ~/priv/bin is not said private: %q", c, private)
		}
		said := map[string]bool{}
		for _, u := range unread {
			said[u.Path] = true
			if u.Why == "" {
				t.Errorf("%s: %s unread, and no reason", c, u.Path)
			}
		}
		for _, d := range []string{"", ".local", ".cargo", ".ssh/bin", "work"} {
			if !said[j(d)] {
				t.Errorf("%s: the search path's ~/%s is not said unread: %+v", c, d, unread)
			}
		}
		for _, p := range got {
			if pr := pl.Classify(p); pr.Secret {
				t.Errorf("%s: %s granted, and a secret to Classify (%s)", c, p, pr.What)
			}
		}
	}
}
