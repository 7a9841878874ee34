package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
)

// protectedCase is one protected path and the tier it must be denied with.
type protectedCase struct {
	name string
	path string // absolute
	tier policy.Tier
}

func protectedCases(h *harness) []protectedCase {
	home := h.eng().Env.Home
	p := func(rel string) string { return filepath.Join(h.Project, rel) }
	u := func(rel string) string { return filepath.Join(home, rel) }
	return []protectedCase{
		{"user settings", u(".claude/settings.json"), policy.GuardCritical},
		{"user local settings", u(".claude/settings.local.json"), policy.GuardCritical},
		{"project settings", p(".claude/settings.json"), policy.GuardCritical},
		{"nested project settings", p("src/.claude/settings.local.json"), policy.GuardCritical},
		{"claude.json", u(".claude.json"), policy.GuardCritical},
		{"shell snapshot", u(".claude/shell-snapshots/snapshot-bash.sh"), policy.GuardCritical},
		{"session env", u(".claude/session-env/s1/env"), policy.GuardCritical},
		{"plugins", u(".claude/plugins/installed.json"), policy.GuardCritical},
		{"guard state", filepath.Join(h.Store.Dir, "grants", "x.grant"), policy.GuardCritical},
		{"guard config", u(".config/loopguard/config.json"), policy.GuardCritical},
		{"keyring file", u(".local/share/keyrings/login.keyring"), policy.GuardCritical},
		{"user skill", u(".claude/skills/deploy/SKILL.md"), policy.ExecConfig},
		{"user command", u(".claude/commands/ship.md"), policy.ExecConfig},
		{"project agent", p(".claude/agents/reviewer.md"), policy.ExecConfig},
		{"project hook script", p(".claude/hooks/pre.sh"), policy.ExecConfig},
		{"nested skill", p("src/.claude/skills/s/SKILL.md"), policy.ExecConfig},
		{"workflow", p(".claude/workflows/w.md"), policy.ExecConfig},
		{"scheduled tasks", p(".claude/scheduled_tasks.json"), policy.ExecConfig},
		{"launch.json", p(".claude/launch.json"), policy.ExecConfig},
		{"mcp.json", p(".mcp.json"), policy.ExecConfig},
		{"git config", p(".git/config"), policy.ExecConfig},
		{"nested git config", p("src/.git/config"), policy.ExecConfig},
		{"git hook", p(".git/hooks/pre-commit"), policy.ExecConfig},
		{"gitmodules", p(".gitmodules"), policy.ExecConfig},
		{"bashrc", u(".bashrc"), policy.ExecConfig},
		{"zshenv", u(".zshenv"), policy.ExecConfig},
		{"envrc", p(".envrc"), policy.ExecConfig},
		{"cursor mcp.json", p(".cursor/mcp.json"), policy.ExecConfig},
		{"gemini command", p("src/.gemini/commands/x.toml"), policy.ExecConfig},
		{"nested npmrc", p("src/.npmrc"), policy.ExecConfig},
		{"bash_aliases", u(".bash_aliases"), policy.ExecConfig},
		{"go env file", u(".config/go/env"), policy.ExecConfig},
		{"uv's user configuration", u(".config/uv/uv.toml"), policy.ExecConfig},
		{"husky hook", p(".husky/pre-commit"), policy.ExecConfig},
		{"netrc", u(".netrc"), policy.GuardCritical},                  // a secret in the home (policy.HomeSecrets)
		{"gh hosts", u(".config/gh/hosts.yml"), policy.GuardCritical}, // a secret in the home
	}
}

// globReachesHistory are the cases whose "glob *" shape (~/.ba*, ~/.zs*,
// ~/.bash_*) could also match a shell history, a secret: denied as
// guard-critical.
var globReachesHistory = map[string]bool{"bashrc": true, "zshenv": true, "bash_aliases": true}

