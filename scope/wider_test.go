package scope

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
)

// widerEnv is a project with fake programs on a trusted PATH, and the
// Bash call of a command there.
func widerEnv(t *testing.T) (shellparse.Env, func(cmd string) Call, string) {
	t.Helper()
	root := realDir(t, t.TempDir())
	sys := filepath.Join(root, "usr", "bin")
	home := filepath.Join(root, "home")
	proj := filepath.Join(home, "proj")
	for _, d := range []string{sys, filepath.Join(proj, "sub"), filepath.Join(proj, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"go", "git", "npm", "cargo", "make", "rm", "curl", "bash", "python3"} {
		fakeExe(t, sys, n)
	}
	env := shellparse.Env{Cwd: proj, ProjectDir: proj, Path: sys, Trusted: []string{sys}, Home: home}
	return env, func(cmd string) Call {
		res := shellparse.Analyze(cmd, env)
		return Call{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: proj, ProjectDir: proj, ProjectNamed: true, Home: home, Shell: &res}
	}, sys
}

// TestWider: the rule one step wider than the exact command (program,
// subcommand, *) is offered for ordinary build, test and git work, and
// never where its wildcard could take a DANGER form, code, a download, or
// where the program is a shell, an interpreter or a file writer. Each
// refused row has a control that is offered.
func TestWider(t *testing.T) {
	env, bash, sys := widerEnv(t)
	proj := env.ProjectDir
	danger := func(argv []string) bool { return len(present.ArgvDanger(argv, proj, proj)) > 0 }
	for _, row := range []struct{ cmd, want string }{
		{"go test -v ./...", "Bash(go test *)@" + filepath.Join(sys, "go")},
		{"go build ./...", "Bash(go build *)@" + filepath.Join(sys, "go")},
		{"go test", "Bash(go test *)@" + filepath.Join(sys, "go")},
		{"git commit -m y", "Bash(git commit *)@" + filepath.Join(sys, "git")},
		{"git add x", "Bash(git add *)@" + filepath.Join(sys, "git")},
		{"rm -rf build", ""},              // a file writer: no wildcard
		{"git reset HEAD x", ""},          // git reset * would cover --hard
		{"git checkout main", ""},         // ... git checkout -- .
		{"git clean -n", ""},              // ... git clean NAME
		{"git push origin main", ""},      // the network, and --force
		{"npm install lodash", ""},        // a download: every name another package
		{"go generate ./...", ""},         // a subcommand that runs code
		{"bash x.sh", ""},                 // a shell
		{"python3 x.py", ""},              // an interpreter
		{"curl -O https://x.example", ""}, // no subcommand, and the network
		{"go test ./... > out.txt", ""},   // a redirect
		{"go -C sub test ./...", ""},      // no subcommand first
		{"go test -v ./... && id", ""},    // a chain
	} {
		r, err := Wider(bash(row.cmd), env, danger)
		switch {
		case row.want == "" && err == nil:
			t.Errorf("%s: offered %s", row.cmd, r)
		case row.want == "" && !errors.Is(err, ErrNoNarrowRule):
			t.Errorf("%s: %v", row.cmd, err)
		case row.want != "" && (err != nil || withoutContent(r).String() != row.want):
			t.Errorf("%s: got %v %v, want %s", row.cmd, r, err, row.want)
		}
	}
	if _, err := Wider(bash("go test -v ./..."), env, nil); err == nil {
		t.Error("offered with no danger check")
	}
	// Not a Bash call: a file rule is the file (Narrowest), never wider.
	edit := Call{Tool: "Edit", Input: map[string]any{"file_path": filepath.Join(proj, "src", "a.go")}, Cwd: proj, ProjectDir: proj, Home: env.Home}
	if r, err := Wider(edit, env, danger); !errors.Is(err, ErrNoNarrowRule) {
		t.Errorf("an Edit call: %v %v", r, err)
	}
	// What the wider rule of go test -v ./... covers, and what it never
	// does: the options the table calls code or a write.
	r, err := Wider(bash("go test -v ./..."), env, danger)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, covered := range map[string]bool{
		"go test ./...":                 true,
		"go test -run TestX ./pkg":      true,
		"go test -exec evil ./...":      false,
		"go test -toolexec evil ./...":  false,
		"go test -vettool=evil ./...":   false,
		"go test -o /tmp/x ./...":       false,
		"go build ./...":                false,
		"go test ./... > /tmp/out":      false,
		"go test -ldflags=-X=a=b ./...": true,
	} {
		if err := Match(r, bash(cmd)); (err == nil) != covered {
			t.Errorf("%s covers %q: %v, want covered=%v", r, cmd, err, covered)
		}
	}
	if _, err := Wider(bash("git reset HEAD x"), env, danger); err == nil || !strings.Contains(err.Error(), "DANGER") {
		t.Errorf("git reset: %v, want the DANGER form named", err)
	}
}

// TestNarrowestParts: a chain's parts each get their narrowest rule,
// judged where the chain's cd moved; a part that cannot be granted on its
// own gives the chain none, and names the part.
func TestNarrowestParts(t *testing.T) {
	env, bash, sys := widerEnv(t)
	sub := filepath.Join(env.ProjectDir, "sub")
	rules, err := NarrowestParts(bash("cd sub && go test ./..."), env)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, withoutContent(r).String())
	}
	if want := []string{"Bash(cd sub)@builtin", "Bash(go test ./...)@" + filepath.Join(sys, "go")}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	c := bash("cd sub && go test ./...")
	if pc, _ := Part(c, env, 1); pc.Cwd != sub || Match(rules[1], pc) != nil {
		t.Errorf("part 2 judged in %s, want %s: %v", pc.Cwd, sub, Match(rules[1], pc))
	}
	for _, cmd := range []string{"go test ./... && bash -c id", "ls *.go && go test", "go test ./...", "echo $(id) && go test"} {
		if _, err := NarrowestParts(bash(cmd), env); !errors.Is(err, ErrNoNarrowRule) {
			t.Errorf("%s: %v, want no rules", cmd, err)
		}
	}
	if _, err := NarrowestParts(bash("go vet ./... && python3 x.py"), env); err == nil || !strings.Contains(err.Error(), "`python3 x.py`") {
		t.Errorf("the part is not named: %v", err)
	}
}
