package gitconfig

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// chainHomes are homes whose ~/.gitconfig and repository configuration
// (proj/.git/config) include in each way git allows, every condition
// true in the repository proj on branch main.
var chainHomes = map[string]map[string]string{
	"include, includeIf, relative, ~/, nested": {
		".gitconfig": "[user]\n\tname = A\n[include]\n\tpath = .gitconfig.local\n" +
			"[includeIf \"gitdir:~/proj/\"]\n\tpath = ~/conf.d/work\n" +
			"[includeIf \"gitdir/i:~/PROJ/\"]\n\tpath = conf.d/case\n" +
			"[includeIf \"onbranch:main\"]\n\tpath = conf.d/branch\n[core]\n\tabbrev = 9\n",
		".gitconfig.local": "[include]\n\tpath = conf.d/colors\n[user]\n\temail = a@x\n",
		"conf.d/colors":    "[color]\n\tui = auto\n[include]\n\tpath = ../conf.d/deeper\n\tpath = deeper\n",
		"conf.d/deeper":    "[core]\n\tquotePath = false\n\thooksPath = ~/.githooks\n",
		"conf.d/work":      "[user]\n\temail = a@work\n",
		"conf.d/case":      "[log]\n\tdate = iso\n",
		"conf.d/branch":    "[status]\n\tshort = true\n",
		"proj/.git/config": "[core]\n\trepositoryformatversion = 0\n[include]\n\tpath = ../../proj.inc\n",
		"proj.inc":         "[core]\n\thooksPath = .hooks\n[include]\n\tpath = ~/conf.d/work\n",
	},
	"depth 10, git's bound": depthChain(10),
}

// depthChain is ~/.gitconfig including c1, which includes c2, and so on
// to c<n>: c<n> is at include depth n. Each file sets depth.c<i>.
func depthChain(n int) map[string]string {
	m := map[string]string{".gitconfig": "[include]\n\tpath = c1\n"}
	for i := 1; i <= n; i++ {
		m[fmt.Sprintf("c%d", i)] = fmt.Sprintf("[depth]\n\tc%d = yes\n[include]\n\tpath = c%d\n", i, i+1)
	}
	return m
}

// setting is one setting and the file it is in.
type setting struct{ file, name, value string }

// TestChainAsGit: from ~/.gitconfig and the repository's config, Chain
// gives the settings git gives (git config --list --show-origin
// --includes, run in the repository), file for file, in git's order. The
// control: without the includes, neither reads the included files.
func TestChainAsGit(t *testing.T) {
	git := requireGit(t)
	for name, files := range chainHomes {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			home := chainHome(t, git, files)
			want := gitSettings(t, git, home)
			if got := chainSettings(home); !slices.Equal(got, want) {
				t.Errorf("Chain:\n got %q\nwant %q (git)", got, want)
			}
			if len(filesOf(want)) < 3 {
				t.Fatalf("git read %q: the test tests nothing", filesOf(want))
			}
			// The control: the same home without its includes.
			for _, f := range []string{".gitconfig", "proj/.git/config"} {
				if body, ok := files[f]; ok {
					body = strings.ReplaceAll(body, "path =", "notpath =")
					testfs.Write(t, filepath.Join(home, f), []byte(body), 0o644)
				}
			}
			want, got := gitSettings(t, git, home), chainSettings(home)
			if !slices.Equal(got, want) || len(filesOf(got)) != 2 {
				t.Errorf("control, no includes: Chain read %q, git %q", filesOf(got), filesOf(want))
			}
		})
	}
}

// TestChainBounds: a file included at depth 11 makes git die, and Chain
// does not read it; a file that includes itself ten times is read at most
// MaxFiles times; an includeIf whose condition is false is read too.
func TestChainBounds(t *testing.T) {
	git := requireGit(t)
	files := depthChain(11)
	home := chainHome(t, git, files)
	cmd := exec.Command(git, "config", "--includes", "--get", "depth.c11")
	cmd.Dir, cmd.Env = filepath.Join(home, "proj"), gitEnv(home)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "depth") {
		t.Errorf("git read depth 11: %v %s", err, out)
	}
	if got := filesOf(chainSettings(home)); slices.Contains(got, filepath.Join(home, "c11")) {
		t.Errorf("Chain read depth 11: %q", got)
	}

	self := t.TempDir()
	p := filepath.Join(self, "loop")
	testfs.Write(t, p, []byte("[include]\n"+strings.Repeat("\tpath = loop\n", 10)), 0o644)
	opened := 0
	c := Chain[struct{}]{Open: func(p string, _ struct{}) ([]byte, struct{}, bool) {
		opened++
		b, _ := os.ReadFile(p)
		return b, struct{}{}, true
	}}
	c.Read(p, struct{}{})
	if opened != MaxFiles {
		t.Errorf("a file including itself: opened %d times, want %d", opened, MaxFiles)
	}

	cond := chainHome(t, git, map[string]string{
		".gitconfig": "[includeIf \"gitdir:/nowhere/\"]\n\tpath = other\n",
		"other":      "[core]\n\thooksPath = /other\n",
	})
	if got := filesOf(chainSettings(cond)); !slices.Contains(got, filepath.Join(cond, "other")) {
		t.Errorf("an includeIf whose condition is false is not read: %q", got)
	}
	if got := filesOf(gitSettings(t, git, cond)); slices.Contains(got, filepath.Join(cond, "other")) {
		t.Errorf("control: git reads an includeIf whose condition is false: %q", got)
	}
}

// chainHome makes a home of files with a repository proj (branch main)
// whose .git/config is files' when it has one.
func chainHome(t *testing.T, git string, files map[string]string) string {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(git, "init", "-q", "-b", "main", filepath.Join(home, "proj"))
	cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for name, body := range files {
		testfs.Write(t, filepath.Join(home, filepath.FromSlash(name)), []byte(body), 0o644)
	}
	return home
}

func gitEnv(home string) []string {
	return []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "XDG_CONFIG_HOME=" + filepath.Join(home, "no-xdg")}
}

// gitSettings are the settings git reads in home's repository, but the
// includes themselves.
func gitSettings(t *testing.T, git, home string) []setting {
	t.Helper()
	proj := filepath.Join(home, "proj")
	cmd := exec.Command(git, "config", "--list", "--show-origin", "--includes", "-z")
	cmd.Dir, cmd.Env = proj, gitEnv(home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git config --list: %v", err)
	}
	recs := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	var s []setting
	for i := 0; i+1 < len(recs); i += 2 {
		f, _ := strings.CutPrefix(string(recs[i]), "file:")
		if !filepath.IsAbs(f) {
			f = filepath.Join(proj, f)
		}
		f = filepath.Clean(f)
		k, v, _ := strings.Cut(string(recs[i+1]), "\n")
		if IsInclude(k) {
			continue
		}
		s = append(s, setting{f, k, v})
	}
	return s
}

// chainSettings are Chain's from ~/.gitconfig and proj/.git/config.
func chainSettings(home string) []setting {
	var s []setting
	c := Chain[string]{
		Home: home,
		Open: func(p, _ string) ([]byte, string, bool) {
			b, err := os.ReadFile(p)
			return b, p, err == nil
		},
		Setting: func(e Entry, file string) { s = append(s, setting{file, e.Name, e.Value}) },
	}
	c.Read(filepath.Join(home, ".gitconfig"), "")
	c.Read(filepath.Join(home, "proj", ".git", "config"), "")
	return s
}

func filesOf(s []setting) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x.file) {
			out = append(out, x.file)
		}
	}
	return out
}
