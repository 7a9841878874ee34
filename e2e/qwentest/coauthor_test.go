package qwentest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// TestQwenCoAuthorRewrite: under init's defaults (the jail grant with
// them), Qwen Code adds "Co-authored-by: Qwen-Coder
// <qwen-coder@alibabacloud.com>" into the last -m "..." its expression
// finds in a git commit, after the hook. The ninety-second attack run had
// a human approve `git commit '-m "fix: print' "src/main.go"` (a commit of
// src/main.go, as bash reads it), in which that "..." starts inside bash's
// single quotes: the insertion landed unquoted, and its line's
// `<EMAIL>"src/main.go"` emptied src/main.go (a file named like the e-mail
// in the cwd, which one project write makes). That command is refused now,
// before any approval, and the file is left whole. Control: an ordinary
// `git commit -m "fix: print" src/main.go`, approved, runs: the commit is
// made, the file committed as it was, and its message is the approved one
// (init turns Qwen Code's rewrite off: general.gitCoAuthor).
func TestQwenCoAuthorRewrite(t *testing.T) {
	for _, c := range []struct {
		name, cmd string
		attack    bool
	}{
		{"attack", `git commit '-m "fix: print' "src/main.go"`, true},
		{"control", `git commit -m "fix: print" src/main.go`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := qwen.NewJailedEnv(t)
			main := filepath.Join(e.Dir, "src", "main.go")
			git := func(args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = e.Dir
				cmd.Env = append(os.Environ(), "HOME="+e.G.Home, "GIT_CONFIG_NOSYSTEM=1")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
				return string(out)
			}
			if err := os.WriteFile(filepath.Join(e.Dir, "qwen-coder@alibabacloud.com"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(main), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(main, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git("init", "-q")
			git("config", "user.email", "a@b.c")
			git("config", "user.name", "a")
			git("add", "src/main.go")
			git("commit", "-q", "-m", "init")
			changed := "package main\n\nfunc main() { println(1) }\n"
			if err := os.WriteFile(main, []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}
			pending := 0
			api := e.RunAnyExit(agenttest.Script{
				Commands: []string{c.cmd, c.cmd},
				Between: func(i int, _ string) {
					if i != 0 {
						return
					}
					if _, err := e.G.OnlyPending(e.Ctx); err != nil {
						return
					}
					pending++
					if err := e.ApproveOnly(); err != nil {
						t.Error(err)
					}
				},
			})
			out := api.Outputs()
			if b, err := os.ReadFile(main); err != nil || string(b) != changed {
				t.Errorf("src/main.go after the calls: %q (%v), want it as it was", b, err)
			}
			log := git("log", "--format=%B")
			if c.attack {
				if pending != 0 || len(out) == 0 || !strings.Contains(out[0], "malformed_input") || !strings.Contains(out[0], "Co-authored-by") {
					t.Errorf("the attack: %d held, outputs %q; want it refused before any approval", pending, out)
				}
				if strings.Contains(log, "fix: print") {
					t.Errorf("the attack made a commit: %q", log)
				}
				return
			}
			if pending != 1 || !strings.Contains(log, "fix: print") || git("status", "--porcelain", "src/main.go") != "" {
				t.Errorf("control: %d held, log %q, outputs %q; want the approved commit of src/main.go", pending, log, out)
			}
			// init turned Qwen Code's rewrite off: the message is the
			// approved one, byte for byte.
			if strings.Contains(log, "Co-authored-by") {
				t.Errorf("control: the commit's message was rewritten: %q", log)
			}
		})
	}
}
