package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loopguard/loopguard/agents/claude"
	"github.com/loopguard/loopguard/bench/corpus"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/shellparse"
)

// Outcome is the engine's answer for one command.
type Outcome struct {
	Behavior string `json:"behavior"`
	Reason   string `json:"reason"`
	// Message is the engine's message (kept with -outcomes).
	Message string `json:"message,omitempty"`
}

// held: the call waits for a human. Anything but an allow or an abstention
// is a decision (a protected_resource deny too: a human has to look).
func (o Outcome) held() bool { return o.Behavior != hooks.Allow && o.Behavior != hooks.Abstain }

// Result is one grant set's measure of a corpus.
type Result struct {
	Set grantSet `json:"set"`
	// Rebased: each command's logged cwd was replaced by the fixture's
	// project in its text (rebase), so that paths in the agent's project
	// are in the project here too.
	Rebased bool   `json:"rebased"`
	Minted  minted `json:"minted"`
	Calls   int    `json:"calls"`
	Held    int    `json:"held"`
	// Per100 is Held per 100 calls.
	Per100   float64        `json:"per_100"`
	ByReason map[string]int `json:"by_reason"`
	// ByAgent: calls and held calls per agent.
	ByAgent map[string][2]int `json:"by_agent"`
	// TopHeld: the programs (with their subcommand where it names the
	// action: git status, npm run) of the held simple commands, and
	// "compound" for held chains, most decisions first.
	TopHeld []Count `json:"top_held"`
	// Compound is what chains cost, and what judging each part alone
	// would save (Split).
	Compound CompoundStats `json:"compound"`
	// Outcomes, per corpus entry in order (with -json -outcomes).
	Outcomes []Outcome `json:"outcomes,omitempty"`
}

// CompoundStats: the compound commands and their parts.
type CompoundStats struct {
	Total int `json:"total"`
	Held  int `json:"held"`
	// Splittable: held compounds Split can cut into simple parts.
	Splittable int `json:"splittable"`
	// Covered: held compounds whose every part is allowed alone (a cd
	// counted as allowed when it stays in the project and out of .git;
	// redirections to the terminal or /dev/null left out).
	Covered int `json:"covered"`
	// Per100IfCovered: Held per 100 calls if those were allowed.
	Per100IfCovered float64 `json:"per_100_if_covered"`
	// NotSplittable counts why the others cannot be cut (subst, control...).
	NotSplittable map[string]int `json:"not_splittable"`
	// Blockers: the programs of the parts held alone, over the splittable
	// held compounds that are not covered (a part counted once a command).
	Blockers []Count `json:"blockers"`
}

