//go:build linux

package confine

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

// gitRepo makes the jail's project a git repository with one commit and
// a pre-commit hook that runs project code (tools/check.sh), as husky or
// the pre-commit framework do, and returns the bytes of .git/config and
// the hook as they are then.
func (j *jail) gitRepo(t *testing.T, check string) (config, hook []byte) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(j.project, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(j.home, ".config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		_ = os.Lchown(filepath.Join(j.home, ".config"), nobody, nobody)
	}
	j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p tools && cat > tools/check.sh <<'EOF'
`+check+`
EOF
git init -q && git config user.email a@b && git config user.name a && git add -A && git commit -qm init
printf '#!/bin/sh\nsh tools/check.sh\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`)
	var err error
	if config, err = os.ReadFile(filepath.Join(j.project, ".git/config")); err != nil {
		t.Fatal(err)
	}
	if hook, err = os.ReadFile(filepath.Join(j.project, ".git/hooks/pre-commit")); err != nil {
		t.Fatal(err)
	}
	return config, hook
}

// submodule adds a submodule at path to the jail's project (a git
// repository: gitRepo) from a repository of one commit holding s.txt,
// made outside the project, which it returns, and commits it.
func (j *jail) submodule(t *testing.T, path string) string {
	t.Helper()
	src := filepath.Join(j.root, "subsrc")
	j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git init -q `+src+` && echo s > `+src+`/s.txt && git -C `+src+` add s.txt && git -C `+src+` -c user.email=a@b -c user.name=a commit -qm sub
git -c protocol.file.allow=always submodule --quiet add `+src+` `+path+` && git -c user.email=a@b -c user.name=a commit -qm sub`)
	return src
}

// pinAttacks is project code a pre-commit hook runs, trying each way
// into git's configuration and hooks: git config, an append, a file
// renamed over .git/config, a hard link of it written, new hooks, and
// .git/commondir naming a git directory of its own (src/evil) whose
// config sets core.fsmonitor. Each writes pwned when git runs it.
func pinAttacks(pwned string) string {
	return `git config core.fsmonitor "touch ` + pwned + `" || true
echo '	pager = touch ` + pwned + `' >> .git/config || true
printf '[core]\n\tfsmonitor = touch ` + pwned + `\n' > .git/config.new && mv -f .git/config.new .git/config || true
ln .git/config cfg && printf '[core]\n\tfsmonitor = touch ` + pwned + `\n' >> cfg || true
rm -f cfg
for h in post-commit post-index-change; do printf '#!/bin/sh\ntouch ` + pwned + `\n' > .git/hooks/$h && chmod +x .git/hooks/$h || true; done
mkdir -p src/evil && cp -r .git/objects .git/refs .git/HEAD src/evil/ && printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch ` + pwned + `\n' > src/evil/config && echo ../src/evil > .git/commondir || true
`
}

// TestJailGitPins: a +git call may write git's own directory (the
// commit lands: the control) but not its configuration or hooks, which
// the human's next unconfined git runs. The attack is project code a
// pre-commit hook runs (lint-staged's eslint.config.js, npm test): it sets
// core.fsmonitor, appends to .git/config, replaces it by a rename, adds a
// post-commit hook, and writes .git/commondir naming a directory of its
// own whose config sets core.fsmonitor (git reads the configuration of
// the directory commondir names). With namespaces the kernel refuses each
// pin that exists (mounted read-only) and the second stage's broker the
// commondir; with the filter alone the first stage's broker refuses each
// (gitWriteSet). Either way nothing is put back, and the next unconfined
// git status runs nothing of the call's.
func TestJailGitPins(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		pwned := filepath.Join(j.root, "PWNED")
		check := pinAttacks(pwned) + `echo checked > checked.txt`
		config, hook := j.gitRepo(t, check)
		out, code := j.launch(t, gitWrite, "jail-sh", `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; echo two > two.txt && git add -A && git commit -qm two`)
		if code != 0 {
			t.Fatalf("the commit under +git (control): exit %d: %s", code, out)
		}
		// With namespaces the kernel refuses every change to a pin that
		// existed (mounted read-only), and the second stage's broker
		// refuses to make one that did not (commondir); with the filter
		// alone the first stage's broker refuses every one
		// (gitWriteSet). Either way nothing is put back: no pin changed.
		for _, pin := range []string{".git/config", ".git/hooks", ".git/commondir"} {
			if strings.Contains(out, "loopguard: put back "+filepath.Join(j.project, pin)+",") {
				t.Errorf("namespaces %v: %s was changed and put back:\n%s", j.ns, pin, out)
			}
		}
		if _, err := os.Lstat(filepath.Join(j.project, ".git/commondir")); err == nil {
			t.Errorf("namespaces %v: .git/commondir is left", j.ns)
		}
		if b, err := os.ReadFile(filepath.Join(j.project, ".git/config")); err != nil || string(b) != string(config) {
			t.Errorf(".git/config after the call: %q %v", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(j.project, ".git/hooks/pre-commit")); err != nil || string(b) != string(hook) {
			t.Errorf("the pre-commit hook after the call: %q %v", b, err)
		}
		if _, err := os.Lstat(filepath.Join(j.project, ".git/hooks/post-commit")); err == nil {
			t.Errorf("a post-commit hook is left after the call")
		}
		// Controls: the hook's project code ran, and the commit landed.
		if _, err := os.Stat(filepath.Join(j.project, "checked.txt")); err != nil {
			t.Errorf("the pre-commit hook's project code did not run: %v\n%s", err, out)
		}
		// The human's next git, unconfined (the commit landed: control).
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git status --porcelain >/dev/null && git log --oneline | grep -q two && git diff HEAD~1 --stat | grep -q two.txt`)
		if _, err := os.Lstat(pwned); err == nil {
			t.Errorf("the next unconfined git ran what the +git call left in git's configuration")
		}
	})
}

// TestJailGitPinsWhileRunning: what a +git call writes into git's
// configuration is never there for an unconfined git that runs while the
// call does (an editor's, a shell prompt's git status). The pre-commit
// hook's project code tries each way in (git config, an append, a file
// renamed over it, a hard link of it written, a new hook, commondir),
// then waits while the test runs git status, unconfined, in the project.
// With the filter alone each landed and was put back only when the call
// ended, after that git had run core.fsmonitor; with namespaces the
// commondir did (a pin that does not exist is not mounted). Control: the
// commit lands, and the hook's project code ran.
func TestJailGitPinsWhileRunning(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		pwned := filepath.Join(j.root, "PWNED")
		check := pinAttacks(pwned) + `echo checked > checked.txt
i=0; while [ ! -e go.txt ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`
		j.gitRepo(t, check)
		cmd := j.launchCmd(gitWrite, "jail-sh", `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; echo two > two.txt && git add -A && git commit -qm two`)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		checked := filepath.Join(j.project, "checked.txt")
		for i := 0; i < 300; i++ {
			if _, err := os.Stat(checked); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		// While the call runs: the user's git, unconfined.
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git status --porcelain >/dev/null; git log -1 >/dev/null`)
		if _, err := os.Lstat(pwned); err == nil {
			t.Errorf("an unconfined git run while the +git call ran ran what the call put in git's configuration")
		}
		if err := os.WriteFile(filepath.Join(j.project, "go.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if _, statErr := os.Stat(checked); statErr != nil {
			t.Fatalf("the pre-commit hook's project code did not run (control): %v\n%s", statErr, out.String())
		}
		if err != nil {
			t.Fatalf("the commit under +git (control): %v: %s", err, out.String())
		}
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git status --porcelain >/dev/null && git log --oneline | grep -q two`)
		if _, err := os.Lstat(pwned); err == nil {
			t.Errorf("the next unconfined git ran what the +git call left in git's configuration")
		}
	})
}

