package scope

import (
	"errors"
	"strings"
	"testing"
)

func TestDangerous(t *testing.T) {
	const home = "/home/u"
	ok := []string{
		"Bash(go test ./...)@/usr/local/go/bin/go",
		"Bash(git status)@/usr/bin/git",
		"Bash(git log *)@/usr/bin/git",
		"Bash(npm run test:*)",
		"Bash(ls *)",
		"Bash(echo hi)@builtin",
		"Bash(go test ./... >test.log)",
		"Edit(src/**)",
		"Edit(src/**/*.go)",
		"Write(docs/*.md)",
		"Edit(//tmp/scratch/**)",
		"Read(~/notes/**)",
		"Read(**)",
		"Read(.claude/settings.json)",
		"Read(.git/config)",
		"Bash(rm -rf build)",
		"Bash(cp a.txt b.txt)",
		"Edit(src/.gitignore)",
		"Edit(~/notes/**)",
		"WebFetch(domain:pkg.go.dev)",
		"mcp__github__get_issue",
		"mcp__github__*",
		"TodoWrite",
	}
	bad := []struct{ rule, why string }{
		{"Bash", "bare Bash"},
		{"Edit", "bare Edit"},
		{"WebFetch", "bare WebFetch"},
		{"MultiEdit", "such as Edit(src/**)"},
		{"Read", "such as Read(src/**)"},
		{"Bash(python *)", "interpreter"},
		{"Bash(python3.12 -m pytest)", "interpreter"},
		{"Bash(node *)", "interpreter"},
		{"Bash(awk *)", "interpreter"},
		{"Bash(bash *)", "shell"},
		{"Bash(sh -c true)", "shell"},
		{"Bash(/bin/zsh x)", "shell"},
		{"Bash(env *)", "runs other commands"},
		{"Bash(xargs *)", "runs other commands"},
		{"Bash(sudo ls)", "runs other commands"},
		{"Bash(timeout 5 make)", "runs other commands"},
		{"Bash(find *)", "runs other commands"},
		{"Bash(py x)@/usr/bin/python3.11", "interpreter"}, // pinned under another name
		{"Bash(loopguard *)", "guard"},
		{"Bash(/home/u/go/bin/loopguard approve 1)", "guard"},
		{"Bash(claude *)", "guard"},
		{"Bash(secret-tool *)", "guard"},
		{"Bash(gnome-keyring-daemon --replace)", "guard"},
		{"Bash(security *)", "guard"},
		{"Bash(dbus-send *)", "guard"},
		{"Bash(busctl *)", "guard"},
		{"Bash(gdbus *)", "guard"},
		{"Bash(git *)", "wildcard right after git"},
		{"Bash(git -c*)", "wildcard right after git"},
		{"Bash(make *)", "wildcard right after make"},
		{"Bash(cp x .claude/settings.json)", ".claude"},
		{"Bash(echo x >.claude/settings.local.json)", ".claude"},
		{"Bash(rm -rf /home/u/.local/state/loopguard)", "loopguard"},
		{"Edit(**)", ".claude/"},
		{"Edit(*)", ".claude/"},
		{"Edit(**/*.go)", ".claude/"},
		{"Edit(.claude/**)", ".claude/"},
		{"Edit(.claude/settings.json)", ".claude/"},
		{"Write(.claude/settings.local.json)", ".claude/"},
		{"Edit(.c*/settings.json)", ".claude/"},
		{"Edit(~/.claude/settings.json)", "~/.claude"},
		{"Edit(~/**)", "~/.claude"},
		{"Edit(~/*/settings.json)", "~/.claude"},
		{"Edit(~/.local/state/loopguard/x)", "loopguard"},
		{"Edit(~/go/bin/*)", "loopguard"},
		{"Read(~/**)", "loopguard"},
		{"Read(~/.local/share/keyrings/login.keyring)", "keyrings"},
		{"Edit(//**)", "/home/u"},
		{"Edit(//home/*/.claude/settings.json)", ".claude"},
		{"Edit(//home/u/.claude/settings.json)", ".claude"},
		{"Read(//home/u/.local/share/**)", "keyrings"},
		{"Edit(//work/*/.claude/**)", ".claude"},
		{"Edit(.git/config)", ".git/"},
		{"Edit(.CLAUDE/settings.json)", ".claude/"},
		{"Edit(~/.Claude/settings.json)", "~/.claude"},
		{"Read(~/library/keychains/**)", "Keychains"},
		{"Edit(.g*/hooks/pre-commit)", ".git/"},
		{"Write(.vscode/tasks.json)", ".vscode/"},
		{"Edit(//work/p/.git/hooks/*)", ".git/"},
		{"Bash(cp * dist/)", "overwrite"},
		{"Bash(rm -rf build/*)", "overwrite"},
		{"Bash(tee *)", "overwrite"},
		{"Bash(go test ./... >settings.json)", "settings.json"},
		{"Bash(make 2>>conf/settings.local.json)", "settings.local.json"},
	}
	for _, s := range ok {
		r, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if err := Dangerous(r, home); err != nil {
			t.Errorf("Dangerous(%s) = %v, want nil", s, err)
		}
	}
	for _, b := range bad {
		r, err := Parse(b.rule)
		if err != nil {
			t.Fatalf("Parse(%q): %v", b.rule, err)
		}
		err = Dangerous(r, home)
		if err == nil {
			t.Errorf("Dangerous(%s) = nil, want refusal", b.rule)
			continue
		}
		var de *DangerousError
		if !errors.Is(err, ErrDangerous) || !errors.As(err, &de) || de.Rule != r.String() {
			t.Errorf("Dangerous(%s): %T %v is not a DangerousError", b.rule, err, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, b.why) || !strings.Contains(msg, "loopguard approve") {
			t.Errorf("Dangerous(%s) = %q, want it to mention %q and loopguard approve", b.rule, msg, b.why)
		}
	}
	if err := Dangerous(Rule{}, home); err == nil {
		t.Error("zero Rule is not dangerous")
	}
	abs, _ := Parse("Edit(//tmp/x/*)")
	if err := Dangerous(abs, ""); err == nil {
		t.Error("absolute pattern without home passed")
	}
}