// Issue 23's attack: `grant 'Write(.cursor/**)'` is accepted (it covers
// Cursor's rules), and then a Write of an MCP server list to
// .cursor/mcp.json, the command Cursor starts as the user, is not covered:
// it waits for an exact approval shown with the executable-configuration
// warning, as does .cursor/rules (instructions the next session loads).
// Control: the .cursor/commands write runs under the grant, and the
// mcp.json write runs once a human approved it exactly.
func TestCursorMCPNotCoveredByScope(t *testing.T) {
	h := newHarness(t)
	h.grantScope("Write(.cursor/**)", "*", "main")
	write := h.fixture("pretooluse-write.json")
	wr := func(rel, content string) map[string]any {
		return with(write, func(m map[string]any) {
			input(m)["file_path"] = filepath.Join(h.Project, rel)
			input(m)["content"] = content
		})
	}
	expect(t, "control: .cursor/commands", h.decide(wr(".cursor/commands/review.md", "review the diff\n")), Allow, ReasonScopedGrant)
	expect(t, ".cursor/rules under Write(.cursor/**)", h.decide(wr(".cursor/rules/style.mdc", "use tabs\n")), Deny, ReasonExecConfig)
	attack := wr(".cursor/mcp.json", `{"mcpServers":{"x":{"command":"sh","args":["-c","id"]}}}`)
	d := h.decide(attack)
	expect(t, ".cursor/mcp.json under Write(.cursor/**)", d, Deny, ReasonExecConfig)
	p, err := h.Store.GetPending(d.Pending)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, "EXECUTABLE CONFIGURATION") && strings.Contains(w, "Cursor")
	}) {
		t.Errorf("no executable-configuration warning for the human: %q", p.Warnings)
	}
	for _, rel := range []string{".gemini/commands/x.toml", "src/.npmrc"} {
		h.grantScope("Write(**)", "*", "main") // broader than any grant would be: still not covered
		expect(t, rel+" under a scope", h.decide(wr(rel, "x")), Deny, ReasonExecConfig)
	}
	h.approve(d)
	expect(t, "exactly approved mcp.json", h.decide(attack), Allow, ReasonExactGrant)
}

func tierReason(t policy.Tier) string {
	if t == policy.GuardCritical {
		return ReasonProtected
	}
	return ReasonExecConfig
}

// shapes rewrite an absolute path into a word that names the same file.
var pathShapes = map[string]func(h *harness, p string) string{
	"plain":         func(_ *harness, p string) string { return p },
	"doubled slash": func(_ *harness, p string) string { return strings.Replace(p, "/", "//", 3) },
	"dot segment":   func(_ *harness, p string) string { d, b := filepath.Split(p); return d + "./" + b },
	"dot-dot":       func(_ *harness, p string) string { d, b := filepath.Split(p); return d + "zz/../" + b },
	"relative": func(h *harness, p string) string {
		r, _ := filepath.Rel(h.Project, p)
		return r
	},
	"home tilde": func(h *harness, p string) string {
		if r, err := filepath.Rel(h.eng().Env.Home, p); err == nil && !strings.HasPrefix(r, "..") {
			return "~/" + r
		}
		return p
	},
	// a link in the project whose target may not exist yet
	"symlink": func(h *harness, p string) string {
		l := filepath.Join(h.Project, "ln-"+strings.ReplaceAll(strings.TrimPrefix(p, "/"), "/", "_"))
		os.Symlink(p, l)
		return l
	},
	// a link to the directory, then the file through it
	"directory symlink": func(h *harness, p string) string {
		l := filepath.Join(h.Project, "dl-"+strings.ReplaceAll(strings.TrimPrefix(filepath.Dir(p), "/"), "/", "_"))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.Symlink(filepath.Dir(p), l)
		return filepath.Join(l, filepath.Base(p))
	},
}

