// Package hookmain is the hook process: what `loopguard hook` and the
// hook-only binary loopguard-hook run for one tool call. It reads the
// arguments and the configuration, builds the engine and hands the payload
// to the agent's adapter (package agents).
//
// It exists so that the hook can be built without the CLI and the Vault
// client (cmd/loopguard-hook): a process starts faster the less it links,
// and the hook starts on every tool call. A binary built without the Vault
// client runs the full binary beside it when the configuration says
// backend: vault (see Options.Vault).
package hookmain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/claude"
	"github.com/loopguard/loopguard/agents/opencode"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/notify"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/register"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/ticket"
	"github.com/loopguard/loopguard/token"
	"github.com/loopguard/loopguard/undo"
)

// Options are what the binary running the hook brings.
type Options struct {
	// Vault returns the Vault custody for a config with backend: vault.
	// Nil in a binary built without the Vault client: Run then replaces
	// the process with the full loopguard binary beside this one (Exec).
	Vault func(config.Config) (hooks.Custody, error)
	// Exec replaces the process with the program at path (nil:
	// syscall.Exec, exec_unix.go). It returns only on failure.
	Exec func(path string, argv, env []string) error
	// InFront proves that the ticket wrapper installed at wrapper stands
	// in front of this session's shell (nil: ticket.InFront, the hook's
	// parent is the wrapper; InWrapper's: this process is).
	InFront func(wrapper string) error

	// read, when set, gives the setup (InWrapper's, read already);
	// otherwise readSetup reads it.
	read func() setup
}

// Run is `loopguard hook [agent] [flags]`, args without the word "hook":
// the coding agent runs it for every tool call. It never returns 1: every
// failure is a deny in the agent's format. Without an agent name it is
// Claude Code's registration, which Cursor and Copilot CLI run too: the
// payload says which agent sent it (see Agent).
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, o Options) int {
	// The command line is read as init wrote it (register). On bad
	// arguments c holds what was read before them, the agent above all:
	// the deny is in that agent's format.
	c, parseErr := register.ParseArgs(args)
	if c.Event == hooks.SessionEnd && (c.Agent == "" || c.Agent == claude.Name) {
		// No call: nothing to decide, a sweep to run.
		return sessionEnd(stdin, stderr, c.Deadline)
	}
	opts := Agent(c.Agent)
	opts.Event = c.Event
	opts.Deadline = c.Deadline + c.Wait
	// The configuration is read before the payload, inside the deadline and
	// the recovery: under the Vault backend a binary without the Vault
	// client hands the call, stdin unread, to the full binary.
	var setup setup
	// The state directory, once read, for the answers the run records
	// itself (its deadline may answer while the setup is being read).
	var stateDir atomic.Value
	read := readSetup
	if o.read != nil {
		read = o.read
	}
	opts.BeforeRead = func() {
		setup = read()
		stateDir.Store(setup.dir)
		if setup.err == nil && setup.cfg.Backend == config.BackendVault && o.Vault == nil {
			setup.err = execFull(setup.self, args, o.Exec)
		}
	}
	opts.Record = func(call *hooks.Call, event, pending string, d hooks.Decision) {
		dir, _ := stateDir.Load().(string)
		RecordAnswer(dir, c.Mode, call, event, pending, d)
	}
	if c.Ticket && (c.Agent == "" || c.Agent == claude.Name) {
		inFront := o.InFront
		if inFront == nil {
			inFront = ticket.InFront
		}
		opts.Before, opts.After = ticketSteps(func() string { return wrapperFor(setup.self) }, inFront)
	}
	if c.Agent == opencode.Name && c.Ticket {
		opencodeOptions(&opts, func() string { return wrapperFor(setup.self) })
	}
	if h, ok := shellHosts[c.Agent]; ok && c.Ticket {
		shellToolOptions(&opts, h, func() string { return wrapperFor(setup.self) })
	}
	// A confined call that can write the project runs with undo's
	// record around it: its project's watcher, started here (outside the
	// agent's sandbox, which the launcher runs inside), lets the record
	// look again only at what changed since the last one. Best effort:
	// without it the record walks the project.
	before := opts.After
	opts.After = func(ctx context.Context, eng *hooks.Engine, call *hooks.Call, d hooks.Decision) hooks.Decision {
		if before != nil {
			d = before(ctx, eng, call, d)
		}
		if d.Behavior == hooks.Allow && call.Event == hooks.PreToolUse && d.UpdatedInput != nil && setup.self != "" {
			if cp, err := policy.ParseCapability(d.Capability); err == nil && cp.Write {
				_ = undo.StartWatching(setup.dir, eng.ProjectOf(call), policy.Launcher(setup.self))
			}
		}
		if call.Event == hooks.PostToolUse || call.Event == hooks.PostToolUseFailure {
			d = recoverAfter(ctx, eng.Env.Launcher, call, eng.ProjectOf(call), d)
		}
		return d
	}
	opts.NewEngine = func() (*hooks.Engine, error) {
		if parseErr != nil {
			return nil, parseErr
		}
		eng, err := newEngine(setup, o, c.Mode, c.Wait, hooks.RegistrationName(c.Agent, c.Event, c.Mode, c.Scope))
		if err == nil {
			// Two-phase enforcement for Claude Code: init's
			// excludedCommands entries route, the ticket permits.
			eng.Env.LeaveSandbox = c.Ticket && (c.Agent == "" || c.Agent == claude.Name)
		}
		return eng, err
	}
	return agents.Run(context.Background(), opts, stdin, stdout, stderr)
}

