// Package doctor is `loopguard doctor`: one check a line of what makes
// the guard real here (the registrations, the hook's binary and settings,
// the sandbox, the confinement, the keyring or Vault, the state and the
// audit log), each that fails with its fix. NewCmd is its entry.
package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/claude"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// minClaudeVersion is the first Claude Code release that honours
// "onFailure": "block".
var minClaudeVersion = [3]int{2, 1, 295}

// managedSettings is Claude Code's managed policy file.
var managedSettings = install.ManagedSettingsPath()

// claudeVersionTimeout bounds `claude --version`.
const claudeVersionTimeout = 3 * time.Second

type checkStatus int

const (
	statusOK checkStatus = iota
	statusWarn
	statusFail
	statusSkip
)

func (s checkStatus) String() string {
	return [...]string{"ok  ", "WARN", "FAIL", "skip"}[s]
}

// checkResult is one line of doctor's report.
type checkResult struct {
	status checkStatus
	name   string
	detail string
	fix    string
}

type doctorEnv struct {
	self     string
	version  string // the build's version, as `loopguard --version` prints it
	settings install.Env
	// lookClaude finds the claude executable ("" when absent).
	lookClaude func() string
	managed    string
	// launcher is the binary doctor tries the launcher with ("" skips
	// the try): this one.
	launcher string
	// agents are the agents to check (--agent); nil: those loopguard is
	// registered with here.
	agents []string
}

// doctorOptions is what doctor needs: a writer for its report and the
// environment it checks (doctorEnv, with --agent).
type doctorOptions struct {
	out io.Writer
	env doctorEnv
}

// Deps is what doctor takes from the program that runs it.
type Deps struct {
	// Version is the build's version (set at link time in main).
	Version string
}

// NewCmd is `loopguard doctor`.
func NewCmd(deps Deps) *cobra.Command {
	var only []string
	cmd := &cobra.Command{
		Use:   "doctor [--agent NAME]",
		Short: "Check that loopguard really guards this project, and say how to fix what does not",
		Long: `Check what makes the guard real, one line per check, and exit non-zero when any
check fails. It checks the agents loopguard is registered with here (by init,
or by hand), or Claude Code when there is none; --agent claude, codex, gemini,
copilot, cursor, qwen or opencode checks that one (repeat it for more).

For Claude Code:

  - every Claude Code settings file that loads for this project (user, project,
    local, managed) parses, registers loopguard for PreToolUse,
    PermissionRequest, PostToolUse, PostToolUseFailure and SessionEnd, with a binary path
    that exists and is this binary, "onFailure": "block" and a timeout above
    the hook's deadline; and none sets "disableAllHooks";
  - the installed Claude Code (claude --version) is 2.1.295 or later, which
    honours onFailure; older versions let a call through when the hook crashes;
  - no other PreToolUse hook rewrites tool input (updatedInput), which would
    race with what was approved;
  - Claude Code's OS sandbox for Bash holds, from the settings of every layer:
    on and not turned off by a project or local file, failIfUnavailable,
    allowUnsandboxedCommands false where a project cannot undo it, no
    excludedCommands, allowAllUnixSockets, filesystem.disabled or
    allowNestedUserNamespaces, no allowWrite or Edit rule reaching your home,
    loopguard's files or the keyring, the deny lists present; bwrap and socat
    installed and a trial bubblewrap run succeeding (README, Sandbox);
  - the OS keyring answers, holds the key, the state directory is private and
    is the one the keyring's anchor names (not removed, replaced or restored
    from an older copy: the hook denies every call as state_lost where it is
    not), and the audit log's hash chain and sealed head verify;
  - with "backend": "vault" instead of the keyring: Vault answers unsealed,
    this machine's token is valid and verifies, and Vault refuses to mint
    with it (doctor asks it to and expects HTTP 403).

For another agent: each hook file of its that registers loopguard is complete,
its timeouts are above the hook's deadline and its fail-open settings are
covered; the agent will run it (Codex trusts it as it is now, Gemini's
switches are on); there is only one registration per agent (Copilot and
Cursor also run Claude Code's); and what the agent's host does with
loopguard's answers: whether it runs the rewritten, confined command of a
scoped grant, and what it does on a hook timeout.

For every agent: first the config file, read as the hook reads it (a file
the hook refuses blocks every call: doctor names it with the line and
column), then the kernel's confinement (Landlock), the keyring or Vault,
the state directory and the audit log.

Without a session bus the keyring check fails at once, with a hint; nothing
waits.`,
		Example: "  loopguard doctor\n  cd my-project && loopguard doctor\n  loopguard doctor --agent codex",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := cli.SelfPath()
			if err != nil {
				return err
			}
			senv, err := cli.SettingsEnv()
			if err != nil {
				return err
			}
			env := doctorEnv{self: self, version: deps.Version, launcher: self, settings: senv, managed: managedSettings, agents: only, lookClaude: func() string {
				p, err := exec.LookPath("claude")
				if err != nil {
					return ""
				}
				return p
			}}
			return doctorRun(cmd.Context(), &doctorOptions{out: cmd.OutOrStdout(), env: env})
		},
	}
	cmd.Flags().StringSliceVar(&only, "agent", nil, "check this agent only: claude, "+all.Others+" (repeatable)")
	return cmd
}

