package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/undo"
)

// undoOptions is what undo needs: its flags, writers, the terminal it
// asks on and the state directory.
type undoOptions struct {
	out      io.Writer
	stateDir string
	project  string // --project, or found from the working directory
	id       string // a record's ID; "" the last
	list     bool   // --list
	yes      bool   // --yes
	// confirm asks the human (nil: the terminal's y/N).
	confirm func(question string) (bool, error)
	// audit records the undo (nil: nothing).
	audit func(detail string) error
}

func newUndoCmd() *cobra.Command {
	o := &undoOptions{}
	cmd := &cobra.Command{
		Use:   "undo [ID]",
		Short: "Put the project back as it was before the last confined call that could write",
		Long: `Put the project back as it was before the last confined call that could write
(or the call ID names: see --list). Before such a call, the launcher records
every file the call can write below the project, git-ignored ones included
(.git, executable configuration and regenerable directories such as
node_modules are left out), and after its last process has exited, what the
call changed. undo reverts only what is still as the call left it and lists
the rest; it says what it will put back and remove, and asks, before it does
anything. It writes below the project only, never through a link.`,
		Example: "  loopguard undo\n  loopguard undo --list\n  loopguard undo 20261202-091554.021-4def --yes",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.id = args[0]
			}
			if err := cli.RefuseInAgent(); err != nil {
				return err
			}
			dir, err := state.DefaultDir()
			if err != nil {
				return err
			}
			o.out, o.stateDir = cmd.OutOrStdout(), dir
			if !o.yes && !o.list {
				tty, err := cli.OpenTTY()
				if err != nil {
					return cli.WithHint(err, "run undo at your terminal, or give --yes")
				}
				defer tty.Close()
				o.confirm = func(q string) (bool, error) { return cli.AskYes(tty, q) }
			}
			o.audit = func(detail string) error {
				st, err := cli.OpenStore()
				if err != nil {
					return err
				}
				return cli.Record(st, nil, audit.Entry{Decision: "undo", Principal: cli.Principal(), Detail: detail})
			}
			return undoRun(o)
		},
	}
	cmd.Flags().StringVar(&o.project, "project", "", "the project (default: the one the working directory is in)")
	cmd.Flags().BoolVar(&o.list, "list", false, "list the project's recorded calls, newest first")
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask (for scripts)")
	return cmd
}

// findProject is the directory at or above dir that has undo records.
func findProject(stateDir, dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		s, err := undo.Open(stateDir, d)
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(s.Dir); err == nil && fi.IsDir() {
			return d, nil
		}
		if d == "/" {
			return "", cli.WithHint(fmt.Errorf("%w for %s or a directory above it", undo.ErrNoRecord, dir),
				"records are taken before confined calls that can write; give --project if the project is elsewhere")
		}
	}
}

func undoRun(o *undoOptions) error {
	project := o.project
	var err error
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if project, err = findProject(o.stateDir, wd); err != nil {
			return err
		}
	} else if project, err = filepath.Abs(project); err != nil {
		return err
	}
	s, err := undo.Open(o.stateDir, project)
	if err != nil {
		return err
	}
	if o.list {
		return undoList(o.out, s)
	}
	u, err := s.Lock()
	if errors.Is(err, undo.ErrBusy) {
		return cli.WithHint(err, "undo again when the call has ended")
	}
	if err != nil {
		return err
	}
	defer u.Close()
	p, err := u.Prepare(o.id)
	var ue *undo.UndoneError
	if errors.As(err, &ue) {
		return cli.WithHint(err, "loopguard undo --list shows earlier calls; loopguard undo ID reaches one")
	}
	var tl *undo.TooLargeError
	if errors.As(err, &tl) {
		return cli.WithHint(tooLarge(err, tl), "undo looks at the whole project, and cannot while it is past that bound: move out of the project or remove what made it so (the call's own files, if it made them), then undo again")
	}
	if err != nil {
		return err
	}
	showPlan(o.out, p)
	if p.Empty() {
		fmt.Fprintln(o.out, "Nothing to put back.")
		return nil
	}
	if o.confirm != nil {
		ok, err := o.confirm("Put the project back?")
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(o.out, "Nothing was changed.")
			return nil
		}
	}
	res, err := u.Apply(p)
	if err != nil {
		return err
	}
	var linksOut []string
	if len(res.PutBack)+len(res.Removed) > 0 {
		// What undo turned back can change where a link leads.
		linksOut = confine.HoldLinksOut(project, os.Getuid())
	}
	showResult(o.out, res, linksOut)
	if o.audit != nil {
		detail := fmt.Sprintf("undo of %s in %s: put back %d, removed %d, could not restore %d, left %d changed since",
			p.Meta.ID, project, len(res.PutBack), len(res.Removed), len(res.Failed), len(p.Changed))
		if err := o.audit(detail); err != nil {
			return err
		}
	}
	if len(res.Failed) > 0 {
		return &cli.Exit{Code: cli.ExitError, Err: fmt.Errorf("paths that could not be restored: %d", len(res.Failed))}
	}
	return nil
}

