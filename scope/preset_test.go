package scope

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/shellparse"
)

// TestPresetRules: every rule of every preset parses and passes Dangerous,
// and PresetOf knows them pinned or not.
func TestPresetRules(t *testing.T) {
	for _, name := range PresetNames() {
		rules, err := Preset(name, "/home/u")
		if err != nil || len(rules) == 0 {
			t.Fatalf("%s: %d rules, %v", name, len(rules), err)
		}
		texts, _ := presetTexts(name)
		for i, r := range rules {
			if r.String() != texts[i] {
				t.Errorf("preset %s: %q is not canonical (%q)", name, texts[i], r.String())
			}
			if PresetOf(r) != name {
				t.Errorf("PresetOf(%s) = %q", r, PresetOf(r))
			}
			pinned, _ := Parse(r.String() + "@/usr/bin/x")
			if PresetOf(pinned) != name {
				t.Errorf("PresetOf(%s) = %q", pinned, PresetOf(pinned))
			}
		}
	}
	if r, _ := Parse("Bash(cat -n *)"); PresetOf(r) != "" {
		t.Error("a rule outside the preset is the preset's")
	}
	if _, err := Preset("nosuch", ""); err == nil {
		t.Error("unknown preset")
	}
	for _, bad := range []string{"Bash(less *)", "Bash(find -L *)", "Bash(env *)", "Bash(sed *)"} {
		r, _ := Parse(bad)
		if PresetOf(r) != "" {
			t.Errorf("%s is in a preset", bad)
		}
	}
}

// TestMatchPreset: a preset rule covers reading in the project only.
func TestMatchPreset(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	_ = os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	_ = os.Symlink(root, filepath.Join(proj, "up"))
	_ = os.Symlink(filepath.Join(root, "absent", "x"), filepath.Join(proj, "dangle"))
	r, _ := Parse("Bash(cat *)@/usr/bin/cat")
	call := func(cwd string, words ...Word) Call {
		res := shellparse.Result{Verdict: shellparse.Simple, Executable: "/usr/bin/cat", Argv: append([]shellparse.Word{{Value: "cat"}}, words...)}
		return Call{Tool: "Bash", Cwd: cwd, ProjectDir: proj, ProjectNamed: true, Shell: &res}
	}
	w := func(v string) Word { return Word{Value: v} }
	g := func(v string) Word { return Word{Value: v, Glob: true} }
	for _, c := range []struct {
		name string
		call Call
		ok   bool
	}{
		{"file in the project", call(proj, w("src/a.go")), true},
		{"no operand", call(proj), true},
		{"option", call(proj, w("-n"), w("README")), true},
		{"glob in the project", call(proj, g("src/*.go")), true},
		{"from a subdir, up to the root", call(filepath.Join(proj, "src"), w("../README")), true},
		{"dotdot out", call(proj, w("../x")), false},
		{"absolute out", call(proj, w("/etc/passwd")), false},
		{"option value out", call(proj, w("--file=/etc/passwd")), false},
		{"attached value out", call(proj, w("-f/etc/passwd")), false},
		{"symlink out", call(proj, w("up/secret")), false},
		{"dangling symlink out", call(proj, w("dangle")), false},
		{"in and out through ..", call(proj, w("up/proj/../secret")), false},
		{"dot glob", call(proj, g(".*/x")), false},
		{"cwd outside", call(root, w("x")), false},
		{"no project", Call{Tool: "Bash", Cwd: proj, Shell: call(proj).Shell}, false},
		// The project only the call's cwd says (an agent's host that names
		// none; Gemini's dir_path chooses the cwd): / would make every
		// file "in the project".
		{"project from the cwd", Call{Tool: "Bash", Cwd: "/", ProjectDir: "/", Shell: call("/", w("etc/passwd")).Shell}, false},
		{"control: named project /", Call{Tool: "Bash", Cwd: "/", ProjectDir: "/", ProjectNamed: true, Shell: call("/", w("etc/passwd")).Shell}, true},
	} {
		err := Match(r, c.call)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want covered %t", c.name, err, c.ok)
		}
		if err != nil && !c.ok && ReasonOf(err) != ReasonPathEscapes {
			t.Errorf("%s: reason %s, want %s", c.name, ReasonOf(err), ReasonPathEscapes)
		}
	}
	// Control: the same words under a rule that is not the preset's.
	other, _ := Parse("Bash(cat -n *)@/usr/bin/cat")
	if err := Match(other, call(proj, w("-n"), w("/etc/hostname"))); err != nil && strings.Contains(err.Error(), "preset") {
		t.Errorf("a rule outside the preset was narrowed as the preset's: %v", err)
	}
}