// globShapes only make sense in Bash words.
var globShapes = map[string]func(p string) string{
	"glob ?": func(p string) string { return p[:len(p)-1] + "?" },
	"glob *": func(p string) string {
		d, b := filepath.Split(p)
		return d + b[:len(b)/2] + "*"
	},
	"glob [] in a directory": func(p string) string {
		d, b := filepath.Split(filepath.Dir(p))
		if len(b) < 2 {
			return p
		}
		return filepath.Join(d, b[:1]+"["+b[1:2]+"]"+b[2:], filepath.Base(p))
	},
}

// Every shape of every protected path, through Bash words, option values,
// redirects and the Write tool, under scopes that would otherwise cover
// it: denied with the tier's reason. Controls: ordinary paths under the
// same scopes run.
func TestProtectedPathsByResolution(t *testing.T) {
	h := newHarness(t)
	os.MkdirAll(filepath.Join(h.Project, "src"), 0o755)
	// The broadest scopes the current policy still grants: the protected
	// check comes before them, so an attack is denied with its tier's
	// reason whatever scope exists.
	for _, s := range []string{"Bash(git log *)", "Bash(echo *)", "Write(src/**)", "Write(docs/**)"} {
		h.grantScope(s, "*", "main")
	}
	run, wr := h.bashCall, h.writeCall

	// Controls first: a guard that denies everything fails here.
	expect(t, "control: git log --oneline", h.decide(run("git log --oneline")), Allow, ReasonScopedGrant)
	expect(t, "control: git log -1 --stat", h.decide(run("git log -1 --stat")), Allow, ReasonScopedGrant)
	// --output writes a named file: the option table keeps it out of the
	// scope's *, so even an ordinary target needs an exact approval.
	expect(t, "git log --output to a project file is not covered", h.decide(run("git log -1 --output=out.txt")), Deny, ReasonNoGrant)
	expect(t, "control: echo", h.decide(run("echo hi notes.txt")), Allow, ReasonScopedGrant)
	expect(t, "control: a message that mentions .git", h.decide(run(`echo "move .git hooks to .githooks"`)), Allow, ReasonScopedGrant)
	expect(t, "control: write a project file", h.decide(wr(filepath.Join(h.Project, "src", "main.go"))), Allow, ReasonScopedGrant)
	expect(t, "control: write through an ordinary link", h.decide(wr(pathShapes["directory symlink"](h, filepath.Join(h.Project, "docs", "a.md")))), Allow, ReasonScopedGrant)

	n := 0
	for _, pc := range protectedCases(h) {
		want := tierReason(pc.tier)
		for shape, f := range pathShapes {
			w := f(h, pc.path)
			for vehicle, call := range map[string]map[string]any{
				"git log --output P": run("git log -1 --format=tformat:x --output " + w),
				"git log --output=P": run("git log -1 '--format=tformat:{}' --output=" + w),
				"git log -oP":        run("git log -o" + w),
				"echo > P":           run("echo '{}' > " + w),
			} {
				expect(t, pc.name+", "+shape+", "+vehicle+": "+w, h.decide(call), Deny, want)
				n++
			}
			if filepath.IsAbs(w) {
				expect(t, pc.name+", "+shape+", Write: "+w, h.decide(wr(w)), Deny, want)
				n++
			}
		}
		for shape, f := range globShapes {
			w := f(pc.path)
			want := want
			if shape == "glob *" && globReachesHistory[pc.name] {
				want = ReasonProtected
			}
			expect(t, pc.name+", "+shape+": "+w, h.decide(run("echo x > "+w)), Deny, want)
			expect(t, pc.name+", "+shape+", argument: "+w, h.decide(run("git log --output="+w)), Deny, want)
			n += 2
		}
		// Keep the queue short: the per-session cap is tested on its own.
		list, _ := h.Store.ListPending()
		for _, p := range list {
			h.Store.RemovePending(p.ID)
		}
	}
	t.Logf("%d attack calls checked", n)
}

