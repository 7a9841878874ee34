package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/notify"
	"github.com/loopguard/loopguard/present"
)

type notifyOptions struct {
	out  io.Writer
	argv []string // the notify command, after --

	desktop   string // "", "on" or "off"
	command   bool   // set the command to the arguments
	noCommand bool
	test      bool
}

func newNotifyCmd() *cobra.Command {
	o := &notifyOptions{}
	cmd := &cobra.Command{
		Use:   "notify [--desktop on|off] [--command -- PROGRAM ARG... | --no-command] [--test]",
		Short: "Show or set how you are told that a call is held for you",
		Long: `When the hook holds a call for your decision (wait mode), it tells you: a
desktop notification (over the session bus, when a notification server is
there) and, if you set one, a command of yours (tmux display-message, a phone
push script). The command runs as you, outside the agent's sandbox, with no
shell: PROGRAM is an absolute path, and the call reaches it only as data, in
LOOPGUARD_* environment variables and on stdin (quote "$LOOPGUARD_SUMMARY" if
your script is a shell script: the agent chose that text).

Without flags notify shows the settings. --test tries each way you are told,
one by one, and says what each did: the desktop notification, your
command, the ntfy push (loopguard serve), the bell review rings, and the
agent's own window (the hook's statusMessage, which init registers). It
fails only when none of them works. Setting a command asks you to confirm
on your terminal.`,
		Example: `  loopguard notify
  loopguard notify --test
  loopguard notify --command -- /usr/bin/tmux display-message 'loopguard: a call waits in review'
  loopguard notify --command -- /home/me/bin/push.sh
  loopguard notify --desktop off
  loopguard notify --no-command`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.command == (len(args) == 0) && (o.command || len(args) > 0) {
				return errors.New("--command takes the program and its arguments after --")
			}
			if o.desktop != "" && o.desktop != "on" && o.desktop != "off" {
				return fmt.Errorf("--desktop %q: want on or off", o.desktop)
			}
			o.out, o.argv = cmd.OutOrStdout(), args
			return notifyRun(o)
		},
	}
	cmd.Flags().StringVar(&o.desktop, "desktop", "", "turn the desktop notification on or off")
	cmd.Flags().BoolVar(&o.command, "command", false, "set the notify command to the arguments after --")
	cmd.Flags().BoolVar(&o.noCommand, "no-command", false, "remove the notify command")
	cmd.Flags().BoolVar(&o.test, "test", false, "send a test notification through each channel")
	cmd.MarkFlagsMutuallyExclusive("command", "no-command")
	return cmd
}

func notifyRun(o *notifyOptions) error {
	out, argv := o.out, o.argv
	path, cfg, err := cli.LoadConfigPath()
	if err != nil {
		return err
	}
	changed := false
	n := config.Notify{}
	if cfg.Notify != nil {
		n = *cfg.Notify
	}
	if o.desktop != "" {
		on := o.desktop == "on"
		n.Desktop, changed = &on, true
	}
	if o.noCommand {
		n.Command, changed = nil, true
	}
	if o.command {
		if err := (&config.Config{V: config.Version, Notify: &config.Notify{Command: argv}}).Check(); err != nil {
			return cli.WithHint(err, "name the program by its absolute path, e.g. --command -- /usr/bin/tmux display-message hello")
		}
		// A command the hook runs as you, outside the sandbox, on every
		// held call: confirmed at a terminal, never from inside an agent.
		tty, err := cli.OpenTTY()
		if err != nil {
			return err
		}
		defer tty.Close()
		fmt.Fprintf(tty, "The hook will run, as you and outside the agent's sandbox, each time it holds a call:\n  %s\n", quoteArgv(argv))
		yes, err := cli.AskYes(tty, "Set it?")
		if err != nil {
			return err
		}
		if !yes {
			return errors.New("not confirmed; nothing was changed")
		}
		n.Command, changed = argv, true
	}
	if changed {
		cfg.Notify = &n
		if err := config.Save(path, cfg); err != nil {
			return err
		}
		fmt.Fprintf(out, "Saved in %s.\n", path)
	}
	desktop := "on (when a notification server answers on the session bus)"
	if !cfg.DesktopOn() {
		desktop = "off"
	}
	command := "none"
	if c := cfg.NotifyCommand(); len(c) > 0 {
		command = quoteArgv(c)
	}
	fmt.Fprintf(out, "desktop: %s\ncommand: %s\n", desktop, command)
	if n := cfg.NotifyNtfy(); n != nil {
		fmt.Fprintf(out, "ntfy:    %s (pushed by loopguard serve, with no content)\n", present.EscapeText(n.URL))
	}
	if !o.test {
		return nil
	}
	return notifyTest(out, cfg)
}

// channelResult is what notify --test found for one way of telling the
// human: it works, is not set up (or not there), or failed.
type channelResult struct {
	name   string
	works  bool
	detail string
}

