//go:build linux

package confine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loopguard/loopguard/policy"

	"github.com/loopguard/loopguard/internal/testfs"
)

// homeVariant is one kind of real developer's home.
type homeVariant struct {
	name string
	// xdg: XDG_CONFIG_HOME is set (to ~/.xdg), and git's and go's files
	// are there; otherwise in ~/.config.
	xdg bool
	// excludes: ~/.gitconfig sets core.excludesFile; otherwise git reads
	// the default, $XDG_CONFIG_HOME/git/ignore, where Claude Code writes.
	excludes bool
	homeMode os.FileMode
}

var homeVariants = []homeVariant{
	{"xdg-unset,excludesFile,0700", false, true, 0o700},
	{"xdg-set,excludesFile,0700", true, true, 0o700},
	{"xdg-set,default-ignore,0700", true, false, 0o700},
	{"xdg-unset,default-ignore,0755", false, false, 0o755},
}

// realGitconfig is a ~/.gitconfig as developers keep them: identity in
// an included file, work settings by includeIf, global excludes and
// attributes, aliases.
const realGitconfig = `# managed by my dotfiles
[user]
	name = Ada Lovelace
[alias]
	st = status -sb
	lg = log --graph --oneline --decorate
	last = "log -1 HEAD --stat"
[core]
	attributesFile = ~/.gitattributes_global
	pager = less -FRX
[include]
	path = ~/.gitconfig.local
[includeIf "gitdir:~/work/"]
	path = ~/.gitconfig-work
[includeIf "onbranch:main"]
	path = .gitconfig.d/main.inc
[init]
	defaultBranch = main
`

