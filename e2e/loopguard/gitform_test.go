//go:build linux

package loopguard

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
	"github.com/loopguard/loopguard/internal/testfs"
)

// TestApprovedCommitKeepsGitConfig (issues 35 and 36), through the real
// Claude Code with init's defaults, its sandbox on and off: the human
// approves `git add -A && git commit -m x` exactly; the repository's
// pre-commit hook (the human's own) runs tools/check.sh, project code the
// agent wrote, which tries to leave git something to run for the human's
// next unconfined git: core.fsmonitor in .git/config, a post-commit hook,
// and a .git/commondir naming a directory of its own whose config sets
// core.fsmonitor. Controls: the commit lands (inside the sandbox too,
// where git add -A used to fail on its placeholders), and the hook's own
// project write stays. After it, .git/config is byte for byte as before,
// neither the hook nor commondir is there, and the human's git status
// runs nothing of the agent's.
func TestApprovedCommitKeepsGitConfig(t *testing.T) {
	t.Parallel()
	keyringtest.Require(t)
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (the jail needs %d)", confine.ABI(), confine.MinABI)
	}
	withJailDefaults(t, func(t *testing.T, e *env, sandbox bool) {
		plantJailProject(t, e.Dir)
		marker := filepath.Join(t.TempDir(), "PWNED")
		check := strings.Join([]string{
			`git config core.fsmonitor "touch ` + marker + `" || true`,
			`printf '#!/bin/sh\ntouch ` + marker + `\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit || true`,
			`mkdir -p notes/evil && cp -r .git/objects .git/refs .git/HEAD notes/evil/ && printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch ` + marker + `\n' > notes/evil/config && echo ../notes/evil > .git/commondir || true`,
			`echo checked > notes/checked.txt`,
		}, "\n") + "\n"
		testfs.Write(t, e.path("tools/check.sh"), []byte(check), 0o644)
		// The human's own hook, as husky or the pre-commit framework
		// installs it: it runs the project's check.
		testfs.Write(t, e.path(".git/hooks/pre-commit"), []byte("#!/bin/sh\nsh tools/check.sh\n"), 0o755)
		config := mustRead(t, e.path(".git/config"))

		commit := "git add -A && git commit -m x"
		calls := []claudetest.ToolCall{bash("toolu_gf1", commit), bash("toolu_gf2", commit)}
		var turns []claudetest.Turn
		for _, c := range calls {
			turns = append(turns, claudetest.Tools(c))
		}
		approve := func() error {
			rows, err := e.g.Pending(e.ctx)
			if err != nil {
				return err
			}
			for _, p := range rows {
				if strings.Contains(p.Summary, "git commit") && p.Reason == "leaves_jail" {
					_, err = e.g.Approve(e.ctx, p)
					return err
				}
			}
			return fmt.Errorf("no commit held to leave the jail: %+v", rows)
		}
		api := e.runFor(jailSessionTimeout, claudetest.Script{Main: append(turns, claudetest.Text("done"))}, func(p *Proxy) {
			p.OnToolResult("toolu_gf1", approve)
		}, "--session-id", sessionID(t))
		wantDenied(t, api, "toolu_gf1", "leaves_jail")
		r := result(t, api, "toolu_gf2")
		t.Logf("the approved commit: error=%v %q", r.IsError, claudetest.Tail(r.Content, 8))

		// Controls: the commit landed, and the hook's project code ran.
		out, err := humanGit(e.Dir, "log", "--oneline", "-1")
		if err != nil || !strings.HasSuffix(strings.TrimSpace(out), " x") {
			t.Errorf("the approved commit did not land: %v %q\n%+v", err, out, r)
		}
		if got := e.read("notes/checked.txt"); got != "checked\n" {
			t.Errorf("the hook's project code did not run: %q", got)
		}
		// What it tried to leave for the human's git.
		if got := mustRead(t, e.path(".git/config")); string(got) != string(config) {
			t.Errorf(".git/config after the commit:\n%s", got)
		}
		for _, p := range []string{".git/hooks/post-commit", ".git/commondir"} {
			if e.exists(p) {
				t.Errorf("%s is there after the commit", p)
			}
		}
		if _, err := humanGit(e.Dir, "status", "--porcelain"); err != nil {
			t.Errorf("the human's git status: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
		if _, err := os.Stat(marker); err == nil {
			t.Error("the human's git ran what the approved commit's hook left in git's configuration")
		}
	})
}

// humanGit runs git in dir as the human does, with no user configuration.
func humanGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	b, err := cmd.CombinedOutput()
	return string(b), err
}