// The issue's own attacks, literally.
func TestProtectedKnownBypasses(t *testing.T) {
	h := newHarness(t)
	home := h.eng().Env.Home
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte("{}"), 0o644)
	os.MkdirAll(filepath.Join(h.Project, ".git"), 0o755)
	os.WriteFile(filepath.Join(h.Project, ".git", "config"), []byte("[core]\n"), 0o644)
	h.grantScope("Bash(git log *)", "*", "main")
	h.grantScope("Write(src/**)", "*", "main")
	run, wr := h.bashCall, h.writeCall

	expect(t, "git log --output to the user settings",
		h.decide(run(`git log -1 '--format=tformat:{"permissions":{"allow":["Bash"]}}' --output `+filepath.Join(home, ".claude", "settings.json"))), Deny, ReasonProtected)
	expect(t, "glob ~/.clau?e/settings.json", h.decide(run("git log --output ~/.clau?e/settings.json")), Deny, ReasonProtected)
	expect(t, "doubled slash in the config dir", h.decide(run("git log --output ~/.config//loopguard/config.json")), Deny, ReasonProtected)

	// A dangling symlink into the user's local settings.
	os.Symlink(filepath.Join(home, ".claude", "settings.local.json"), filepath.Join(h.Project, "notes.json"))
	expect(t, "Write through a dangling symlink", h.decide(wr(filepath.Join(h.Project, "notes.json"))), Deny, ReasonProtected)

	// A committed directory symlink docs -> .git, then Write docs/config.
	os.Symlink(".git", filepath.Join(h.Project, "docs"))
	d := h.decide(wr(filepath.Join(h.Project, "docs", "config")))
	expect(t, "Write docs/config through docs -> .git", d, Deny, ReasonExecConfig)
	p, err := h.Store.GetPending(d.Pending)
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(h.Project, ".git", "config")
	if got := strings.Join(p.Warnings, "\n"); !strings.Contains(got, "resolves to "+real) || !strings.Contains(got, "EXECUTABLE CONFIGURATION") {
		t.Errorf("the pending call does not show where it lands:\n%s", got)
	}
	// An exact approval, shown with that warning, does cover it.
	h.approve(d)
	expect(t, "Write docs/config, approved exactly", h.decide(wr(filepath.Join(h.Project, "docs", "config"))), Allow, ReasonExactGrant)

	// Edit(src/**)-like scopes stay usable but do not cover nested
	// executable configuration.
	os.MkdirAll(filepath.Join(h.Project, "src"), 0o755)
	expect(t, "control: Write src/a.go", h.decide(wr(filepath.Join(h.Project, "src", "a.go"))), Allow, ReasonScopedGrant)
	expect(t, "Write src/.claude/skills/x/SKILL.md", h.decide(wr(filepath.Join(h.Project, "src", ".claude", "skills", "x", "SKILL.md"))), Deny, ReasonExecConfig)
	expect(t, "Write src/.git/config", h.decide(wr(filepath.Join(h.Project, "src", ".git", "config"))), Deny, ReasonExecConfig)
}

// An approval given while a path landed somewhere ordinary does not cover
// it once a link sends it into executable configuration.
func TestApprovalBoundToLanding(t *testing.T) {
	h := newHarness(t)
	write := h.fixture("pretooluse-write.json")
	os.MkdirAll(filepath.Join(h.Project, "real"), 0o755)
	os.MkdirAll(filepath.Join(h.Project, ".git", "hooks"), 0o755)
	link := filepath.Join(h.Project, "docs")
	os.Symlink("real", link)
	call := withInput(write, "file_path", filepath.Join(link, "pre-commit"))
	h.approve(h.decide(call))
	os.Remove(link)
	os.Symlink(filepath.Join(".git", "hooks"), link)
	d := h.decide(call)
	if d.Behavior == Allow {
		t.Fatalf("the approval for docs/pre-commit -> real/ covered docs/pre-commit -> .git/hooks/: %+v", d)
	}
	expect(t, "relinked", d, Deny, ReasonExecConfig)
	// Control: linked back, the approval is used.
	os.Remove(link)
	os.Symlink("real", link)
	expect(t, "linked back", h.decide(call), Allow, ReasonExactGrant)
}