// tooLarge is err, a project past a bound of undo's, with the
// directories the walk found the most entries below (names a confined
// program may have chosen: PrintError escapes them).
func tooLarge(err error, tl *undo.TooLargeError) error {
	if len(tl.Largest) == 0 {
		return err
	}
	dirs := make([]string, len(tl.Largest))
	for i, d := range tl.Largest {
		n := fmt.Sprint(d.Entries)
		if d.Partial {
			n = "at least " + n
		}
		dirs[i] = d.Path + "/ (" + n + ")"
	}
	return fmt.Errorf("%w; of what undo had listed when it stopped, the most entries are below %s", err, strings.Join(dirs, ", "))
}

// showResult says what undo did: linksOut are the lines of the links it
// held back after (confine.HoldLinksOut).
func showResult(out io.Writer, res undo.Result, linksOut []string) {
	fmt.Fprintf(out, "Put back %d, removed %d.\n", len(res.PutBack), len(res.Removed))
	if res.Kept != "" {
		fmt.Fprintf(out, "A copy of each file it replaced or removed (%d) is in %s, until the record is pruned.\n", res.KeptFiles, present.QuoteName(res.Kept))
	}
	if len(res.Held) > 0 {
		fmt.Fprintf(out, "Moved aside %d:\n", len(res.Held))
		for _, path := range sortedKeys(res.Held) {
			fmt.Fprintf(out, "  %s: %s\n", present.QuoteName(path), present.EscapeText(res.Held[path]))
		}
	}
	for _, line := range linksOut {
		fmt.Fprintln(out, present.EscapeText(line))
	}
	if len(res.Failed) > 0 {
		fmt.Fprintf(out, "Could not restore %d (left as they are):\n", len(res.Failed))
		for _, path := range sortedKeys(res.Failed) {
			// Why may name a path: escaped, as the path is.
			fmt.Fprintf(out, "  %s: %s\n", present.QuoteName(path), present.EscapeText(res.Failed[path]))
		}
	}
}

// longCall: a call that ran this long is said to have, before the plan:
// its after-state holds what anyone changed in the project while it ran.
const longCall = 5 * time.Second

