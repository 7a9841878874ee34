// Command decisions counts the human decisions loopguard asks for on a
// corpus of real agents' Bash commands (bench/corpus's format, e.g.
// testdata/agentcmds/corpus.jsonl): it runs every command through the real
// engine (hooks.Engine), as the hook decides a Claude Code PreToolUse Bash
// call at the root of a project, once per grant set, and reports decisions
// per 100 Bash calls (a decision: anything but an allow or an abstention),
// the reason codes, the programs that cost the most decisions, and how
// many held compound commands would pass if each part were judged alone.
//
// The grant sets (issue 25): the read-only preset; the preset and the
// typical grants Bash(go test *), Bash(go build *), Bash(npm test *),
// Bash(npm run *), Bash(git add *), Bash(git commit *). They are minted
// with a throwaway key into a throwaway state dir, as `loopguard grant`
// mints them. The project is a fresh git repository under a throwaway
// home. PATH finds the programs in /usr/local/go/bin, /usr/local/bin,
// /usr/bin and /bin (the real programs, where this machine has them) and
// then in a trusted directory of stubs for every other name the corpus
// runs; -stubs-only uses the stubs alone, the same on every machine. The
// report says which names were real and which stubs.
//
//	go run ./bench/cmd/decisions -corpus testdata/agentcmds/corpus.jsonl
//	go run ./bench/cmd/decisions -corpus other.jsonl -json
//
// The packages the corpus runs through npx (bunx, npm exec ...) are
// installed in the project's node_modules/.bin, as its programs are on
// PATH; -npx-absent leaves them out (every such call then needs the
// network).
//
// Commands a log says ran in PowerShell are left out (they are not Bash
// calls) unless -all-shells.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loopguard/loopguard/bench/corpus"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
)

type options struct {
	corpus    string
	json      bool
	jsonOut   string
	outcomes  bool
	stubsOnly bool
	npxAbsent bool
	allShells bool
	keep      bool
	explain   string
	extra     []string
}

type multi []string

func (m *multi) String() string     { return fmt.Sprint(*m) }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	var o options
	var extra multi
	flag.StringVar(&o.corpus, "corpus", "testdata/agentcmds/corpus.jsonl", "corpus file (JSON lines with a cmd field)")
	flag.BoolVar(&o.json, "json", false, "print the results as JSON")
	flag.StringVar(&o.jsonOut, "json-out", "", "also write the results as JSON to this file")
	flag.BoolVar(&o.outcomes, "outcomes", false, "with -json: the outcome of every command, in corpus order")
	flag.BoolVar(&o.stubsOnly, "stubs-only", false, "resolve every program to a stub (no real program from this machine)")
	flag.BoolVar(&o.npxAbsent, "npx-absent", false, "install no package the corpus runs through npx (bunx, npm exec...) in the project: each such call then needs the network")
	flag.BoolVar(&o.allShells, "all-shells", false, "measure the commands logged as run by PowerShell too")
	flag.BoolVar(&o.keep, "keep", false, "keep the fixture directory (printed on stderr)")
	flag.StringVar(&o.explain, "explain", "", "decide this one command and print the engine's message for each grant set")
	flag.Var(&extra, "grant", "a rule of a third grant set: the typical set and this rule (repeatable)")
	flag.Parse()
	o.extra = extra
	if err := run(context.Background(), o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "decisions: error:", err)
		os.Exit(1)
	}
}