// writeRealHome makes the variant's home below dir, the project
// ~/work/proj in it (a git repository with a go.mod, two commits, changes
// and untracked files), and returns the home, the project and the
// environment both runs get.
func writeRealHome(t *testing.T, dir, tmp string, v homeVariant) (home, proj string, env []string) {
	t.Helper()
	home = filepath.Join(dir, "home")
	proj = filepath.Join(home, "work", "proj")
	xdg := filepath.Join(home, ".config")
	if v.xdg {
		xdg = filepath.Join(home, ".xdg")
	}
	gitconfig := realGitconfig
	if v.excludes {
		gitconfig = strings.Replace(gitconfig, "[core]\n", "[core]\n\texcludesFile = ~/.gitignore_global\n", 1)
	}
	files := map[string]string{
		".gitconfig":                          gitconfig,
		".gitconfig.local":                    "[user]\n\temail = ada@example.com\n[format]\n\tpretty = format:%h %an <%ae> %s\n",
		".gitconfig-work":                     "[core]\n\tabbrev = 12\n",
		".gitconfig.d/main.inc":               "[status]\n\tshowUntrackedFiles = all\n",
		".gitignore_global":                   "*.log\n.DS_Store\n",
		".gitattributes_global":               "*.dat binary\n",
		".config/git/ignore":                  "**/.claude/settings.local.json\n",
		".config/go/env":                      "GOFLAGS=-tags=extra\n",
		".jq":                                 "def greet: \"hi from ~/.jq\";\n",
		".bashrc":                             "export PATH=$HOME/go/bin:$PATH\n",
		"Documents/x":                         "a document\n",
		"other/.env":                          "OTHER_SECRET=1\n",
		".claude.json":                        `{"oauthAccount":{"emailAddress":"ada@example.com"}}`,
		".npmrc":                              "//registry.npmjs.org/:_authToken=npm_SECRETTOKEN\n",
		".config/gh/config.yml":               "git_protocol: ssh\n",
		".config/gh/hosts.yml":                "github.com:\n    oauth_token: gho_SECRET\n",
		".ssh/id_rsa":                         "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		".ssh/config":                         "Host *\n",
		".cargo/credentials.toml":             "[registry]\ntoken = \"cio_SECRET\"\n",
		".cargo/bin/cargo-tool":               "#!/bin/sh\necho cargo tool\n",
		".local/bin/tool":                     "#!/bin/sh\necho local tool\n",
		".local/share/keyrings/login.keyring": "KEYRING\n",
		".aws/credentials":                    "[default]\naws_secret_access_key = SECRET\n",
		"notes.txt":                           "a note in the home\n",
		"work/proj/go.mod":                    "module example.com/proj\n\ngo 1.22\n",
		"work/app/go.mod":                     "module example.com/app\n\ngo 1.22\n",
		"work/app/main.go":                    "package main\n\nfunc main() { println(1) }\n",
		"work/proj/util.go":                   "package proj\n\nfunc Add(a, b int) int { return a + b }\n",
		"work/proj/extra/extra.go":            "//go:build extra\n\npackage extra\n\n// Two is 2.\nfunc Two() int { return 2 }\n",
		"work/proj/README.md":                 "# proj\n\nA small project.\n",
		"work/proj/data.dat":                  "v1\n",
		"work/proj/.gitignore":                "/bin/\n",
		"work/proj/.env":                      "PROJ_SECRET=1\n",
	}
	if v.xdg {
		files[".xdg/git/ignore"] = "**/.claude/settings.local.json\n*.tmp\n"
		files[".xdg/git/config"] = "[alias]\n\tco = checkout\n[log]\n\tdecorate = short\n"
		files[".xdg/go/env"] = files[".config/go/env"]
	}
	testHome(t, home, files)
	for p, m := range map[string]os.FileMode{home: v.homeMode, filepath.Join(home, ".ssh"): 0o700, filepath.Join(home, ".ssh/id_rsa"): 0o600,
		filepath.Join(home, ".config/gh/hosts.yml"): 0o600} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	// The search path as developers have it: the tools' bins in the home
	// (~/.cargo/bin beside cargo's token), and the home itself and
	// hidden directories of it, which the launch leaves unread.
	var path []string
	for _, d := range []string{".local/bin", ".cargo/bin", "go/bin", "", ".local", ".cargo"} {
		path = append(path, filepath.Join(home, d))
	}
	env = []string{"HOME=" + home, "PATH=" + strings.Join(path, ":") + ":" + filepath.Dir(goBinary(t)) + ":/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + tmp,
		"GOPATH=" + filepath.Join(home, "go")}
	if v.xdg {
		env = append(env, "XDG_CONFIG_HOME="+xdg)
	}
	gitIn := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(env, "GIT_AUTHOR_DATE=2026-12-01T10:00:00Z", "GIT_COMMITTER_DATE=2026-12-01T10:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// ~/work/app is another repository, a command at its root: go
	// stamps a main package with its module's version from git (it
	// runs git, which reads its configuration).
	app := filepath.Join(home, "work", "app")
	for _, d := range []string{proj, app} {
		gitIn(d, "init", "-q")
		gitIn(d, "add", ".")
		gitIn(d, "commit", "-q", "-m", "first")
	}
	testHome(t, home, map[string]string{"work/proj/util.go": "package proj\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n"})
	gitIn(proj, "commit", "-q", "-am", "document add")
	// The working tree as a session leaves it: changes, and untracked
	// files each ignore file speaks for.
	testHome(t, home, map[string]string{
		"work/proj/data.dat":  "v2\nmore\n",
		"work/proj/notes.log": "log\n", "work/proj/scratch.tmp": "tmp\n", "work/proj/.claude/settings.local.json": "{}\n",
		"work/proj/new.go": "package proj\n",
	})
	return home, proj, env
}

func goBinary(t *testing.T) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	g, err = filepath.EvalSymlinks(g)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// runResult is what a command printed, each stream apart, and its exit
// status.
type runResult struct {
	stdout, stderr string
	code           int
}

func (r runResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// userHomes is a directory for the homes of an unprivileged user (nobody
// when the tests run as root, which ignores file modes), with the
// launcher (this test binary, which TestMain runs as Main) where that
// user may run it, and one temp directory of the user's for every home:
// the launcher's private build cache (in its scratch directory there) is
// built once, and the unconfined runs may use that same cache (go vet
// compiles the runtime for a main package, a minute on a small machine).
type userHomes struct {
	root, launcher, tmp string
	uid, gid            int
	cred                *syscall.Credential
}

func newUserHomes(t *testing.T) *userHomes {
	t.Helper()
	if ABI() < MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (confinement needs %d)", ABI(), MinABI)
	}
	u := &userHomes{uid: os.Getuid(), gid: os.Getgid()}
	if u.uid == 0 {
		u.uid, u.gid = 65534, 65534
		u.cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	// The homes in a directory the user can reach: the temp directory,
	// or /tmp when the test's own is closed to others.
	base := os.TempDir()
	if u.cred != nil && !searchable(base) {
		base = "/tmp"
	}
	var err error
	if u.root, err = os.MkdirTemp(base, "lg-homes-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(u.root) })
	if err := os.Chmod(u.root, 0o755); err != nil {
		t.Fatal(err)
	}
	u.launcher = filepath.Join(u.root, "lg-launcher")
	data, err := os.ReadFile(testBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.launcher, data, 0o755); err != nil {
		t.Fatal(err)
	}
	u.tmp = filepath.Join(u.root, "tmp")
	if err := os.Mkdir(u.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(u.tmp, u.uid, u.gid); err != nil {
		t.Fatal(err)
	}
	return u
}

// run runs argv (the program exe) in dir with env as the user:
// unconfined when c is nil, else through the launcher under c for the
// project.
func (u *userHomes) run(t *testing.T, c *policy.Capability, project, dir string, env []string, exe string, argv ...string) runResult {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Args = argv
	cmd.Env = env
	if c != nil {
		s := Spec{Cap: *c, Project: project, Cwd: dir, Exe: exe, Argv: argv}
		cmd = exec.Command(u.launcher, s.Args()[1:]...)
		cmd.Args[0] = launcherName
		cmd.Env = append([]string{"LG_CONFINE_LAUNCH=1"}, env...)
	}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return runResult{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// TestHomeCommandsAsUnconfined: in homes with realistic dotfiles, the
// everyday read-only commands print through the launcher byte for byte
// what they print unconfined, run by an unprivileged user (nobody when
// the test runs as root) whose home it is; and in the same homes the
// owner-only files, the secret list, ~/Documents and another project's
// .env stay unreadable, each read beside its unconfined control.
func TestHomeCommandsAsUnconfined(t *testing.T) {
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	goExe := goBinary(t)
	u := newUserHomes(t)
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		p, _ = filepath.EvalSymlinks(p)
		return p
	}
	type command struct {
		exe  string
		argv []string
		// in is the project, ~/work/ and this ("" for proj)
		in string
	}
	same := []command{
		{gitExe, []string{"git", "status"}, ""},
		{gitExe, []string{"git", "log"}, ""},
		{gitExe, []string{"git", "diff", "--stat"}, ""},
		{gitExe, []string{"git", "branch", "--show-current"}, ""},
		{look("ls"), []string{"ls"}, ""},
		{look("ls"), []string{"ls", "-la"}, ""},
		{look("cat"), []string{"cat", "README.md"}, ""},
		{look("grep"), []string{"grep", "-rn", "Add", "."}, ""},
		{look("head"), []string{"head", "-n", "2", "util.go"}, ""},
		{look("wc"), []string{"wc", "-l", "util.go", "README.md"}, ""},
		{goExe, []string{"go", "vet", "./..."}, ""},
		{goExe, []string{"go", "list", "./..."}, ""},
		// In ~/work/app, whose command go stamps from git (not go vet
		// there: it would compile the runtime, a minute).
		{goExe, []string{"go", "list", "./..."}, "app"},
	}
	if jq, err := exec.LookPath("jq"); err == nil {
		// jq reads ~/.jq's definitions at every start (the forty-fifth
		// run's false positive: jq: error: greet/0 is not defined).
		same = append(same, command{jq, []string{"jq", "-n", "greet"}, ""})
	}
	goCache := ""
	var table []string
	row := func(variant, what, verdict string) {
		table = append(table, fmt.Sprintf("%-30s %-30s %s", variant, what, verdict))
	}
	for i, v := range homeVariants {
		dir := filepath.Join(u.root, fmt.Sprint(i))
		home, proj, env := writeRealHome(t, dir, u.tmp, v)
		testfs.Chown(t, dir, u.uid, u.gid)
		run := func(confined bool, c command) runResult {
			t.Helper()
			where := proj
			if c.in != "" {
				where = filepath.Join(filepath.Dir(proj), c.in)
			}
			var cp *policy.Capability
			if confined {
				cp = &policy.Capability{}
			}
			return u.run(t, cp, where, where, env, c.exe, c.argv...)
		}
		if goCache == "" {
			r := run(true, command{goExe, []string{"go", "env", "GOCACHE"}, ""})
			if goCache = strings.TrimSpace(r.stdout); r.code != 0 || !filepath.IsAbs(goCache) {
				t.Fatalf("go env GOCACHE through the launcher: %s", r)
			}
		}
		env = append(env, "GOCACHE="+goCache)
		for _, c := range same {
			free, confined := run(false, c), run(true, c)
			what := strings.Join(c.argv, " ")
			if c.in != "" {
				what += " (in ~/work/" + c.in + ")"
			}
			switch {
			case free == confined && free.code == 0:
				row(v.name, what, "same")
			case free == confined:
				row(v.name, what, "FAILS either way")
				t.Errorf("%s: %s: fails the same either way: %s", v.name, what, free)
			default:
				row(v.name, what, "DIFFERS")
				t.Errorf("%s: %s: confined is not what runs unconfined\n--- unconfined\n%s\n--- confined\n%s", v.name, what, free, confined)
			}
		}
		cat := look("cat")
		// With the search path holding ~/.cargo/bin beside cargo's token,
		// ~/.local/bin beside the keyrings, the home itself and its hidden
		// directories (writeRealHome's PATH).
		for _, rel := range []string{".npmrc", ".claude.json", ".config/gh/hosts.yml", "Documents/x", "other/.env", ".ssh/id_rsa",
			".cargo/credentials.toml", ".local/share/keyrings/login.keyring", ".aws/credentials", "notes.txt"} {
			c := command{cat, []string{"cat", filepath.Join(home, rel)}, ""}
			free, confined := run(false, c), run(true, c)
			if free.code != 0 {
				t.Errorf("%s: control: cat ~/%s fails unconfined: %s", v.name, rel, free)
			}
			verdict := "unreadable (read unconfined)"
			if confined.code == 0 || !strings.Contains(confined.stderr, "Permission denied") {
				verdict = "READ"
				t.Errorf("%s: cat ~/%s confined: %s", v.name, rel, confined)
			}
			row(v.name, "cat ~/"+rel, verdict)
		}
	}
	t.Logf("as uid %d:\n%s", u.uid, strings.Join(table, "\n"))
}

// searchable reports whether every directory from / to dir lets others
// through (o+x).
func searchable(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}