func doctorRun(ctx context.Context, o *doctorOptions) error {
	out, env := o.out, o.env
	selected, line, err := selectAgents(env)
	if err != nil {
		return err
	}
	withClaude := contains(selected, claude.Name)
	// claude --version runs while the other checks do.
	claudeDone := make(chan checkResult, 1)
	if withClaude {
		go func() { claudeDone <- checkClaude(ctx, env.lookClaude) }()
	}

	var results []checkResult
	add := func(r checkResult) {
		results = append(results, r)
		printCheck(out, r)
	}
	add(checkResult{status: statusOK, name: "binary", detail: fmt.Sprintf("%s (loopguard %s)", env.self, env.version)})
	add(checkConfig())
	for _, u := range fsx.Unsupported() {
		add(checkResult{status: statusFail, name: "platform", detail: u.Error() + ": the hook denies every call here",
			fix: "run loopguard on Linux or macOS (on Windows, inside WSL 2)"})
	}
	add(line)
	if withClaude {
		for _, r := range checkSettings(env) {
			add(r)
		}
	}
	for _, r := range checkAgents(env, selected) {
		add(r)
	}
	if withClaude {
		add(<-claudeDone)
		for _, r := range checkSandbox(ctx, env) {
			add(r)
		}
		add(hostLine(claude.Name, claude.Host))
		add(checkTicket(env))
	}
	add(checkConfinement(ctx, env.launcher))
	for _, r := range checkJailHome(env.launcher) {
		add(r)
	}
	var master []byte
	if cfg, err := cli.LoadConfig(); err == nil && cfg.Backend == config.BackendVault {
		for _, r := range checkVault(ctx, cfg) {
			add(r)
		}
	} else {
		var krResults []checkResult
		master, krResults = checkKeyring(ctx)
		for _, r := range krResults {
			add(r)
		}
		add(checkKeyHolder(ctx, env.self, master))
	}
	st, rs := checkStateKept(master)
	for _, r := range rs {
		add(r)
	}
	add(checkAudit(st, master))
	add(checkJailGrant(st, time.Now()))
	add(checkNetworkGrants(st, time.Now()))
	add(checkDangerGrants(st, time.Now()))
	clear(master)

	fails, warns := 0, 0
	for _, r := range results {
		switch r.status {
		case statusFail:
			fails++
		case statusWarn:
			warns++
		}
	}
	if fails > 0 {
		fmt.Fprintf(out, "\n%d check(s) failed: loopguard is NOT guarding this project reliably. Fix them, then run loopguard doctor again.\n", fails)
		return &cli.Exit{Code: cli.ExitError, Err: cli.ErrSilent}
	}
	if warns > 0 {
		fmt.Fprintf(out, "\nAll checks passed, with %d warning(s).\n", warns)
		return nil
	}
	fmt.Fprintln(out, "\nAll checks passed: loopguard guards this project.")
	return nil
}