// TestJailGitEveryday: under +git, the git a developer runs every day
// works in both modes, with the filter alone too, where the broker makes
// the names of the git directory's top and of objects/ (gitWriteSet): the
// lock files renamed over index, HEAD and packed-refs, ORIG_HEAD, the
// rebase's and the merge's state, a new object directory, the packs and
// objects/info of a gc. Each step's exit status is checked, and the
// history it leaves is the one the same script leaves unconfined.
func TestJailGitEveryday(t *testing.T) {
	const script = `set -e
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
git checkout -q -b feature
echo f > f.txt && git add f.txt && git commit -qm feature
git checkout -q -
echo m > m.txt && git add m.txt && git commit -qm main
git merge -q --no-ff --no-edit feature
echo s > s.txt && git add s.txt && git stash -q && git stash pop -q && git commit -qm stash
git checkout -q feature && git rebase -q - && git checkout -q -
git tag v1 && git revert --no-edit HEAD >/dev/null
git reset -q --hard HEAD~1 && git reset -q --hard ORIG_HEAD
git gc -q && git pack-refs --all && git fsck --no-dangling
git log --format='%s %d' --all | sort`
	var want string
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		out, code := j.launch(t, gitWrite, "jail-sh", `exec >history.txt 2>&1; (`+script+`) && echo done`)
		if code != 0 {
			t.Fatalf("namespaces %v: exit %d:\n%s", j.ns, code, out)
		}
		if strings.Contains(out, "put back") || strings.Contains(out, "refused") {
			t.Errorf("namespaces %v: the launcher had to step in:\n%s", j.ns, out)
		}
		b, err := os.ReadFile(filepath.Join(j.project, "history.txt"))
		if err != nil {
			t.Fatal(err)
		}
		out, ok := strings.CutSuffix(strings.TrimSpace(string(b)), "\ndone")
		if !ok {
			t.Fatalf("namespaces %v: the script failed:\n%s", j.ns, b)
		}
		if want == "" {
			// The same script, unconfined, in a repository made the same way.
			ref := filepath.Join(j.root, "ref")
			j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
mkdir -p `+ref+` && cd `+ref+` && git init -q && git config user.email a@b && git config user.name a && echo x > x.txt && git add -A && git commit -qm init && (`+script+`) > `+ref+`.out 2>&1`)
			b, err := os.ReadFile(ref + ".out")
			if err != nil {
				t.Fatal(err)
			}
			want = strings.TrimSpace(string(b))
		}
		if out != want {
			t.Errorf("namespaces %v: the history:\n%s\nwant (unconfined):\n%s", j.ns, out, want)
		}
	})
}

// TestJailGitPinsNotThroughALink: a +git call that replaces .git/hooks
// by a link to a directory in the home does not make the unconfined
// launcher write the hooks there when it puts them back: the link is
// removed and the hooks made again in the project (filter alone; with
// namespaces the mount refuses the replacement).
func TestJailGitPinsNotThroughALink(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		_, hook := j.gitRepo(t, "true")
		elsewhere := filepath.Join(j.home, ".config")
		out, code := j.launch(t, gitWrite, "jail-sh", `mv .git/hooks .git/hooks.old; ln -s `+elsewhere+` .git/hooks; echo wrote > src/main.go`)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if fi, err := os.Lstat(filepath.Join(j.project, ".git/hooks")); err != nil || !fi.IsDir() {
			t.Errorf(".git/hooks after the call: %v %v\n%s", fi, err, out)
		}
		if b, err := os.ReadFile(filepath.Join(j.project, ".git/hooks/pre-commit")); err != nil || string(b) != string(hook) {
			t.Errorf("the pre-commit hook after the call: %q %v", b, err)
		}
		if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
			t.Errorf("the launcher wrote through the link into %s: %v", elsewhere, ents)
		}
		// Control: the same call's write in the project landed.
		if b, _ := os.ReadFile(filepath.Join(j.project, "src/main.go")); string(b) != "wrote\n" {
			t.Errorf("src/main.go = %q", b)
		}
	})
}

// TestJailGitPinsSubmoduleLink: a +git call that moves a submodule's git
// directory (.git/modules/sub) aside and puts a link in its place, to a
// directory in the project whose config sets core.fsmonitor, leaves no
// link for the human's next unconfined git to follow: the launcher
// removes it and says so (the pins below it cannot be put back through
// a link; renaming a directory that holds a read-only mount is allowed,
// so namespaces do not stop the move). With the link left, that git
// status runs the call's fsmonitor (the test fails with unlinkReplaced
// taken out). The controls: the call's own project write lands, and an
// unconfined git status in the submodule runs before the call.
func TestJailGitPinsSubmoduleLink(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		pwned := filepath.Join(j.root, "PWNED")
		j.submodule(t, "sub")
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git -C sub status --porcelain >/dev/null`)
		if fi, err := os.Lstat(filepath.Join(j.project, ".git/modules/sub/config")); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("no submodule git directory: %v", err)
		}
		attack := `mv .git/modules/sub .git/modules/sub.old && cp -r .git/modules/sub.old src/evil && printf '[core]\n\trepositoryformatversion = 0\n\tworktree = ` + filepath.Join(j.project, "sub") + `\n\tfsmonitor = touch ` + pwned + `\n' > src/evil/config && ln -s ../../src/evil .git/modules/sub; echo wrote > src/main.go`
		out, code := j.launch(t, gitWrite, "jail-sh", attack)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if b, _ := os.ReadFile(filepath.Join(j.project, "src/main.go")); string(b) != "wrote\n" {
			t.Errorf("the call's own write (control): src/main.go = %q\n%s", b, out)
		}
		if fi, err := os.Lstat(filepath.Join(j.project, ".git/modules/sub/config")); err != nil || !fi.Mode().IsRegular() {
			// The move is refused in both modes: with the filter alone
			// .git/modules holds pins, so no rule grants it whole
			// (gitWriteSet); with namespaces the second stage's broker
			// moves no directory that holds a pin (pinnedSource). A
			// link put there all the same is removed (unlinkReplaced).
			t.Errorf("namespaces %v: the submodule's git directory was moved (%v):\n%s", j.ns, err, out)
		}
		if fi, err := os.Lstat(filepath.Join(j.project, ".git/modules/sub")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			t.Errorf("namespaces %v: the link .git/modules/sub is left after the call:\n%s", j.ns, out)
		}
		// The human's next git, unconfined, in the superproject and the
		// submodule (which now has no repository: its commands fail).
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git status --porcelain; git -C sub status --porcelain; true`)
		if _, err := os.Lstat(pwned); err == nil {
			t.Errorf("namespaces %v: the next unconfined git ran what the +git call left behind the link", j.ns)
		}
	})
}

// TestGitPinsFindsEverySubmodule: the pins cover a submodule whose name
// holds a slash (git names it by its path: modules/libs/foo), a
// submodule's own submodule (modules/x/modules/y) and a linked worktree;
// a directory of names with no HEAD is not a git directory; one nested
// past maxModuleDepth gets a pin the snapshot refuses (the launch fails
// closed). The control: the top git directory's own pins
// are snapshot without error before the deep directory is made.
func TestGitPinsFindsEverySubmodule(t *testing.T) {
	g := filepath.Join(t.TempDir(), ".git")
	for _, d := range []string{"", "modules/libs/foo", "modules/x", "modules/x/modules/y", "worktrees/w"} {
		if err := os.MkdirAll(filepath.Join(g, d, "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(g, d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pins := gitPins(g)
	for _, want := range []string{"config", "hooks", "modules/libs/foo/config", "modules/libs/foo/hooks", "modules/x/config", "modules/x/modules/y/config", "modules/x/modules/y/hooks", "worktrees/w/commondir"} {
		if !slices.Contains(pins, filepath.Join(g, want)) {
			t.Errorf("%s is not pinned: %q", want, pins)
		}
	}
	if slices.Contains(pins, filepath.Join(g, "modules/libs/config")) {
		t.Errorf("modules/libs, a directory of names, is taken for a git directory: %q", pins)
	}
	if _, err := snapshotPins("", -1, []string{g}, pins); err != nil {
		t.Fatalf("the snapshot of the pins (control): %v", err)
	}
	deep := filepath.Join(g, "modules")
	for i := 0; i <= maxModuleDepth; i++ {
		deep = filepath.Join(deep, "d")
	}
	if err := os.MkdirAll(filepath.Join(deep, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	pins = gitPins(g)
	if !slices.ContainsFunc(pins, func(p string) bool { return filepath.Base(p) == pinTooDeep }) {
		t.Fatalf("nothing says %s is past the bound: %q", deep, pins)
	}
	if _, err := snapshotPins("", -1, []string{g}, pins); err == nil {
		t.Error("the snapshot took a directory past the depth bound: a launch would run with it unpinned")
	}
}

// TestJailGitPinsNamedSubmodule: a submodule added at libs/foo keeps its
// git directory at .git/modules/libs/foo (git names it by its path); a
// +git call that appends core.fsmonitor to its config does not leave it for
// the human's next git status in the superproject, which runs status in
// the submodule (the test fails with only modules/NAME/ looked at, as
// before). The control: the call's own project write lands.
func TestJailGitPinsNamedSubmodule(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		pwned := filepath.Join(j.root, "PWNED")
		j.submodule(t, "libs/foo")
		cfg := filepath.Join(j.project, ".git/modules/libs/foo/config")
		before, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, code := j.launch(t, gitWrite, "jail-sh", `printf '[core]\n\tfsmonitor = touch `+pwned+`\n' >> .git/modules/libs/foo/config; echo wrote > src/main.go`)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if b, _ := os.ReadFile(filepath.Join(j.project, "src/main.go")); string(b) != "wrote\n" {
			t.Errorf("the call's own write (control): src/main.go = %q\n%s", b, out)
		}
		if b, err := os.ReadFile(cfg); err != nil || string(b) != string(before) {
			t.Errorf("namespaces %v: the submodule's config after the call: %q %v\n%s", j.ns, b, err, out)
		}
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git status --porcelain >/dev/null`)
		if _, err := os.Lstat(pwned); err == nil {
			t.Errorf("namespaces %v: the next unconfined git status ran the submodule's fsmonitor the call set", j.ns)
		}
	})
}