// Count is a name and how many.
type Count struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// measure runs every entry through a fresh engine with the grant set's
// grants, as the hook decides a Claude Code PreToolUse Bash call in the
// project, at its root.
func (f *fixture) measure(ctx context.Context, gs grantSet, entries []corpus.Entry, rebased, keepOutcomes bool) (*Result, error) {
	now := time.Now()
	eng, m, err := f.engine(gs, now)
	if err != nil {
		return nil, err
	}
	r := &Result{Set: gs, Rebased: rebased, Minted: m, ByReason: map[string]int{}, ByAgent: map[string][2]int{},
		Compound: CompoundStats{NotSplittable: map[string]int{}}}
	top, blockers := map[string]int{}, map[string]int{}
	roots := projectRoots(entries)
	for i, e := range entries {
		if rebased {
			cwd := e.Cwd
			if cwd == "" {
				cwd = roots[e.Source]
			}
			e.Cmd = rebase(e.Cmd, cwd, f.project)
			// The directories it moves to in its project existed there.
			for _, m := range cdTarget.FindAllStringSubmatch(e.Cmd, -1) {
				if d := filepath.Clean(m[1]); strings.HasPrefix(d, f.project+"/") && !strings.Contains(d, "/.") {
					_ = os.MkdirAll(d, 0o755)
				}
			}
		}
		o, err := f.decide(ctx, eng, e.Cmd, f.project, i)
		if err != nil {
			return nil, err
		}
		if keepOutcomes {
			r.Outcomes = append(r.Outcomes, o)
		} else {
			o.Message = ""
		}
		r.Calls++
		a := r.ByAgent[agentOf(e)]
		a[0]++
		shape := shellparse.Shape(e.Cmd)
		compound := slices.Contains(shape, shellparse.ShapeCompound)
		if compound {
			r.Compound.Total++
		}
		if !o.held() {
			r.ByAgent[agentOf(e)] = a
			continue
		}
		a[1]++
		r.ByAgent[agentOf(e)] = a
		r.Held++
		r.ByReason[o.Reason]++
		if !compound {
			top[program(e.Cmd)]++
			continue
		}
		top["(compound)"]++
		r.Compound.Held++
		parts, ok, why := shellparse.SplitShape(e.Cmd)
		if !ok {
			r.Compound.NotSplittable[why]++
			continue
		}
		r.Compound.Splittable++
		covered, held, err := f.judgeParts(ctx, eng, parts, i)
		if err != nil {
			return nil, err
		}
		if covered {
			r.Compound.Covered++
			continue
		}
		for _, p := range held {
			blockers[p]++
		}
	}
	if r.Calls > 0 {
		r.Per100 = 100 * float64(r.Held) / float64(r.Calls)
		r.Compound.Per100IfCovered = 100 * float64(r.Held-r.Compound.Covered) / float64(r.Calls)
	}
	r.TopHeld = ranked(top)
	r.Compound.Blockers = ranked(blockers)
	return r, nil
}

// rebase replaces in cmd each occurrence of the directory cwd (as a whole
// path: followed by a slash, a separator or the end) with project. An
// agent's commands name its project's files by absolute path; measured in
// another directory, they would read "outside the project".
func rebase(cmd, cwd, project string) string {
	cwd = strings.TrimRight(cwd, "/")
	if len(cwd) < 2 || !strings.HasPrefix(cwd, "/") {
		return cmd
	}
	var b strings.Builder
	for {
		i := strings.Index(cmd, cwd)
		if i < 0 {
			b.WriteString(cmd)
			return b.String()
		}
		end := i + len(cwd)
		if end == len(cmd) || strings.ContainsRune("/ \t\n'\";&|)`:", rune(cmd[end])) {
			b.WriteString(cmd[:i])
			b.WriteString(project)
		} else {
			b.WriteString(cmd[:end])
		}
		cmd = cmd[end:]
	}
}

func agentOf(e corpus.Entry) string {
	if e.Agent == "" {
		return "(unknown)"
	}
	return e.Agent
}

// decide asks the engine about one Bash call in cwd. Each call has its own
// tool_use_id; all share one session.
func (f *fixture) decide(ctx context.Context, eng *hooks.Engine, cmd, cwd string, i int) (Outcome, error) {
	payload := map[string]any{
		"session_id":      "5e55104d-0000-4000-8000-000000000025",
		"transcript_path": filepath.Join(f.home, ".claude", "projects", "bench", "5e55104d-0000-4000-8000-000000000025.jsonl"),
		"cwd":             cwd,
		"permission_mode": "default",
		"hook_event_name": "PreToolUse",
		"tool_name":       "Bash",
		"tool_input":      map[string]any{"command": cmd, "description": "corpus command"},
		"tool_use_id":     fmt.Sprintf("toolu_bench%08d", i),
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return Outcome{}, err
	}
	c, err := claude.Decode(b)
	if err != nil {
		// The hook denies what it cannot decode (malformed_input).
		return Outcome{Behavior: hooks.Deny, Reason: hooks.ReasonMalformed}, nil
	}
	d := eng.Decide(ctx, c)
	return Outcome{Behavior: d.Behavior, Reason: d.Reason, Message: d.Message}, nil
}

