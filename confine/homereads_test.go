package confine

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

// gitConfigSamples are configuration files as people write them (the
// corners of git's syntax are internal/gitconfig's tests).
var gitConfigSamples = map[string]string{
	"everyday": `# ~/.gitconfig
[user]
	name = Ada Lovelace
	email = ada@example.com
[core]
	editor = vim
	excludesFile = ~/.gitignore_global
	attributesFile = ~/.gitattributes_global
	pager = less -FRX
[alias]
	st = status -sb
	lg = log --graph --pretty=format:'%h %s' --abbrev-commit
	co = checkout
[include]
	path = ~/.gitconfig.local
[includeIf "gitdir:~/work/"]
	path = ~/.gitconfig-work
[pull]
	rebase = true
`,
	"includeIf kinds": `[includeIf "gitdir:~/src/"]
	path = src.inc
[includeIf "gitdir/i:~/SRC/"]
	path = ~/.config/git/src-i.inc
[includeIf "onbranch:main"]
	path = branch.inc
[includeIf "hasconfig:remote.*.url:https://github.com/**"]
	path = ~/.gitconfig-github
[include]
	path
	path = "~/.gitconfig.d/colors"
`,
}

func requireGit(t *testing.T) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	return git
}

// testHome writes files (name: body) below home, each 0644 in 0755
// directories, whatever the umask.
func testHome(t testing.TB, home string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(home, filepath.FromSlash(name))
		testfs.Write(t, p, []byte(body), 0o644)
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		for d := filepath.Dir(p); d != home; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// homeChains are homes whose git configuration includes, from the
// global, the XDG and the repository's configuration, in each way git
// allows; proj/ is a repository below the home.
var homeChains = map[string]map[string]string{
	"include, includeIf, relative, nested": {
		".gitconfig":            gitConfigSamples["everyday"],
		".gitconfig.local":      "[user]\n\tsigningkey = x\n[include]\n\tpath = .gitconfig.d/colors\n",
		".gitconfig.d/colors":   "[color]\n\tui = auto\n[include]\n\tpath = ../.gitconfig.d/deeper\n",
		".gitconfig.d/deeper":   "[core]\n\tquotePath = false\n",
		".gitconfig-work":       "[user]\n\temail = ada@work.example\n",
		".gitignore_global":     "*.log\n",
		".gitattributes_global": "*.dat binary\n",
	},
	"xdg config and includeIf kinds": {
		".config/git/config":     strings.Replace(gitConfigSamples["includeIf kinds"], "\tpath\n", "", 1),
		".config/git/src.inc":    "[log]\n\tdate = iso\n",
		".config/git/src-i.inc":  "[log]\n\tabbrevCommit = true\n",
		".config/git/branch.inc": "[status]\n\tshort = true\n",
		".gitconfig-github":      "[url \"git@github.com:\"]\n\tinsteadOf = https://github.com/\n",
		".gitconfig.d/colors":    "[color]\n\tui = never\n",
		".config/git/ignore":     "**/.claude/settings.local.json\n",
		"proj/.git/config":       "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://github.com/x/y\n[include]\n\tpath = ~/.gitconfig-project\n",
		".gitconfig-project":     "[user]\n\tname = Project Self\n[include]\n\tpath = ~/.gitconfig-project-2\n",
		".gitconfig-project-2":   "[core]\n\tabbrev = 12\n",
	},
	"depth chain": {
		".gitconfig": "[include]\n\tpath = c1\n",
		"c1":         "[include]\n\tpath = c2\n",
		"c2":         "[include]\n\tpath = c3\n",
		"c3":         "[include]\n\tpath = c4\n",
		"c4":         "[include]\n\tpath = c5\n",
		"c5":         "[x]\n\ty = 1\n",
	},
}

// TestGitChainAsGit: every file git itself reads in these homes (git
// config --list --show-origin --includes, run in the repository), and
// every file a setting names (git config --path --get-all), is among
// homeReadsFor's; a control removes the include and the file goes.
func TestGitChainAsGit(t *testing.T) {
	git := requireGit(t)
	for name, files := range homeChains {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			home := filepath.Join(root, "home")
			testHome(t, home, files)
			proj := filepath.Join(home, "proj")
			cmd := exec.Command(git, "init", "-q", "-b", "main", proj)
			cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			if body, ok := files["proj/.git/config"]; ok {
				testfs.Write(t, filepath.Join(proj, ".git/config"), []byte(body), 0o644)
			}
			e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: policy.Places{Home: home}}
			s := Spec{Cap: policy.Capability{}, Project: proj, Cwd: proj}
			e.Getenv = func(k string) string { return map[string]string{"HOME": home}[k] }
			got := homeReadsFor(e, s)
			run := func(args ...string) []string {
				cmd := exec.Command(git, args...)
				cmd.Dir = proj
				cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
				out, err := cmd.Output()
				if err != nil && len(out) == 0 {
					return nil // the key is not set
				}
				return strings.Split(strings.TrimSpace(string(out)), "\n")
			}
			var want []string
			for _, l := range run("config", "--list", "--show-origin", "--includes") {
				if f, ok := strings.CutPrefix(strings.SplitN(l, "\t", 2)[0], "file:"); ok && filepath.IsAbs(f) && !strings.HasPrefix(f, proj+"/") {
					want = append(want, f)
				}
			}
			for _, k := range []string{"core.excludesFile", "core.attributesFile", "core.hooksPath"} {
				for _, f := range run("config", "--path", "--get-all", k) {
					if _, err := os.Stat(f); err == nil {
						want = append(want, f)
					}
				}
			}
			if len(want) == 0 {
				t.Fatal("git read no file of the home: the test tests nothing")
			}
			for _, f := range want {
				if f = filepath.Clean(f); !slices.Contains(got, f) {
					t.Errorf("git reads %s; homeReadsFor has %q", f, got)
				}
			}
		})
	}
}

