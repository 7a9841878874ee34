package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestKnownToolsHoldTheRecordedList(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "tools", "claude-code-*.txt"))
	if len(files) == 0 {
		t.Fatal("no recorded tool list in testdata/tools")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range strings.Fields(string(b)) {
			if !slices.Contains(KnownTools, name) {
				t.Errorf("%s (recorded in %s) is not in KnownTools", name, filepath.Base(f))
			}
		}
	}
}

func TestClassify(t *testing.T) {
	pl := Places{Home: "/home/u", StateDir: "/home/u/.local/state/loopguard", Self: "/usr/local/bin/loopguard", ClaudeConfigDir: "/cfg/claude"}
	for _, c := range []struct {
		path   string
		tier   Tier
		secret bool
	}{
		{"/home/u/.claude/settings.json", GuardCritical, false},
		{"/home/u/.local/state/loopguard/console/passkeys/x.json", GuardCritical, true},
		{"/home/u/.local/state/loopguard/console/enroll", GuardCritical, true},
		{"/home/u/.config/loopguard/tls/box.key", GuardCritical, true},
		{"/home/u/.claude", GuardCritical, false},
		{"/home/u/.claude.json", GuardCritical, true}, // MCP servers' tokens: secret (HomeSecrets)
		{"/home/u/.claude.json.backup", GuardCritical, true},
		{"/cfg/claude/settings.json", GuardCritical, false},
		{"/cfg/claude/.claude.json", GuardCritical, true},
		{"/cfg/claude/skills/x", ExecConfig, false},
		{"/etc/claude-code/managed-settings.json", GuardCritical, false},
		{"/home/u/.local/state/loopguard/audit", GuardCritical, true},
		{"/home/u/.local/state", GuardCritical, false}, // holds the state
		{"/home/u/.local/share/keyrings/login.keyring", GuardCritical, true},
		{"/usr/local/bin/loopguard", GuardCritical, false},
		{"/usr/local/bin/loopguard-hook", GuardCritical, false}, // its twin, registered as the hook
		{"/usr/local/bin/loopguard-other", Ordinary, false},
		{"/usr/local/bin/other", Ordinary, false},
		{"/p/.claude/settings.local.json", GuardCritical, false},
		{"/p/src/.claude/SETTINGS.json", GuardCritical, false},
		{"/p/src/.claude/skills/s/SKILL.md", ExecConfig, false},
		{"/p/.claude/anything-new", ExecConfig, false},
		{"/p/.git/config", ExecConfig, false},
		{"/p/.git", ExecConfig, false},
		{"/p/.mcp.json", ExecConfig, false},
		{"/home/u/.bashrc", ExecConfig, false},
		{"/home/u/.ssh/config", GuardCritical, true}, // ~/.ssh is secret (HomeSecrets), executable configuration too
		{"/home/u/.config/git/config", ExecConfig, false},
		// ordinary
		{"/p/src/main.go", Ordinary, false},
		{"/p/.gitignore", Ordinary, false},
		{"/p/claude/settings.json", Ordinary, false},
		{"/home/u", Ordinary, false},
		{"/home/u/notes.txt", Ordinary, false},
		{"/home/u/.config", GuardCritical, false},           // holds loopguard's config
		{"relative/.claude/settings.json", Ordinary, false}, // only absolute paths are judged
	} {
		got := pl.Classify(c.path)
		if got.Tier != c.tier || got.Secret != c.secret {
			t.Errorf("Classify(%s) = %v (secret %v, %s), want %v (secret %v)", c.path, got.Tier, got.Secret, got.What, c.tier, c.secret)
		}
	}
}

