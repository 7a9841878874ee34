package initcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/internal/udiff"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/ticket"
)

// ScopeFlags are --user, --project and --local, of init and uninstall.
type ScopeFlags struct{ User, Project, Local bool }

// Add adds the three flags to cmd; what says what the command does there.
func (s *ScopeFlags) Add(cmd *cobra.Command, what string) {
	cmd.Flags().BoolVar(&s.User, "user", false, what+" ~/.claude/settings.json (all your projects)")
	cmd.Flags().BoolVar(&s.Project, "project", false, what+" .claude/settings.json in this directory (shared with the repository)")
	cmd.Flags().BoolVar(&s.Local, "local", false, what+" .claude/settings.local.json at the repository root (this checkout only)")
	cmd.MarkFlagsMutuallyExclusive("user", "project", "local")
}

// Scopes returns the chosen scope, or all when none is chosen.
func (s *ScopeFlags) Scopes(all []install.Scope) []install.Scope {
	switch {
	case s.User:
		return []install.Scope{install.User}
	case s.Project:
		return []install.Scope{install.Project}
	case s.Local:
		return []install.Scope{install.Local}
	}
	return all
}

// DefaultWait is how long the hook holds a call for a human by default:
// long enough to read it in 'loopguard review', far below Claude Code's
// 10-minute default hook timeout.
const DefaultWait = 2 * time.Minute

type initOptions struct {
	out, errOut io.Writer

	scope  ScopeFlags
	mode   string
	wait   time.Duration
	tools  string
	dryRun bool
	binary string // for tests; "" means this binary
	agent  string // "" or "claude": Claude Code; else see initAgentRun

	noSandbox bool // leave Claude Code's sandbox settings alone (cli.ResolveSandboxPaths)
	managed   bool // write Claude Code's managed settings, as root (managed.go)

	// Offers (offers.go): the read-only preset and the toolchain
	// directories found in PATH.
	preset     string // mint this preset without asking
	noPreset   bool   // do not offer it
	noJail     bool   // do not mint the jail grant (offers.go offerJail)
	toolchains string // ask, all or none

	// ticket: two-phase enforcement (package ticket): Bash runs through
	// loopguard's wrapper, Claude Code's CLAUDE_CODE_SHELL_PREFIX.
	ticket bool
	// ticketAuto: neither --ticket nor --no-ticket was given; init turns
	// two-phase enforcement on where it holds (autoTicket).
	ticketAuto bool
	noTicket   bool

	deps Deps
}

// Deps is what init takes from the root command: the steps of the audit
// log's seal and the state directory's anchor, and the grant verb's run,
// which init's offers (the preset, the jail) mint through.
type Deps struct {
	// Seal stops init on a state directory the keyring's anchor does not
	// name, seals the audit log and anchors the directory (seal: the
	// audit seal key, nil when it cannot be had; created: the key is new).
	// It returns the seal key, nil when the log could not be sealed.
	Seal func(st *state.Store, seal []byte, created bool, out, errOut io.Writer) ([]byte, error)
	// Grant mints g, as loopguard grant does.
	Grant func(ctx context.Context, g Grant) error
}

// Grant is a standing grant init mints: the rules, or a preset, shown on
// Tty and confirmed by Confirm (given the grant's digest).
type Grant struct {
	Tty        io.Writer
	Store      *state.Store
	Confirm    func(digest string) error
	Rules      []string
	Preset     string
	TTL        time.Duration
	Agent      string
	AnySession bool
}