// Read-only tools run, unless they read the guard's secrets; subagent
// launches run; every other tool, unknown ones included, needs an approval.
func TestEveryToolDecided(t *testing.T) {
	h := newHarness(t)
	read := h.fixture("pretooluse-read.json")
	home := h.eng().Env.Home
	tool := func(name string, in map[string]any) map[string]any {
		return with(read, func(m map[string]any) { m["tool_name"] = name; m["tool_input"] = in })
	}
	expect(t, "Read a project file", h.decide(tool("Read", map[string]any{"file_path": filepath.Join(h.Project, "main.go")})), Abstain, ReasonReadOnly)
	expect(t, "Read the user settings", h.decide(tool("Read", map[string]any{"file_path": filepath.Join(home, ".claude", "settings.json")})), Abstain, ReasonReadOnly)
	expect(t, "Read the guard state", h.decide(tool("Read", map[string]any{"file_path": filepath.Join(h.Store.Dir, "grants", "g")})), Deny, ReasonProtected)
	expect(t, "Read the keyring", h.decide(tool("Read", map[string]any{"file_path": filepath.Join(home, ".local", "share", "keyrings", "login.keyring")})), Deny, ReasonProtected)
	os.Symlink(h.Store.Dir, filepath.Join(h.Project, "st"))
	expect(t, "Read the state through a link", h.decide(tool("Read", map[string]any{"file_path": filepath.Join(h.Project, "st", "audit")})), Deny, ReasonProtected)
	expect(t, "Grep the project", h.decide(tool("Grep", map[string]any{"pattern": "x", "path": h.Project})), Abstain, ReasonReadOnly)
	expect(t, "Grep home (holds the keyrings)", h.decide(tool("Grep", map[string]any{"pattern": "x", "path": home})), Deny, ReasonProtected)
	expect(t, "Glob the project", h.decide(tool("Glob", map[string]any{"pattern": "**/*.go", "path": h.Project})), Abstain, ReasonReadOnly)
	expect(t, "Glob the keyrings", h.decide(tool("Glob", map[string]any{"pattern": ".local/share/key*/*", "path": home})), Deny, ReasonProtected)
	expect(t, "Glob home for notes (control)", h.decide(tool("Glob", map[string]any{"pattern": "notes/*.md", "path": home})), Abstain, ReasonReadOnly)
	expect(t, "Glob the state from the project", h.decide(tool("Glob", map[string]any{"pattern": "../state/**", "path": h.Project})), Deny, ReasonProtected)
	expect(t, "LS home (control)", h.decide(tool("LS", map[string]any{"path": home})), Abstain, ReasonReadOnly)
	expect(t, "LS the keyrings", h.decide(tool("LS", map[string]any{"path": filepath.Join(home, ".local", "share", "keyrings")})), Deny, ReasonProtected)
	expect(t, "Agent", h.decide(tool("Agent", map[string]any{"prompt": "look", "subagent_type": "Explore"})), Abstain, ReasonSubagent)

	for _, name := range []string{"Monitor", "CronCreate", "Skill", "EnterWorktree", "WebSearch", "Workflow", "SendMessage", "TaskStop", "SomeFutureTool"} {
		d := h.decide(tool(name, map[string]any{"x": "y"}))
		expect(t, name+" without a grant", d, Deny, ReasonNoGrant)
		h.approve(d)
		expect(t, name+" approved exactly (control)", h.decide(tool(name, map[string]any{"x": "y"})), Allow, ReasonExactGrant)
	}
	expect(t, "an MCP tool naming the settings", h.decide(tool("mcp__fs__write", map[string]any{"path": filepath.Join(home, ".claude", "settings.json")})), Deny, ReasonProtected)
}