// TestJailGitPinsNewSubmoduleDir: a +git call that makes a git directory
// where git would keep a registered submodule not yet checked out
// (.git/modules/opt, with a post-checkout hook and core.fsmonitor) does
// not leave it for the human's next git submodule update --init, which
// would reuse it, unconfined, instead of cloning (reproduced with real
// git): the launcher holds it back and says so. The test fails with
// holdNewModules taken out. It renamed the directory
// opt.loopguard-held beside itself, and left it where the call had made
// that name first; it now moves it as the sweep does: to held/ where the
// state directory can be written, else beside itself under a name of
// its own, random (here held/ is made a file first: the fallback). The controls:
// the call's own project write lands, and the human's submodule update
// checks the submodule out.
func TestJailGitPinsNewSubmoduleDir(t *testing.T) {
	for _, stateWritable := range []bool{true, false} {
		t.Run(fmt.Sprintf("held-%v", stateWritable), func(t *testing.T) {
			bothModes(t, func(t *testing.T, j *jail) {
				j.gitRepo(t, "true")
				pwned := filepath.Join(j.root, "PWNED")
				src := j.submodule(t, "opt")
				j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git submodule --quiet deinit -f opt && rm -rf .git/modules/opt
printf '#!/bin/sh\ntouch `+pwned+`\n' > tools/pc.sh && chmod 755 tools/pc.sh`)
				if !stateWritable {
					held := filepath.Join(j.stateDir(t), "held")
					j.unconfined(t, "mkdir -p "+filepath.Dir(held)+" && : > "+held)
				}
				attack := `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; mkdir .git/modules/opt.loopguard-held && git init -q --bare .git/modules/opt && cp tools/pc.sh .git/modules/opt/hooks/post-checkout && printf '[core]\n\tbare = false\n\tfsmonitor = touch ` + pwned + `\n[remote "origin"]\n\turl = ` + src + `\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n' >> .git/modules/opt/config; echo wrote > src/main.go`
				// The thirty-first attack run's chmod 311 .git: git
				// needs no read bit there, and the put-back and the hold
				// could not look into it.
				if !stateWritable {
					attack += "; chmod 311 .git .git/modules || true"
				}
				out, code := j.launch(t, gitWrite, "jail-sh", attack)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, out)
				}
				if b, _ := os.ReadFile(filepath.Join(j.project, "src/main.go")); string(b) != "wrote\n" {
					t.Errorf("the call's own write (control): src/main.go = %q\n%s", b, out)
				}
				if _, err := os.Lstat(filepath.Join(j.project, ".git/modules/opt")); err == nil {
					t.Errorf("namespaces %v: the call's git directory is still .git/modules/opt:\n%s", j.ns, out)
				}
				want := "moved to " + filepath.Join(j.stateDir(t), "held")
				if !stateWritable {
					want = "(renamed " + filepath.Join(j.project, ".git/modules/opt.loopguard-held-")
				}
				if !stateWritable && strings.Contains(out, "could not") {
					t.Errorf("namespaces %v: after chmod 311 .git the launcher could not look at something:\n%s", j.ns, out)
				}
				if !strings.Contains(out, "held back "+filepath.Join(j.project, ".git/modules/opt")+", which this call made") || !strings.Contains(out, want) {
					t.Errorf("namespaces %v: the launcher did not say it held it back (%s):\n%s", j.ns, want, out)
				}
				// The human's next submodule update, unconfined; the control:
				// it checks the submodule out.
				j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git -c protocol.file.allow=always submodule --quiet update --init && test -f opt/s.txt && git status --porcelain >/dev/null`)
				if _, err := os.Lstat(pwned); err == nil {
					t.Errorf("namespaces %v: the human's git submodule update ran what the +git call left in .git/modules/opt", j.ns)
				}
			})
		})
	}
}

