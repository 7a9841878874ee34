package doctor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
)

// sandboxLayer is one settings file's sandbox settings, as Claude Code
// loads it here.
type sandboxLayer struct {
	scope string // managed, user, project or local
	path  string
	s     *install.SandboxSettings
}

// The layers in Claude Code's order of precedence, highest first.
var layerOrder = []string{"managed", "local", "project", "user"}

// bwrapTrialTimeout bounds the trial run of bubblewrap.
const bwrapTrialTimeout = 5 * time.Second

// checkSandbox proves the sandbox boundary from the effective settings of
// every layer, then checks that the sandbox can start here.
func checkSandbox(ctx context.Context, env doctorEnv) []checkResult {
	p, err := cli.ResolveSandboxPaths(env.self)
	if err != nil {
		return []checkResult{{status: statusFail, name: "sandbox", detail: err.Error()}}
	}
	var layers []sandboxLayer
	for _, sc := range []install.Scope{install.User, install.Project, install.Local} {
		path, err := install.SettingsPath(sc, env.settings)
		if err != nil {
			continue // reported by the settings checks
		}
		layers = append(layers, sandboxLayer{scope: string(sc), path: path})
	}
	if env.managed != "" {
		layers = append(layers, sandboxLayer{scope: "managed", path: env.managed})
	}
	var kept []sandboxLayer
	for _, l := range layers {
		data, err := os.ReadFile(l.path)
		if err != nil || len(data) > install.MaxFileSize {
			continue // absent, or reported by the settings checks
		}
		if l.s, err = install.ReadSandbox(data); err != nil {
			continue // reported by the settings checks
		}
		kept = append(kept, l)
	}
	out := judgeSandbox(kept, p, env.settings.Cwd)
	if runtime.GOOS == "linux" {
		out = append(out, checkSandboxRuntime(ctx, exec.LookPath, runBwrapTrial)...)
	}
	return out
}

// effective is the value of a sandbox boolean that wins across layers
// (skip says which layers Claude Code ignores for it), and the layer it
// came from.
func effective(layers []sandboxLayer, key string, skip func(sandboxLayer) bool) (val, set bool, from sandboxLayer) {
	for _, scope := range layerOrder {
		for _, l := range layers {
			if l.scope != scope || (skip != nil && skip(l)) {
				continue
			}
			if v, ok := l.s.Bools[key]; ok {
				return v, true, l
			}
		}
	}
	return false, false, sandboxLayer{}
}

func layer(layers []sandboxLayer, scope string) *sandboxLayer {
	for i := range layers {
		if layers[i].scope == scope {
			return &layers[i]
		}
	}
	return nil
}

// fixIn names where a fix goes: a managed file is someone else's.
func fixIn(l sandboxLayer, what string) string {
	if l.scope == "managed" {
		return "ask whoever manages " + l.path + " to " + what
	}
	return what + " in " + l.path
}

// judgeSandbox is the settings part of checkSandbox: pure, for the tests.
// Its steps, in the order doctor prints them: is the sandbox on, does it
// fail closed, may a call leave it, which settings open it, which paths
// it lets sandboxed commands reach, and do the deny lists cover the guard.
func judgeSandbox(layers []sandboxLayer, p cli.SandboxPaths, project string) []checkResult {
	var v sandboxVerdicts
	if !slices.ContainsFunc(layers, func(l sandboxLayer) bool { return l.s.Present }) {
		v.fail("enabled", sandboxOffDetail, sandboxInitFix)
		return v
	}
	v.judgeEnabled(layers)
	v.judgeFailIfUnavailable(layers)
	v.judgeUnsandboxedCommands(layers)
	for _, l := range layers {
		v.judgeOpeners(l, p)
	}
	v.judgeReachablePaths(layers, p, project)
	v.judgeDenyLists(layers, p, project)
	return v
}

// sandboxVerdicts are judgeSandbox's results, in order.
type sandboxVerdicts []checkResult

func (v *sandboxVerdicts) fail(name, detail, fix string) {
	*v = append(*v, checkResult{status: statusFail, name: "sandbox " + name, detail: detail, fix: fix})
}

func (v *sandboxVerdicts) warn(name, detail, fix string) {
	*v = append(*v, checkResult{status: statusWarn, name: "sandbox " + name, detail: detail, fix: fix})
}

func (v *sandboxVerdicts) ok(name, detail string) {
	*v = append(*v, checkResult{status: statusOK, name: "sandbox " + name, detail: detail})
}