type Word = shellparse.Word

// TestPresetFollowsNoLink runs the real programs: a symlink in the project
// takes grep -R and diff -r outside it (the test first shows they do read
// the secret there), so a preset rule does not cover them; the same
// programs without the following option are covered and do not reach it.
func TestPresetFollowsNoLink(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	for _, d := range []string{"a", "b", filepath.Join("..", "out"), filepath.Join("..", "other")} {
		if err := os.MkdirAll(filepath.Join(proj, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "out", "key"), []byte("TOPSECRET\n"), 0o600))
	must(os.WriteFile(filepath.Join(root, "other", "key"), []byte("x\n"), 0o600))
	must(os.Symlink(filepath.Join(root, "out"), filepath.Join(proj, "a", "link")))
	must(os.Symlink(filepath.Join(root, "other"), filepath.Join(proj, "b", "link")))
	for _, c := range []struct {
		argv   []string
		covers bool
	}{
		{[]string{"grep", "-R", "TOPSECRET", "."}, false},
		{[]string{"grep", "-rnR", "TOPSECRET", "."}, false},
		{[]string{"grep", "--dereference-rec", "TOPSECRET", "."}, false},
		{[]string{"diff", "-r", "a", "b"}, false},
		{[]string{"diff", "-qr", "a", "b"}, false},
		{[]string{"diff", "--recursive", "a", "b"}, false},
		{[]string{"du", "-L", "-a", "."}, false},
		{[]string{"ls", "-RL", "a"}, false},
		// Controls: covered, and the real program does not reach the secret.
		{[]string{"grep", "-rn", "TOPSECRET", "."}, true},
		{[]string{"diff", "a", "b"}, true},
		{[]string{"du", "-a", "."}, true},
		{[]string{"ls", "-R", "a"}, true},
	} {
		exe, err := exec.LookPath(c.argv[0])
		if err != nil {
			t.Fatalf("%s: %v", c.argv[0], err)
		}
		r, err := Parse("Bash(" + c.argv[0] + " *)@" + exe)
		if err != nil {
			t.Fatal(err)
		}
		if PresetOf(r) == "" {
			t.Fatalf("%s is not a preset rule", r)
		}
		var argv []shellparse.Word
		for _, a := range c.argv {
			argv = append(argv, shellparse.Word{Value: a})
		}
		res := shellparse.Result{Verdict: shellparse.Simple, Executable: exe, Argv: argv}
		err = Match(r, Call{Tool: "Bash", Cwd: proj, ProjectDir: proj, ProjectNamed: true, Shell: &res})
		if (err == nil) != c.covers {
			t.Errorf("%q: %v, want covered %t", c.argv, err, c.covers)
		}
		cmd := exec.Command(exe, c.argv[1:]...)
		cmd.Dir = proj
		out, _ := cmd.CombinedOutput()
		// Only the directories outside hold a file named key.
		if reaches := strings.Contains(string(out), "key"); reaches == c.covers {
			t.Errorf("%q: the real program reaches outside the project: %t, but the preset covers it: %t\n%s", c.argv, reaches, c.covers, out)
		}
	}
}
