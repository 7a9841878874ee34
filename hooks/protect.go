package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"

	"github.com/loopguard/loopguard/internal/testknobs"
)

// finding is the strongest protected resource a call touches.
type finding struct {
	policy.Protection
	// why is the sentence for the model and the human: "it would change
	// /p/.git/config (git's configuration ...)".
	why string
	// pin is a package.json whose entries the git hooks run, which the
	// call was judged not to change (packageEntries): checked after it.
	pin *state.PackagePin
}

func (f finding) stronger(g finding) finding {
	if g.Tier > f.Tier || (g.Tier == f.Tier && g.Secret && !f.Secret) {
		return g
	}
	return f
}

// places is the protected set's anchors for this engine and call c: the
// hook directory core.hooksPath names in the git configuration of c's
// project (husky's .husky, a .githooks) is executable configuration too.
func (e *Engine) places(c *Call, more ...string) policy.Places {
	pl := policy.Places{
		Home: e.Env.Home, StateDir: e.Env.StateDir, ConfigDir: e.Env.ConfigDir, Self: e.Env.Self,
		ClaudeConfigDir: e.Env.ClaudeConfigDir, CodexHome: e.Env.CodexHome, Path: e.Env.Path, Secrets: e.Env.Secrets,
		XDGConfigHome: e.Env.XDGConfigHome,
	}
	if c != nil {
		pl.HooksPaths = policy.HooksPaths(e.projectDir(c), e.Env.Home, e.gitGetenv)
		pl.Imports = append(policy.ProjectLoads(e.projectDir(c), e.Env.Home, pl.HooksPaths), more...)
	}
	return pl.Prepare()
}

// gitGetenv is the agent's environment as git's configuration is found
// by it.
func (e *Engine) gitGetenv(k string) string {
	switch k {
	case "XDG_CONFIG_HOME":
		return e.Env.XDGConfigHome
	case "GIT_CONFIG_GLOBAL":
		return e.Env.GitConfigGlobal
	}
	return ""
}

// judged is one path as written and where it lands.
type judged struct {
	literal string // absolute, cleaned, as written
	res     fsx.Resolution
	resErr  error
	prot    policy.Protection
}

// judgePath classifies p (relative to cwd, "~/" expanded) by its cleaned
// literal form and by where it resolves (symlinks, dangling ones too), and
// keeps the stronger answer.
func judgePath(pl policy.Places, cwd, home, p string) judged {
	return (&resolver{pl: pl, cwd: cwd, home: home}).judge(p)
}

// resolver judges many paths relative to one cwd and home, resolving those
// two once.
type resolver struct {
	pl                policy.Places
	cwd, home         string
	cwdReal, homeReal string
	done              bool
}

func (r *resolver) judge(p string) judged {
	abs := fsx.Abs(r.cwd, r.home, p)
	j := judged{literal: filepath.Clean(abs)}
	j.prot = r.pl.Classify(j.literal)
	if !r.done {
		r.done = true
		if res, err := fsx.Resolve(r.cwd); err == nil {
			r.cwdReal = res.Path
		}
		if r.home != "" {
			if res, err := fsx.Resolve(r.home); err == nil {
				r.homeReal = res.Path
			}
		}
	}
	switch {
	case r.homeReal != "" && (p == "~" || strings.HasPrefix(p, "~/")):
		j.res, j.resErr = fsx.ResolveIn(r.homeReal, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/"))
	case r.cwdReal != "" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "~"):
		j.res, j.resErr = fsx.ResolveIn(r.cwdReal, p)
	default:
		j.res, j.resErr = fsx.Resolve(abs)
	}
	if j.resErr == nil {
		if q := r.pl.Classify(j.res.Path); q.Tier > j.prot.Tier || (q.Tier == j.prot.Tier && q.Secret && !j.prot.Secret) {
			j.prot = q
		}
	}
	return j
}

// gitDirWhat names a git directory under an ordinary name.
const gitDirWhat = "a git directory under an ordinary name (HEAD, and objects/ and refs/ or a commondir): git status run in it runs what its config names"