// Agent picks the adapter for `loopguard hook [agent]`. A named agent's
// payload must be that agent's; an unnamed registration (Claude Code's,
// which Cursor and Copilot CLI also run) recognises the payload's agent and
// answers in that agent's format, and Claude Code's when the payload cannot
// be read. An unknown name denies in the form every agent blocks on.
func Agent(name string) agents.Options {
	if name == "" {
		return agents.Options{Detect: all.Detect, Fallback: claude.Adapter{}}
	}
	a, err := all.Lookup(name)
	if err != nil {
		return agents.Options{Detect: func(map[string]any) (agents.Adapter, error) { return nil, err }}
	}
	return agents.Options{Fallback: a, Detect: func(m map[string]any) (agents.Adapter, error) {
		if d, err := all.Detect(m); err == nil && d.Name() != claude.Name && d.Name() != a.Name() {
			return a, fmt.Errorf("registered for %s but the payload is %s's", a.Name(), d.Name())
		}
		return a, nil
	}}
}

// RecordAnswer records an answer the engine did not (the run's deadline,
// an engine that could not be built) in the audit log, without waiting for
// its lock (audit.AppendLate: what the run waited for may be that lock),
// and makes the pending record the engine made say what the model was
// told. Nothing is written where no state directory exists yet.
func RecordAnswer(dir, mode string, c *hooks.Call, event, pending string, d hooks.Decision) {
	if dir == "" {
		var err error
		if dir, err = state.DefaultDir(); err != nil {
			return
		}
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return
	}
	if event == "" {
		event = "unknown"
	}
	e := audit.Entry{Time: time.Now().UTC(), Event: event, Decision: d.Behavior, Reason: d.Reason, Pending: pending,
		Mode: mode, Told: hooks.Told(d), Detail: "answered by the hook itself: the decision engine did not answer"}
	if d.Reason != hooks.ReasonDeadline {
		e.Detail = "answered by the hook itself: the decision engine could not be built"
	}
	if c != nil {
		e.Session, e.Agent, e.AgentType, e.Tool, e.Summary = c.SessionID, c.Agent(), c.AgentType, c.ToolName, hooks.CallSummary(c)
	}
	_ = audit.Open(filepath.Join(dir, "audit")).AppendLate(e)
	if pending != "" {
		if st, err := state.Open(dir); err == nil {
			_ = st.Retell(pending, d.Reason, "the model was told "+d.Reason+": the hook's deadline answered before its decision")
		}
	}
}

// setup is what the engine is built from, read once.
type setup struct {
	dir     string // state directory
	cfgPath string
	cfg     config.Config
	self    string // this binary, symlinks resolved ("" if unknown)
	err     error
}

// readSetup reads the setup (a variable so that a test can make it hang or
// panic).
var readSetup = loadSetup

func loadSetup() setup {
	var s setup
	if s.dir, s.err = state.DefaultDir(); s.err != nil {
		return s
	}
	if s.cfgPath, s.err = config.DefaultPath(); s.err != nil {
		return s
	}
	// A config that is there but wrong stops the hook (a deny): no silent
	// fall back to other trusted directories.
	if s.cfg, _, s.err = config.Load(s.cfgPath); s.err != nil {
		return s
	}
	if self, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(self); err == nil {
			self = r
		}
		s.self = self
	}
	return s
}

// ErrNoFullBinary is why a hook-only binary under the Vault backend denies:
// the full binary it hands the call to is not beside it, or did not start.
var ErrNoFullBinary = errors.New("the Vault backend is decided by the full loopguard binary, and it could not be run")

