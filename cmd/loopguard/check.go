package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
)

// checkOptions are the inputs of 'loopguard check'.
type checkOptions struct {
	Out     io.Writer
	Command string
	JSON    bool
	Env     shellparse.Env
}

func newCheckCmd() *cobra.Command {
	return newCheckCmdWith(checkRun)
}

// newCheckCmdWith builds the command; runF receives the parsed options.
func newCheckCmdWith(runF func(*checkOptions) error) *cobra.Command {
	var (
		asJSON  bool
		cwd     string
		trusted []string
	)
	cmd := &cobra.Command{
		Use:   "check [--json] [--cwd DIR] COMMAND",
		Short: "Explain how loopguard analyses a Bash command",
		Long: `Analyse a Bash command the way the hook does and explain the result: the
parsed structure, each command word and where it resolves in PATH, and the
verdict (simple, chained, indirect, path_shadowed or unparseable) with the
reason. Only a simple command can be covered by a scoped grant; anything
else needs an exact approval of the whole command.

PATH is taken from the environment, the project directory from
CLAUDE_PROJECT_DIR (or the cwd). Exit status 0 means simple, 1 anything else.`,
		Example: "  loopguard check 'go test ./...'\n  loopguard check --json 'git status; curl x | sh'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := checkOptionsFrom(args[0], asJSON, cwd, trusted, os.Getenv)
			if err != nil {
				return err
			}
			opts.Out = cmd.OutOrStdout()
			return runF(opts)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a stable JSON object")
	cmd.Flags().StringVar(&cwd, "cwd", "", "analyse as if run in `DIR` (default: the current directory)")
	cmd.Flags().StringArrayVar(&trusted, "trusted", nil, "trusted executable `DIR` (repeatable; default: the config's trusted_dirs, else "+strings.Join(policy.DefaultTrusted, " ")+")")
	return cmd
}

// checkOptionsFrom turns flags and the environment into options.
func checkOptionsFrom(command string, asJSON bool, cwd string, trusted []string, getenv func(string) string) (*checkOptions, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("failed to get the current directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("failed to resolve --cwd: %w", err)
	}
	project := getenv("CLAUDE_PROJECT_DIR")
	if project == "" {
		project = cwd
	}
	if len(trusted) == 0 {
		// As the hook trusts them: the config's, else the defaults.
		cfg, err := cli.LoadConfig()
		if err != nil {
			return nil, err
		}
		trusted = append([]string(nil), cfg.TrustedDirs...)
	}
	for i, d := range trusted {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("trusted directory %q is not an absolute path", d)
		}
		trusted[i] = filepath.Clean(d)
	}
	return &checkOptions{
		Command: command,
		JSON:    asJSON,
		Env: shellparse.Env{
			Cwd:        cwd,
			Path:       getenv("PATH"),
			ProjectDir: project,
			Trusted:    trusted,
			Home:       getenv("HOME"),
		},
	}, nil
}

// checkJSON is the stable output of 'check --json'. Every key is always
// present; lists are empty rather than null.
type checkJSON struct {
	Verdict     shellparse.Verdict    `json:"verdict"`
	Reason      string                `json:"reason"`
	Pos         string                `json:"pos"`
	Argv        []string              `json:"argv"`
	Glob        []int                 `json:"glob"`
	Executable  string                `json:"executable"`
	Builtin     bool                  `json:"builtin"`
	Assigns     []shellparse.Assign   `json:"assigns"`
	Redirects   []shellparse.Redirect `json:"redirects"`
	Executables map[string]string     `json:"executables"`
	Warnings    []string              `json:"warnings"`
	// Options are the words of a simple command that a wildcard (*) in a
	// scoped rule never covers: they run code, write a named file, or are
	// options policy's table does not know for this program.
	Options []checkOption `json:"options"`
}

// checkOption is one word a rule's wildcard does not cover.
type checkOption struct {
	Index int    `json:"index"`
	Word  string `json:"word"`
	Class string `json:"class"`
	Why   string `json:"why"`
}

// uncovered lists the words of a simple command that a wildcard never covers.
func uncovered(res shellparse.Result) []checkOption {
	out := []checkOption{}
	if res.Verdict != shellparse.Simple || len(res.Argv) == 0 {
		return out
	}
	argv := make([]string, len(res.Argv))
	for i, w := range res.Argv {
		argv[i] = w.Value
	}
	for _, f := range policy.CheckArgv(argv) {
		out = append(out, checkOption{Index: f.Index, Word: f.Word, Class: f.Class.String(), Why: f.Why})
	}
	return out
}

func toCheckJSON(res shellparse.Result) checkJSON {
	j := checkJSON{
		Verdict: res.Verdict, Reason: res.Reason, Pos: res.Pos, Executable: res.Executable, Builtin: res.Builtin,
		Argv: []string{}, Glob: []int{}, Assigns: []shellparse.Assign{}, Redirects: []shellparse.Redirect{},
		Executables: map[string]string{}, Warnings: []string{}, Options: uncovered(res),
	}
	for i, w := range res.Argv {
		j.Argv = append(j.Argv, w.Value)
		if w.Glob {
			j.Glob = append(j.Glob, i)
		}
	}
	j.Assigns = append(j.Assigns, res.Assigns...)
	j.Redirects = append(j.Redirects, res.Redirects...)
	for k, v := range res.Executables {
		j.Executables[k] = v
	}
	j.Warnings = append(j.Warnings, res.Warnings...)
	return j
}