// showPlan says what undo will do, and what it will not.
func showPlan(out io.Writer, p *undo.Plan) {
	m := p.Meta
	fmt.Fprintf(out, "Undo %s: %s, at %s\n", m.ID, present.QuoteName(m.Command), m.Started.Local().Format(time.DateTime))
	unrecorded := "Its launcher did not record the state after it (killed)"
	if m.Unrecorded != "" {
		// Why names project paths: escaped, as a command is.
		unrecorded = "Its launcher could not record the state after it (" + present.EscapeText(m.Unrecorded) + ")"
	}
	switch p.AfterFrom {
	case "now":
		fmt.Fprintf(out, "%s: every change since, by anyone, is reverted.\n", unrecorded)
	case "":
	default:
		fmt.Fprintf(out, "%s: changes up to the next call (%s) are reverted.\n", unrecorded, p.AfterFrom)
	}
	if d := p.Ended.Sub(m.Started); !p.Ended.IsZero() && d >= longCall {
		fmt.Fprintf(out, "The call ran for %s, to %s: what anyone changed in the project in that time, your own edits too, counts as the call's and is reverted. Undo keeps a copy of each file it replaces or removes.\n",
			d.Round(time.Second), p.Ended.Local().Format(time.TimeOnly))
	}
	section := func(title string, paths []string) {
		if len(paths) == 0 {
			return
		}
		fmt.Fprintf(out, "%s (%d):\n", title, len(paths))
		for _, path := range paths {
			fmt.Fprintf(out, "  %s\n", present.QuoteName(path))
		}
	}
	var put, rm []string
	for _, e := range p.PutBack {
		put = append(put, e.Path+kindSuffix(e.Kind))
	}
	for _, e := range p.Remove {
		rm = append(rm, e.Path+kindSuffix(e.Kind))
	}
	section("Will put back", put)
	section("Will remove", rm)
	section("Changed again since the call, left as they are", p.Changed)
	var nr []string
	for _, e := range p.NotRecorded {
		nr = append(nr, e.Path+": "+e.Note)
	}
	section("Changed by the call but not recorded, left as they are", nr)
	if len(m.Left) > 0 {
		// Names a confined program made: escaped, or its bytes would
		// move the cursor and rewrite the plan above the prompt (the
		// sixteenth attack run).
		left := make([]string, len(m.Left))
		for i, l := range m.Left {
			left[i] = present.QuoteName(l)
		}
		more := ""
		if m.LeftMore > 0 {
			more = fmt.Sprintf(" and %d more", m.LeftMore)
		}
		fmt.Fprintf(out, "Not recorded (regenerable; run your install or build again): %s%s\n", strings.Join(left, ", "), more)
	}
}

func kindSuffix(k undo.Kind) string {
	switch k {
	case undo.Dir:
		return "/"
	case undo.Link:
		return " (link)"
	}
	return ""
}

func undoList(out io.Writer, s *undo.Store) error {
	metas, unreadable, err := s.Records()
	if err != nil {
		return err
	}
	if len(metas) == 0 && len(unreadable) == 0 {
		fmt.Fprintf(out, "No recorded calls for %s.\n", s.Project)
		return nil
	}
	fmt.Fprintf(out, "Recorded calls for %s, newest first (the last %d are kept, and those of the last %d hours up to %d):\n",
		s.Project, undo.MaxRecords, int(undo.KeepFor.Hours()), undo.MaxRecentRecords)
	for _, m := range metas {
		status := ""
		switch {
		case !m.Undone.IsZero():
			status = " [undone " + m.Undone.Local().Format(time.DateTime) + "]"
		case !m.Finished && m.Unrecorded != "":
			status = " [no after-state: could not be recorded: " + present.EscapeText(m.Unrecorded) + "]"
		case !m.Finished:
			status = " [no after-state: launcher killed]"
		}
		fmt.Fprintf(out, "  %s  %s  %s%s\n", m.ID, m.Started.Local().Format(time.DateTime), present.QuoteName(m.Command), status)
	}
	for _, u := range unreadable {
		fmt.Fprintf(out, "  %s  its description cannot be read (%s): undo cannot use it, and no copy is pruned while it is there\n", u.ID, present.EscapeText(u.Err.Error()))
	}
	fmt.Fprintln(out, watchLine(s.WatchState()))
	return nil
}

// watchLine says what the project's watcher does for its records (a
// failure names project paths: escaped, as a command is).
func watchLine(running bool, failed string) string {
	switch {
	case running:
		return "The project's watcher is running: a record looks again only at what changed since the last."
	case failed != "":
		return "The project's watcher could not watch it (" + present.EscapeText(failed) +
			"): each record walks the whole project; it is tried again an hour after it failed."
	}
	return "The project's watcher is not running (the next call that can write the project starts it): until then each record walks the whole project."
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