// sandboxInitFix is the fix for a sandbox setting that init writes.
const sandboxInitFix = "run: loopguard init (without --no-sandbox); it writes the sandbox settings in ~/.claude/settings.json"

const sandboxOffDetail = "no settings file turns the sandbox on: any code an approved call runs can read the key, forge grants, rewrite the settings and reach the network"

// judgeEnabled: the sandbox is on. A managed allowUnsandboxedCommands:false
// (or allowManagedDomainsOnly) makes Claude Code ignore a project or local
// "enabled": false.
func (v *sandboxVerdicts) judgeEnabled(layers []sandboxLayer) {
	mandate := false
	if m := layer(layers, "managed"); m != nil {
		if val, set := m.s.Bools["allowUnsandboxedCommands"]; set && !val {
			mandate = true
		}
		if m.s.Bools["network.allowManagedDomainsOnly"] {
			mandate = true
		}
	}
	enabled, set, from := effective(layers, "enabled", func(l sandboxLayer) bool {
		return mandate && (l.scope == "project" || l.scope == "local")
	})
	switch {
	case !set:
		v.fail("enabled", sandboxOffDetail, sandboxInitFix)
	case !enabled:
		v.fail("enabled", fmt.Sprintf(`"sandbox.enabled": false in the %s settings %s turns the sandbox off for this project`, from.scope, from.path),
			fixIn(from, `remove "enabled": false from "sandbox"`))
	default:
		v.ok("enabled", "on ("+from.scope+" settings)")
	}
}

// judgeFailIfUnavailable: Claude Code refuses to run commands unsandboxed
// when the sandbox cannot start.
func (v *sandboxVerdicts) judgeFailIfUnavailable(layers []sandboxLayer) {
	if val, set, from := effective(layers, "failIfUnavailable", nil); !set || !val {
		where := "no settings file sets it"
		fix := sandboxInitFix
		if set {
			where, fix = fmt.Sprintf("false in the %s settings %s", from.scope, from.path), fixIn(from, `set "failIfUnavailable": true`)
		}
		v.fail("failIfUnavailable", where+": when bubblewrap or socat is missing, Claude Code runs every command UNSANDBOXED with only a warning", fix)
	} else {
		v.ok("failIfUnavailable", "true: Claude Code refuses to start without a working sandbox")
	}
}

// judgeUnsandboxedCommands: a call cannot ask to leave the sandbox.
// allowUnsandboxedCommands defaults to true. A false holds against the
// project only from managed (or --settings) or user settings.
func (v *sandboxVerdicts) judgeUnsandboxedCommands(layers []sandboxLayer) {
	m, u := layer(layers, "managed"), layer(layers, "user")
	mv, mset := false, false
	if m != nil {
		mv, mset = m.s.Bools["allowUnsandboxedCommands"]
	}
	uv, uset := false, false
	if u != nil {
		uv, uset = u.s.Bools["allowUnsandboxedCommands"]
	}
	auc := "allowUnsandboxedCommands"
	switch {
	case mset && !mv:
		v.ok(auc, "false in the managed settings: dangerouslyDisableSandbox is ignored")
	case mset && mv:
		v.fail(auc, "true in the managed settings "+m.path+": any call with dangerouslyDisableSandbox runs outside the sandbox",
			fixIn(*m, `set "allowUnsandboxedCommands": false`))
	case uset && !uv:
		v.ok(auc, "false in the user settings, which project settings cannot undo")
	default:
		var weak *sandboxLayer
		for _, sc := range []string{"local", "project"} {
			if l := layer(layers, sc); l != nil {
				if val, set := l.s.Bools[auc]; set && !val {
					weak = l
					break
				}
			}
		}
		if weak != nil {
			v.warn(auc, fmt.Sprintf("false only in the %s settings %s, which a settings.local.json can undo; loopguard's hook still refuses scoped grants for dangerouslyDisableSandbox", weak.scope, weak.path),
				`set "allowUnsandboxedCommands": false in the "sandbox" of ~/.claude/settings.json too (loopguard init --user writes it)`)
		} else {
			v.fail(auc, "not false in the user or managed settings (the default is true): any call with dangerouslyDisableSandbox runs outside the sandbox", sandboxInitFix)
		}
	}
}