func printCheck(out io.Writer, r checkResult) {
	fmt.Fprintf(out, "%s  %s: %s\n", r.status, r.name, oneLine(r.detail))
	if r.fix != "" && (r.status == statusFail || r.status == statusWarn) {
		for _, l := range strings.Split(r.fix, "\n") {
			if l != "" {
				fmt.Fprintf(out, "      fix: %s\n", l)
			}
		}
	}
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

// loadedSettings is one settings file that Claude Code reads here.
type loadedSettings struct {
	scope string
	path  string
	data  []byte
}

func checkSettings(env doctorEnv) []checkResult {
	var out []checkResult
	var files []loadedSettings
	seen := map[string]bool{}
	for _, sc := range []install.Scope{install.User, install.Project, install.Local} {
		p, err := install.SettingsPath(sc, env.settings)
		if err != nil {
			out = append(out, checkResult{status: statusFail, name: "settings " + string(sc), detail: err.Error()})
			continue
		}
		if !seen[p] {
			seen[p] = true
			files = append(files, loadedSettings{scope: string(sc), path: p})
		}
	}
	if env.managed != "" {
		files = append(files, loadedSettings{scope: "managed", path: env.managed})
	}

	ours := map[string]int{}        // event -> handlers of loopguard's found
	inSettings := map[string]bool{} // event -> registered in a settings file
	inManaged := map[string]int{}   // event -> handlers in the managed settings
	initScope := ""                 // the first settings file registering loopguard's PreToolUse
	var others []install.Registered
	managedOnly := false // the managed settings allow managed hooks only
	for i := range files {
		f := &files[i]
		data, _, err := install.ReadSettings(f.path)
		name := "settings " + f.path
		if err != nil {
			// A symlinked settings file is still read by Claude Code.
			if errors.Is(err, install.ErrRefused) {
				data, err = os.ReadFile(f.path)
				if err == nil && len(data) > install.MaxFileSize {
					err = fmt.Errorf("%s is larger than %d bytes", f.path, install.MaxFileSize)
				}
			}
			if err != nil {
				out = append(out, checkResult{status: statusFail, name: name, detail: err.Error(), fix: "make it a readable regular file"})
				continue
			}
		}
		if data == nil {
			if f.scope != "managed" {
				out = append(out, checkResult{status: statusSkip, name: name, detail: "not present"})
			}
			continue
		}
		f.data = data
		regs, err := install.Hooks(data, env.self)
		if err != nil {
			var se *install.SyntaxError
			if errors.As(err, &se) {
				se.Path = f.path
			}
			out = append(out, checkResult{status: statusFail, name: name, detail: err.Error(),
				fix: "Claude Code ignores a settings file it cannot parse, hooks included: fix the JSON by hand"})
			continue
		}
		if install.DisablesHooks(data) {
			out = append(out, checkResult{status: statusFail, name: name, detail: `"disableAllHooks": true turns every hook off, loopguard's included`,
				fix: "remove disableAllHooks from " + f.path})
		}
		if f.scope == "managed" {
			managedOnly = !slices.Contains(install.ManagedLocks(f.data), install.KeyManagedHooksOnly)
			if install.CoversEvents(regs) {
				out = append(out, checkManagedInstall(*f, regs)...)
			}
		}
		n := 0
		for _, r := range regs {
			if !r.Ours {
				if r.Event == install.PreToolUse {
					others = append(others, r)
				}
				continue
			}
			n++
			if f.scope == "managed" {
				inManaged[r.Event]++
			} else {
				ours[r.Event]++
				inSettings[r.Event] = true
				if r.Event == install.PreToolUse && initScope == "" {
					initScope = f.scope
				}
			}
			out = append(out, checkHandler(env, f, r)...)
		}
		if n == 0 {
			out = append(out, checkResult{status: statusOK, name: name, detail: "present, registers no loopguard hook"})
		}
	}
	plugin, pout := checkPlugin(env, files)
	out = append(out, pout...)
	inPlugin := map[string]bool{}
	for _, p := range plugin {
		ours[p.r.Event]++
		inPlugin[p.r.Event] = true
		out = append(out, checkHandler(env, &p.f, p.r)...)
	}
	if managedOnly {
		// Claude Code runs no user, project, local or plugin hook then:
		// only the managed registration counts (and a second one is moot).
		if len(inSettings) > 0 || len(inPlugin) > 0 {
			st := statusWarn
			if len(inManaged) == 0 {
				st = statusFail
			}
			out = append(out, checkResult{status: st, name: "managed " + env.managed,
				detail: "allowManagedHooksOnly: Claude Code runs no hook from user, project or local settings or a plugin, loopguard's there included",
				fix:    "register loopguard in the managed settings: sudo loopguard init --managed"})
		}
		clear(ours)
		clear(inSettings)
		clear(inPlugin)
		initScope = ""
	}
	for ev, n := range inManaged {
		ours[ev] += n
	}
	for _, ev := range install.Events {
		if inSettings[ev] && inPlugin[ev] {
			out = append(out, checkResult{status: statusFail, name: "hooks " + ev,
				detail: "loopguard runs twice for every call: from a settings file and from its plugin (two pending calls per call, and one approval is used by one of them)",
				fix:    "keep one: loopguard uninstall (the plugin stays), or claude plugin uninstall " + install.PluginID})
		}
	}
	for _, ev := range install.Events {
		switch {
		case ours[ev] == 0 && slices.Contains(install.Later, ev) && ours[install.PreToolUse] > 0:
			// An older init's registration (or plugin): the rest is there.
			out = append(out, checkResult{status: statusFail, name: "hooks " + ev,
				detail: "loopguard is registered without " + ev + " (an older loopguard registered it): " + install.LaterWhy[ev],
				fix:    updateFix(ev, initScope, inPlugin[install.PreToolUse], inManaged[install.PreToolUse] > 0)})
		case ours[ev] == 0:
			out = append(out, checkResult{status: statusFail, name: "hooks " + ev,
				detail: "loopguard is not registered for " + ev + " in any settings file that loads here, so Claude Code does not run it",
				fix:    "run: loopguard init (or --project / --local for this project only)"})
		default:
			out = append(out, checkResult{status: statusOK, name: "hooks " + ev, detail: fmt.Sprintf("registered (%d)", ours[ev])})
		}
	}
	out = append(out, checkOtherHooks(others)...)
	return out
}

// updateFix says how to bring a registration that lacks event (one of
// install.Later) up to date, in each layer that holds the rest of it: the
// settings file of scope, the plugin, the managed settings.
func updateFix(event, scope string, plugin, managed bool) string {
	var fixes []string
	switch scope {
	case "":
	case string(install.User):
		fixes = append(fixes, "re-run loopguard init to register "+event)
	default:
		fixes = append(fixes, "re-run loopguard init --"+scope+" to register "+event)
	}
	if plugin {
		fixes = append(fixes, "update the plugin, which registers "+event+": claude plugin update "+install.PluginID)
	}
	if managed {
		fixes = append(fixes, "re-run sudo loopguard init --managed to register "+event+" for every user")
	}
	if len(fixes) == 0 {
		return "re-run loopguard init to register " + event
	}
	return strings.Join(fixes, "\n")
}

// checkHandler checks one handler of loopguard's.
func checkHandler(env doctorEnv, f *loadedSettings, r install.Registered) []checkResult {
	name := fmt.Sprintf("%s %s", r.Event, f.path)
	h := r.Handler
	fixInit := "run: loopguard init --" + f.scope
	if f.scope == "managed" {
		fixInit = "ask whoever manages " + f.path + " to correct it"
	}
	var out []checkResult
	bin := h.Command
	runs := "this binary"
	if f.scope == pluginScope {
		fixInit = "run: claude plugin update " + install.PluginID + " (or install it again)"
		p, r, ok := pluginBinary(bin)
		if !ok {
			return []checkResult{r}
		}
		bin = p
	}
	hook, hookErr := h.Hook(env.self)
	if len(h.Args) == 0 {
		bin = hook.Binary
		// A two-phase registration's hooks before the call are in shell
		// form on purpose: Claude Code runs them through the wrapper,
		// which the hook proves is in front (install.HandlerFor).
		if hookErr != nil || !hook.Ticket || install.After(r.Event) {
			out = append(out, checkResult{status: statusWarn, name: name, detail: "registered in shell form; a shell sits between Claude Code and the hook",
				fix: fixInit + " (registers the exec form, with args)"})
		}
	}
	switch fi, err := os.Stat(bin); {
	case !filepath.IsAbs(bin):
		out = append(out, checkResult{status: statusFail, name: name, detail: fmt.Sprintf("the registered binary %q is not an absolute path; it depends on Claude Code's PATH", bin), fix: fixInit})
	case errors.Is(err, fs.ErrNotExist):
		out = append(out, checkResult{status: statusFail, name: name,
			detail: fmt.Sprintf("the registered binary %s does not exist: Claude Code cannot start the hook", bin),
			fix:    fixInit + " (from the loopguard you want to use)"})
	case err != nil:
		out = append(out, checkResult{status: statusFail, name: name, detail: fmt.Sprintf("the registered binary %s cannot be checked: %v", bin, err), fix: fixInit})
	case fi.Mode()&0o111 == 0 || fi.IsDir():
		out = append(out, checkResult{status: statusFail, name: name, detail: fmt.Sprintf("the registered binary %s is not executable", bin), fix: fixInit})
	default:
		selfFi, err := os.Stat(env.self)
		_, twin := policy.Binaries(env.self)
		twinFi, twinErr := os.Stat(twin)
		switch {
		case twinErr == nil && os.SameFile(fi, twinFi) && filepath.Base(bin) == filepath.Base(twin):
			// loopguard-hook beside this binary: it must decide as this one does.
			runs = policy.HookBinaryName + " beside this binary (the same build)"
			if cfg, err := cli.LoadConfig(); err == nil && cfg.Backend == config.BackendVault {
				runs = policy.HookBinaryName + " beside this binary (the same build; under the Vault backend it runs this binary on every call, a process start more: `" + strings.TrimPrefix(fixInit, "run: ") + "` registers this one)"
			}
			if err := cli.SameBuild(env.self, twin); err != nil {
				out = append(out, checkResult{status: statusFail, name: name, detail: "the registered hook binary: " + err.Error(),
					fix: "install both binaries again from one build (make install), then " + fixInit})
			}
		case err == nil && os.SameFile(fi, selfFi):
		default:
			out = append(out, checkResult{status: statusFail, name: name,
				detail: fmt.Sprintf("the registered binary %s is not this binary (%s) nor its %s", bin, env.self, policy.HookBinaryName),
				fix:    fixInit + " with the loopguard you mean to use, or run that one's doctor"})
		}
	}
	if h.OnFailure != install.OnFailureBlock {
		what := "missing"
		if h.OnFailure != "" {
			what = fmt.Sprintf("%q", h.OnFailure)
		}
		out = append(out, checkResult{status: statusFail, name: name,
			detail: fmt.Sprintf(`onFailure is %s, not "block": if the hook cannot start, crashes or times out, Claude Code lets the call through`, what),
			fix:    fixInit + ` (sets "onFailure": "block")`})
	}
	if !install.After(r.Event) {
		if missed := install.Unguarded(r.Matcher, policy.KnownTools); len(missed) > 0 {
			out = append(out, checkResult{status: statusFail, name: name,
				detail: fmt.Sprintf("the matcher %q leaves tools unguarded: %s run without loopguard", r.Matcher, strings.Join(missed, ", ")),
				fix:    fixInit + ` (registers the matcher "*"; loopguard itself lets read-only tools through)`})
		}
	}
	if hookErr != nil {
		out = append(out, checkResult{status: statusFail, name: name,
			detail: fmt.Sprintf("the hook refuses its registered command line (%v): it denies every call", hookErr), fix: fixInit})
	}
	deadline, wait := hook.Deadline, hook.Wait
	if deadline == 0 {
		deadline = agents.DefaultDeadline
	}
	if wait > 0 && h.StatusMessage == "" {
		out = append(out, checkResult{status: statusWarn, name: name,
			detail: "no statusMessage: while a call is held, the agent's window says only that a hook runs, not that it waits for you in `loopguard review`",
			fix:    fixInit + " (sets the statusMessage)"})
	}
	need := int((deadline + wait).Seconds())
	// No timeout means Claude Code's default of 600s.
	if h.Timeout != 0 && h.Timeout <= need {
		out = append(out, checkResult{status: statusFail, name: name,
			detail: fmt.Sprintf("timeout %ds is not above the hook's own deadline and wait (%s): Claude Code may stop the hook before it answers", h.Timeout, deadline+wait),
			fix:    fixInit})
	}
	if len(out) == 0 {
		out = append(out, checkResult{status: statusOK, name: name, detail: fmt.Sprintf("runs %s, onFailure block, timeout %ds, matcher %s", runs, h.Timeout, r.Matcher)})
	}
	return out
}

// maxHookScan bounds how much of another hook's script is read.
const maxHookScan = 1 << 20

// checkOtherHooks flags PreToolUse hooks that may rewrite tool input.
func checkOtherHooks(others []install.Registered) []checkResult {
	if len(others) == 0 {
		return []checkResult{{status: statusOK, name: "other PreToolUse hooks", detail: "none"}}
	}
	var out []checkResult
	for _, r := range others {
		cmd := r.Handler.Command
		if r.Handler.Type != "command" {
			out = append(out, checkResult{status: statusWarn, name: "other PreToolUse hook",
				detail: fmt.Sprintf("a %s hook (matcher %q) could return updatedInput, which replaces the input after approval", r.Handler.Type, r.Matcher),
				fix:    "make sure it never returns updatedInput; loopguard's PostToolUse check flags such calls as executed_input_changed"})
			continue
		}
		if rewrites(cmd, r.Handler.Args) {
			out = append(out, checkResult{status: statusFail, name: "other PreToolUse hook",
				detail: fmt.Sprintf("%s (matcher %q) mentions updatedInput: it rewrites tool input, racing with what was approved", cmd, r.Matcher),
				fix:    "remove it or stop it from returning updatedInput; deny and explain instead"})
			continue
		}
		out = append(out, checkResult{status: statusWarn, name: "other PreToolUse hook",
			detail: fmt.Sprintf("%s (matcher %q) runs alongside loopguard; if it ever returns updatedInput, the executed input differs from the approved one", cmd, r.Matcher),
			fix:    "check that it never returns updatedInput (loopguard's PostToolUse check flags such calls as executed_input_changed)"})
	}
	return out
}

// rewrites reports whether the hook's script file (the command, or its
// first argument for an interpreter) contains "updatedInput".
func rewrites(cmd string, args []string) bool {
	cands := []string{cmd}
	if len(args) == 0 {
		cands = strings.Fields(cmd)
	} else {
		cands = append(cands, args...)
	}
	for _, c := range cands {
		c = strings.Trim(c, `"'`)
		if !filepath.IsAbs(c) {
			continue
		}
		f, err := os.Open(c)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(f, maxHookScan))
		f.Close()
		if bytes.Contains(b, []byte("updatedInput")) {
			return true
		}
	}
	return false
}