// Every tool of the pinned client's recorded list is decided: read-only
// tools and subagent launches pass, every other one is denied without a
// grant (Monitor, CronCreate, Skill, EnterWorktree, WebSearch among them).
func TestRecordedToolsDecided(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "tools", "claude-code-2.1.332.txt"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	read := h.fixture("pretooluse-read.json")
	names := strings.Fields(string(b))
	for _, must := range []string{"Monitor", "CronCreate", "Skill", "EnterWorktree", "WebSearch"} {
		if !slices.Contains(names, must) {
			t.Fatalf("%s is not in the recorded list", must)
		}
	}
	for _, name := range names {
		in := map[string]any{"x": "y", "command": "echo hi", "file_path": filepath.Join(h.Project, "a.txt"),
			"notebook_path": filepath.Join(h.Project, "a.ipynb"), "old_string": "a", "new_string": "b", "content": "c"}
		d := h.decide(with(read, func(m map[string]any) { m["tool_name"] = name; m["tool_input"] = in }))
		switch policy.ClassOf(name) {
		case policy.ReadOnly:
			expect(t, name, d, Abstain, ReasonReadOnly)
		case policy.SubagentLaunch:
			expect(t, name, d, Abstain, ReasonSubagent)
		default:
			expect(t, name, d, Deny, ReasonNoGrant)
		}
	}
}

// Ask mode's reason shows where a write lands and the loud warning.
func TestAskModeShowsLanding(t *testing.T) {
	h := newHarness(t)
	os.MkdirAll(filepath.Join(h.Project, ".git"), 0o755)
	os.Symlink(".git", filepath.Join(h.Project, "docs"))
	e := h.eng()
	e.Mode = ModeAsk
	call := withInput(h.fixture("pretooluse-write.json"), "file_path", filepath.Join(h.Project, "docs", "config"))
	d := e.Decide(context.Background(), h.call(call))
	expect(t, "ask mode, docs/config", d, Ask, ReasonExecConfig)
	for _, want := range []string{"resolves to " + filepath.Join(h.Project, ".git", "config"), "EXECUTABLE CONFIGURATION", "writes into a .git/ directory"} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("ask reason lacks %q:\n%s", want, d.Message)
		}
	}
}

// A flood of distinct calls in one session keeps at most the cap, and
// each dropped call is noted in the audit log.
func TestPendingFloodCapped(t *testing.T) {
	h := newHarness(t)
	bash := h.fixture("pretooluse-bash.json")
	n := state.MaxPendingPerSession + 5
	for i := range n {
		expect(t, "flood", h.decide(withInput(bash, "command", fmt.Sprintf("echo %d", i))), Deny, ReasonNoGrant)
	}
	list, _ := h.Store.ListPending()
	if len(list) != state.MaxPendingPerSession {
		t.Errorf("%d pending calls kept, want %d", len(list), state.MaxPendingPerSession)
	}
	drops := 0
	h.eng().Audit.Read(func(_ []byte, e auditEntry) error {
		if e.Reason == "pending_cap" {
			drops++
		}
		return nil
	})
	if drops != 5 {
		t.Errorf("%d drops audited, want 5", drops)
	}
}

func BenchmarkProtectedBash(b *testing.B) {
	t := &testing.T{}
	h := newHarness(t)
	h.t = t
	call := h.call(with(h.fixture("pretooluse-bash.json"), func(m map[string]any) {
		input(m)["command"] = "git log -1 --format=tformat:%H --output=out.txt -- src/main.go src/util.go docs/README.md > log.txt 2>&1"
	}))
	e := h.eng()
	d, err := e.describe(call)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if f := e.protected(call, d); f.Protected() {
			b.Fatal(f.why)
		}
	}
}