// judgeParts judges each part alone, in order, each in the cwd the cds
// before it leave. A cd is allowed when its directory stays in the project
// and out of .git; a cd it cannot follow (no literal directory) holds.
// It returns the programs of the held parts.
func (f *fixture) judgeParts(ctx context.Context, eng *hooks.Engine, parts []shellparse.ShapePart, i int) (bool, []string, error) {
	cwd := f.project
	var held []string
	for _, p := range parts {
		if p.CdBare {
			held = append(held, "cd (not a literal dir)")
			continue
		}
		if p.Cd != "" {
			dir := p.Cd
			if strings.HasPrefix(dir, "~/") || dir == "~" {
				dir = filepath.Join(f.home, strings.TrimPrefix(dir, "~"))
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(cwd, dir)
			}
			dir = filepath.Clean(dir)
			rel, err := filepath.Rel(f.project, dir)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || rel == ".git" || strings.HasPrefix(rel, ".git/") {
				held = append(held, "cd (out of the project)")
				continue
			}
			cwd = dir
			continue
		}
		o, err := f.decide(ctx, eng, p.Cmd, cwd, i)
		if err != nil {
			return false, nil, err
		}
		if o.held() {
			held = append(held, program(p.Cmd))
		}
	}
	return len(held) == 0, dedup(held), nil
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// subcommanded programs are named with their first non-option argument:
// what they do depends on it (git status, npm run, go test).
var subcommanded = map[string]bool{"git": true, "go": true, "npm": true, "npx": true, "pnpm": true, "yarn": true,
	"bun": true, "cargo": true, "docker": true, "kubectl": true, "gh": true, "uv": true, "pip": true, "pip3": true,
	"poetry": true, "make": false, "dotnet": true, "gcloud": true, "aws": true, "brew": true, "apt": true,
	"apt-get": true, "systemctl": true, "deno": true, "flutter": true, "terraform": true, "helm": true, "mvn": false}

// program names the first simple command of cmd: its program, and its
// subcommand for the programs above; assignments and redirections left out.
func program(cmd string) string {
	sk, ok := shellparse.SketchOf(cmd)
	if !ok {
		return "(unparseable)"
	}
	if len(sk.Calls) == 0 {
		if slices.Contains(shellparse.Shape(cmd), shellparse.ShapeAssign) {
			return "(assignment)"
		}
		return "(other)"
	}
	words := sk.Calls[0]
	name := words[0]
	if base := filepath.Base(name); subcommanded[base] {
		for _, w := range words[1:] {
			if w != "" && !strings.HasPrefix(w, "-") && !strings.Contains(w, "$") {
				name += " " + w
				break
			}
			if w == "" || strings.Contains(w, "$") || base == "git" && (w == "-C" || w == "-c") {
				break // git -C DIR: the next word is not the action
			}
		}
	}
	return name
}

func ranked(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// leadingCd is an absolute directory a command starts by moving to.
var leadingCd = regexp.MustCompile(`^cd\s+("?)(/[^\s"';&|]+)("?)\s*&&`)

// projectRoots names, for each source whose log gives no cwd, the directory
// its agent works in: the absolute directory its commands most often start
// by moving to (cd /their/project && git status), which rebasing maps to
// the fixture's project as it maps a logged cwd.
func projectRoots(entries []corpus.Entry) map[string]string {
	counts := map[string]map[string]int{}
	for _, e := range entries {
		if e.Cwd != "" {
			continue
		}
		if m := leadingCd.FindStringSubmatch(e.Cmd); m != nil {
			if counts[e.Source] == nil {
				counts[e.Source] = map[string]int{}
			}
			counts[e.Source][strings.TrimRight(m[2], "/")]++
		}
	}
	roots := map[string]string{}
	for src, c := range counts {
		best, n := "", 0
		for d, k := range c {
			if k > n || k == n && d < best {
				best, n = d, k
			}
		}
		if n >= 3 {
			roots[src] = best
		}
	}
	return roots
}