// versionRe is compiled on first use, not on every hook call's start.
var versionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`) })

func checkClaude(ctx context.Context, look func() string) checkResult {
	name := "claude code"
	bin := look()
	if bin == "" {
		return checkResult{status: statusWarn, name: name,
			detail: "claude not found in PATH: cannot check that it honours onFailure (needs 2.1.295 or later)",
			fix:    "run this where claude is on PATH, or check `claude --version` yourself"}
	}
	ctx, cancel := context.WithTimeout(ctx, claudeVersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.WaitDelay = 500 * time.Millisecond
	var stdout bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &stdout, max: 4096}
	err := cmd.Run()
	m := versionRe().FindStringSubmatch(stdout.String())
	if err != nil || m == nil {
		return checkResult{status: statusWarn, name: name,
			detail: fmt.Sprintf("`%s --version` gave no version (%v): cannot check that it honours onFailure", bin, err),
			fix:    "check `claude --version` yourself: 2.1.295 or later is needed"}
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	vs := fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
	for i := range v {
		if v[i] != minClaudeVersion[i] {
			if v[i] < minClaudeVersion[i] {
				return checkResult{status: statusWarn, name: name,
					detail: "Claude Code " + vs + " does NOT honour onFailure: if the hook crashes, cannot start or times out, THE CALL RUNS UNGUARDED",
					fix:    "update Claude Code to 2.1.295 or later (npm install -g @anthropic-ai/claude-code@latest, or claude update)"}
			}
			break
		}
	}
	return checkResult{status: statusOK, name: name, detail: "Claude Code " + vs + " honours onFailure block"}
}

type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// checkKeyring probes the keyring and loads the key; master is nil when
// the key is not available.
func checkKeyring(ctx context.Context) (master []byte, out []checkResult) {
	pctx, cancel := context.WithTimeout(ctx, keyring.DefaultTimeout)
	defer cancel()
	if err := keyring.Probe(pctx); err != nil {
		out = append(out, checkResult{status: statusFail, name: "keyring", detail: err.Error() + ": every call will be denied (keyring_unavailable)", fix: hintOf(err)})
		out = append(out, checkResult{status: statusSkip, name: "key", detail: "needs the keyring"})
		return nil, out
	}
	out = append(out, checkResult{status: statusOK, name: "keyring", detail: "the OS keyring answers"})
	master, err := cli.LoadMaster(ctx)
	if err != nil {
		out = append(out, checkResult{status: statusFail, name: "key", detail: err.Error(), fix: hintOf(err)})
		return nil, out
	}
	keys, _, err := token.DeriveKeys(master)
	if err != nil {
		clear(master)
		out = append(out, checkResult{status: statusFail, name: "key", detail: err.Error(), fix: "run: loopguard key rotate"})
		return nil, out
	}
	out = append(out, checkResult{status: statusOK, name: "key", detail: "present (key id " + keys.ID + ")"})
	return master, out
}

// checkConfig reads the config file as the hook does, before anything
// else (config.Load, the hook's own reading): a file the hook refuses
// blocks every call.
func checkConfig() checkResult {
	path, cfg, err := cli.LoadConfigPath()
	switch {
	case err != nil && path == "":
		return checkResult{status: statusFail, name: "config", detail: err.Error() + ": the hook blocks every call (internal_error)"}
	case err != nil:
		return checkResult{status: statusFail, name: "config", detail: err.Error() + ": the hook blocks every call (internal_error) until it is fixed", fix: hintOf(err)}
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return checkResult{status: statusOK, name: "config", detail: path + " is not there: the defaults"}
	}
	backend := cfg.Backend
	if backend == "" {
		backend = config.BackendKeyring
	}
	return checkResult{status: statusOK, name: "config", detail: fmt.Sprintf("%s (backend %s, %d trusted dirs)", path, backend, len(cfg.Trusted()))}
}

func hintOf(err error) string {
	var h cli.Hinter
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

func checkState() (*state.Store, checkResult) {
	dir, err := state.DefaultDir()
	if err != nil {
		return nil, checkResult{status: statusFail, name: "state dir", detail: err.Error()}
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, checkResult{status: statusFail, name: "state dir", detail: dir + " does not exist", fix: "run: loopguard init"}
	}
	st, err := state.Open(dir)
	if err != nil {
		return nil, checkResult{status: statusFail, name: "state dir", detail: err.Error(), fix: hintOf(err)}
	}
	return st, checkResult{status: statusOK, name: "state dir", detail: dir + " (private, mode 0700)"}
}

func checkAudit(st *state.Store, master []byte) checkResult {
	if st == nil || master == nil {
		return checkResult{status: statusSkip, name: "audit log", detail: "needs the state dir and the key"}
	}
	_, seal, err := token.DeriveKeys(master)
	if err != nil {
		return checkResult{status: statusFail, name: "audit log", detail: err.Error()}
	}
	defer clear(seal)
	rep, err := cli.AuditLog(st).Verify(seal)
	if err != nil {
		return checkResult{status: statusFail, name: "audit log", detail: err.Error(), fix: "run: loopguard audit verify"}
	}
	if !rep.OK() {
		p := rep.Problems[0]
		return checkResult{status: statusFail, name: "audit log",
			detail: fmt.Sprintf("%d problem(s), first: %s: %s", len(rep.Problems), p.Kind, p.Msg),
			fix:    "run: loopguard audit verify (for every problem)"}
	}
	return checkResult{status: statusOK, name: "audit log", detail: fmt.Sprintf("%d entries, chain and sealed head verify", rep.Entries)}
}