// The hook and the scope matcher answer alike: every protected path the
// hook refuses (either tier) is one no file scope covers, through the same
// resolver; an ordinary path is covered by both.
func TestHookAndScopeAgreeOnProtectedPaths(t *testing.T) {
	h := newHarness(t)
	home := h.eng().Env.Home
	rule, err := scope.Parse("Write(//**)")
	if err != nil {
		t.Fatal(err)
	}
	call := func(p string) scope.Call {
		return scope.Call{Tool: "Write", Input: map[string]any{"file_path": p}, Cwd: h.Project, ProjectDir: h.Project, Home: home}
	}
	for _, pc := range protectedCases(h) {
		if pc.name == "guard state" {
			continue // the state dir is the engine's Env, not a scope's
		}
		for _, shape := range []string{"plain", "symlink", "directory symlink"} {
			p := pathShapes[shape](h, pc.path)
			if got := scope.ReasonOf(scope.Match(rule, call(p))); got != scope.ReasonProtectedPath {
				t.Errorf("%s, %s: scope says %q, want %s", pc.name, shape, got, scope.ReasonProtectedPath)
			}
		}
	}
	if err := scope.Match(rule, call(filepath.Join(h.Project, "src", "ok.go"))); err != nil {
		t.Errorf("control: %v", err)
	}
}

// A flood of distinct calls never evicts the call a human has open
// (loopguard show, approve or review pinned it): it stays, and its
// approval still lets it run. Control: unpinned, the same call is the
// first to go.
func TestPendingFloodKeepsOpenedCall(t *testing.T) {
	for _, pin := range []bool{true, false} {
		t.Run(fmt.Sprintf("pinned=%v", pin), func(t *testing.T) {
			h := newHarness(t)
			bash := h.fixture("pretooluse-bash.json")
			mine := withInput(bash, "command", "echo the one the human reads")
			d := h.decide(mine)
			expect(t, "the call", d, Deny, ReasonNoGrant)
			if pin {
				if err := h.Store.Pin(d.Pending, h.now); err != nil {
					t.Fatal(err)
				}
			}
			for i := range state.MaxPendingPerSession + 10 {
				h.now = h.now.Add(time.Millisecond)
				expect(t, "flood", h.decide(withInput(bash, "command", fmt.Sprintf("echo %d", i))), Deny, ReasonNoGrant)
			}
			_, err := h.Store.GetPending(d.Pending)
			if kept := err == nil; kept != pin {
				t.Fatalf("the call was kept: %v, want %v (%v)", kept, pin, err)
			}
			if !pin {
				return
			}
			h.approve(d)
			expect(t, "the approved call", h.decide(mine), Allow, ReasonExactGrant)
		})
	}
}