// newEngine builds the engine; registration names the hook registration
// this process runs for (its agent, event and mode as registered).
func newEngine(s setup, o Options, mode string, wait time.Duration, registration string) (*hooks.Engine, error) {
	if s.err != nil {
		return nil, s.err
	}
	vault := s.cfg.Backend == config.BackendVault
	if !vault {
		if err := stateKept(s.dir); err != nil {
			return nil, err
		}
	}
	st, err := state.Open(s.dir)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	var custody hooks.Custody
	if s.cfg.Backend == config.BackendVault {
		if o.Vault == nil { // execFull returned, with its error in s.err
			return nil, ErrNoFullBinary
		}
		if custody, err = o.Vault(s.cfg); err != nil {
			return nil, err
		}
	}
	log := audit.Open(filepath.Join(s.dir, "audit"))
	eng := &hooks.Engine{
		Custody: custody,
		Store:   st,
		Audit:   log,
		LoadKey: anchoredKey(s.dir, log, KeyHolder(s.self, s.cfg)),
		Env: hooks.Env{
			Path:            os.Getenv("PATH"),
			Home:            home,
			ProjectDir:      os.Getenv("CLAUDE_PROJECT_DIR"),
			Self:            s.self,
			StateDir:        s.dir,
			ConfigDir:       filepath.Dir(s.cfgPath),
			Trusted:         s.cfg.Trusted(),
			Launcher:        launcher(s.self),
			Confiner:        confiner(s.self),
			ClaudeConfigDir: os.Getenv("CLAUDE_CONFIG_DIR"),
			CodexHome:       os.Getenv("CODEX_HOME"),
			Secrets:         secrets(s.cfg, home),
			XDGConfigHome:   os.Getenv("XDG_CONFIG_HOME"),
			GitConfigGlobal: os.Getenv("GIT_CONFIG_GLOBAL"),
		},
		Mode:         mode,
		Wait:         wait,
		Registration: registration,
	}
	eng.OnHeld = heldNotifier(s.cfg, eng.Audit)
	if wait > 0 {
		// The agent's client signals a hook it stops waiting for (Claude
		// Code sends SIGTERM on Esc): a held call is let go and recorded
		// as held_abandoned instead of vanishing from the audit log.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		eng.Abandoned = ch
	}
	return eng, nil
}

// stateKept refuses a state directory that loopguard set up and that is
// gone: removed (state.Open would make it again, empty, and the grants and
// the audit log it held would be lost without a word). A directory set up
// by init has an identity or a sealed head (audit.Log.Kept: two lstats, no
// keyring); only one that has neither (before init, or lost) costs a read
// of the keyring's anchor, which says which. Without an anchor (before
// init, or set up before anchors) or a keyring, the hook goes on as
// before: the allow paths need the key anyway.
func stateKept(dir string) error {
	if audit.Open(filepath.Join(dir, "audit")).Kept() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyring.DefaultTimeout)
	defer cancel()
	rec, err := keyring.LoadAnchor(ctx, keyring.AnchorAccount(dir))
	if err != nil || rec == "" {
		return nil
	}
	return &audit.LostError{Dir: dir, Why: "it holds neither its identity nor a sealed audit log: it was removed (and is gone, or was made again empty)"}
}

// anchoredKey is the engine's LoadKey: the key, and with it, in the same
// keyring read, the anchor of the state directory dir, checked against the
// directory and its log (audit.Log.CheckAnchor: the identity, and the
// sealed line the anchor names still in place). A directory that is not
// the one anchored (replaced, or rolled back to an older copy) is an
// audit.LostError, which the engine denies as state_lost. Without an
// anchor (set up before anchors) it is the key alone. Only the paths that
// need the key wait for it: the read-only path never calls it, and a deny
// only when it checked a grant first; a Bash call that a scoped grant on
// disk may allow starts it ahead, beside its analysis (hooks.Engine's
// keyAhead), and a deny does not wait for that read.
//
// The key's holder of dir (package keyring: a process of the user's that
// read both once, on a socket in dir) answers first; where none does, the
// read is the keyring's, and after it the hook starts one with holder
// (loopguard-exec beside it) for the calls after this one. With holder ""
// (none beside it, or the configuration's key_holder false) no holder is
// asked or started. The anchor is checked against the directory either
// way.
func anchoredKey(dir string, log *audit.Log, holder string) func(context.Context) ([]byte, error) {
	account := keyring.AnchorAccount(dir)
	return func(ctx context.Context) ([]byte, error) {
		var master []byte
		var rec string
		held := false
		if holder != "" {
			// A holder answers with the anchor it read: one answering none
			// would take the anchor check off (a directory set up before
			// anchors has no holder: it starts none without an anchor).
			if master, rec, held = keyring.LoadHeld(ctx, dir); held && rec == "" {
				clear(master)
				master, held = nil, false
			}
		}
		if !held {
			var err error
			if master, rec, err = keyring.LoadWithAnchor(ctx, account); err != nil {
				return master, err
			}
			if holder != "" {
				_ = keyring.StartHolder(dir, holder)
			}
		}
		if rec == "" {
			return master, nil
		}
		_, seal, err := token.DeriveKeys(master)
		if err == nil {
			_, err = log.CheckAnchor(seal, rec)
			clear(seal)
		}
		if err != nil {
			clear(master)
			return nil, err
		}
		return master, nil
	}
}