// Either binary names both; a binary under another name (a test binary)
// keeps its own path protected too.
func TestBinaries(t *testing.T) {
	for _, self := range []string{"/opt/lg/loopguard", "/opt/lg/loopguard-hook"} {
		full, hook := Binaries(self)
		if full != "/opt/lg/loopguard" || hook != "/opt/lg/loopguard-hook" {
			t.Errorf("Binaries(%s) = %s, %s", self, full, hook)
		}
		for _, exe := range []string{"/opt/lg/loopguard", "/opt/lg/loopguard-hook", "/opt/lg/./loopguard", "/opt/lg/loopguard-exec", "/opt/lg/loopguard-confine"} {
			if !IsLoopguardBinary(self, exe) {
				t.Errorf("IsLoopguardBinary(%s, %s) = false", self, exe)
			}
		}
		for _, exe := range []string{"/usr/bin/loopguard", "/opt/lg/loopguard-hook2", "/opt/lg/loopguard-confine2", "", "/opt/lg"} {
			if IsLoopguardBinary(self, exe) {
				t.Errorf("IsLoopguardBinary(%s, %q) = true", self, exe)
			}
		}
	}
	pl := Places{Self: "/tmp/x/lg.test"}
	for _, p := range []string{"/tmp/x/lg.test", "/tmp/x/loopguard", "/tmp/x/loopguard-hook", "/tmp/x/loopguard-exec", "/tmp/x/loopguard-confine"} {
		if pl.Classify(p).Tier != GuardCritical {
			t.Errorf("Classify(%s) with Self %s is not guard-critical", p, pl.Self)
		}
	}
	if pl.Classify("/tmp/x/other").Tier != Ordinary {
		t.Error("control: /tmp/x/other is protected")
	}
}

// TestRetiredLauncherStaysProtected: loopguard-launch, the small launcher
// an earlier release installed beside the binaries, is still one of them
// for this release (a hook of that release runs it): guard-critical beside
// either binary and in PATH, and a call of it is a call of the guard.
// Control: a name beside it that no release installed.
func TestRetiredLauncherStaysProtected(t *testing.T) {
	pl := Places{Self: "/opt/lg/loopguard-hook", Path: "/usr/local/bin"}.Prepare()
	for _, p := range []string{"/opt/lg/loopguard-launch", "/usr/local/bin/loopguard-launch"} {
		if got := pl.Classify(p); got.Tier != GuardCritical || !strings.Contains(got.What, "retired") {
			t.Errorf("Classify(%s) = %v (%s), want guard-critical, said retired", p, got.Tier, got.What)
		}
	}
	if !IsLoopguardBinary(pl.Self, "/opt/lg/loopguard-launch") {
		t.Error("loopguard-launch beside the hook is not a loopguard binary")
	}
	if pl.Classify("/opt/lg/loopguard-launch2").Tier != Ordinary || IsLoopguardBinary(pl.Self, "/opt/lg/loopguard-launch2") {
		t.Error("control: /opt/lg/loopguard-launch2 is protected")
	}
}

func TestGlobProtection(t *testing.T) {
	pl := Places{Home: "/home/u"}
	for _, c := range []struct {
		pat  string
		tier Tier
	}{
		{"/home/u/.clau?e/settings.json", GuardCritical},
		{"/home/u/.claude/s*", GuardCritical},
		{"/home/u/.claude/sk*/x", ExecConfig},
		{"/home/u/.*/settings.json", GuardCritical},
		{"/home/u/.c*.json", GuardCritical},
		{"/home/u/.loc*", GuardCritical}, // ~/.local holds the state
		{"/p/.g?t/config", ExecConfig},
		{"/p/*/.claude/settings.json", GuardCritical},
		{"/p/**/x.go", Ordinary},
		{"/home/u/.[b]ashrc", ExecConfig},
		{"/p/{src,.claude}/settings.json", GuardCritical},
		// ordinary: bash's * does not match a leading dot
		{"/p/*.go", Ordinary},
		{"/p/*/x", Ordinary},
		{"/home/u/*.txt", Ordinary},
		{"/home/u/*", GuardCritical}, // ~/Library holds the keychains
		{"/p/src/ma?n.go", Ordinary},
	} {
		if got := pl.GlobProtection(c.pat); got.Tier != c.tier {
			t.Errorf("GlobProtection(%s) = %v (%s), want %v", c.pat, got.Tier, got.What, c.tier)
		}
	}
}

