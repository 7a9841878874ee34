package loopguard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// pluginEnv is a guard whose hooks come from loopguard's Claude Code
// plugin, installed from the repository's marketplace with the real
// client's own commands; the binaries are found through PATH, as an
// installed release's are.
type pluginEnv struct {
	*env
	path   string // PATH with the binaries' directory near its start
	shadow string // an empty directory in PATH ahead of the binaries'
}

func newPluginEnv(t *testing.T) *pluginEnv {
	t.Helper()
	claude := installClient(t)
	root := t.TempDir()
	g, err := NewGuard(lgBin, root)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: context.Background(), claude: claude, g: g, Dir: filepath.Join(root, "project")}
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// An empty directory ahead of the binaries' in PATH: where the agent
	// would plant a loopguard-hook of its own.
	pe := &pluginEnv{env: e, shadow: filepath.Join(root, "bin")}
	if err := os.Mkdir(pe.shadow, 0o755); err != nil {
		t.Fatal(err)
	}
	pe.path = strings.Join([]string{pe.shadow, filepath.Dir(lgBin), os.Getenv("PATH")}, string(os.PathListSeparator))
	e.clientEnv = []string{"PATH=" + pe.path}
	return pe
}

// cli runs loopguard with the binaries' directory in PATH.
func (pe *pluginEnv) cli(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(pe.ctx, cliTimeout)
	defer cancel()
	cmd := pe.g.Command(ctx, pe.Dir, args...)
	cmd.Env = append(cmd.Env, "PATH="+pe.path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("loopguard %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// claudeCLI runs the real client's own command line (claude plugin ...)
// with the guard's HOME and configuration directory.
func (pe *pluginEnv) claudeCLI(args ...string) string {
	pe.t.Helper()
	ctx, cancel := context.WithTimeout(pe.ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pe.claude, args...)
	cmd.Dir = pe.Dir
	cmd.Env = []string{"PATH=" + pe.path, "HOME=" + pe.g.Home, "CLAUDE_CONFIG_DIR=" + filepath.Join(pe.g.Home, ".claude"),
		"TMPDIR=" + os.TempDir(), "TERM=dumb", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		pe.t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// installPlugin adds the repository as a marketplace and installs the
// plugin from it, as a user does.
func (pe *pluginEnv) installPlugin() {
	pe.t.Helper()
	repo, err := claudetest.RepoRoot()
	if err != nil {
		pe.t.Fatal(err)
	}
	pe.claudeCLI("plugin", "marketplace", "add", repo)
	out := pe.claudeCLI("plugin", "install", "loopguard@loopguard")
	if !strings.Contains(out, "loopguard@loopguard") {
		pe.t.Fatalf("claude plugin install did not name the plugin:\n%s", out)
	}
}

// Installed with `claude plugin marketplace add` and `claude plugin
// install`, the plugin runs loopguard-hook from PATH: a call is held, a
// human approves it at a terminal, and it runs once in the same turn.
// `init` beside the plugin sets up the key, state and sandbox but
// registers no hook of its own, so each call is decided once; doctor
// recognises the plugin. The agent cannot turn the plugin off: its files,
// the settings that enable it and the loopguard-hook PATH finds are
// protected.
func TestPluginInstallHoldApprove(t *testing.T) {
	t.Parallel()
	pe := newPluginEnv(t)
	pe.installPlugin()
	out, err := pe.cli("init", "--user", "--no-preset", "--no-jail", "--toolchains", "none")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "loopguard's Claude Code plugin (loopguard@loopguard) runs loopguard for every tool call; init registers no hook of its own") {
		t.Fatalf("init did not see the plugin:\n%s", out)
	}
	settings, err := os.ReadFile(filepath.Join(pe.g.Home, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(settings), `"hooks"`) || !strings.Contains(string(settings), `"loopguard@loopguard": true`) || !strings.Contains(string(settings), `"sandbox"`) {
		t.Fatalf("user settings after init: want the plugin enabled, the sandbox, and no hook of init's:\n%s", settings)
	}
	doc, _ := pe.cli("doctor")
	for _, want := range []string{"ok    plugin loopguard@loopguard: enabled in", "hooks PreToolUse: registered (1)", "hooks PostToolUse: registered (1)", "hooks PostToolUseFailure: registered (1)", "hooks SessionEnd: registered (1)", "runs loopguard-hook beside this binary"} {
		if !strings.Contains(doc, want) {
			t.Errorf("doctor does not say %q:\n%s", want, doc)
		}
	}

	// The human: approve the held call from a terminal.
	human := make(chan error, 1)
	go func() {
		human <- func() error {
			deadline := time.Now().Add(90 * time.Second)
			for time.Now().Before(deadline) {
				rows, err := pe.g.Pending(pe.ctx)
				if err != nil {
					return err
				}
				if len(rows) > 1 {
					return fmt.Errorf("one call, %d pending records: the hook ran twice: %+v", len(rows), rows)
				}
				if len(rows) == 1 && strings.HasPrefix(rows[0].State, "held") {
					_, err := pe.g.Approve(pe.ctx, rows[0])
					return err
				}
				time.Sleep(100 * time.Millisecond)
			}
			return fmt.Errorf("no call was held")
		}()
	}()
	userSettings := filepath.Join(pe.g.Home, ".claude", "settings.json")
	pluginHooks := filepath.Join(pe.g.Home, ".claude", "plugins", "cache", "loopguard", "loopguard", "0.1.0", "hooks", "hooks.json")
	read := func(id, path string) claudetest.ToolCall {
		return claudetest.Call(id, "Read", map[string]any{"file_path": path})
	}
	write := func(id, path, content string) claudetest.ToolCall {
		return claudetest.Call(id, "Write", map[string]any{"file_path": path, "content": content})
	}
	api, _ := pe.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_pl1", "echo plugin >> runs.txt")),
		// The agent tries to turn the plugin off, to empty its hooks, or
		// to plant a loopguard-hook that PATH finds first. Claude Code
		// writes only a file read before, so each is read first.
		claudetest.Tools(read("toolu_plr1", userSettings), read("toolu_plr2", pluginHooks)),
		claudetest.Tools(write("toolu_pl2", userSettings, `{"enabledPlugins": {"loopguard@loopguard": false}}`)),
		claudetest.Tools(write("toolu_pl3", pluginHooks, `{"hooks": {}}`)),
		claudetest.Tools(write("toolu_pl4", filepath.Join(pe.shadow, "loopguard-hook"), "#!/bin/sh\nexit 0\n")),
		claudetest.Text("done"),
	}}, nil, "--add-dir", pe.g.Home) // Claude Code reads outside the project only in an added directory
	if err := <-human; err != nil {
		t.Fatalf("the human: %v", err)
	}
	wantRan(t, api, "toolu_pl1")
	if got := pe.read("runs.txt"); got != "plugin\n" {
		t.Errorf("runs.txt = %q; want the held, approved call to have run once", got)
	}
	for _, id := range []string{"toolu_pl2", "toolu_pl3", "toolu_pl4"} {
		wantDenied(t, api, id, "protected_resource")
	}
	wantRan(t, api, "toolu_plr1") // control: reading the settings is allowed
	if b, err := os.ReadFile(userSettings); err != nil || !strings.Contains(string(b), `"loopguard@loopguard": true`) {
		t.Errorf("the plugin was turned off: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(pe.shadow, "loopguard-hook")); err == nil {
		t.Error("the agent planted a loopguard-hook in PATH")
	}
	entries, err := pe.g.Audit(pe.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var bash []AuditEntry
	for _, en := range entries {
		if (en.Event == "PreToolUse" || en.Event == "PostToolUse") && en.Tool == "Bash" {
			bash = append(bash, en)
		}
	}
	// A held call is logged once, with its outcome: one hook per event.
	if len(bash) != 2 || bash[0].Reason != "exact_grant" || bash[1].Reason != "ran_as_approved" {
		t.Errorf("the Bash call's decisions: %+v; want one PreToolUse (exact_grant) and one PostToolUse: the hook must run once per call", bash)
	}
}

// init first, the plugin after: doctor fails the double registration, and
// init run again takes its own registration out.
func TestPluginAfterInitNeverTwice(t *testing.T) {
	t.Parallel()
	pe := newPluginEnv(t)
	if _, err := pe.cli("init", "--user", "--no-preset", "--no-jail", "--toolchains", "none"); err != nil {
		t.Fatal(err)
	}
	pe.installPlugin()
	doc, _ := pe.cli("doctor")
	if !strings.Contains(doc, "FAIL  hooks PreToolUse: loopguard runs twice for every call") {
		t.Errorf("doctor does not fail the double registration:\n%s", doc)
	}
	out, err := pe.cli("init", "--user", "--no-preset", "--no-jail", "--toolchains", "none")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Removed init's own registration from") {
		t.Errorf("init did not take its registration out:\n%s", out)
	}
	doc, _ = pe.cli("doctor")
	if strings.Contains(doc, "runs twice") || !strings.Contains(doc, "hooks PreToolUse: registered (1)") {
		t.Errorf("after init, doctor still sees two registrations:\n%s", doc)
	}
}