// secrets are the files of the config no agent call may read or write
// besides loopguard's own directories: the Vault token file (which may be
// ~/.vault-token, outside them).
func secrets(cfg config.Config, home string) []string {
	if cfg.Backend != config.BackendVault || cfg.Vault == nil || home == "" {
		return nil
	}
	return []string{cfg.Vault.WithDefaults(home).TokenFile}
}

// heldNotifier tells the human that the hook holds a call: the desktop
// notification (unless the config turns it off) and the config's notify
// command, both in the background and bounded (package notify). The hook
// runs them, not review: review may not be running, and the hook runs as
// the user outside the agent's sandbox. A failure is logged, never a
// decision.
func heldNotifier(cfg config.Config, log *audit.Log) func(*state.Pending) {
	nf := notify.Notifier{Command: cfg.NotifyCommand()}
	if cfg.DesktopOn() {
		nf.Bus = keyring.SessionBus
	}
	if nf.Bus == nil && len(nf.Command) == 0 {
		return nil
	}
	return func(p *state.Pending) {
		n := notify.Note{ID: p.ID, Prefix: short(p.ID, 6), Tool: present.EscapeText(p.Tool), Summary: present.Summary(p),
			Reason: p.Reason, Session: present.EscapeText(p.Session), Project: present.EscapeText(p.ProjectDir), HeldUntil: p.HeldUntil}
		nf.Fire(n, func(what string, err error) {
			if errors.Is(err, notify.ErrUnavailable) {
				return // no desktop here: nothing to tell, nothing to log
			}
			_ = log.AppendNoSync(audit.Entry{Time: time.Now().UTC(), Event: "notify", Session: p.Session, Agent: p.Agent,
				Tool: p.Tool, Pending: p.ID, Decision: "notify-failed", Reason: "notify_" + what, Detail: present.EscapeText(err.Error())})
		})
	}
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Main is the hook-only binary (cmd/loopguard-hook): its arguments are
// those of `loopguard hook`, "hook" first as registered, or without it
// (Copilot CLI runs a hook without its arguments). Built without the Vault
// client, it runs the full binary beside it under the Vault backend.
//
// `loopguard-hook exec ...` is the launcher the hook's rewrite of an
// allowed scoped Bash call runs (package confine).
func Main(args []string) int {
	if len(args) > 0 && args[0] == confine.Subcommand {
		return confine.Main(args[1:], os.Stderr)
	}
	return Run(argsAfterHook(args), os.Stdin, os.Stdout, os.Stderr, Options{})
}

func argsAfterHook(args []string) []string {
	if len(args) > 0 && args[0] == register.Word {
		return args[1:]
	}
	return args
}

// launcher is the binary that confines what a scoped Bash grant allows,
// when the kernel's Landlock can enforce a capability ("" otherwise): the
// launcher alone beside this binary (loopguard-exec, which starts faster),
// else this one (its exec subcommand).
func launcher(self string) string {
	if self == "" || confine.ABI() < confine.MinABI {
		return ""
	}
	if l := policy.Launcher(self); isExecutable(l) {
		return l
	}
	return self
}

// confiner is the launcher alone beside this binary (loopguard-confine),
// which the hook names in the launches that stay where the call runs, when
// it is there and executable and the kernel can confine; "" otherwise
// (they name launcher's then).
func confiner(self string) string {
	if self == "" || confine.ABI() < confine.MinABI {
		return ""
	}
	if l := policy.Confiner(self); isExecutable(l) {
		return l
	}
	return ""
}

// KeyHolder is the binary that runs the key's holder of the hook at self
// (keyring.HolderSubcommand): loopguard-exec beside it, "" when it is not
// there or the configuration turns the holder off (doctor says which).
func KeyHolder(self string, cfg config.Config) string {
	if l := policy.Launcher(self); self != "" && cfg.KeyHolderOn() && isExecutable(l) {
		return l
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