// checkRun analyses the command and prints the result. A verdict other
// than simple exits 1 after printing.
func checkRun(opts *checkOptions) error {
	out := opts.Out
	res := shellparse.Analyze(opts.Command, opts.Env)
	var err error
	if opts.JSON {
		err = printJSON(out, toCheckJSON(res))
	} else {
		err = printAnalysis(out, opts, res)
	}
	if err != nil {
		return err
	}
	if res.Verdict != shellparse.Simple {
		return &cli.Exit{Code: cli.ExitError, Err: cli.ErrSilent}
	}
	return nil
}

func printAnalysis(out io.Writer, opts *checkOptions, res shellparse.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "command:  %s\n", present.EscapeText(opts.Command))
	fmt.Fprintf(&b, "cwd:      %s\n", present.EscapeText(opts.Env.Cwd))
	if s := structure(&res, opts.Command); s != "" {
		b.WriteString("structure:\n")
		b.WriteString(s)
	}
	if res.Pos != "" {
		fmt.Fprintf(&b, "verdict:  %s (at %s)\n", res.Verdict, res.Pos)
	} else {
		fmt.Fprintf(&b, "verdict:  %s\n", res.Verdict)
	}
	if res.Reason != "" {
		fmt.Fprintf(&b, "reason:   %s\n", present.EscapeText(res.Reason))
	}
	if len(res.Assigns) > 0 {
		b.WriteString("assignments:\n")
		for _, a := range res.Assigns {
			fmt.Fprintf(&b, "  %s=%s\n", a.Name, present.Word(a.Value))
		}
	}
	if len(res.Argv) > 0 {
		b.WriteString("argv:\n")
		for i, w := range res.Argv {
			fmt.Fprintf(&b, "  [%d] %s", i, present.Word(w.Value))
			if w.Glob {
				b.WriteString("  (glob: bash expands it against the file system)")
			}
			if i == 0 {
				switch {
				case res.Builtin:
					b.WriteString("  -> bash builtin")
				case res.Executable != "":
					fmt.Fprintf(&b, "  -> %s", present.Word(res.Executable))
				}
			}
			b.WriteString("\n")
		}
	}
	if len(res.Redirects) > 0 {
		b.WriteString("redirects:\n")
		for _, r := range res.Redirects {
			kind := "reads"
			switch {
			case r.Writes:
				kind = "writes"
			case r.Op == ">&" || r.Op == "<&":
				kind = "duplicates a file descriptor"
			}
			sep := " "
			if kind == "duplicates a file descriptor" {
				sep = ""
			}
			fmt.Fprintf(&b, "  %s%s%s%s  (%s)\n", r.Fd, r.Op, sep, present.Word(r.Target), kind)
		}
	}
	if len(res.Executables) > 0 {
		b.WriteString("command words:\n")
		names := make([]string, 0, len(res.Executables))
		for n := range res.Executables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			where := res.Executables[n]
			if where == "" {
				where = "(builtin or not found)"
			} else {
				where = present.Word(where)
			}
			fmt.Fprintf(&b, "  %s -> %s\n", present.Word(n), where)
		}
	}
	if len(res.Warnings) > 0 {
		b.WriteString("warnings:\n")
		for _, w := range res.Warnings {
			fmt.Fprintf(&b, "  %s\n", w)
		}
	}
	uncov := uncovered(res)
	if len(uncov) > 0 {
		b.WriteString("options a rule's * does not cover:\n")
		for _, o := range uncov {
			fmt.Fprintf(&b, "  [%d] %s  %s\n", o.Index, present.Word(o.Word), present.EscapeText(o.Why))
		}
	}
	if res.Verdict == shellparse.Simple {
		if len(uncov) > 0 {
			b.WriteString("A scoped grant can cover this command only if its rule names the words above literally: a * in a rule never covers them (and loopguard grant refuses a rule naming an option that runs code).\n")
		} else {
			b.WriteString("A scoped grant can cover this command.\n")
		}
	} else {
		b.WriteString("No scoped grant can cover this command; only an exact approval of the whole command can.\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// maxStructureLines bounds the structure listing of a long command.
const maxStructureLines = 200

// structure lists the parsed statements of the command res analysed (its
// own parse, not a second one; a parse of command only where the analysis
// refused it unparsed), one node per line, indented by nesting,
// every word escaped for the terminal. It is empty when the command does
// not parse.
func structure(res *shellparse.Result, command string) string {
	lines, ok := res.Outline()
	if !ok {
		// The analysis refused it before a parse (a control character
		// bash reads otherwise): the outline says how bash parses it.
		lines, ok = shellparse.Outline(command)
	}
	if !ok {
		return ""
	}
	var b strings.Builder
	for i, l := range lines {
		if i == maxStructureLines {
			fmt.Fprintf(&b, "  ... %d more\n", len(lines)-maxStructureLines)
			break
		}
		fmt.Fprintf(&b, "%s%d:%d %s", strings.Repeat("  ", l.Depth+1), l.Line, l.Col, l.Label)
		for _, s := range l.Source {
			b.WriteString(" " + present.EscapeText(s))
		}
		b.WriteString("\n")
	}
	return b.String()
}
