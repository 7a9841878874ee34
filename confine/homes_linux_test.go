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
		".gitconfig":               gitconfig,
		".gitconfig.local":         "[user]\n\temail = ada@example.com\n[format]\n\tpretty = format:%h %an <%ae> %s\n",
		".gitconfig-work":          "[core]\n\tabbrev = 12\n",
		".gitconfig.d/main.inc":    "[status]\n\tshowUntrackedFiles = all\n",
		".gitignore_global":        "*.log\n.DS_Store\n",
		".gitattributes_global":    "*.dat binary\n",
		".config/git/ignore":       "**/.claude/settings.local.json\n",
		".config/go/env":           "GOFLAGS=-tags=extra\n",
		".jq":                      "def greet: \"hi from ~/.jq\";\n",
		".bashrc":                  "export PATH=$HOME/go/bin:$PATH\n",
		"Documents/x":              "a document\n",
		"other/.env":               "OTHER_SECRET=1\n",
		".claude.json":             `{"oauthAccount":{"emailAddress":"ada@example.com"}}`,
		".npmrc":                   "//registry.npmjs.org/:_authToken=npm_SECRETTOKEN\n",
		".config/gh/config.yml":    "git_protocol: ssh\n",
		".config/gh/hosts.yml":     "github.com:\n    oauth_token: gho_SECRET\n",
		".ssh/id_rsa":              "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		".ssh/config":              "Host *\n",
		"work/proj/go.mod":         "module example.com/proj\n\ngo 1.22\n",
		"work/app/go.mod":          "module example.com/app\n\ngo 1.22\n",
		"work/app/main.go":         "package main\n\nfunc main() { println(1) }\n",
		"work/proj/util.go":        "package proj\n\nfunc Add(a, b int) int { return a + b }\n",
		"work/proj/extra/extra.go": "//go:build extra\n\npackage extra\n\n// Two is 2.\nfunc Two() int { return 2 }\n",
		"work/proj/README.md":      "# proj\n\nA small project.\n",
		"work/proj/data.dat":       "v1\n",
		"work/proj/.gitignore":     "/bin/\n",
		"work/proj/.env":           "PROJ_SECRET=1\n",
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
	env = []string{"HOME=" + home, "PATH=" + filepath.Dir(goBinary(t)) + ":/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + tmp,
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

// TestHomeCommandsAsUnconfined: in homes with realistic dotfiles, the
// everyday read-only commands print through the launcher byte for byte
// what they print unconfined, run by an unprivileged user (nobody when
// the test runs as root) whose home it is; and in the same homes the
// owner-only files, the secret list, ~/Documents and another project's
// .env stay unreadable, each read beside its unconfined control.
func TestHomeCommandsAsUnconfined(t *testing.T) {
	if ABI() < MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (confinement needs %d)", ABI(), MinABI)
	}
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	goExe := goBinary(t)
	uid, gid := os.Getuid(), os.Getgid()
	var cred *syscall.Credential
	if uid == 0 {
		uid, gid = 65534, 65534
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	// The homes in a directory the user can reach: the temp directory,
	// or /tmp when the test's own is closed to others.
	base := os.TempDir()
	if cred != nil && !searchable(base) {
		base = "/tmp"
	}
	root, err := os.MkdirTemp(base, "lg-homes-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// The launcher: this test binary (TestMain runs Main), where the user
	// may run it.
	launcher := filepath.Join(root, "lg-launcher")
	data, err := os.ReadFile(testBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(launcher, data, 0o755); err != nil {
		t.Fatal(err)
	}
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
	// One temp directory for every home, so the launcher's private build
	// cache (in its scratch directory there) is built once, and the
	// unconfined runs use that same cache: go vet compiles the runtime
	// for a main package, a minute on a small machine.
	tmp := filepath.Join(root, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(tmp, uid, gid); err != nil {
		t.Fatal(err)
	}
	goCache := ""
	var table []string
	row := func(variant, what, verdict string) {
		table = append(table, fmt.Sprintf("%-30s %-30s %s", variant, what, verdict))
	}
	for i, v := range homeVariants {
		dir := filepath.Join(root, fmt.Sprint(i))
		home, proj, env := writeRealHome(t, dir, tmp, v)
		testfs.Chown(t, dir, uid, gid)
		run := func(confined bool, c command) runResult {
			t.Helper()
			where := proj
			if c.in != "" {
				where = filepath.Join(filepath.Dir(proj), c.in)
			}
			cmd := exec.Command(c.exe)
			cmd.Args = c.argv
			cmd.Env = env
			if confined {
				s := Spec{Cap: policy.Capability{}, Project: where, Cwd: where, Exe: c.exe, Argv: c.argv}
				cmd = exec.Command(launcher, s.Args()[1:]...)
				cmd.Args[0] = launcherName
				cmd.Env = append([]string{"LG_CONFINE_LAUNCH=1"}, env...)
			}
			cmd.Dir = where
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			return runResult{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
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
		for _, rel := range []string{".npmrc", ".claude.json", ".config/gh/hosts.yml", "Documents/x", "other/.env", ".ssh/id_rsa"} {
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
	t.Logf("as uid %d:\n%s", uid, strings.Join(table, "\n"))
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