// Classify skips path segments that do not start with a dot: every name
// protected at any depth must start with one.
func TestAnyDepthNamesStartWithADot(t *testing.T) {
	for _, n := range []string{claudeDirName, gitDirName} {
		if !strings.HasPrefix(n, ".") {
			t.Errorf("%q does not start with a dot", n)
		}
	}
}

// TestUnclosedBracketIsLiteral: a word no pattern reader can read (an
// unclosed [ or {, an empty []: python's "[f for f in x]" or a format
// string split into words) is a literal to bash and matches no protected
// name; a real pattern that can still does.
func TestUnclosedBracketIsLiteral(t *testing.T) {
	pl := Places{Home: "/home/u"}
	for _, p := range []string{"/p/[f", "/p/x[", "/p/[[a", "/p/{len", "/p/[]", "/p/{league_name:", "/p/[a,b],c:1}"} {
		if g := pl.GlobProtection(p); g.Protected() {
			t.Errorf("%s: %s (%s)", p, g.Tier, g.What)
		}
	}
	for _, p := range []string{"/p/.[c]laude/settings.json", "/p/[.]git/config", "/p/.clau[d"} {
		if g := pl.GlobProtection(p); !g.Protected() && p != "/p/.clau[d" {
			t.Errorf("%s: not protected", p)
		}
	}
}

// TestHomeThroughLink: where the home is reached through a link
// (/home/u -> /var/home/u), every place under it is protected at its real
// path too: a file tool's Read of /var/home/u/.ssh/id_rsa is a read of
// ~/.ssh/id_rsa.
func TestHomeThroughLink(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, link := filepath.Join(root, "var", "home", "u"), filepath.Join(root, "home-u")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if got := RealHome(link); got != real {
		t.Fatalf("RealHome(%s) = %q, want %q", link, got, real)
	}
	if got := RealHome(real); got != "" {
		t.Errorf("RealHome(%s), its own real path (control) = %q", real, got)
	}
	rels := []string{".ssh/id_rsa", ".local/share/keyrings/login.keyring", ".local/state/loopguard/audit", ".config/loopguard/config.toml",
		".claude/settings.json", ".claude.json", ".bashrc", ".aws/credentials", ".config/gh/hosts.yml", ".codex/config.toml", ".local", "notes.txt", "src/app/main.go"}
	for _, pl := range []Places{{Home: link}, Places{Home: link}.Prepare()} {
		for _, rel := range rels {
			want, got := pl.Classify(filepath.Join(link, rel)), pl.Classify(filepath.Join(real, rel))
			if got.Tier != want.Tier || got.Secret != want.Secret {
				t.Errorf("Classify(%s) = %v (secret %v), want %v (secret %v) as through the link", filepath.Join(real, rel), got.Tier, got.Secret, want.Tier, want.Secret)
			}
		}
		if pl.Classify(filepath.Join(real, ".ssh/id_rsa")).Tier == Ordinary || pl.Classify(filepath.Join(real, "notes.txt")).Tier != Ordinary {
			t.Errorf("the real home's key is not protected, or its notes are (control)")
		}
		for _, dir := range []string{real, filepath.Dir(real), filepath.Join(real, ".ssh")} {
			if _, ok := pl.ContainsSecret(dir); !ok {
				t.Errorf("ContainsSecret(%s) = false: a search there reads the home's secrets", dir)
			}
		}
		if _, ok := pl.ContainsSecret(filepath.Join(real, "src")); ok {
			t.Errorf("ContainsSecret(%s) (control) = true", filepath.Join(real, "src"))
		}
		if g := pl.GlobProtection(filepath.Join(real, ".ss?", "id_*")); !g.Secret {
			t.Errorf("GlobProtection of the real home's keys: %+v", g)
		}
		if g := pl.GlobProtection(filepath.Join(real, ".c*.json")); g.Tier != GuardCritical {
			t.Errorf("GlobProtection of the real home's .claude.json: %+v", g)
		}
		if g := pl.GlobProtection(filepath.Join(real, "src", "*.go")); g.Tier != Ordinary {
			t.Errorf("GlobProtection of the real home's sources (control): %+v", g)
		}
		if !slices.ContainsFunc(pl.Roots(), func(r Root) bool { return r.Path == filepath.Join(real, ".claude.json") }) {
			t.Errorf("Roots has no %s", filepath.Join(real, ".claude.json"))
		}
	}
	// A home that is its own real path has its entries once (control).
	if n, m := len(Places{Home: real}.entries()), len(Places{Home: link}.entries()); m <= n {
		t.Errorf("entries: %d through the link, %d at the real path", m, n)
	}
}