// NewCmd is loopguard init.
func NewCmd(d Deps) *cobra.Command {
	o := initOptions{deps: d}
	cmd := &cobra.Command{
		Use:   "init [--user | --project | --local]",
		Short: "Create the key and state, and register loopguard as Claude Code's hook",
		Long: `Set loopguard up in one step:

  1. create the master key in the OS keyring, if there is none (an existing key
     is never replaced);
  2. create the state directory (mode 0700) and seal the empty audit log;
  3. register this binary in a Claude Code settings file for PreToolUse,
     PermissionRequest, PostToolUse, PostToolUseFailure (where Claude Code
     reports a call that failed) and SessionEnd (where the hook sweeps for
     a call the session's end killed), in exec form, with a timeout above the
     hook's own deadline and "onFailure": "block", so that a hook that cannot
     start or times out blocks the call instead of letting it through.

The settings file is --user (~/.claude/settings.json, the default), --project
(.claude/settings.json here) or --local (.claude/settings.local.json at the
repository root). Every other setting and hook in it is kept; running init
again changes nothing; the write is atomic, and the original bytes are kept in
the state directory so that 'loopguard uninstall' puts them back. A file that
is not valid JSON, a symlink or read-only is refused.

By default every tool is guarded (the matcher "*"): loopguard itself lets
read-only tools (Read, Glob, Grep, ToolSearch...) and subagent launches
through unless they touch a protected resource, and asks an approval for
every other tool, unknown future ones included. --tools sets another Claude
Code matcher; 'loopguard doctor' then names the tools it leaves unguarded.

Modes: enforce (default) denies every call without an approval; ask hands the
decision to Claude Code's own dialog, with loopguard's full rendering as the
reason (weaker: the dialog is in the agent's window); audit only logs what
enforce would have done (for a trial). In enforce mode a call without an
approval is held (--wait, 2m by default) until you approve or deny it in
'loopguard review', so the agent needs no retry; --wait 0 denies at once and
the agent retries after 'loopguard approve ID'.

init also turns on Claude Code's own OS sandbox for Bash in the same file
(README, Sandbox): approved commands then cannot read the key, write the
settings or loopguard's state, or reach the network. On Linux it needs
bubblewrap and socat (init installs nothing; it says what is missing).
--no-sandbox leaves the sandbox settings alone; loopguard then decides whether
a call runs but cannot confine what it does.`,
		Example: `  loopguard init
  loopguard init --project --dry-run
  loopguard init --local --mode audit
  loopguard init --wait 2m
  loopguard init --tools 'Bash|Edit|Write'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("wait") && (o.mode != hooks.ModeEnforce || (o.agent != "" && o.agent != "claude")) {
				// The default wait is Claude Code's enforce mode's.
				o.wait = 0
			}
			o.out, o.errOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			o.ticketAuto = !cmd.Flags().Changed("ticket") && !o.noTicket
			if o.noTicket {
				o.ticket = false
			}
			return initRun(cmd.Context(), &o)
		},
	}
	o.scope.Add(cmd, "register in")
	cmd.Flags().StringVar(&o.mode, "mode", hooks.ModeEnforce, "enforce, ask or audit")
	cmd.Flags().DurationVar(&o.wait, "wait", DefaultWait, "hold a call without an approval until a human decides in 'loopguard review', at most this long (0: deny at once; the agent retries after an approval)")
	cmd.Flags().StringVar(&o.tools, "tools", install.DefaultMatcher, "the Claude Code matcher of the tools to guard")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the change to the settings file and do nothing")
	cmd.Flags().BoolVar(&o.noSandbox, "no-sandbox", false, "do not turn on Claude Code's OS sandbox for Bash (weaker: approved code runs unconfined)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "register with another agent: codex, gemini, copilot, cursor, qwen or opencode (see README)")
	cmd.Flags().StringVar(&o.preset, "preset", "", "grant this preset of standing rules (readonly: ls, cat, git status/log/diff...) without asking")
	cmd.Flags().BoolVar(&o.noPreset, "no-preset", false, "do not offer the read-only preset")
	cmd.Flags().BoolVar(&o.noJail, "no-jail", false, "do not grant the jail (Bash(*): every Bash call runs jailed without a decision unless it needs to leave the jail)")
	cmd.Flags().StringVar(&o.toolchains, "toolchains", "ask", "trust the toolchain directories found in PATH (~/.cargo/bin, ~/go/bin...): ask (on a terminal), all or none")
	cmd.Flags().BoolVar(&o.managed, "managed", false, "as root: register loopguard in Claude Code's managed settings for every user, so that no user, project or agent can take it off")
	cmd.Flags().BoolVar(&o.ticket, "ticket", false, "two-phase enforcement (Claude Code): every Bash command runs through loopguard's wrapper (CLAUDE_CODE_SHELL_PREFIX) and only on a ticket the hook issued for it, so a hook that hung, crashed or was not loaded runs nothing (the default with --user, the sandbox and mode enforce when the wrapper is installed)")
	cmd.Flags().BoolVar(&o.noTicket, "no-ticket", false, "do not turn two-phase enforcement on (an approved call that needs the network then cannot reach it inside the sandbox)")
	cmd.MarkFlagsMutuallyExclusive("ticket", "no-ticket")
	cmd.MarkFlagsMutuallyExclusive("preset", "no-preset")
	for _, f := range []string{"user", "project", "local", "agent", "preset"} {
		cmd.MarkFlagsMutuallyExclusive("managed", f)
	}
	return cmd
}

func initRun(ctx context.Context, o *initOptions) error {
	out, errOut := o.out, o.errOut
	if err := cli.RefuseInAgent(); err != nil {
		return err
	}
	if err := checkInitOptions(o); err != nil {
		return err
	}
	bin := o.binary
	if bin == "" {
		var err error
		if bin, err = cli.SelfPath(); err != nil {
			return err
		}
	}
	if o.agent != "" && o.agent != "claude" {
		return initAgentRun(ctx, o, bin)
	}
	if o.managed {
		return initManagedRun(o, bin)
	}
	// The hook registered: loopguard-hook beside bin when it is of the same
	// build (it starts faster), else bin's own `hook`.
	hookBin, why := cli.HookBinary(bin)
	env, err := cli.SettingsEnv()
	if err != nil {
		return err
	}
	scope := o.scope.Scopes([]install.Scope{install.User})[0]
	path, err := install.SettingsPath(scope, env)
	if err != nil {
		return err
	}
	if agent, other, where := cli.OwnRegistrationRunning(env, scope, bin); agent != "" {
		return cli.WithHint(fmt.Errorf("%s already runs loopguard from %s and runs the hooks of %s too: a second registration would run it twice for every call", agent, other, path),
			"keep that one and register nothing more, or remove it first (loopguard uninstall --agent "+agent+" --"+where+")")
	}
	opts := install.Options{Binary: hookBin, Mode: o.mode, Wait: o.wait, Deadline: agents.DefaultDeadline, Matcher: o.tools, Ticket: o.ticket}
	// Another layer that runs loopguard already (the managed settings, the
	// plugin): a second registration would run the hook twice per call.
	elsewhere, err := hooksElsewhere(env, path, install.ManagedSettingsPath())
	if err != nil {
		return err
	}
	opts.NoHooks = elsewhere != ""
	if o.ticketAuto {
		opts.Ticket = autoTicket(o, scope, opts)
	}
	var sbx *cli.SandboxPaths
	if !o.noSandbox {
		p, err := cli.ResolveSandboxPaths(bin)
		if err != nil {
			return err
		}
		sbx, opts.Sandbox = &p, p.Spec()
		if opts.Ticket {
			p.Exclude = cli.SandboxExclusions(hookBin)
			opts.Sandbox.Exclude = p.Exclude
		} else {
			// Never the entries without the wrapper (an earlier init's).
			opts.Sandbox.Unexclude = cli.SandboxExclusions(hookBin)
		}
	}

	apply := func(backups string, dry bool) (*install.Result, error) {
		return install.Apply(path, backups, opts, dry)
	}
	backups, done, err := checkApply(out, path, o.dryRun, apply)
	if err != nil || done {
		return err
	}

	// The key and state first: hooks registered without them would deny
	// every call.
	st, seal, err := initKeyAndState(ctx, o.deps, out, errOut)
	if err != nil {
		return err
	}
	if err := offerToolchains(out, o); err != nil {
		return err
	}

	if err := cli.EnsureGoCache(sbx); err != nil {
		return err
	}
	res, err := apply(backups, false)
	if err != nil {
		return err
	}
	switch {
	case elsewhere != "":
		fmt.Fprintf(out, "Hooks: %s runs loopguard for every tool call; init registers no hook of its own, so it never runs twice per call.\n", elsewhere)
		if res.Changed && install.Registers(res.Old, hookBin) {
			fmt.Fprintf(out, "       Removed init's own registration from %s.\n", path)
		}
	case !res.Changed:
		fmt.Fprintf(out, "Hooks: %s already registers loopguard this way; nothing changed.\n", path)
	default:
		verb := "updated"
		if !res.Existed {
			verb = "created"
		}
		fmt.Fprintf(out, "Hooks: %s %s: %s run %s hook (mode %s", path, verb, install.EventList(), hookBin, o.mode)
		if o.wait > 0 {
			fmt.Fprintf(out, ", wait %s", o.wait)
		}
		fmt.Fprintf(out, ") for tools matching %s, with onFailure block.\n", o.tools)
		ticketNote(out, path, opts)
		hookBinaryNote(out, bin, why)
		if res.Existed {
			fmt.Fprintf(out, "Backup of the original: %s (used by loopguard uninstall).\n", res.Backup)
		}
		if err := cli.Record(st, seal, audit.Entry{Decision: "init", Mode: o.mode, Principal: cli.Principal(),
			Detail: path}); err != nil {
			return err
		}
	}
	cli.SandboxNotes(out, errOut, sbx, scope)
	if abi := confine.ABI(); abi >= confine.MinABI {
		fmt.Fprintf(out, "Confinement: Landlock ABI %d: a Bash call a scoped grant covers runs as analysed (the command rewritten, every word quoted) and confined by the kernel to its grant's capability (read-only for the preset, project-write for build and test rules).\n", abi)
	} else {
		fmt.Fprintf(errOut, "loopguard: WARNING: this kernel has no usable Landlock (ABI %d, confinement needs %d): Bash calls that scoped grants cover run as analysed but NOT confined; a program that does more than its words say is not stopped. Prefer exact approvals, or a kernel with Landlock (Linux 6.7 or later).\n", abi, confine.MinABI)
	}
	if err := offerPreset(ctx, out, st, o, scope); err != nil {
		return err
	}
	if err := offerJail(ctx, out, st, o, scope); err != nil {
		return err
	}
	if res.Changed && scope == install.Project {
		fmt.Fprintf(errOut, "loopguard: warning: %s is shared with the repository, and the hook path %s is this machine's\n", path, hookBin)
		fmt.Fprintln(errOut, "loopguard: hint: a teammate without loopguard at that path gets every guarded call blocked (onFailure block); for a personal setup use --local")
	}
	if isTemporary(bin) {
		fmt.Fprintf(errOut, "loopguard: warning: %s looks like a temporary build; the hook breaks when it is deleted\n", bin)
		fmt.Fprintln(errOut, "loopguard: hint: install it with `make install` in your clone, then run `loopguard init` from there")
	}
	fmt.Fprintln(out, "Next: run `loopguard doctor` to check that the guard is real. New and resumed Claude Code sessions pick the hooks up.")
	return nil
}

// checkInitOptions refuses flags init cannot act on, each with the flag
// that would work; it fills --toolchains' default.
func checkInitOptions(o *initOptions) error {
	switch o.mode {
	case hooks.ModeEnforce, hooks.ModeAsk, hooks.ModeAudit:
	default:
		return cli.WithHint(fmt.Errorf("unknown mode %q", o.mode), "use --mode enforce, --mode ask or --mode audit")
	}
	if o.wait < 0 || o.wait > time.Hour {
		return cli.WithHint(fmt.Errorf("--wait %s is out of range", o.wait), "use a duration between 0 and 1h, e.g. --wait 2m")
	}
	if o.wait > 0 && o.mode != hooks.ModeEnforce {
		return cli.WithHint(errors.New("--wait works only with --mode enforce"), "drop --wait, or use --mode enforce")
	}
	if o.preset != "" {
		if _, err := scope.Preset(o.preset, ""); err != nil {
			return cli.WithHint(err, "use --preset readonly, or --no-preset")
		}
	}
	if o.toolchains == "" {
		o.toolchains = "ask"
	}
	if o.toolchains != "ask" && o.toolchains != "all" && o.toolchains != "none" {
		return cli.WithHint(fmt.Errorf("unknown --toolchains %q", o.toolchains), "use --toolchains ask, all or none")
	}
	if strings.TrimSpace(o.tools) == "" {
		return cli.WithHint(errors.New("--tools is empty"), "leave --tools out to guard every tool, or name them: --tools 'Bash|Edit|Write'")
	}
	return nil
}

// hookBinaryNote says why the hooks run bin's own `hook` and not the
// faster loopguard-hook (why is cli.HookBinary's; "" says nothing).
func hookBinaryNote(out io.Writer, bin, why string) {
	if why != "" {
		fmt.Fprintf(out, "Hook binary: %s hook, because %s (%s beside it, from the same build, starts each call faster).\n", bin, why, policy.HookBinaryName)
	}
}

// isTemporary reports a binary built by `go run` or in a temp directory.
func isTemporary(bin string) bool {
	return strings.Contains(bin, string(filepath.Separator)+"go-build")
}

// initConfig writes the config file when there is none: the default trusted
// executable directories plus those where go and node resolve now (the
// toolchains a scoped grant such as Bash(go test ./...) needs). An existing
// config is kept as it is.
func initConfig(out io.Writer) error {
	path, err := config.DefaultPath()
	if err != nil {
		return err
	}
	_, found, err := config.Load(path)
	if err != nil {
		return err
	}
	if found {
		fmt.Fprintf(out, "Config: %s kept.\n", path)
		return nil
	}
	extra := config.Toolchains(os.Getenv("PATH"), "go", "node")
	c := config.Config{TrustedDirs: append(append([]string(nil), policy.DefaultTrusted...), extra...)}
	if err := config.Save(path, c); err != nil {
		return err
	}
	fmt.Fprintf(out, "Config: %s written; scoped Bash grants may run executables from: %s.\n", path, strings.Join(c.TrustedDirs, " "))
	if len(extra) > 0 {
		fmt.Fprintf(out, "        %s %s added because go or node resolve there now; edit trusted_dirs in the config to change that.\n",
			strings.Join(extra, " "), map[bool]string{true: "was", false: "were"}[len(extra) == 1])
	}
	return nil
}

// checkApply runs apply as a dry run before anything is created, so that a
// file loopguard must refuse stops init there; with --dry-run (dryRun) it
// prints what init would change and done is true. backups is the backup
// directory apply is to write with (cli.BackupDir).
func checkApply(out io.Writer, path string, dryRun bool, apply func(backups string, dry bool) (*install.Result, error)) (backups string, done bool, err error) {
	dir, err := state.DefaultDir()
	if err != nil {
		return "", false, err
	}
	backups = cli.BackupDir(dir)
	res, err := apply(backups, true)
	if err != nil {
		return "", false, err
	}
	if dryRun {
		printDryRun(out, path, dir, res)
		return "", true, nil
	}
	return backups, false, nil
}

// printDryRun says what init --dry-run would change in path (res from a
// initKeyAndState creates the key (if there is none), the state directory
// and the config, and seals the empty audit log: what every hook needs
// before it is registered. It returns the store and the audit seal key.
func initKeyAndState(ctx context.Context, d Deps, out, errOut io.Writer) (*state.Store, []byte, error) {
	kctx, cancel := cli.KeyringCtx(ctx)
	created, err := keyring.Create(kctx)
	cancel()
	if err != nil {
		return nil, nil, err
	}
	if created {
		fmt.Fprintf(out, "Key: created in the OS keyring (service %s, user %s).\n", keyring.Service, keyring.Account)
	} else {
		fmt.Fprintln(out, "Key: already in the OS keyring, kept.")
	}
	st, err := cli.OpenStore()
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(out, "State: %s (mode 0700).\n", st.Dir)
	if err := initConfig(out); err != nil {
		return nil, nil, err
	}
	_, seal, err := cli.LoadKeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	if seal, err = d.Seal(st, seal, created, out, errOut); err != nil {
		return nil, nil, err
	}
	return st, seal, nil
}

// dry Apply) and what else it would create; the same for every agent.
func printDryRun(out io.Writer, path, dir string, res *install.Result) {
	if !res.Changed {
		fmt.Fprintf(out, "%s already registers loopguard this way; init would change nothing there.\n", path)
	} else {
		fmt.Fprint(out, udiff.Diff(path, res.Old, res.New))
	}
	fmt.Fprintf(out, "Dry run: nothing was written. init would also create the key in the OS keyring if there is none, the state dir %s, and the config file if there is none.\n", dir)
}

// autoTicket reports whether init turns two-phase enforcement on without
// being asked: for Claude Code's user settings with its sandbox and mode
// enforce, when no other layer runs loopguard and the wrapper is installed
// beside the hook. There the approved call that needs the network, or
// more, runs outside Claude Code's sandbox on its ticket
// (confine.Exclusions);
// elsewhere (--project, --local, the plugin, --no-sandbox) it stays off
// unless --ticket asks for it.
func autoTicket(o *initOptions, scope install.Scope, opts install.Options) bool {
	if scope != install.User || o.noSandbox || o.mode != hooks.ModeEnforce || opts.NoHooks {
		return false
	}
	w := policy.Launcher(opts.Binary)
	fi, err := os.Stat(w)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 && !strings.ContainsAny(w, " \t\n\r\x00'\"\\") &&
		ticket.DirUsable()
}

// ticketNote says what two-phase enforcement registered, if it did.
func ticketNote(out io.Writer, path string, opts install.Options) {
	if w := opts.Wrapper(); w != "" {
		fmt.Fprintf(out, "Two-phase: %s sets %s=%s: every Bash command runs only on a ticket the hook issued for exactly it; a hook that hung, crashed or was not loaded runs nothing (no_decision). The hooks are registered in shell form so that they run through it.\n", path, install.PrefixEnv, w)
	}
}