// gitDirAround is the directory, within three levels above the path j
// and below top, that is or would be a git directory once j is written
// (HEAD, and objects/ and refs/ or a commondir file naming where they
// are, as git tells one whatever its name: the sweep holds such a
// directory back after a confined call, and a file tool could otherwise
// assemble one file by file), or "".
func gitDirAround(j judged, top string) string {
	p := j.literal
	if j.resErr == nil {
		p = j.res.Path
	}
	child := p
	for d, n := filepath.Dir(p), 0; n < 3 && d != top && fsx.Within(d, top); d, n = filepath.Dir(d), n+1 {
		first := filepath.Base(child) // the name the write makes or changes in d
		has := func(name string, dir bool) bool {
			if first == name {
				// HEAD itself; objects and refs whatever the write makes
				// of them (git asks only access(X_OK), which a file made
				// executable later passes).
				return dir || child == p
			}
			fi, err := os.Lstat(filepath.Join(d, name))
			if err == nil && fi.Mode()&os.ModeSymlink != 0 {
				return true // git follows a link named HEAD, objects or refs
			}
			return err == nil && (dir || !fi.IsDir()) // objects and refs: any type
		}
		if has("HEAD", false) && (has("objects", true) && has("refs", true) || has("commondir", false)) {
			return d
		}
		child = d
	}
	return ""
}

// packageEntries is the finding of a file tool's call that changes an
// entry of a package.json that the project's git hooks or executable
// configuration run by name (policy.PackageScripts: scripts.test, which
// husky's npm test runs; lint-staged): the launcher puts such an entry
// back after a confined call (confine/pkgscripts_linux.go), and a Write
// or an Edit, which Claude Code makes itself, unconfined, is judged the
// same here. The rest of package.json (a dependency, the version) is
// ordinary.
func (e *Engine) packageEntries(c *Call, j judged, pl policy.Places) finding {
	p := j.literal
	if j.resErr == nil {
		p = j.res.Path
	}
	if filepath.Base(j.literal) != "package.json" && filepath.Base(p) != "package.json" {
		return finding{}
	}
	entries, workspaces := policy.PackageWorkspaceScripts(e.projectDir(c), pl.HooksPaths)
	keys := slices.Concat(entries[j.literal], entries[p])
	for m, k := range workspaces {
		// A workspace's package.json, one made now too: npm test
		// --workspaces runs its scripts.test (the fifty-fourth attack
		// run's packages/evil/package.json).
		if policy.InWorkspace(m, filepath.Dir(j.literal)) || policy.InWorkspace(m, filepath.Dir(p)) {
			keys = append(keys, k...)
		}
	}
	if len(keys) == 0 {
		return finding{}
	}
	cur, err := fsx.ReadRegular(p, policy.MaxPackageJSON, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Larger than policy reads, or not a file it can read: what the
		// call changes in it cannot be told, and npm reads it all the
		// same (the fifty-third attack run's package.json of 1 MiB and
		// more, whose scripts.test an Edit then changed).
		what := fmt.Sprintf("a package.json whose entries the project's git hooks or configuration run by name (%s), which loopguard cannot read to compare (%v)", strings.Join(keys, ", "), err)
		return finding{Protection: policy.Protection{Tier: policy.ExecConfig, Path: p, What: what},
			why: "it would change " + present.EscapeText(p) + ", " + what}
	}
	next, err := present.Applied(c.ToolName, c.ToolInput, cur)
	if err != nil {
		// What the call would change cannot be told: loopguard's model
		// of an edit is Claude Code's exact match, and a client may
		// apply one it does not model (Claude Code's loose match, a
		// Codex patch, OpenCode's edit; the seventy-eighth attack run),
		// so "refused" is not taken for "nothing changes".
		what := fmt.Sprintf("a package.json whose entries the project's git hooks or configuration run by name (%s), where loopguard cannot tell what this call changes (%v)", strings.Join(keys, ", "), err)
		return finding{Protection: policy.Protection{Tier: policy.ExecConfig, Path: p, What: what},
			why: "it would change " + present.EscapeText(p) + ", " + what}
	}
	changed := changedEntries(cur, next, keys)
	if len(changed) == 0 {
		// Judged so on loopguard's model of the client's edit: what the
		// client writes is checked against it after the call (post), and
		// the file put back where an entry changed all the same.
		return finding{pin: &state.PackagePin{Path: p, Keys: slices.Compact(slices.Sorted(slices.Values(keys))), Before: cur}}
	}
	what := fmt.Sprintf("%s, which the project's git hooks or configuration run by name (npm test runs scripts.test)", strings.Join(changed, ", "))
	return finding{Protection: policy.Protection{Tier: policy.ExecConfig, Path: p, What: what},
		why: "it would change " + present.EscapeText(p) + "'s " + what}
}

