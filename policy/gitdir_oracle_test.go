//go:build linux

package policy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
)

// TestIsGitDirAsGitTellsOne: a directory with objects/ and refs/ is a git
// directory to IsGitDir exactly when it is one to git (rev-parse run in
// it, with nothing above it to find), whatever HEAD is: a file, a link, a
// FIFO that a process feeds (git opens and reads it as a file), or a
// directory (not one, to either).
func TestIsGitDirAsGitTellsOne(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const ref = "ref: refs/heads/main\n"
	for _, c := range []struct {
		name string
		head func(t *testing.T, path string) (feed func())
	}{
		{"file", func(t *testing.T, p string) func() { must(t, os.WriteFile(p, []byte(ref), 0o644)); return nil }},
		{"link", func(t *testing.T, p string) func() { must(t, os.Symlink("refs/heads/main", p)); return nil }},
		{"fifo", func(t *testing.T, p string) func() {
			must(t, syscall.Mkfifo(p, 0o644))
			return func() {
				// Each open of git's is met by one of the feeder's.
				for range 8 {
					f, err := os.OpenFile(p, os.O_WRONLY, 0)
					if err != nil {
						return
					}
					_, _ = f.WriteString(ref)
					f.Close()
				}
			}
		}},
		{"directory", func(t *testing.T, p string) func() { must(t, os.Mkdir(p, 0o755)); return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "g")
			for _, d := range []string{"objects", "refs/heads"} {
				must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
			}
			must(t, os.WriteFile(filepath.Join(dir, "config"), []byte("[core]\n\tbare = true\n"), 0o644))
			feed := c.head(t, filepath.Join(dir, "HEAD"))
			if feed != nil {
				go feed()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "git", "rev-parse", "--absolute-git-dir")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+top, "GIT_CONFIG_NOSYSTEM=1", "HOME="+top)
			out, err := cmd.Output()
			gitSays := err == nil && strings.TrimSpace(string(out)) == dir
			if feed != nil && !gitSays {
				// Unblock the feeder's open.
				if f, err := os.OpenFile(filepath.Join(dir, "HEAD"), os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
			ents, err := os.ReadDir(dir)
			must(t, err)
			got := policy.IsGitDir(func(yield func(string, os.FileMode) bool) {
				for _, e := range ents {
					if !yield(e.Name(), e.Type()) {
						return
					}
				}
			})
			if got != gitSays {
				t.Errorf("HEAD a %s: IsGitDir %v, git (rev-parse: %q, %v) %v", c.name, got, out, err, gitSays)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
