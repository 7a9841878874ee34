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
		"Bash(make test *)",
		"Bash(go build *)",
		"Bash(sort -o out.txt *)",
		"Bash(go build -o bin/app *)",
		"Bash(tar -czf dist.tgz *)",
		"Bash(docker-compose-lint *)",
	}
	bad := []struct{ rule, why string }{
		{"Bash(nu *)", "is a shell"},
		{"Bash(xonsh *)", "is a shell"},
		{"Bash(docker ps *)", "runs other commands"},
		{"Bash(kubectl get *)", "runs other commands"},
		{"Bash(npm exec *)", "runs code"},
		{"Bash(npm x foo)", "runs code"},
		{"Bash(git config *)", "runs code"},
		{"Bash(git log -c core.pager=id *)", "runs code"},
		{"Bash(git clone --upload-pack=x *)", "runs code"},
		{"Bash(make --eval=x test *)", "runs code"},
		{"Bash(make -f other.mk *)", "runs code"},
		{"Bash(go test -toolexec=x *)", "runs code"},
		{"Bash(go generate *)", "runs code"},
		{"Bash(rg --pre=x *)", "runs code"},
		{"Bash(fd -x *)", "runs code"},
		{"Bash(sort -o *)", "the wildcard after it names the file"},
		{"Bash(sort --output *)", "the wildcard after it names the file"},
		{"Bash(go build -o *)", "the wildcard after it names the file"},
		{"Bash(tar -czf *)", "the wildcard after it names the file"},
		{"Bash(tar czf *)", "the wildcard after it names the file"},
		{"Bash(tar -x *)", "the wildcard after it names the file"},
		{"Bash(git log --output=*)", "can only be an option that writes a named file"},
		{"Bash(sort --compress-program=*)", "can only be an option that runs code"},
		{"Bash(go build -ldflags=-extld=* ./...)", "runs code"},
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
		{"Bash(find . -exec *)", "runs code"},
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