// changedEntries are the entries of keys (each once, in their order) that
// differ between two package.json files' contents, as npm reads them.
func changedEntries(before, after []byte, keys []string) []string {
	b, a := policy.PackageEntries(before, keys), policy.PackageEntries(after, keys)
	var changed []string
	for _, k := range keys {
		if b[k] != a[k] && !slices.Contains(changed, k) {
			changed = append(changed, k)
		}
	}
	return changed
}

func (j judged) describe() string {
	s := j.prot.What
	if j.prot.Path != "" {
		s = present.EscapeText(j.prot.Path) + " (" + j.prot.What + ")"
	}
	if j.resErr == nil && j.res.Path != j.literal {
		s = present.EscapeText(j.literal) + " -> " + s
	}
	return s
}

// protected finds the strongest protected resource the call touches.
func (e *Engine) protected(c *Call, d *described) finding {
	if c.ToolName == "Bash" && testknobs.On(testknobs.LooseAnalysis) {
		return finding{}
	}
	// A read-only tool is judged by the secrets alone (readProtected), and
	// the paths core.hooksPath names are executable configuration, never a
	// secret: git's configuration is not read for it (places(nil)).
	pc := c
	if policy.ClassOf(c.ToolName) == policy.ReadOnly {
		pc = nil
	}
	var more []string
	if pc != nil && d.target != "" && c.ToolName != "Bash" {
		// What an instruction file in a directory above the target
		// imports (src/CLAUDE.md's @notes.md): the launcher's walk finds
		// those, the hook looks above the file a tool writes.
		more = policy.NestedImportsAround(fsx.Abs(c.Cwd, e.Env.Home, d.target), e.projectDir(c), e.Env.Home)
	}
	pl := e.places(pc, more...)
	var best finding
	note := func(verb string, j judged) {
		if j.prot.Protected() {
			best = best.stronger(finding{Protection: j.prot, why: verb + " " + j.describe()})
		}
	}
	if d.target != "" {
		j := judgePath(pl, c.Cwd, e.Env.Home, d.target)
		note("it would change", j)
		if g := gitDirAround(j, e.projectDir(c)); g != "" && !j.prot.Protected() {
			best = best.stronger(finding{Protection: policy.Protection{Tier: policy.ExecConfig, Path: g, What: gitDirWhat},
				why: "it would change " + present.EscapeText(g) + " (" + gitDirWhat + ")"})
		}
		if c.ToolName != "Bash" {
			f := e.packageEntries(c, j, pl)
			d.pkgPin = f.pin
			best = best.stronger(f).stronger(e.versionFile(c, j))
		}
	}
	switch policy.ClassOf(c.ToolName) {
	case policy.ReadOnly:
		return e.readProtected(c, pl)
	case policy.SubagentLaunch:
		return finding{}
	}
	if d.shell != nil {
		best = best.stronger(e.shellProtected(c, d, pl))
	}
	if d.shell == nil && d.target == "" {
		// Any other tool: a string of its input that is a whole path.
		walkStrings(c.ToolInput, func(s string) {
			if looksLikePath(s) {
				note("it names", judgePath(pl, c.Cwd, e.Env.Home, s))
			}
		})
	}
	return best
}