// networkExclusionOnly reports whether cmds, the excludedCommands of layer
// l, are init's entries alone: the user's settings, the entries that take
// the launcher's escalation forms out of the sandbox (confine.Exclusions,
// the launcher beside this binary: the network form's, and the unconfined
// and git forms', which an earlier init did not write), and the same file setting
// that launcher as the shell prefix (two-phase enforcement), which runs
// such a command only on the hook's ticket. Anything wider, another
// layer's entries, or the entries without the wrapper in front fails; why
// says which, or what the entries do.
func networkExclusionOnly(l sandboxLayer, p cli.SandboxPaths, cmds []string) (bool, string) {
	self := p.Binary
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	launcher := policy.Launcher(self)
	want := confine.Exclusions(launcher)
	seen := map[string]bool{}
	for _, c := range cmds {
		if !slices.Contains(want, c) || seen[c] {
			return false, ""
		}
		seen[c] = true
	}
	if l.scope != "user" {
		return false, " (loopguard's entries belong in your user settings, where a repository cannot add its own)"
	}
	if w := l.s.Env[install.PrefixEnv]; w != policy.Launcher(p.Binary) && w != launcher {
		return false, fmt.Sprintf(" (loopguard's entries, but %s does not set %s to %s: without the wrapper such a command runs with no ticket)", l.path, install.PrefixEnv, launcher)
	}
	why := fmt.Sprintf("%s lists only loopguard's entries %q: each runs outside the sandbox only on the hook's ticket for exactly it (the wrapper %s is the shell prefix); an approved call that needs the network runs in the launcher's own jail", l.path, cmds, launcher)
	if seen[want[1]] {
		why += ", one that needs more (git push, a write to your home) unconfined"
	} else {
		why += "; one that needs more runs inside the sandbox, where it cannot work (`loopguard init` adds the entry that runs it unconfined)"
	}
	if seen[want[2]] {
		why += ", and one that writes git's own directory in the jail with it"
	} else {
		why += "; one that writes git's own directory (git add -A && git commit) runs inside the sandbox, whose placeholders make git add -A fail (`loopguard init` adds the entry that runs it in the jail)"
	}
	return true, why
}

// judgeOpeners: the settings of layer l that open the sandbox.
func (v *sandboxVerdicts) judgeOpeners(l sandboxLayer, p cli.SandboxPaths) {
	if cmds := l.s.Lists["excludedCommands"]; len(cmds) > 0 {
		if ok, why := networkExclusionOnly(l, p, cmds); ok {
			v.ok("excludedCommands", why)
		} else {
			v.fail("excludedCommands", fmt.Sprintf("%s lists %q: those commands run OUTSIDE the sandbox, even with allowUnsandboxedCommands false%s", l.path, cmds, why),
				fixIn(l, `remove "excludedCommands" from "sandbox"`)+" (loopguard init writes the entries it needs in your user settings)")
		}
	}
	for _, b := range []struct{ key, why string }{
		{"network.allowAllUnixSockets", "sandboxed commands may open Unix sockets again: the D-Bus session bus, so the key in the keyring"},
		{"filesystem.disabled", "no filesystem isolation: sandboxed commands write as you"},
		{"allowNestedUserNamespaces", "sandboxed commands may create user namespaces, which can bypass denyWrite and the write-protected settings"},
	} {
		if l.s.Bools[b.key] {
			v.fail(b.key, fmt.Sprintf("true in %s: %s", l.path, b.why), fixIn(l, fmt.Sprintf("remove %q from \"sandbox\"", b.key)))
		}
	}
	if l.s.Bools["enableWeakerNestedSandbox"] {
		v.warn("enableWeakerNestedSandbox", fmt.Sprintf("true in %s: sandboxed commands see the host's /proc (needed in unprivileged containers only)", l.path),
			fixIn(l, `remove "enableWeakerNestedSandbox" unless bubblewrap cannot mount /proc here`))
	}
	if l.s.Bools["autoAllowBashIfSandboxed"] {
		v.warn("autoAllowBashIfSandboxed", fmt.Sprintf("true in %s: Claude Code approves sandboxed commands without a prompt (loopguard's hook still decides)", l.path),
			fixIn(l, `set "autoAllowBashIfSandboxed": false`))
	}
}

// guardPath is a path of the guard's that a sandboxed command must not
// write, and what it is.
type guardPath struct{ what, path string }