// notifyTest tries every way loopguard tells the human a call is held,
// each on its own, says what each did, and fails only when none works.
func notifyTest(out io.Writer, cfg config.Config) error {
	note := notify.Note{ID: "test", Prefix: "test", Tool: "Bash", Summary: "Bash echo a test from loopguard notify",
		Reason: "no_grant", HeldUntil: time.Now().Add(2 * time.Minute)}
	var results []channelResult
	try := func(name string, f func(ctx context.Context) channelResult) {
		ctx, cancel := context.WithTimeout(context.Background(), notify.Deadline)
		defer cancel()
		r := f(ctx)
		r.name = name
		results = append(results, r)
	}
	try("desktop", func(ctx context.Context) channelResult {
		if !cfg.DesktopOn() {
			return channelResult{detail: "off (loopguard notify --desktop on)"}
		}
		addr, err := keyring.SessionBus(ctx)
		if err != nil {
			return channelResult{detail: "not here: no session bus (" + present.EscapeText(err.Error()) + ")"}
		}
		id, err := notify.Desktop(ctx, addr, note)
		switch {
		case errors.Is(err, notify.ErrUnavailable):
			return channelResult{detail: "not here: no desktop notification service on the session bus"}
		case err != nil:
			return channelResult{detail: "FAILED: " + present.EscapeText(err.Error())}
		}
		return channelResult{works: true, detail: fmt.Sprintf("shown (notification %d)", id)}
	})
	try("command", func(ctx context.Context) channelResult {
		c := cfg.NotifyCommand()
		if len(c) == 0 {
			return channelResult{detail: "none set (loopguard notify --command -- PROGRAM ARG...)"}
		}
		if err := notify.RunCommand(ctx, c, note); err != nil {
			return channelResult{detail: "FAILED: " + present.EscapeText(err.Error())}
		}
		return channelResult{works: true, detail: "ran " + quoteArgv(c) + " (exit 0)"}
	})
	try("ntfy", func(ctx context.Context) channelResult {
		if cfg.NotifyNtfy() == nil {
			return channelResult{detail: "none set (pushed by loopguard serve: README, The console)"}
		}
		push, err := pushFor(cfg, defaultOrigin)
		if err == nil {
			err = push.Test(ctx)
		}
		if err != nil {
			return channelResult{detail: "FAILED: " + present.EscapeText(err.Error())}
		}
		return channelResult{works: true, detail: "test push sent to the topic"}
	})
	try("bell", func(context.Context) channelResult {
		tty, err := cli.OpenTTY()
		if err != nil {
			return channelResult{detail: "no terminal here (review rings the bell of the terminal it runs in)"}
		}
		defer tty.Close()
		if _, err := fmt.Fprint(tty, "\a"); err != nil {
			return channelResult{detail: "FAILED: " + present.EscapeText(err.Error())}
		}
		return channelResult{works: true, detail: "rung on this terminal, as review rings it for each new call (a muted terminal shows nothing)"}
	})
	try("window", func(context.Context) channelResult {
		where, err := statusRegistered()
		switch {
		case err != nil:
			return channelResult{detail: "FAILED: " + present.EscapeText(err.Error())}
		case where == "":
			return channelResult{detail: "no registration that holds calls says where they wait (run loopguard init)"}
		}
		return channelResult{works: true, detail: "while a call is held, the agent's window says it waits in loopguard review (statusMessage, " + present.EscapeText(where) + ")"}
	})
	var works []string
	fmt.Fprintln(out, "Test, channel by channel:")
	for _, r := range results {
		fmt.Fprintf(out, "  %-8s %s\n", r.name+":", r.detail)
		if r.works {
			works = append(works, r.name)
		}
	}
	if len(works) == 0 {
		return cli.WithHint(errors.New("no way of telling you that a call is held works here"),
			"run loopguard review in a terminal you keep in view, set a notify command (loopguard notify --command -- PROGRAM ARG...), or run loopguard init")
	}
	fmt.Fprintf(out, "Works: %s.\n", strings.Join(works, ", "))
	return nil
}

// statusRegistered names where a loopguard registration that holds calls
// carries the statusMessage that tells the human in the agent's window
// ("": nowhere).
func statusRegistered() (string, error) {
	env, err := cli.SettingsEnv()
	if err != nil {
		return "", err
	}
	paths := []string{install.ManagedSettingsPath()}
	for _, sc := range []install.Scope{install.User, install.Project, install.Local} {
		if p, err := install.SettingsPath(sc, env); err == nil {
			paths = append(paths, p)
		}
	}
	var all [][]byte
	for _, p := range paths {
		data, _, err := install.ReadSettings(p)
		if err != nil || data == nil {
			continue
		}
		all = append(all, data)
		regs, err := install.Hooks(data, "")
		if err != nil {
			continue
		}
		for _, r := range regs {
			if r.Ours && r.Event == install.PreToolUse && r.Handler.StatusMessage != "" {
				return p, nil
			}
		}
	}
	// The plugin's registration is init's, statusMessage included
	// (TestPluginHooksAreInits).
	if ok, err := install.PluginGuards(env, all...); err == nil && ok {
		return "loopguard's plugin " + install.PluginID, nil
	}
	return "", nil
}

// quoteArgv renders argv for a person, each word escaped and quoted.
func quoteArgv(argv []string) string {
	var q []string
	for _, a := range argv {
		q = append(q, "'"+strings.ReplaceAll(present.EscapeText(a), "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}