// readProtected is the check of a read-only tool: it may read anything but
// the guard's secrets (its state, config and the keyrings), nor search a
// tree that holds them.
func (e *Engine) readProtected(c *Call, pl policy.Places) finding {
	fields := policy.ToolOf(c.ToolName).ReadPaths
	base := c.Cwd
	for _, f := range fields {
		if f.Name == "path" {
			if p, _ := c.ToolInput["path"].(string); p != "" {
				base = filepath.Clean(fsx.Abs(c.Cwd, e.Env.Home, p))
			}
		}
	}
	for _, f := range fields {
		p, _ := c.ToolInput[f.Name].(string)
		switch {
		case f.Glob:
			if p == "" {
				continue
			}
			pat := fsx.Abs(base, e.Env.Home, p)
			if !strings.Contains(p, "/") && c.ToolName == "Grep" {
				pat = filepath.Join(base, "**", p) // rg matches a bare glob at any depth
			}
			if g := pl.GlobProtection(pat); g.Secret {
				return finding{Protection: g, why: "it would read " + present.EscapeText(g.Path) + " (" + g.What + ")"}
			}
		case f.Dir:
			if p == "" {
				p = c.Cwd
			}
			j := judgePath(pl, c.Cwd, e.Env.Home, p)
			for _, at := range []string{j.literal, j.res.Path} {
				if g, ok := pl.ContainsSecret(at); ok && at != "" {
					return finding{Protection: g, why: "it would read " + present.EscapeText(g.Path) + " (" + g.What + "), inside " + present.EscapeText(at)}
				}
			}
		default:
			if p == "" {
				continue
			}
			if j := judgePath(pl, c.Cwd, e.Env.Home, p); j.prot.Secret {
				return finding{Protection: j.prot, why: "it would read " + j.describe()}
			}
		}
	}
	return finding{}
}

func (e *Engine) shellProtected(c *Call, d *described, pl policy.Places) finding {
	var best finding
	for name, exe := range d.shell.Executables {
		if policy.IsKeyringTool(name) || (exe != "" && (policy.IsLoopguardBinary(e.Env.Self, exe) || policy.IsKeyringTool(exe))) {
			return finding{Protection: policy.Protection{Tier: policy.GuardCritical, What: "the keyring or loopguard itself"}, why: "it runs " + present.EscapeText(name)}
		}
	}
	home := e.Env.Home
	seen := map[string]bool{}
	rv := &resolver{pl: pl, cwd: c.Cwd, home: home}
	check := func(word string, glob bool, verb string) {
		for _, cand := range pathCandidates(word) {
			if cand == "" || seen[cand] {
				continue
			}
			seen[cand] = true
			if glob && hasGlobMeta(cand) {
				pat := filepath.Clean(fsx.Abs(rv.cwd, home, cand))
				if g := pl.GlobProtection(pat); g.Protected() {
					best = best.stronger(finding{Protection: g, why: verb + " the glob " + present.EscapeText(cand) + ", which could match " + present.EscapeText(g.Path) + " (" + g.What + ")"})
				}
			}
			j := rv.judge(cand)
			if j.prot.Protected() {
				best = best.stronger(finding{Protection: j.prot, why: verb + " " + j.describe()})
			}
		}
	}
	for _, w := range d.shell.Argv {
		check(w.Value, w.Glob, "it names")
	}
	for _, a := range d.shell.Assigns {
		check(a.Value, false, "it names")
	}
	for _, r := range d.shell.Redirects {
		check(r.Target, false, "it redirects to")
	}
	// Each part of a chain, judged in the cwd it runs in (after a cd of
	// the chain); a cd's target too.
	for i := range d.shell.Parts {
		p := &d.shell.Parts[i]
		rv = &resolver{pl: pl, cwd: p.Cwd, home: home}
		seen = map[string]bool{}
		for _, w := range p.Argv {
			check(w.Value, w.Glob, "it names")
		}
		for _, a := range p.Assigns {
			check(a.Value, false, "it names")
		}
		for _, r := range p.Redirects {
			check(r.Target, false, "it redirects to")
		}
		if p.Chdir != "" {
			check(p.Chdir, false, "it changes directory into")
		}
	}
	rv = &resolver{pl: pl, cwd: c.Cwd, home: home}
	seen = map[string]bool{}
	// A command that is not one simple command has no argv: every word of
	// its raw text, with quotes and backslashes taken out, so that
	// `.cla\ude/settings.json` or '.cl''aude' read the same. (A simple
	// command's words are its argv: a commit message that mentions .git is
	// not a path.)
	cmd, _ := c.ToolInput["command"].(string)
	flat := strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(cmd)
	if home != "" {
		flat = strings.NewReplacer("${HOME}", home, "$HOME", home).Replace(flat)
	}
	var tokens []string
	if d.shell.Verdict != shellparse.Simple {
		tokens = shellparse.Tokens(flat)
	}
	if len(tokens) > shellparse.MaxTokens {
		best = best.stronger(finding{Protection: policy.Protection{Tier: policy.ExecConfig, What: "too many words to check"},
			why: fmt.Sprintf("it has %d words, more than the %d checked one by one against the protected paths", len(tokens), shellparse.MaxTokens)})
		tokens = tokens[:shellparse.MaxTokens]
	}
	for _, t := range tokens {
		check(t, true, "it names")
	}
	// A last net over the text, for what no word shows whole.
	critical := func(what string) {
		best = best.stronger(finding{Protection: policy.Protection{Tier: policy.GuardCritical, What: what}, why: "it names " + what})
	}
	for _, frag := range []string{".local/state/loopguard", ".config/loopguard", ".local/share/keyrings", "org.freedesktop.secrets"} {
		if strings.Contains(flat, frag) {
			critical(frag)
		}
	}
	if strings.Contains(flat, ".claude") && strings.Contains(flat, "settings") {
		critical("the agent's settings (.claude/settings*.json)")
	}
	for _, name := range policy.KeyringTools() {
		// "security" and "loopguard" are ordinary words in arguments; as
		// commands they were caught above.
		if name != "security" && name != "loopguard" && containsWord(flat, name) {
			critical(name)
		}
	}
	return best
}