// TestJailGitPinsProjectMoved: +git's copy of the pins and its putting
// back act on the directory the call began in, from its descriptor,
// never by the project's path: a call of an enclosing project that put a
// link to another repository where the project was made the put-back
// replace that repository's .git/config by this one's and remove its
// hooks (and, racing the snapshot, write a config of its choosing into
// the user's: the seventeenth attack run). The oracle: the other
// repository's config and hook are as they were. Control: the commit
// lands in the project.
func TestJailGitPinsProjectMoved(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		other := filepath.Join(j.root, "other")
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git init -q `+other+` && printf '#!/bin/sh\nexit 0\n' > `+other+`/.git/hooks/pre-commit && chmod +x `+other+`/.git/hooks/pre-commit`)
		otherConfig := string(testfs.Read(t, filepath.Join(other, ".git/config")))
		cmd := j.launchCmd(gitWrite, "jail-sh", `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; echo two > two.txt && git add -A && git commit -qm two
i=0; while [ ! -e go.txt ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(j.project, "two.txt")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("namespaces %v: the call made no two.txt", j.ns)
			}
		}
		time.Sleep(300 * time.Millisecond) // the commit
		aside := j.project + ".aside"
		if err := os.Rename(j.project, aside); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, j.project); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(aside, "go.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if got := string(testfs.Read(t, filepath.Join(other, ".git/config"))); got != otherConfig {
			t.Errorf("namespaces %v: the other repository's .git/config was written:\n%s\n%s", j.ns, got, out.String())
		}
		if _, err := os.Stat(filepath.Join(other, ".git/hooks/pre-commit")); err != nil {
			t.Errorf("namespaces %v: the other repository's hook is gone (%v):\n%s", j.ns, err, out.String())
		}
		if err := os.Remove(j.project); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(aside, j.project); err != nil {
			t.Fatal(err)
		}
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git log --oneline | grep -q two`)
	})
}

// TestJailGitDirNotMoved: under +git, with namespaces a read-only mount
// did not stop its mount point's directory from moving: the seventeenth
// attack run's mv .git .gitx had the sweep hold the user's whole
// repository back (to held/, mode 0), and mv .git/objects left it none.
// Neither the git directory, nor a pin, nor a directory holding one
// moves, in both modes. Control: a file of the project moves (not
// tools/check.sh, which the repository's pre-commit hook runs: policy's
// HookPrograms keeps it), and git finds its repository after the call.
func TestJailGitDirNotMoved(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		out, _ := j.launch(t, gitWrite, "jail-sh", `exec >out.txt 2>&1
mv .git .gitx && echo moved-git
mv .git/objects objects.x && echo moved-objects
mv .git/hooks hooks.x && echo moved-hooks
mv .git/modules modules.x 2>/dev/null && echo moved-modules
mv README.md README2.md && echo moved-file`)
		b, _ := os.ReadFile(filepath.Join(j.project, "out.txt"))
		if strings.Contains(string(b), "moved-git") || strings.Contains(string(b), "moved-objects") || strings.Contains(string(b), "moved-hooks") {
			t.Errorf("namespaces %v: git's directory moved: %s %s", j.ns, b, out)
		}
		if !strings.Contains(string(b), "moved-file") {
			t.Errorf("namespaces %v: a file of the project did not move (control): %s %s", j.ns, b, out)
		}
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git status --porcelain >/dev/null && git log --oneline | grep -q init`)
	})
}

// TestJailTopNotAGitDir: a call made the project's top a git directory (a
// HEAD, objects and refs, and a config setting core.pager): git, finding
// no .git there, takes the top for a bare repository, and the user's git
// log in the project ran the pager (the seventeenth attack run). The sweep
// holds back the HEAD and config the call made at the top, in both modes
// and under both writing capabilities; the oracle is real git, which finds
// no repository at the top after the call. Control: a file the call wrote
// there stays.
func TestJailTopNotAGitDir(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		for _, c := range []policy.Capability{projectWrite, policy.JailCapability} {
			out, code := j.launch(t, c, "jail-sh", `exec >/dev/null 2>&1
echo 'ref: refs/heads/master' > HEAD; mkdir -p objects refs/heads
printf '[core]\n\tpager = "touch `+filepath.Join(j.root, "PWNED")+`; cat"\n' > config
t=$(GIT_DIR=$PWD git mktree </dev/null) && GIT_DIR=$PWD git -c user.name=a -c user.email=a@b commit-tree $t -m x > refs/heads/master
echo kept > notes.txt`)
			if code != 0 {
				t.Fatalf("namespaces %v, %s: exit %d: %s", j.ns, c, code, out)
			}
			if got := string(testfs.Read(t, filepath.Join(j.project, "notes.txt"))); got != "kept\n" {
				t.Errorf("namespaces %v, %s: notes.txt (control) = %q", j.ns, c, got)
			}
			j.gitFindsOwn(t, out)
			_ = os.RemoveAll(filepath.Join(j.project, "objects"))
			_ = os.RemoveAll(filepath.Join(j.project, "refs"))
		}
	})
}

// TestJailGitRebaseExecHeld: a +git call planted an interactive rebase in
// .git/rebase-merge whose todo holds an exec line: the user's next git
// rebase --continue ran it, unconfined (the seventeenth attack run). A
// todo the call left that names a command is held back, in both modes,
// and said; git rebase --continue then runs nothing. Control: a todo
// that only picks is left as it is.
func TestJailGitRebaseExecHeld(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		pwned := filepath.Join(j.root, "PWNED")
		plant := func(todo string) string {
			return `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; exec >/dev/null 2>&1
h=$(git rev-parse HEAD); d=.git/rebase-merge; mkdir -p $d
printf '%s\n' "` + todo + `" > $d/git-rebase-todo; : > $d/interactive; echo $h > $d/onto; echo $h > $d/orig-head
echo refs/heads/master > $d/head-name; echo 1 > $d/msgnum; echo 1 > $d/end; : > $d/done`
		}
		// continueRan runs the user's git rebase --continue, unconfined,
		// and reports (and clears) whether it ran the call's exec.
		continueRan := func() bool {
			j.userGit(j.project, "rebase", "--continue")
			_, err := os.Lstat(pwned)
			_ = os.Remove(pwned)
			return err == nil
		}
		out, _ := j.launch(t, gitWrite, "jail-sh", plant("pick $h x"))
		todo := filepath.Join(j.project, ".git/rebase-merge/git-rebase-todo")
		if _, err := os.Stat(todo); err != nil || strings.Contains(out, "git-rebase-todo") {
			t.Errorf("namespaces %v: a todo that only picks was held back (control; %v):\n%s", j.ns, err, out)
		}
		// The call may also take its owner's read bit from the rebase's
		// directory or the git directory, or its write bit from the
		// rebase's: git needs neither read bit, and the thirty-first
		// attack run's chmod 311 .git/rebase-merge kept the todo from
		// being looked at, and said nothing.
		for _, hide := range []string{"", "chmod 311 .git/rebase-merge", "chmod 311 .git", "chmod 511 .git/rebase-merge"} {
			_ = os.Chmod(filepath.Join(j.project, ".git"), 0o755)
			_ = os.Chmod(filepath.Join(j.project, ".git/rebase-merge"), 0o755)
			_ = os.RemoveAll(filepath.Join(j.project, ".git/rebase-merge"))
			// With the filter alone the first stage makes a mode change
			// of the program's own files only, and refuses .git's
			// (Claude Code's sandbox lets the kernel make it): the
			// marker says whether the call's chmod was made.
			marker := filepath.Join(j.project, "hidden")
			_ = os.Remove(marker)
			if hide != "" {
				hide += " && : > hidden"
			}
			out, _ = j.launch(t, gitWrite, "jail-sh", plant("exec touch "+pwned)+"\n"+hide)
			if !strings.Contains(out, "held back "+todo) {
				t.Errorf("namespaces %v, %q: the todo with an exec line was not held back:\n%s", j.ns, hide, out)
			}
			if _, err := os.Stat(marker); err == nil && !strings.Contains(out, "bits are back") {
				t.Errorf("namespaces %v, %q: the launcher did not say it gave the owner's bits back:\n%s", j.ns, hide, out)
			}
			if continueRan() {
				t.Errorf("namespaces %v, %q: the user's git rebase --continue ran the call's exec", j.ns, hide)
			}
		}
		// The rebase's directory made a link to one of the call's in the
		// project: git follows it.
		_ = os.RemoveAll(filepath.Join(j.project, ".git/rebase-merge"))
		out, _ = j.launch(t, gitWrite, "jail-sh", plant("exec touch "+pwned)+"\nmv .git/rebase-merge evil && ln -s ../evil .git/rebase-merge")
		if fi, err := os.Lstat(filepath.Join(j.project, ".git/rebase-merge")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			t.Errorf("namespaces %v: the link the call made at .git/rebase-merge is still there:\n%s", j.ns, out)
		}
		if continueRan() {
			t.Errorf("namespaces %v: the user's git rebase --continue followed the call's link to its exec:\n%s", j.ns, out)
		}
	})
}