// realisticHome is a developer's home: git's configuration with
// includes and the XDG files, Go's, Rust's, Node's and Python's
// toolchains, gh's settings beside its tokens, and a project in ~/src.
var realisticHome = map[string]string{
	".gitconfig":              gitConfigSamples["everyday"],
	".gitconfig.local":        "[user]\n\tsigningkey = ~/.ssh/id_ed25519.pub\n[include]\n\tpath = .gitconfig.d/colors\n",
	".gitconfig.d/colors":     "[color]\n\tui = auto\n",
	".gitconfig-work":         "[user]\n\temail = ada@work.example\n",
	".gitignore_global":       "*.log\n",
	".gitattributes_global":   "*.dat binary\n",
	".config/git/ignore":      "**/.claude/settings.local.json\n",
	".config/go/env":          "GOFLAGS=-mod=mod\n",
	".config/gh/config.yml":   "git_protocol: ssh\n",
	".config/gh/hosts.yml":    "github.com:\n",
	".cargo/config.toml":      "",
	".cargo/credentials.toml": "",
	".rustup/settings.toml":   "",
	".rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/cargo": "",
	".nvm/versions/node/v22.1.0/bin/node":                          "",
	".pyenv/versions/3.12.3/bin/python":                            "",
	".local/lib/python3.12/site-packages/x.py":                     "",
	".npmrc":                      "",
	"src/proj/go.mod":             "module p\n",
	"src/proj/.git/config":        "[core]\n\trepositoryformatversion = 0\n",
	"src/proj/.git/HEAD":          "ref: refs/heads/main\n",
	"Documents/notes.txt":         "",
	".local/state/loopguard/x":    "",
	".config/loopguard/x.json":    "",
	".ssh/id_ed25519.pub":         "",
	".bashrc":                     "",
	".cache/go-build/README":      "",
	"go/pkg/mod/cache/download/x": "",
}

// BenchmarkHomeReads: what the launcher spends, before every launch, on
// finding the home's reads in a realistic home (read-only, the project's
// git configuration included).
func BenchmarkHomeReads(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(root, "home")
	testHome(b, home, realisticHome)
	places := policy.Places{Home: home, StateDir: filepath.Join(home, ".local/state/loopguard"), ConfigDir: filepath.Join(home, ".config/loopguard")}
	env := map[string]string{"HOME": home, "PATH": "/usr/bin:/bin"}
	e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: places, Getenv: func(k string) string { return env[k] }}
	s := Spec{Project: filepath.Join(home, "src/proj"), Cwd: filepath.Join(home, "src/proj")}
	if got := homeReadsFor(e, s); len(got) < 15 {
		b.Fatalf("only %d reads: %q", len(got), got)
	}
	b.Run("with-places", func(b *testing.B) {
		// What the plan adds: it has the prepared places already.
		pl := places.Prepare()
		for b.Loop() {
			homeReadsWith(e, s, pl, enclosing{})
		}
	})
	b.Run("100-lstats", func(b *testing.B) {
		// The yardstick: homeReads is about a hundred system calls (49
		// lstat, 27 lgetxattr, 7 open, 12 read, 7 close, 2 getdents on
		// this home), which is what its time is on a slow machine.
		p := filepath.Join(home, ".gitconfig")
		for b.Loop() {
			for range 100 {
				os.Lstat(p)
			}
		}
	})
	b.Run("preparing-places", func(b *testing.B) {
		for b.Loop() {
			homeReadsFor(e, s)
		}
	})
}

