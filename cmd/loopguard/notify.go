package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/notify"
)

type notifyOptions struct {
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

Without flags notify shows the settings. --test sends a test notification
through each channel and says what failed. Setting a command asks you to
confirm on your terminal.`,
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
			return notifyRun(cmd.OutOrStdout(), o, args)
		},
	}
	cmd.Flags().StringVar(&o.desktop, "desktop", "", "turn the desktop notification on or off")
	cmd.Flags().BoolVar(&o.command, "command", false, "set the notify command to the arguments after --")
	cmd.Flags().BoolVar(&o.noCommand, "no-command", false, "remove the notify command")
	cmd.Flags().BoolVar(&o.test, "test", false, "send a test notification through each channel")
	cmd.MarkFlagsMutuallyExclusive("command", "no-command")
	return cmd
}

func notifyRun(out io.Writer, o *notifyOptions, argv []string) error {
	path, cfg, err := loadConfigPath()
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
			return withHint(err, "name the program by its absolute path, e.g. --command -- /usr/bin/tmux display-message hello")
		}
		// A command the hook runs as you, outside the sandbox, on every
		// held call: confirmed at a terminal, never from inside an agent.
		tty, err := openTTY()
		if err != nil {
			return err
		}
		defer tty.Close()
		fmt.Fprintf(tty, "The hook will run, as you and outside the agent's sandbox, each time it holds a call:\n  %s\n", quoteArgv(argv))
		yes, err := askYes(tty, "Set it?")
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
		fmt.Fprintf(out, "ntfy:    %s (pushed by loopguard serve, with no content)\n", hooks.EscapeText(n.URL))
	}
	if !o.test {
		return nil
	}
	if cfg.NotifyNtfy() != nil {
		push, err := pushFor(cfg, defaultOrigin)
		if err == nil {
			err = push.Test(context.Background())
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(out, "Test push sent to the ntfy topic.")
	}
	nf := notify.Notifier{Command: cfg.NotifyCommand()}
	if cfg.DesktopOn() {
		nf.Bus = keyring.SessionBus
	}
	if nf.Bus == nil && len(nf.Command) == 0 {
		fmt.Fprintln(out, "Nothing is set up to notify you: no test sent.")
		return nil
	}
	note := notify.Note{ID: "test", Prefix: "test", Tool: "Bash", Summary: "Bash echo a test from loopguard notify",
		Reason: "no_grant", HeldUntil: time.Now().Add(2 * time.Minute)}
	var failures []string
	failed := make(chan string, 2)
	<-nf.Fire(note, func(what string, err error) { failed <- what + ": " + hooks.EscapeText(err.Error()) })
	close(failed)
	for f := range failed {
		failures = append(failures, f)
	}
	if len(failures) > 0 {
		return fmt.Errorf("test notification: %s", strings.Join(failures, "; "))
	}
	fmt.Fprintln(out, "Test notification sent.")
	return nil
}

// quoteArgv renders argv for a person, each word escaped and quoted.
func quoteArgv(argv []string) string {
	var q []string
	for _, a := range argv {
		q = append(q, "'"+strings.ReplaceAll(hooks.EscapeText(a), "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}