// When every pending call of the session is held by a live hook, a new
// call is denied as pending_full with a reason that says so, it is not
// queued, and the held calls stay.
func TestPendingFullDenies(t *testing.T) {
	h := newHarness(t)
	bash := h.fixture("pretooluse-bash.json")
	sess := h.call(bash).SessionID
	for i := range state.MaxPendingPerSession {
		d := fmt.Sprintf("%064x", i)
		id := state.PendingID(sess, "main", "Bash", d)
		if err := h.Store.PutPending(&state.Pending{ID: id, Created: h.now, Seen: h.now, Session: sess, Agent: "main",
			Tool: "Bash", Digest: d, Descriptor: []byte("{}"), HeldUntil: h.now.Add(time.Minute), HolderPID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
	}
	d := h.decide(withInput(bash, "command", "echo one too many"))
	expect(t, "one too many", d, Deny, ReasonPendingFull)
	if d.Pending != "" || !strings.Contains(d.Message, "not queued") || !strings.Contains(d.Message, "loopguard review") {
		t.Errorf("pending %q, message:\n%s", d.Pending, d.Message)
	}
	list, _ := h.Store.ListPending()
	if len(list) != state.MaxPendingPerSession {
		t.Errorf("%d pending calls, want the %d held", len(list), state.MaxPendingPerSession)
	}
}

// Under the Vault backend the hook's token file is a secret wherever the
// config puts it (~/vault/token here): the agent's Read of it, and a Bash
// command naming it, are denied whatever grants exist. Control: without the
// Vault backend the same Read is an ordinary read. ~/.vault-token, where
// vault login keeps its token, is a secret either way (policy.HomeSecrets).
func TestVaultTokenFileIsSecret(t *testing.T) {
	h := newHarness(t)
	tok := filepath.Join(h.eng().Env.Home, "vault", "token")
	login := withInput(h.fixture("pretooluse-read.json"), "file_path", filepath.Join(h.eng().Env.Home, ".vault-token"))
	expect(t, "Read of ~/.vault-token with the keyring", h.decide(login), Deny, ReasonProtected)
	read := withInput(h.fixture("pretooluse-read.json"), "file_path", tok)
	cat := withInput(h.fixture("pretooluse-bash.json"), "command", "cat "+tok)
	h.grantScope("Bash(cat *)", "*", "main")
	expect(t, "control: Read of ~/.vault-token with the keyring", h.decide(read), Abstain, ReasonReadOnly)
	if d := h.decide(cat); d.Reason == ReasonProtected {
		t.Errorf("control: cat of ~/.vault-token with the keyring: %+v", d)
	}
	eng := h.eng
	h.eng = func() *Engine {
		e := eng()
		e.Env.Secrets = []string{tok}
		return e
	}
	expect(t, "Read of the Vault token", h.decide(read), Deny, ReasonProtected)
	expect(t, "cat of the Vault token", h.decide(cat), Deny, ReasonProtected)
}

// The agents' configuration directories the hook was told of
// (Env.ClaudeConfigDir, Env.CodexHome: $CLAUDE_CONFIG_DIR and $CODEX_HOME
// as the agent set them) are protected as Claude Code's and Codex's, even
// under a scope that covers everything there. Control: the same writes
// with the engine told of no such directory run under the scope, so the
// protection comes from the Env, not from the names.
func TestAgentConfigDirsFromEnv(t *testing.T) {
	h := newHarness(t)
	cfg := filepath.Join(h.Project, "cfg")
	h.grantScope("Write(cfg/**)", "*", "main")
	write := h.fixture("pretooluse-write.json")
	wr := func(p string) map[string]any {
		return with(write, func(m map[string]any) {
			input(m)["file_path"] = p
			input(m)["content"] = "{}\n"
		})
	}
	claude, codex := filepath.Join(cfg, "claude", "settings.json"), filepath.Join(cfg, "codex", "hooks.json")
	told := func() *Engine {
		e := h.eng()
		e.Env.ClaudeConfigDir, e.Env.CodexHome = filepath.Join(cfg, "claude"), filepath.Join(cfg, "codex")
		return e
	}
	for _, p := range []string{claude, codex} {
		expect(t, "control, no agent dir named: "+p, h.decide(wr(p)), Allow, ReasonScopedGrant)
		d := told().Decide(context.Background(), h.call(wr(p)))
		expect(t, "the agent's own dir: "+p, d, Deny, ReasonProtected)
	}
}

// TestPathCandidatesBounded: a word of thousands of separators gives the
// first and the last maxCandidates paths of each kind, not one per
// separator, each judged against every protected path (the seventy-fifth
// attack run's ls :/:/... of 16 KB held the hook to its deadline).
// Controls: --output=P gives P, and a protected path at the end of a long
// list is still among them.
func TestPathCandidatesBounded(t *testing.T) {
	if got := pathCandidates("--output=/etc/x"); !slices.Contains(got, "/etc/x") {
		t.Errorf("control: --output=/etc/x: %q", got)
	}
	long := strings.Repeat("a:", 4000) + "~/.ssh/id_rsa"
	got := pathCandidates(long)
	if len(got) > 1+2*maxCandidates {
		t.Errorf("a word of 4,000 separators gives %d candidates, want at most %d", len(got), 1+2*maxCandidates)
	}
	if !slices.Contains(got, "~/.ssh/id_rsa") {
		t.Errorf("control: the path after the last separator is not among them")
	}
	if n := len(pathCandidates("-x" + strings.Repeat(".", 4000))); n > 2+2*maxCandidates {
		t.Errorf("a short option glued to 4,000 dots gives %d candidates", n)
	}
}