// TestToolDirsByVariable: a variable that names a tool's root directory
// has it read whole only where it is that tool's (PYENV_ROOT=~/other, an
// approved prefix's, read another project's .env; GOMODCACHE=~/Documents,
// the user's documents: the forty-second attack run); the tool's own
// directory there is read (controls).
func TestToolDirsByVariable(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	testHome(t, home, map[string]string{
		"other/.env":                       "TOKEN=x\n",
		"Documents/secret.txt":             "x\n",
		"pyenvs/versions/3.12/bin/python3": "",
		"mods/cache/download/x":            "",
		"src/proj/main.go":                 "",
	})
	places := policy.Places{Home: home, StateDir: filepath.Join(home, ".local/state/loopguard")}
	s := Spec{Project: filepath.Join(home, "src/proj"), Cwd: filepath.Join(home, "src/proj")}
	for _, c := range []struct {
		name, key, value, dir string
		read                  bool
	}{
		{"PYENV_ROOT at another project", "PYENV_ROOT", filepath.Join(home, "other"), filepath.Join(home, "other"), false},
		{"PYENV_ROOT at pyenv's (control)", "PYENV_ROOT", filepath.Join(home, "pyenvs"), filepath.Join(home, "pyenvs"), true},
	} {
		env := map[string]string{"HOME": home, c.key: c.value}
		e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: places, Getenv: func(k string) string { return env[k] }}
		if got := slices.Contains(homeReadsFor(e, s), c.dir); got != c.read {
			t.Errorf("%s: %s read %v, want %v", c.name, c.dir, got, c.read)
		}
	}
	for _, c := range []struct {
		value, want string
	}{
		{filepath.Join(home, "Documents"), ""}, // no cache/download: none read
		{filepath.Join(home, "mods"), filepath.Join(home, "mods")},
	} {
		env := map[string]string{"GOMODCACHE": c.value}
		if got := EnvFrom(func(k string) string { return env[k] }, places, 0).GoModCache; got != c.want {
			t.Errorf("GOMODCACHE=%s: the module cache read is %q, want %q", c.value, got, c.want)
		}
	}
}

// BenchmarkHomePathReads: what the search path's directories in the home
// add to the home's reads (pathRules) in a realistic home: ~/.local/bin
// with 20 pipx tools (links into their environments), ~/go/bin with 10
// programs, ~/.cargo/bin with rustup and its 13 proxies, ~/bin; against
// the same home with the system's directories alone on the search path.
func BenchmarkHomePathReads(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(root, "home")
	files := maps.Clone(realisticHome)
	for i := range 20 {
		files[fmt.Sprintf(".local/share/pipx/venvs/t%d/pyvenv.cfg", i)] = ""
		files[fmt.Sprintf(".local/share/pipx/venvs/t%d/bin/t%d", i, i)] = ""
	}
	for i := range 10 {
		files[fmt.Sprintf("go/bin/g%d", i)] = ""
	}
	files[".cargo/bin/rustup"] = ""
	files["bin/mine"] = ""
	files[".local/bin/plain"] = ""
	testHome(b, home, files)
	for i := range 20 {
		if err := os.Symlink(fmt.Sprintf("../share/pipx/venvs/t%d/bin/t%d", i, i), filepath.Join(home, ".local/bin", fmt.Sprint("t", i))); err != nil {
			b.Fatal(err)
		}
	}
	for _, p := range []string{"cargo", "cargo-clippy", "cargo-fmt", "cargo-miri", "clippy-driver", "rls", "rust-analyzer", "rust-gdb", "rust-gdbgui", "rust-lldb", "rustc", "rustdoc", "rustfmt"} {
		if err := os.Symlink("rustup", filepath.Join(home, ".cargo/bin", p)); err != nil {
			b.Fatal(err)
		}
	}
	places := policy.Places{Home: home, StateDir: filepath.Join(home, ".local/state/loopguard"), ConfigDir: filepath.Join(home, ".config/loopguard")}
	pl := places.Prepare()
	s := Spec{Project: filepath.Join(home, "src/proj"), Cwd: filepath.Join(home, "src/proj")}
	for _, c := range []struct{ name, path string }{
		{"system-path", "/usr/bin:/bin"},
		{"home-path", strings.Join([]string{filepath.Join(home, ".local/bin"), filepath.Join(home, "go/bin"), filepath.Join(home, ".cargo/bin"), filepath.Join(home, "bin"), "/usr/bin:/bin"}, ":")},
	} {
		env := map[string]string{"HOME": home, "PATH": c.path}
		e := Env{Home: home, TempDir: filepath.Join(root, "tmp"), Places: places, Getenv: func(k string) string { return env[k] }}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				homeReadsWith(e, s, pl, enclosing{})
			}
		})
	}
}
