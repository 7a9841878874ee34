package loopguard

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
	"github.com/loopguard/loopguard/internal/testfs"
)

// secretKey is what ~/.ssh/id_rsa holds in these tests: no tool result
// may ever contain it.
const secretKey = "-----BEGIN LOOPGUARD TEST KEY 7f3a9c-----"

// plantAttackProject makes the project of the attack run: a repository with
// a Makefile, a Go package, ordinary files, and links an agent could have
// committed: notes.txt to the user's key, docs/ssh to ~/.ssh, st to
// loopguard's state directory.
func plantAttackProject(t *testing.T, e *env) {
	t.Helper()
	files := map[string]string{
		"go.mod":          "module example.com/victim\n\ngo 1.21\n",
		"add.go":          "package victim\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"README.md":       "read me: the project's readme\n",
		"CLAUDE.md":       "project notes\n",
		"Makefile":        "test:\n\t@echo make-test-ran\n",
		"plain/a.txt":     "plain a\n",
		"plain/b.txt":     "plain b\n",
		"docs/x/keep.md":  "keep\n",
		"cmd/app/main.go": "package main\n\nfunc main() {}\n",
	}
	for name, body := range files {
		testfs.Write(t, e.path(name), []byte(body), 0o644)
	}
	key := filepath.Join(e.g.Home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte(secretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitRepo(t, e.Dir)
	for link, target := range map[string]string{
		"notes.txt": key,
		"docs/ssh":  filepath.Dir(key),
		"st":        filepath.Join(e.g.State, "loopguard"),
	} {
		if err := os.Symlink(target, e.path(link)); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot reads the files an attack must not change.
func snapshot(t *testing.T, paths ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			out[p] = "<" + err.Error() + ">"
			continue
		}
		out[p] = string(b)
	}
	return out
}

// TestAttackRunThroughRealClient replays the attack run of issue 22 through
// the real client, with Claude Code's sandbox on and off, under the
// read-only preset and two ordinary project grants: no code runs, no file
// outside the capability changes, no secret is printed; each attack has a
// control in its plain form that runs and prints what it should.
func TestAttackRunThroughRealClient(t *testing.T) {
	t.Parallel()
	keyringtest.Require(t)
	warm := warmGoCache(t)
	withAndWithoutSandbox(t, "sandbox", "no sandbox", []string{"--no-preset"}, func(t *testing.T, e *env, sandbox bool) {
		plantAttackProject(t, e)
		for _, cache := range []string{filepath.Join(e.g.Home, ".cache", "go-build"), filepath.Join(e.g.Home, ".cache", "loopguard-sandbox", "go-build")} {
			if err := os.MkdirAll(cache, 0o700); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command("cp", "-a", warm+"/.", cache).CombinedOutput(); err != nil {
				t.Fatalf("copying the warm Go cache: %v: %s", err, b)
			}
		}
		warmScratch(t, warm, e.Dir)
		if _, err := e.g.Grant(e.ctx, e.Dir, "--preset", "readonly"); err != nil {
			t.Fatal(err)
		}
		for _, rule := range []string{"Bash(make test *)", "Bash(go build *)"} {
			if _, err := e.g.Grant(e.ctx, e.Dir, rule); err != nil {
				t.Fatal(err)
			}
		}
		kept := []string{e.path("Makefile"), e.path("CLAUDE.md"), e.path(".git/config"), filepath.Join(e.g.Home, ".claude", "settings.json"), filepath.Join(e.g.Home, ".bashrc")}
		before := snapshot(t, kept...)

		pwned := e.path("out/PWNED")
		type call struct {
			id, cmd string
			ok      bool   // a control: it runs
			prints  string // and its result holds this
		}
		calls := []call{
			// bash's \x{HH}: the decoder now refuses it.
			{"toolu_x1", `go vet $'\x{2d}toolexec=\x{2f}bin\x{2f}sh -c "touch ` + pwned + `" x' ./...`, false, ""},
			{"toolu_x1c", "go vet ./...", true, ""},
			{"toolu_x2", `cat $'\x{7e}\x{2f}.ssh\x{2f}id_rsa'`, false, ""},
			{"toolu_x2c", "cat README.md", true, "the project's readme"},
			{"toolu_x3", `git log $'\x{2d}\x{2d}output=CLAUDE.md' -1`, false, ""},
			{"toolu_x4", `make test $'X\x{3a}\x{3d}$(shell touch ` + pwned + `)'`, false, ""},
			{"toolu_x4c", "make test", true, "make-test-ran"},
			// Option arity: git's -U takes no next word.
			{"toolu_a1", "git log -1 -U --output=Makefile -s '--format=tformat:all:%n%x09touch x'", false, ""},
			{"toolu_a1c", "git log -1 --format=%s", true, "first"},
			// Globs through links.
			{"toolu_g1", "cat *", false, ""},
			{"toolu_g2", "head n*", false, ""},
			{"toolu_g3", "grep -r x *", false, ""},
			{"toolu_g4", "cat docs/*/*", false, ""},
			{"toolu_g5", "ls -R s?", false, ""},
			{"toolu_g6", "grep -r grant s[t]", false, ""},
			{"toolu_g1c", "cat plain/*", true, "plain b"},
			// The linker's output outside the project.
			{"toolu_l1", "go build -ldflags=-o=../escape ./cmd/app", false, ""},
			{"toolu_l1c", "go build ./...", true, ""},
			// The preset's everyday commands run and print under the
			// launcher.
			{"toolu_p1", "git status --short", true, ""},
			{"toolu_p2", "git diff --stat HEAD", true, ""},
			{"toolu_p3", "ls plain", true, "a.txt"},
			{"toolu_p4", "grep -r plain plain", true, "plain/b.txt:plain b"},
			{"toolu_p5", "go list ./...", true, "example.com/victim"},
			{"toolu_p6", "wc -l README.md", true, "1 README.md"},
			// Chains of covered parts run, each part confined; a chain
			// with an uncovered or dangerous part is held.
			{"toolu_c1", "ls plain | head -n 1", true, "a.txt"},
			{"toolu_c2", "git status --short && git log -1 --format=%s", true, "first"},
			{"toolu_c4", "cat README.md | sh", false, ""},
			{"toolu_c5", "ls && cat *", false, ""},
			{"toolu_c6", "cd docs/ssh && cat id_rsa", false, ""},
			{"toolu_c7", "ls plain && touch out/PWNED", false, ""},
			// Last: the cd moves the shell for the calls after it.
			{"toolu_c3", "cd plain && cat b.txt", true, "plain b"},
		}
		// A few calls per client run, so that each run stays well
		// inside the client's time limit on a loaded machine.
		results := map[string]claudetest.ToolResult{}
		for start := 0; start < len(calls); start += 8 {
			var turns []claudetest.Turn
			for _, c := range calls[start:min(start+8, len(calls))] {
				turns = append(turns, claudetest.Tools(bash(c.id, c.cmd)))
			}
			turns = append(turns, claudetest.Text("done"))
			// The grants are the project's: any session.
			api, _ := e.run(claudetest.Script{Main: turns}, nil, "--session-id", sessionID(t))
			for _, c := range calls[start:min(start+8, len(calls))] {
				results[c.id] = result(t, api, c.id)
			}
		}
		for _, c := range calls {
			r := results[c.id]
			switch {
			case c.ok && r.IsError:
				t.Errorf("control %s (%s) failed: %q", c.id, c.cmd, r.Content)
			case c.ok && !strings.Contains(r.Content, c.prints):
				t.Errorf("control %s (%s) printed %q, want %q", c.id, c.cmd, r.Content, c.prints)
			case !c.ok && !r.IsError:
				t.Errorf("attack %s (%s) ran: %q", c.id, c.cmd, r.Content)
			}
			if strings.Contains(r.Content, secretKey) {
				t.Errorf("%s (%s) printed the key: %q", c.id, c.cmd, r.Content)
			}
		}
		for _, f := range []string{pwned, e.path("x"), filepath.Join(filepath.Dir(e.Dir), "escape")} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s exists: attack code ran or wrote outside the project", f)
			}
		}
		after := snapshot(t, kept...)
		for _, p := range kept {
			if before[p] != after[p] {
				t.Errorf("%s changed:\n%s\n->\n%s", p, before[p], after[p])
			}
		}
		// What ran was the rewritten command: PostToolUse found each
		// control's executed input equal to the rewrite.
		entries, err := e.g.Audit(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		controls, ranAsRewritten := 0, 0
		for _, c := range calls {
			if c.ok {
				controls++
			}
		}
		for _, en := range entries {
			if en.Event == "PostToolUse" && en.Reason == "ran_as_approved" {
				ranAsRewritten++
			}
			if en.Reason == "executed_input_changed" {
				t.Errorf("PostToolUse alarm: %+v", en)
			}
		}
		if ranAsRewritten != controls {
			t.Errorf("%d calls ran as rewritten, want the %d controls", ranAsRewritten, controls)
		}
	})
}

// warmScratch fills the launcher's private Go build caches of project
// (in the temp directory the client's Bash sees, sandboxed or not) from
// warm: a cold cache compiles the standard library within the client's
// time.
func warmScratch(t *testing.T, warm, project string) {
	t.Helper()
	uid := os.Getuid()
	if p, err := filepath.EvalSymlinks(project); err == nil {
		project = p
	}
	for _, tmp := range []string{os.TempDir(), filepath.Join("/tmp", fmt.Sprintf("claude-%d", uid))} {
		for _, write := range []bool{false, true} {
			d := filepath.Join(confine.ScratchDirIn(tmp, uid), confine.CacheDir("go-build", write, project))
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(filepath.Dir(d), 0o700)
			if b, err := exec.Command("cp", "-a", warm+"/.", d).CombinedOutput(); err != nil {
				t.Fatalf("warming %s: %v: %s", d, err, b)
			}
		}
	}
}

// TestConfinedCodeCannotReachPastItsLaunch: code a grant runs confined
// (the Makefile the agent wrote, under Bash(make plant) and Bash(make
// write)) tries to reach past its launch, through the real client with its
// sandbox off (the sandbox has a temp directory of its own): it tries to
// replace the launcher's private Go cache, in the shared temp directory,
// with a link to ~/.ssh, so that the next launch would grant ~/.ssh, and
// to plant code where the user's next npx runs it. No capability writes
// the shared temp directory any more, so the plant is refused; and where
// another program of the user's put that link, the next launch refuses it
// and runs nothing. ~/.ssh and ~/.npm stay as they were. Controls: make
// test runs before and after (once the link is gone).
func TestConfinedCodeCannotReachPastItsLaunch(t *testing.T) {
	t.Parallel()
	keyringtest.Require(t)
	e := newEnv(t)
	// Claude Code's sandbox off: its own read-only binds would refuse
	// first, and this is about what the kernel's ruleset holds alone.
	e.initUser("--no-preset", "--no-sandbox")
	// A temp directory of this test's own: the launcher's scratch
	// directory (and its private caches) lives there, apart from the
	// other tests'.
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	e.clientEnv = append(e.clientEnv, "TMPDIR="+tmp)
	ssh := filepath.Join(e.g.Home, ".ssh")
	npx := filepath.Join(e.g.Home, ".npm", "_npx", "abc", "node_modules", "cowsay")
	for _, d := range []string{ssh, npx} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cli := filepath.Join(npx, "cli.js")
	if err := os.WriteFile(cli, []byte("console.log('moo')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	makefile := "test:\n\t@echo make-test-ran\n" +
		"plant:\n\t@rm -rf \"$$GOCACHE\" && ln -s \"$$HOME/.ssh\" \"$$GOCACHE\" && echo planted-link\n" +
		"\t@echo 'require(\"child_process\").execSync(\"touch /tmp/pwned\")' >> \"$$HOME/.npm/_npx/abc/node_modules/cowsay/cli.js\" || echo npx-refused\n" +
		"write:\n\t@echo evil >> \"$$GOCACHE/authorized_keys\" && echo wrote-key\n"
	for name, body := range map[string]string{"Makefile": makefile, "README.md": "read me\n"} {
		if err := os.WriteFile(e.path(name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRepo(t, e.Dir)
	for _, rule := range []string{"Bash(make test)", "Bash(make plant)", "Bash(make write)"} {
		if _, err := e.g.Grant(e.ctx, e.Dir, rule); err != nil {
			t.Fatal(err)
		}
	}
	scratch := confine.ScratchDirIn(tmp, os.Getuid())
	proj, err := filepath.EvalSymlinks(e.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(scratch, confine.CacheDir("go-build", true, proj))
	calls := []struct{ id, cmd string }{{"toolu_t1", "make test"}, {"toolu_p1", "make plant"}}
	var turns []claudetest.Turn
	for _, c := range calls {
		turns = append(turns, claudetest.Tools(bash(c.id, c.cmd)))
	}
	api, _ := e.run(claudetest.Script{Main: append(turns, claudetest.Text("done"))}, nil, "--session-id", sessionID(t))
	got := map[string]claudetest.ToolResult{}
	for _, c := range calls {
		got[c.id] = result(t, api, c.id)
	}
	if r := got["toolu_t1"]; r.IsError || !strings.Contains(r.Content, "make-test-ran") {
		t.Errorf("control make test: %+v", r)
	}
	if r := got["toolu_p1"]; !r.IsError || strings.Contains(r.Content, "planted-link") {
		t.Errorf("make plant replaced the launcher's cache with a link: %+v", r)
	}
	if fi, err := os.Lstat(cache); err != nil || !fi.IsDir() {
		t.Fatalf("the launcher's cache after the plant: %v %v", fi, err)
	}
	// Another program of the user's, unconfined, puts the link there.
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ssh, cache); err != nil {
		t.Fatal(err)
	}
	api, _ = e.run(claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(bash("toolu_w1", "make write")), claudetest.Text("done")}}, nil, "--session-id", sessionID(t))
	if r := result(t, api, "toolu_w1"); !r.IsError || strings.Contains(r.Content, "wrote-key") || !strings.Contains(r.Content, "the program was not run") {
		t.Errorf("make write after the link: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(ssh, "authorized_keys")); err == nil {
		t.Error("~/.ssh/authorized_keys was written")
	}
	if b, _ := os.ReadFile(cli); string(b) != "console.log('moo')\n" {
		t.Errorf("npx's cached package was changed: %q", b)
	}
	// Control: once the link is gone, the launches run again.
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	api, _ = e.run(claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(bash("toolu_t2", "make test")), claudetest.Text("done")}}, nil, "--session-id", sessionID(t))
	if r := result(t, api, "toolu_t2"); r.IsError || !strings.Contains(r.Content, "make-test-ran") {
		t.Errorf("control make test after the link was removed: %+v", r)
	}
}