// pathCandidates are the paths one shell word can name: the word, what
// follows each "=" (--output=P, of=P), what follows a ":" (host:P,
// format:P), and the value glued to a short option (-oP). Each is judged
// against every protected path, so a word of thousands of separators
// (the seventy-fifth attack run's ls :/:/..., 16 KB, held the hook to its
// deadline) gives the first and the last maxCandidates of each kind: a
// protected path in the middle of such a list is the kernel's to refuse.
func pathCandidates(w string) []string {
	out := []string{w}
	var seps []int
	for i := 0; i < len(w); i++ {
		if w[i] == '=' || w[i] == ':' {
			seps = append(seps, i)
		}
	}
	for _, i := range ends(seps) {
		out = append(out, w[i+1:])
	}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' {
		out = append(out, w[2:])
		var at []int
		for k := 3; k < len(w); k++ {
			if strings.IndexByte("/~.", w[k]) >= 0 {
				at = append(at, k)
			}
		}
		for _, k := range ends(at) {
			out = append(out, w[k:])
		}
	}
	return out
}

// maxCandidates bounds the candidates of each kind taken from each end of
// a word (pathCandidates).
const maxCandidates = 32

// ends is s, or its first and last maxCandidates where it is longer.
func ends(s []int) []int {
	if len(s) <= 2*maxCandidates {
		return s
	}
	return append(s[:maxCandidates:maxCandidates], s[len(s)-maxCandidates:]...)
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[{") }

// looksLikePath is a whole absolute or home path, as another tool's input
// field would hold one.
func looksLikePath(s string) bool {
	return len(s) < 4096 && (strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~/")) && !strings.ContainsAny(s, " \t\n\r")
}

func walkStrings(v any, f func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			walkStrings(v[k], f)
		}
	case []any:
		for _, e := range v {
			walkStrings(e, f)
		}
	case string:
		f(v)
	}
}

// containsWord reports whether name occurs in s not as part of a longer word.
func containsWord(s, name string) bool {
	isWord := func(b byte) bool {
		return b == '-' || b == '_' || b == '.' || (b >= '0' && b <= '9') || (b|0x20 >= 'a' && b|0x20 <= 'z')
	}
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isWord(s[j-1])) && (end == len(s) || !isWord(s[end])) {
			return true
		}
		i = j + 1
	}
}