// TestClassifyIgnoresCase: a fixed protected place is judged whatever the
// case of its letters, as a file system that ignores case (macOS's by
// default) opens it: ~/.SSH/id_rsa is the key. Control: an ordinary file
// of the home stays ordinary whatever its case.
func TestClassifyIgnoresCase(t *testing.T) {
	pl := Places{Home: "/home/u", StateDir: "/home/u/.local/state/loopguard"}.Prepare()
	for _, p := range []string{"/home/u/.SSH/id_rsa", "/home/u/.ssh/ID_RSA", "/HOME/U/.ssh/id_rsa", "/home/u/.Local/Share/Keyrings/login.keyring",
		"/home/u/.local/STATE/loopguard/audit", "/home/u/.AWS/credentials", "/home/u/.Claude.json"} {
		if got := pl.Classify(p); !got.Secret {
			t.Errorf("Classify(%s) = %v (secret %v), want a secret", p, got.Tier, got.Secret)
		}
	}
	if got := pl.Classify("/home/u/.CLAUDE/settings.json"); got.Tier != GuardCritical {
		t.Errorf("Classify(~/.CLAUDE/settings.json) = %v", got.Tier)
	}
	for _, dir := range []string{"/home/u/.SSH", "/HOME/u"} {
		if _, ok := pl.ContainsSecret(dir); !ok {
			t.Errorf("ContainsSecret(%s) = false", dir)
		}
	}
	for _, p := range []string{"/home/u/Notes.txt", "/home/u/SRC/app/main.go"} {
		if got := pl.Classify(p); got.Tier != Ordinary {
			t.Errorf("Classify(%s) (control) = %v", p, got.Tier)
		}
	}
	if _, ok := pl.ContainsSecret("/home/u/SRC"); ok {
		t.Error("ContainsSecret(/home/u/SRC) (control) = true")
	}
}

// TestAccountHomeProtected: an agent started with HOME naming another
// directory still runs as the user whose account names a home, and ssh
// reads that home's keys: its places are protected as $HOME's are.
// Control: an ordinary file there stays ordinary.
func TestAccountHomeProtected(t *testing.T) {
	acct := accountHome()
	if acct == "" {
		t.Skip("the password database names no home for this user")
	}
	home := t.TempDir()
	for _, pl := range []Places{{Home: home}, Places{Home: home}.Prepare()} {
		if got := pl.Classify(filepath.Join(acct, ".ssh", "id_rsa")); !got.Secret {
			t.Errorf("HOME=%s: Classify of the account home's key = %v (secret %v)", home, got.Tier, got.Secret)
		}
		if got := pl.Classify(filepath.Join(acct, ".bashrc")); got.Tier != ExecConfig {
			t.Errorf("HOME=%s: Classify of the account home's .bashrc = %v", home, got.Tier)
		}
		if got := pl.Classify(filepath.Join(acct, "notes-"+filepath.Base(home)+".txt")); got.Tier != Ordinary {
			t.Errorf("HOME=%s: an ordinary file of the account home (control) = %v", home, got.Tier)
		}
	}
	if got := OtherHomes(acct); slices.Contains(got, acct) {
		t.Errorf("OtherHomes(%s) names the home itself: %v", acct, got)
	}
}