// Report is the whole output.
type Report struct {
	Corpus  string   `json:"corpus"`
	Entries int      `json:"entries"`
	Skipped int      `json:"skipped_other_shells"`
	Shape   []Count  `json:"shape"`
	Agents  []Count  `json:"agents"`
	Sources int      `json:"sources"`
	Real    []string `json:"programs_real"`
	Stubbed []string `json:"programs_stubbed"`
	Builtin []string `json:"programs_builtin"`
	// NpxInstalled: the programs of the packages the corpus runs through
	// npx, installed in the fixture project's node_modules/.bin.
	NpxInstalled []string `json:"npx_installed"`
	// Landlock: the kernel confines, so a scoped call is rewritten to run
	// through the launcher (as on a user's Linux machine with Landlock).
	Landlock bool      `json:"landlock"`
	Results  []*Result `json:"results"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	if o.explain != "" {
		o.outcomes = true
		rep, err := measureAll(ctx, o, []corpus.Entry{{Cmd: o.explain}}, stderr)
		if err != nil {
			return err
		}
		for _, r := range rep.Results {
			oc := r.Outcomes[0]
			fmt.Fprintf(stdout, "%s (%s): %s %s\n  %s\n", r.Set.Name, mode(r), oc.Behavior, oc.Reason, oc.Message)
		}
		return nil
	}
	entries, err := corpus.ReadFile(o.corpus)
	if err != nil {
		return err
	}
	rep, err := measureAll(ctx, o, entries, stderr)
	if err != nil {
		return err
	}
	rep.Corpus = o.corpus
	if o.jsonOut != "" {
		f, err := os.Create(o.jsonOut)
		if err != nil {
			return err
		}
		err = writeJSON(f, rep)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if o.json {
		return writeJSON(stdout, rep)
	}
	_, err = io.WriteString(stdout, markdown(rep))
	return err
}

func writeJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// sets are the grant sets measured.
func sets(extra []string) []grantSet {
	s := []grantSet{
		{Name: "preset", Preset: scope.PresetReadOnly},
		{Name: "preset+typical", Preset: scope.PresetReadOnly, Rules: typical},
		// What `loopguard init` grants by default (issue 36): the preset
		// and the jail.
		{Name: "init", Preset: scope.PresetReadOnly, Rules: []string{scope.JailRule}},
	}
	if len(extra) > 0 {
		s = append(s, grantSet{Name: "preset+typical+extra", Preset: scope.PresetReadOnly, Rules: append(append([]string{}, typical...), extra...)})
	}
	return s
}

func measureAll(ctx context.Context, o options, all []corpus.Entry, stderr io.Writer) (*Report, error) {
	rep := &Report{}
	var entries []corpus.Entry
	for _, e := range all {
		if e.Shell != "" && !o.allShells {
			rep.Skipped++
			continue
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, errors.New("no Bash command to measure")
	}
	rep.Entries = len(entries)
	shape, agents, sources := map[string]int{}, map[string]int{}, map[string]bool{}
	for _, e := range entries {
		for _, s := range shellparse.Shape(e.Cmd) {
			shape[s]++
		}
		agents[agentOf(e)]++
		sources[e.Source] = true
	}
	rep.Shape, rep.Agents, rep.Sources = ranked(shape), ranked(agents), len(sources)
	// In memory where there is /dev/shm: the engine's fsyncs cost nothing
	// there, and they are not what is measured.
	tmp := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && os.Getenv("TMPDIR") == "" {
		tmp = "/dev/shm"
	}
	dir, err := os.MkdirTemp(tmp, "loopguard-decisions-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintln(stderr, "fixture:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	f, err := newFixture(dir, entries, append(append([]string{}, typical...), o.extra...), o.stubsOnly, o.npxAbsent)
	if err != nil {
		return nil, err
	}
	rep.Real, rep.Stubbed, rep.Builtin, rep.NpxInstalled = f.real, f.stubbed, f.builtins, f.npxInstalled
	rep.Landlock = confine.ABI() >= confine.MinABI
	modes := []bool{false}
	for _, e := range entries {
		if e.Cwd != "" {
			modes = append(modes, true)
			break
		}
	}
	for _, rebased := range modes {
		for _, gs := range sets(o.extra) {
			start := time.Now()
			r, err := f.measure(ctx, gs, entries, rebased, o.outcomes)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", gs.Name, err)
			}
			fmt.Fprintf(stderr, "%s (rebased %v): %d calls, %d held, in %s\n", gs.Name, rebased, r.Calls, r.Held, time.Since(start).Round(time.Millisecond))
			rep.Results = append(rep.Results, r)
		}
	}
	return rep, nil
}