// TestJailGitStateHeld: what else a +git call can leave in git's state
// for the user's --continue to run, unconfined (the thirty-second attack
// run): a merge strategy that is not git's own, which git runs as
// git-merge-NAME, by its path when NAME holds a slash ("/../evil" beside
// an empty directory git-merge-); and a stopped rebase with an exec line
// in a submodule's git directory. Each is held back and said, in both
// modes. Controls: a strategy of git's own is left, and the rebase it
// belongs to continues.
func TestJailGitStateHeld(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		pwned := filepath.Join(j.root, "PWNED")
		j.submodule(t, "opt")
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
for n in 1 2; do echo $n > n$n.txt && git add n$n.txt && git -c user.email=a@b -c user.name=a commit -qm n$n; done`)
		user := j.userGit
		ran := func() bool {
			_, err := os.Lstat(pwned)
			_ = os.Remove(pwned)
			return err == nil
		}
		// A rebase stopped at a break, its next picks swapped (no fast
		// forward: the strategy runs).
		stop := `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
export GIT_SEQUENCE_EDITOR='f(){ printf "break\npick %s\npick %s\n" $(git rev-parse HEAD) $(git rev-parse HEAD~1) > "$1"; }; f'
git rebase -qi HEAD~2 >/dev/null 2>"$TMPDIR/rebase.err" || { echo "set-up: git rebase failed"; cat "$TMPDIR/rebase.err"; git status; } >&2
mkdir -p git-merge- && printf '#!/bin/sh\ntouch ` + pwned + `\nexit 1\n' > evil && chmod +x evil
`
		strategy := filepath.Join(j.project, ".git/rebase-merge/strategy")
		out, _ := j.launch(t, gitWrite, "jail-sh", stop+"printf '/../evil\\n' > .git/rebase-merge/strategy")
		if !strings.Contains(out, "held back "+strategy) {
			t.Errorf("namespaces %v: a strategy that is not git's was not held back:\n%s", j.ns, out)
		}
		user(j.project, "rebase", "--continue")
		if ran() {
			t.Errorf("namespaces %v: the user's git rebase --continue ran the call's strategy", j.ns)
		}
		user(j.project, "rebase", "--abort")
		// Control: git's own strategy stays, and the rebase continues.
		out, _ = j.launch(t, gitWrite, "jail-sh", stop+"printf 'ort\\n' > .git/rebase-merge/strategy")
		if strings.Contains(out, "strategy") {
			t.Errorf("namespaces %v: git's own strategy was held back:\n%s", j.ns, out)
		}
		cont := user(j.project, "rebase", "--continue")
		if _, err := os.Stat(filepath.Join(j.project, ".git/rebase-merge")); err == nil || ran() {
			t.Errorf("namespaces %v: the rebase with git's own strategy did not continue (%v): %s\n%s", j.ns, err, cont, out)
			user(j.project, "rebase", "--abort")
		}
		// A stopped rebase in the submodule's git directory.
		todo := filepath.Join(j.project, ".git/modules/opt/rebase-merge/git-rebase-todo")
		out, _ = j.launch(t, gitWrite, "jail-sh", `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
cd opt && GIT_SEQUENCE_EDITOR='f(){ printf "break\nexec touch `+pwned+`\n" > "$1"; }; f' git rebase -qi --root >/dev/null 2>&1; ls ../.git/modules/opt/rebase-merge >/dev/null`)
		if !strings.Contains(out, "held back "+todo) {
			t.Errorf("namespaces %v: the submodule's todo with an exec line was not held back:\n%s", j.ns, out)
		}
		user(filepath.Join(j.project, "opt"), "rebase", "--continue")
		if ran() {
			t.Errorf("namespaces %v: the user's git rebase --continue in the submodule ran the call's exec", j.ns)
		}
	})
}

// TestGitStateJudges: which content of git's state runs something.
func TestGitStateJudges(t *testing.T) {
	for _, c := range []struct {
		judge func([]byte) bool
		in    string
		want  bool
	}{
		{todoRuns, "pick abc x\nexec make\n", true},
		{todoRuns, "x true", true},
		{todoRuns, "pick abc x\n# exec nothing\n", false},
		{strategyRuns, "ort\n", false},
		{strategyRuns, "recursive", false},
		{strategyRuns, "/../evil\n", true},
		{strategyRuns, "custom", true},
		{strategyRuns, "subtree\n", true},
		{nonEmpty, " '--subtree=.githooks'", true},
		{nonEmpty, "\n", false},
		{optsRun, "[options]\n\tstrategy-option = subtree=.githooks\n", true},
		{optsRun, "[options]\n\tstrategy = ort\n\tsignoff = true\n", false},
		{optsRun, "[options]\n\tStrategy = s/../.evil\n", true},
		{optsRun, "[options]\n\tstrategy = \"/../e\"\n", true},
		{optsRun, "[options\n", true},
	} {
		if got := c.judge([]byte(c.in)); got != c.want {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
	}
}

// userGit runs git as the jail's user, unconfined, in dir, as the user's
// own terminal would after a call (no user or system configuration, an
// editor that accepts, an identity), and returns what it printed.
func (j *jail) userGit(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(j.env), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_EDITOR=true",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	b, _ := cmd.CombinedOutput()
	return string(b)
}

// TestJailGitRefsHeld: a +git call cannot write executable configuration
// in the worktree, but it writes git's objects, refs and index, and the
// user's own git writes what they name on a checkout, a restore, a reset,
// a stash pop or a --continue (the thirty-third attack run's replaced
// hook blob, every hash the same, and its commit of a hook; the
// thirty-fifth's refs written as git reads and the first check did not,
// a pseudo-ref, a stash's untracked parent, a rebase's todo, a lock left
// behind, an index entry's name padded, the index's cached tree). After
// the call each is deleted, put back or held back, and said; the user's
// command then writes no hook of the call's. Controls: a commit of a
// source change stays, and so does a commit of the user's own staged
// change to the hook.
func TestJailGitRefsHeld(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	crafter, err := os.ReadFile("testdata/craftindex.py")
	if err != nil {
		t.Fatal(err)
	}
	bothModes(t, func(t *testing.T, j *jail) {
		j.gitRepo(t, "true")
		// In the project: the jail reads nothing else of the tree.
		craft := filepath.Join(j.project, "tools/craftindex.py")
		if err := os.WriteFile(craft, crafter, 0o644); err != nil {
			t.Fatal(err)
		}
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p .husky && printf '#!/bin/sh\necho benign\n' > .husky/pre-commit && echo s > src.txt && echo 'export A=1' > .envrc && git add -A && git commit -qm hook`)
		git := func(args ...string) string { return strings.TrimSpace(j.userGit(j.project, args...)) }
		head, hook := git("rev-parse", "HEAD"), git("rev-parse", "HEAD:.husky/pre-commit")
		hookFile := filepath.Join(j.project, ".husky/pre-commit")
		const evil = `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
B=$(printf '#!/bin/sh\necho PWNED\n' | git hash-object -w --stdin)
commit() { GIT_INDEX_FILE=$TMPDIR/i git read-tree HEAD && GIT_INDEX_FILE=$TMPDIR/i git update-index --cacheinfo 100755,$B,.husky/pre-commit &&
  git -c user.email=a@b -c user.name=a commit-tree $(GIT_INDEX_FILE=$TMPDIR/i git write-tree) -p HEAD -m "$1"; }
# The hook's content moved to notes.sh (TB, MB), then notes.sh made the call's (TC, MC):
# git's merges follow the rename into the hook.
H=$(git rev-parse HEAD:.husky/pre-commit)
ren() { export GIT_INDEX_FILE=$TMPDIR/ri; git read-tree HEAD && git update-index --force-remove .husky/pre-commit &&
  git update-index --add --cacheinfo 100755,$H,notes.sh && TB=$(git write-tree) && git update-index --add --cacheinfo 100755,$B,notes.sh && TC=$(git write-tree)
  unset GIT_INDEX_FILE; MB=$(git commit-tree $TB -p HEAD -m move) && MC=$(git commit-tree $TC -p $MB -m tidy); }
# A tree of the one file NAME with blob ID.
one() { printf '100755 blob %s\t%s\n' $2 $1 | git mktree; }
# A git am stopped at a patch that does not apply, whose next is the mail on stdin.
amstate() { printf 'From: a <a@b>\nSubject: [PATCH] bad\n\n---\ndiff --git a/src.txt b/src.txt\n--- a/src.txt\n+++ b/src.txt\n@@ -1 +1 @@\n-nothere\n+x\n' > $TMPDIR/bad
  git -c user.email=a@b -c user.name=a am -q $TMPDIR/bad >/dev/null 2>&1; test -d .git/rebase-apply || { echo "set-up: no git am stopped"; ls -la .git; exit 9; }
  cat > .git/rebase-apply/0002 && echo 2 > .git/rebase-apply/last; }
`
		for _, c := range []struct{ name, script, said, user string }{
			{"replace", `git replace $(git rev-parse HEAD:.husky/pre-commit) $B`, "deleted the replace ref refs/replace/" + hook, "checkout -q HEAD -- .husky/pre-commit"},
			{"commit", `git update-ref HEAD $(commit hook)`, "moved it back to " + head, "reset -q --hard"},
			{"branch", `git branch feature $(commit feature)`, "refs/heads/feature", "checkout -q feature -- .husky/pre-commit"},
			{"index", `git update-index --cacheinfo 100755,$B,.husky/pre-commit`, "put back git's index entry of .husky/pre-commit", "checkout -q -- .husky/pre-commit"},
			{"junk after the name", `printf '%s junk\n' $(commit trail) > .git/refs/heads/trail`, "refs/heads/trail", "checkout -q trail -- .husky/pre-commit"},
			{"upper case", `commit upper | tr a-f A-F > .git/refs/heads/upper`, "refs/heads/upper", "checkout -q upper -- .husky/pre-commit"},
			{"a link", `commit link > .git/evilfile && ln -s ../../evilfile .git/refs/heads/symlnk`, "refs/heads/symlnk", "checkout -q symlnk -- .husky/pre-commit"},
			{"ORIG_HEAD", `commit orig > .git/ORIG_HEAD`, "ORIG_HEAD", "checkout -q ORIG_HEAD -- .husky/pre-commit"},
			{"a symbolic ref to ORIG_HEAD", `commit so > .git/ORIG_HEAD && printf 'ref: ORIG_HEAD\n' > .git/refs/heads/symorig`, "ORIG_HEAD", "checkout -q symorig -- .husky/pre-commit"},
			{"a lock", `git update-ref refs/heads/feat $(commit feat) && : > .git/refs/heads/feat.lock && : > .git/index.lock`, "refs/heads/feat", "checkout -q feat -- .husky/pre-commit"},
			{"a stash's untracked parent", `echo wip >> src.txt && git -c user.email=a@b -c user.name=a stash -q && W=$(git rev-parse refs/stash) &&
U=$(git -c user.email=a@b -c user.name=a commit-tree -m untracked $(printf '040000 tree %s\t.husky\n' $(printf '100755 blob %s\tpost-commit\n' $B | git mktree) | git mktree)) &&
git update-ref refs/stash $(git -c user.email=a@b -c user.name=a commit-tree -p $W^1 -p $W^2 -p $U -m wip $W^{tree})`, "refs/stash", "stash pop -q"},
			{"a rebase's todo", `GIT_SEQUENCE_EDITOR="printf 'break\npick $(commit todo)\n' >" git -c user.email=a@b -c user.name=a rebase -q -i HEAD`, "held back .git/rebase-merge/git-rebase-todo", "rebase --continue"},
			{"a todo's revision syntax", `GIT_SEQUENCE_EDITOR="printf 'break\npick $(commit g)~0 tidy\n' >" git -c user.email=a@b -c user.name=a rebase -q -i HEAD`, "held back .git/rebase-merge/git-rebase-todo", "rebase --continue"},
			{"a rebase's orig-head", `GIT_SEQUENCE_EDITOR="sed -i 1ibreak" git -c user.email=a@b -c user.name=a rebase -q -i HEAD; commit o > .git/rebase-merge/orig-head`, "held back .git/rebase-merge/orig-head", "rebase --abort"},
			{"the stash reflog", `s=$(commit s) && i=$(git -c user.email=a@b -c user.name=a commit-tree HEAD^{tree} -p HEAD -m index) &&
git stash store -m "WIP on master" $(git -c user.email=a@b -c user.name=a commit-tree $(git rev-parse $s^{tree}) -p HEAD -p $i -m WIP) &&
git stash store -m "WIP on master" $(git -c user.email=a@b -c user.name=a commit-tree HEAD^{tree} -p HEAD -p $i -m WIP2)`, "held back .git/logs/refs/stash", "stash pop -q; stash pop -q"},
			{"checkout -", `d=$(commit d) && git symbolic-ref -m "checkout: moving from $d to master" HEAD refs/heads/master`, "held back .git/logs/HEAD", "checkout -q -"},
			{"a tag of a tree", `git tag tt $(GIT_INDEX_FILE=$TMPDIR/i git read-tree HEAD && GIT_INDEX_FILE=$TMPDIR/i git update-index --cacheinfo 100755,$B,.husky/pre-commit && GIT_INDEX_FILE=$TMPDIR/i git write-tree)`, "refs/tags/tt", "checkout -q tt -- .husky/pre-commit"},
			{"a held commit named again", `h=$(git for-each-ref --count=1 --format='%(objectname)' 'refs/loopguard-held/*/heads/feature') && git update-ref refs/heads/again $h 2>&1 || { echo "no held ref ($h)"; git for-each-ref; }`, "refs/heads/again", "checkout -q again -- .husky/pre-commit"},
			{"grafts", `e=$(commit gr) && echo "$e $e" > .git/info/grafts && git update-ref refs/heads/gr $e`, "refs/heads/gr", "checkout -q gr -- .husky/pre-commit"},
			{"a commit git cannot walk", `git update-ref refs/heads/evil2 $(commit e2) && git update-ref refs/heads/junk $(printf 'tree %s\nparent 1111111111111111111111111111111111111111\nauthor a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n\nx\n' $(git rev-parse HEAD^{tree}) | git hash-object -t commit -w --stdin --literally)`, "every ref, todo and reflog it changed is held", "checkout -q evil2 -- .husky/pre-commit"},
			{"HEAD removed", `git update-ref refs/heads/master $(commit nr) && rm -f .git/HEAD`, "put back .git/HEAD", "reset -q --hard"},
			// The thirty-seventh attack run's: a name packed-refs lists
			// more than once (git's binary search takes a middle one, the
			// last was looked at, and a delete took one entry), a reflog line
			// git cat-file dies on (the reflogs were not looked at, and
			// only said), and resolve-undo stages (git checkout -m).
			{"a name packed four times", `c=$(git -c user.email=a@b -c user.name=a commit-tree HEAD^{tree} -p HEAD -m clean) && m=$(git rev-parse master) && e=$(commit dup) &&
printf '# pack-refs with: peeled fully-peeled sorted \n%s refs/heads/dup\n%s refs/heads/dup\n%s refs/heads/dup\n%s refs/heads/dup\n%s refs/heads/master\n' $c $e $e $c $m > .git/packed-refs && rm -f .git/refs/heads/master &&
test $(git rev-parse dup) = $e`, "refs/heads/dup", "checkout -q dup -- .husky/pre-commit"},
			{"a reflog line git will not resolve", `s=$(commit s) && i=$(git -c user.email=a@b -c user.name=a commit-tree HEAD^{tree} -p HEAD -m index) &&
git stash store -m "WIP on master" $(git -c user.email=a@b -c user.name=a commit-tree $(git rev-parse $s^{tree}) -p HEAD -p $i -m WIP) &&
git stash store -m "WIP on master" $(git -c user.email=a@b -c user.name=a commit-tree HEAD^{tree} -p HEAD -p $i -m WIP2) && echo '@{u}' >> .git/logs/refs/stash`, "held back .git/logs/refs/stash", "stash pop -q; stash pop -q"},
			{"resolve-undo", `m=$(git ls-files -s .husky/pre-commit | cut -c1-6) && h=$(git rev-parse :.husky/pre-commit) &&
printf '0 %s\t.husky/pre-commit\n100755 %s 1\t.husky/pre-commit\n100755 %s 2\t.husky/pre-commit\n100755 %s 3\t.husky/pre-commit\n' $(printf %040d 0) $B $B $B | git update-index --index-info &&
git update-index --cacheinfo $m,$h,.husky/pre-commit`, "dropped the resolve-undo record", "checkout -m -- .husky/pre-commit"},
			{"a name padded", `python3 ` + craft + ` namelen .envrc $B X`, "put back git's index as it was before this +git call", "checkout -q -- .envrc"},
			{"a rename, cherry-picked", `ren && git update-ref refs/heads/feature $MC`, "refs/heads/feature", "cherry-pick feature"},
			{"a rename, reverted", `ren && git update-ref refs/heads/feature $(git commit-tree $TB -p $MC -m x)`, "refs/heads/feature", "revert --no-edit feature"},
			{"a rename, stashed", `ren && I=$(git commit-tree $TB -p $MB -m i) && git stash store -m WIP $(git commit-tree $TC -p $MB -p $I -m WIP)`, "refs/stash", "stash pop -q"},
			{"a rename from a root", `R=$(git commit-tree $(one notes.sh $H) -m root) && git update-ref refs/heads/feature $(git commit-tree $(one notes.sh $B) -p $R -m c)`, "refs/heads/feature", "cherry-pick feature"},
			{"a rename, merged into a branch of the call's", `ren && git update-ref refs/heads/k $(git commit-tree $(git rev-parse HEAD^{tree}) -p $MB -m k) && git update-ref refs/heads/feature $MC`, "refs/heads/feature", "checkout -q k; merge -q --no-edit feature"},
			{"a rename, picked by a rebase", `ren && GIT_SEQUENCE_EDITOR="sed -i 1ibreak" git -c user.email=a@b -c user.name=a rebase -q -i HEAD; echo "pick $MC" > .git/rebase-merge/git-rebase-todo`, "held back .git/rebase-merge/git-rebase-todo", "rebase --continue"},
			{"a subtree strategy's options", `GIT_SEQUENCE_EDITOR="sed -i 1ibreak" git -c user.email=a@b -c user.name=a rebase -q -i HEAD; printf " '--subtree=.husky'" > .git/rebase-merge/strategy_opts`, "rebase-merge/strategy_opts", "rebase --continue"},
			// The fortieth attack run's: a branch that removes the hook
			// and holds its content as src.txt, then changes src.txt; the
			// next call's ordinary commit removes src.txt on master, and the
			// user's cherry-pick follows the rename into the hook.
			{"a rename a later call makes", `H=$(git rev-parse HEAD:.husky/pre-commit) && P=$(printf '#!/bin/sh\necho benign\necho PWNED\n' | git hash-object -w --stdin) &&
export GIT_INDEX_FILE=$TMPDIR/si && git read-tree HEAD && git update-index --force-remove .husky/pre-commit && git update-index --cacheinfo 100755,$H,src.txt &&
S1=$(git -c user.email=a@b -c user.name=a commit-tree $(git write-tree) -p HEAD -m move) && git update-index --cacheinfo 100755,$P,src.txt &&
S2=$(git -c user.email=a@b -c user.name=a commit-tree $(git write-tree) -p $S1 -m tidy) && unset GIT_INDEX_FILE && git update-ref refs/heads/side $S2`, "refs/heads/side", "rm -q src.txt; commit -qm rm; cherry-pick side"},
			// In place where the call may take the file's write bit (with
			// namespaces), else a new file under the name.
			{"the hook's blob rewritten", `f=.git/objects/$(echo $H | cut -c1-2)/$(echo $H | cut -c3-) && w() { python3 -c 'import zlib,sys; d=b"#!/bin/sh\necho PWNED\n"; open(sys.argv[1],"wb").write(zlib.compress(b"blob %d\0"%len(d)+d))' $f; } &&
{ { chmod 644 $f && w && chmod 444 $f; } 2>/dev/null || { rm -f $f && w; }; } && git update-index --cacheinfo 100755,$H,.husky/pre-commit`, "held back .git/objects/" + hook[:2] + "/", "reset -q --hard"},
			{"a pack's index naming the call's blob as the hook's", `P=$(echo $B | git pack-objects -q .git/objects/pack/pack) && i=.git/objects/pack/pack-$P.idx && cat $i > $TMPDIR/idx &&
python3 -c 'import sys,hashlib,struct
p,h=sys.argv[1],bytes.fromhex(sys.argv[2]); d=bytearray(open(p,"rb").read())
d[8:1032]=b"".join(struct.pack(">I",1 if i>=h[0] else 0) for i in range(256)); d[1032:1052]=h
d[-20:]=hashlib.sha1(bytes(d[:-20])).digest(); open(p,"wb").write(d)' $TMPDIR/idx $H && rm -f $i && cp $TMPDIR/idx $i && rm -f .git/objects/$(echo $H | cut -c1-2)/$(echo $H | cut -c3-)`, "held back .git/objects/pack/pack-", "reset -q --hard"},
			{"an am patch", `git format-patch -1 --stdout $(commit am) | amstate`, "held back .git/rebase-apply/0002", "am --skip"},
			{"an am patch's own prefix", `git format-patch --src-prefix=c/ --dst-prefix=c/ -1 --stdout $(commit amc) | amstate`, "held back .git/rebase-apply/0002", "am --skip"},
			{"an am patch, its directory unreadable", `git format-patch --src-prefix=c/ --dst-prefix=c/ -1 --stdout $(commit amr) | amstate && chmod 311 .git/rebase-apply`, "held back .git/rebase-apply/0002", "am --skip"},
			{"an am patch in base64", `{ printf 'From: a <a@b>\nSubject: [PATCH] b64\nMIME-Version: 1.0\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n'
git format-patch -1 --stdout $(commit b64) | sed '1,/^$/d' | base64; } | amstate`, "held back .git/rebase-apply/0002", "am --skip"},
			{"am's --directory, the call's", `printf 'From: a <a@b>\nSubject: [PATCH] d\n\n---\ndiff --git a/post-commit b/post-commit\nnew file mode 100755\n--- /dev/null\n+++ b/post-commit\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo PWNED\n' | amstate && printf " '--directory=.husky'" > .git/rebase-apply/apply-opt`, "held back " + j.project + "/.git/rebase-apply/apply-opt", "am --skip"},
			{"am's --directory, the user's", `printf 'From: a <a@b>\nSubject: [PATCH] d\n\n---\ndiff --git a/post-commit b/post-commit\nnew file mode 100755\n--- /dev/null\n+++ b/post-commit\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo PWNED\n' > .git/rebase-apply/0002 && echo 2 > .git/rebase-apply/last`, "held back .git/rebase-apply/0002", "am --skip"},
			// git 2.46's am --retry applies the current patch again.
			{"am's current patch", `git format-patch -1 --stdout $(commit cur) | amstate && git diff HEAD $(commit cur2) > .git/rebase-apply/patch`, "held back .git/rebase-apply/patch", "am --skip"},
			{"a rebase --apply's From line", `printf 'From %s Mon Sep 17 00:00:00 2001\n' $(commit from) | amstate && : > .git/rebase-apply/rebasing && git rev-parse HEAD > .git/rebase-apply/original-commit`, "held back .git/rebase-apply/0002", "am --skip"},
		} {
			if strings.HasSuffix(c.name, "the user's") {
				// A git am of the user's, stopped: its apply-opt is not the call's.
				j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
printf 'From: a <a@b>\nSubject: [PATCH] bad\n\n---\ndiff --git a/src.txt b/src.txt\n--- a/src.txt\n+++ b/src.txt\n@@ -1 +1 @@\n-nothere\n+x\n' > .git/bad
git -c user.email=a@b -c user.name=a am -q --directory=.husky .git/bad >/dev/null 2>&1; rm .git/bad; test -s .git/rebase-apply/apply-opt`)
				time.Sleep(100 * time.Millisecond) // past the slack the check gives a change's time
			}
			out, code := j.launch(t, gitWrite, "jail-sh", evil+c.script)
			if !strings.Contains(out, c.said) && code == 3 && strings.Contains(out, "error: exit status ") {
				// The set-up itself failed (once in CI, at 494e763, "a rename
				// from a root" exited 128 with nothing said): say what it
				// printed and the refs, then run the case once more; the
				// checks below are the second run's.
				t.Logf("namespaces %v, %s: the set-up failed (exit %d), once more:\n%s\nrefs:\n%s", j.ns, c.name, code, out, git("for-each-ref"))
				out, code = j.launch(t, gitWrite, "jail-sh", evil+c.script)
			}
			if !strings.Contains(out, c.said) {
				// The exit status tells a set-up that failed (the script's)
				// from a check that missed.
				t.Errorf("namespaces %v, %s: want %q in (the call's exit status %d):\n%s", j.ns, c.name, c.said, code, out)
			}
			if strings.Contains(out, "could not look at what this +git call committed") && c.name != "a commit git cannot walk" {
				t.Errorf("namespaces %v, %s: held for what the check could not look at, not for what it found:\n%s", j.ns, c.name, out)
			}
			if got := git("replace", "-l"); got != "" {
				t.Errorf("namespaces %v, %s: replace refs after the call: %s", j.ns, c.name, got)
			}
			if got := git("rev-parse", "HEAD"); got != head {
				t.Errorf("namespaces %v, %s: HEAD is %s after the call, want %s:\n%s", j.ns, c.name, got, head, out)
			}
			if got := git("rev-parse", ":.husky/pre-commit"); got != hook {
				t.Errorf("namespaces %v, %s: the index gives the hook %s, want %s", j.ns, c.name, got, hook)
			}
			// The user's own git, unconfined, writes no hook of the call's.
			for cmd := range strings.SplitSeq(c.user, ";") {
				git(strings.Fields(cmd)...)
			}
			for _, f := range []string{hookFile, filepath.Join(j.project, ".envrc")} {
				if b, _ := os.ReadFile(f); strings.Contains(string(b), "PWNED") {
					t.Errorf("namespaces %v, %s: the user's git %s wrote the call's %s:\n%s", j.ns, c.name, c.user, f, out)
				}
			}
			if _, err := os.Lstat(filepath.Join(j.project, ".husky/post-commit")); err == nil {
				t.Errorf("namespaces %v, %s: the user's git %s wrote the call's post-commit hook:\n%s", j.ns, c.name, c.user, out)
			}
			// Back as it was for the next case.
			j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git rebase --abort 2>/dev/null; git am --abort 2>/dev/null; git cherry-pick --abort 2>/dev/null; git revert --abort 2>/dev/null; git merge --abort 2>/dev/null; rm -rf .git/rebase-apply; git checkout -q master 2>/dev/null; git stash clear; rm -f .git/ORIG_HEAD .git/evilfile .husky/post-commit .git/info/grafts
git reset -q --hard `+head+`; git for-each-ref --format='%(refname)' refs/heads refs/tags | grep -v '^refs/heads/master$' | xargs -r -n1 git update-ref -d; rm -f .git/refs/heads/junk`)
		}
		if held := git("for-each-ref", "--format=%(refname)", "refs/loopguard-held/"); held == "" {
			t.Errorf("namespaces %v: no commit of the call's kept", j.ns)
		}
		// The index's cached tree of .husky made a tree holding the call's
		// hook, its entries as they were: the user's next commit took it.
		out, _ := j.launch(t, gitWrite, "jail-sh", evil+`T=$(printf '100755 blob %s\tpre-commit\n' $B | git mktree) && python3 `+craft+` tree .husky $T`)
		time.Sleep(1100 * time.Millisecond) // past the index's racy second
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; echo y >> src.txt && git -c user.email=a@b -c user.name=a commit -qam after`)
		if got := git("rev-parse", "HEAD:.husky/pre-commit"); got != hook {
			t.Errorf("namespaces %v: the user's commit after the call took the call's cached tree (the hook %s, want %s):\n%s", j.ns, got, hook, out)
		}
		j.unconfined(t, `git reset -q --hard `+head)
		// Controls: a commit of a source change, and of the user's own
		// staged change to the hook, are the call's to make.
		out, _ = j.launch(t, gitWrite, "jail-sh", `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; echo more >> src.txt && git -c user.email=a@b -c user.name=a commit -qam source`)
		if got := git("log", "-1", "--format=%s"); got != "source" || strings.Contains(out, "loopguard:") {
			t.Errorf("namespaces %v (control): a commit of a source change: %q\n%s", j.ns, got, out)
		}
		// A repack of the call's (git's own pack, loose objects gone) is
		// the call's to make.
		out, _ = j.launch(t, gitWrite, "jail-sh", `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git repack -q -a -d && git prune-packed`)
		if strings.Contains(out, "loopguard:") {
			t.Errorf("namespaces %v (control): a repack: %s", j.ns, out)
		}
		if got := git("cat-file", "-p", "HEAD:.husky/pre-commit"); !strings.Contains(got, "benign") {
			t.Errorf("namespaces %v (control): the hook after a repack: %s", j.ns, got)
		}
		// A git am the call stopped, whose next patch is a source change:
		// the user's --skip applies it.
		out, code := j.launch(t, gitWrite, "jail-sh", evil+`echo am >> src.txt && git -c user.email=a@b -c user.name=a commit -qam amsource && git format-patch -1 --stdout > $TMPDIR/ok && git reset -q --hard HEAD^ && amstate < $TMPDIR/ok`)
		if _, err := os.Stat(filepath.Join(j.project, ".git/rebase-apply/0002")); err != nil {
			// Seen once under load (2026-12-06): say what the call said.
			t.Fatalf("namespaces %v (control): no git am stopped after the call (exit status %d, %v):\n%s", j.ns, code, err, out)
		}
		j.unconfined(t, `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git -c user.email=a@b -c user.name=a am -q --skip`)
		if got := git("log", "-1", "--format=%s"); got != "amsource" || strings.Contains(out, "loopguard:") {
			t.Errorf("namespaces %v (control): git am --skip of the call's source patch: %q\n%s", j.ns, got, out)
		}
		j.unconfined(t, `printf '#!/bin/sh\necho mine\n' > .husky/pre-commit && git add .husky/pre-commit`)
		out, _ = j.launch(t, gitWrite, "jail-sh", `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git -c user.email=a@b -c user.name=a commit -qm mine`)
		if got := git("log", "-1", "--format=%s"); got != "mine" || strings.Contains(out, "loopguard:") {
			t.Errorf("namespaces %v (control): a commit of the user's staged hook: %q\n%s", j.ns, got, out)
		}
	})
}