// judgeReachablePaths: no layer's allowWrite entry or Edit(...) allow rule
// lets sandboxed commands write the home directory or the guard's paths,
// and no allowRead entry re-opens its secrets.
func (v *sandboxVerdicts) judgeReachablePaths(layers []sandboxLayer, p cli.SandboxPaths, project string) {
	protected := []guardPath{
		{"loopguard's state", p.State}, {"loopguard's config", p.Config}, {"the loopguard binary", p.Binary}, {"the keyring files", p.Keyrings},
	}
	if p.Hook != "" {
		protected = append(protected, guardPath{"loopguard's hook binary", p.Hook})
	}
	for _, l := range p.Launchers {
		protected = append(protected, guardPath{"loopguard's launcher", l})
	}
	opened := 0
	for _, l := range layers {
		opened += v.judgeWritable(l, protected, p, project)
		opened += v.judgeReadable(l, p, project)
	}
	if opened == 0 {
		v.ok("writable paths", "no allowWrite entry or Edit rule reaches your home directory, loopguard's state, config or binary, or the keyring files")
	}
}

// judgeWritable judges layer l's allowWrite entries and Edit rules, and
// returns how many open what they should not.
func (v *sandboxVerdicts) judgeWritable(l sandboxLayer, protected []guardPath, p cli.SandboxPaths, project string) int {
	opened := 0
	dir := filepath.Dir(l.path)
	entries := append([]string(nil), l.s.Lists["filesystem.allowWrite"]...)
	for _, r := range l.s.EditRule {
		entries = append(entries, "Edit("+r+")")
	}
	for _, e := range entries {
		raw := strings.TrimSuffix(strings.TrimPrefix(e, "Edit("), ")")
		key := `"allowWrite" entry`
		if strings.HasPrefix(e, "Edit(") {
			key = "permissions.allow rule"
		}
		for _, r := range resolved(install.SandboxPathReadings(raw, p.Home, dir, project)) {
			if p.Undo != "" && within(r, p.Undo) {
				// init's own: the launcher records there from inside the
				// sandbox; the jail reaches it no more than the state.
				continue
			}
			what := ""
			if within(p.Home, r) {
				what = "your whole home directory"
			}
			for _, pr := range protected {
				if what == "" && (within(pr.path, r) || within(r, pr.path)) {
					what = pr.what + " (" + pr.path + ")"
				}
			}
			if what != "" {
				opened++
				v.fail("writable paths", fmt.Sprintf("%s %s in %s lets sandboxed commands write %s", key, e, l.path, what),
					fixIn(l, "remove "+e+" (or narrow it to a directory that holds none of these)"))
				break
			}
			if within(r, p.Home) && !within(r, p.GoCache) && !within(r, project) {
				opened++
				v.warn("writable paths", fmt.Sprintf("%s %s in %s lets sandboxed commands write %s, in your home directory: what they plant there (shell startup files, tool configs, caches) may run later outside the sandbox", key, e, l.path, r),
					fixIn(l, "remove "+e+" unless nothing there is ever run or trusted outside the sandbox"))
				break
			}
		}
	}
	return opened
}

// judgeReadable judges layer l's allowRead entries, and returns how many
// re-open the guard's secrets.
func (v *sandboxVerdicts) judgeReadable(l sandboxLayer, p cli.SandboxPaths, project string) int {
	opened := 0
	dir := filepath.Dir(l.path)
	for _, e := range l.s.Lists["filesystem.allowRead"] {
		for _, r := range resolved(install.SandboxPathReadings(e, p.Home, dir, project)) {
			if within(r, p.State) || within(r, p.Keyrings) || within(p.State, r) || within(p.Keyrings, r) || (p.VaultToken != "" && within(p.VaultToken, r)) {
				opened++
				v.fail("readable paths", fmt.Sprintf(`"allowRead" entry %s in %s re-opens loopguard's state, the keyring files or the Vault token to sandboxed commands`, e, l.path),
					fixIn(l, "remove "+e+" from allowRead"))
				break
			}
		}
	}
	return opened
}

// judgeDenyLists: the deny lists merge across layers, so each protected
// path needs an entry that covers it under every reading.
func (v *sandboxVerdicts) judgeDenyLists(layers []sandboxLayer, p cli.SandboxPaths, project string) {
	need := []struct{ key, what, path string }{
		{"filesystem.denyWrite", "loopguard's state", p.State},
		{"filesystem.denyWrite", "loopguard's config", p.Config},
		{"filesystem.denyWrite", "the loopguard binary", p.Binary},
		{"filesystem.denyRead", "loopguard's state", p.State},
		{"filesystem.denyRead", "the keyring files", p.Keyrings},
	}
	if p.Hook != "" {
		need = append(need, struct{ key, what, path string }{"filesystem.denyWrite", "loopguard's hook binary", p.Hook})
	}
	for _, l := range p.Launchers {
		need = append(need, struct{ key, what, path string }{"filesystem.denyWrite", "loopguard's launcher", l})
	}
	if p.VaultToken != "" {
		need = append(need, struct{ key, what, path string }{"filesystem.denyRead", "the Vault token", p.VaultToken},
			struct{ key, what, path string }{"filesystem.denyWrite", "the Vault token", p.VaultToken})
	}
	missing := 0
	for _, n := range need {
		if !covered(layers, n.key, n.path, p.Home, project) {
			missing++
			v.fail(strings.TrimPrefix(n.key, "filesystem."), fmt.Sprintf("no settings file lists %s (%s) in sandbox.%s", n.what, n.path, n.key), sandboxInitFix)
		}
	}
	if missing == 0 {
		v.ok("deny lists", "denyWrite covers loopguard's state, config and binary; denyRead covers "+p.Secrets())
	}
}

// resolved adds, to each path that exists, where its symlinks lead: the
// sandbox binds the target, so an allowWrite entry that is a link to the
// home directory opens the home directory.
func resolved(paths []string) []string {
	out := paths
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// covered reports whether some layer's list key has an entry that covers
// target under every reading.
func covered(layers []sandboxLayer, key, target, home, project string) bool {
	for _, l := range layers {
		for _, e := range l.s.Lists[key] {
			rs := install.SandboxPathReadings(e, home, filepath.Dir(l.path), project)
			if len(rs) > 0 && !slices.ContainsFunc(rs, func(r string) bool { return !within(target, r) }) {
				return true
			}
		}
	}
	return false
}

// within reports whether path is dir or below it.
func within(path, dir string) bool { return fsx.Within(path, dir) }

// checkSandboxRuntime checks that the sandbox can start here: bwrap and
// socat on PATH, and a trial bubblewrap run with a fresh /proc (a /proc that
// cannot be mounted is not caught by failIfUnavailable: every command then
// fails).
func checkSandboxRuntime(ctx context.Context, look func(string) (string, error), trial func(context.Context, string) error) []checkResult {
	var out []checkResult
	var missing []string
	bwrap := ""
	for _, t := range cli.SandboxTools {
		p, err := look(t.Cmd)
		if err != nil {
			missing = append(missing, t.Pkg)
			continue
		}
		if t.Cmd == "bwrap" {
			bwrap = p
		}
	}
	if len(missing) > 0 {
		out = append(out, checkResult{status: statusFail, name: "sandbox tools",
			detail: "not installed: " + strings.Join(missing, ", ") + ": with failIfUnavailable Claude Code refuses to start; without it, commands run unsandboxed",
			fix:    "install them: sudo apt-get install " + strings.Join(missing, " ") + " (or your system's equivalent)"})
	} else {
		out = append(out, checkResult{status: statusOK, name: "sandbox tools", detail: "bwrap and socat are installed"})
	}
	if bwrap == "" {
		return append(out, checkResult{status: statusSkip, name: "sandbox trial", detail: "needs bwrap"})
	}
	if err := trial(ctx, bwrap); err != nil {
		return append(out, checkResult{status: statusFail, name: "sandbox trial",
			detail: "bubblewrap cannot start a sandbox with a fresh /proc here: " + err.Error() + "; every sandboxed command would fail",
			fix: "allow unprivileged user namespaces (e.g. Ubuntu: an AppArmor profile for bwrap, or sysctl kernel.apparmor_restrict_unprivileged_userns=0);\n" +
				`in an unprivileged container only: "enableWeakerNestedSandbox": true in "sandbox" (weaker: the host's /proc stays visible)`})
	}
	return append(out, checkResult{status: statusOK, name: "sandbox trial", detail: "bubblewrap starts a sandbox with its own user, pid and network namespaces and a fresh /proc"})
}

// runBwrapTrial runs true inside bubblewrap the way Claude Code does.
func runBwrapTrial(ctx context.Context, bwrap string) error {
	ctx, cancel := context.WithTimeout(ctx, bwrapTrialTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true")
	cmd.WaitDelay = 500 * time.Millisecond
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 1024}
	if err := cmd.Run(); err != nil {
		if s := strings.TrimSpace(stderr.String()); s != "" {
			return fmt.Errorf("%w: %s", err, s)
		}
		return err
	}
	return nil
}

var execLookPath = exec.LookPath
