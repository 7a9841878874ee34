package scope

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

// PresetReadOnly names the preset of everyday read-only commands.
const PresetReadOnly = "readonly"

// presets are named standing sets of rules a human mints in one step
// (loopguard grant --preset NAME, offered by init). This is the one list:
// grant mints it, grants shows it as one preset, revoke --preset removes it.
//
// Every rule goes through Dangerous like any other rule, and matching keeps
// all its narrowing: the wildcard never covers an option the option table
// calls code, a write or unknown (git diff --output=, --ext-diff, git -c,
// sort -o, rg --pre), a call is never covered when it touches a protected
// resource (the hook's protected check runs before any scope), and a git
// call is covered only in the project's own repository (gitRepository).
//
// A preset rule also covers reading in the project only (matchPreset): the
// cwd must be inside the project, and no word its wildcard absorbs may name
// a path outside it (cat ~/.aws/credentials, ls /, grep -r x ..). Claude
// Code asks before reading outside the working directory; the preset does
// not widen that.
//
// Left out on purpose: pagers and editors (less, more, vim: they run
// commands), find -L and its acting predicates (-exec, -delete, -fprint:
// the option table), tree (-o writes), printenv and env
// (tokens in the environment; env runs commands), sed and awk
// (interpreters), date with options (-s sets the clock; only a format is
// covered), git branch * and git tag * (-d, -m change branches and tags;
// git branch NAME creates one), git remote * (show and update fetch, add
// writes), git stash * (pop, drop, clear), git worktree * (add, remove),
// git config (it reads the user's own configuration too, outside the
// project), git submodule (it runs git in nested repositories).
//
// A git rule that names its subcommand also covers the subcommand after
// -C DIR and --no-pager (gitFront): the call is judged where git -C goes.
//
// A slice, not a map: static data, nothing built at start-up.
var presets = []struct {
	name  string
	rules []string
}{
	{PresetReadOnly, []string{
		"Bash(ls *)", "Bash(cat *)", "Bash(head *)", "Bash(tail *)", "Bash(wc *)", "Bash(pwd)",
		"Bash(file *)", "Bash(stat *)", "Bash(du *)", "Bash(df *)", "Bash(which *)",
		"Bash(grep *)", "Bash(rg *)", "Bash(diff *)", "Bash(cmp *)",
		"Bash(basename *)", "Bash(dirname *)", "Bash(realpath *)", "Bash(readlink *)",
		"Bash(uname *)", "Bash(whoami)",
		"Bash(git status *)", "Bash(git log *)", "Bash(git diff *)", "Bash(git show *)",
		"Bash(git rev-parse *)", "Bash(git ls-files *)", "Bash(git blame *)", "Bash(git branch)",
		"Bash(git branch -a)", "Bash(git branch --show-current)", "Bash(git ls-tree *)", "Bash(git rev-list *)",
		"Bash(git describe *)", "Bash(git shortlog *)", "Bash(git cat-file *)", "Bash(git show-ref *)",
		"Bash(git merge-base *)", "Bash(git grep *)", "Bash(git --version)",
		// Listing forms of subcommands that also create, delete or run:
		// tag with -l/--list and branch with --list (policy's list mode,
		// where their creating options are not known; git branch -l was
		// --create-reflog before git 2.19, git branch -l NAME created
		// NAME) or written exactly (git branch -v NAME creates NAME), stash list and show (show runs no
		// external diff or textconv unless told: --ext-diff is code),
		// remote alone (its names; not -v: a remote's URL may hold a token,
		// and .git/config needs an approval to read; show and update
		// fetch), worktree list.
		"Bash(git branch -r)", "Bash(git branch -v)", "Bash(git branch -vv)", "Bash(git branch -av)",
		"Bash(git branch --list *)",
		"Bash(git tag)", "Bash(git tag -l *)", "Bash(git tag --list *)",
		"Bash(git stash list *)", "Bash(git stash show *)",
		"Bash(git remote)", "Bash(git worktree list *)",
		"Bash(go vet *)", "Bash(go list *)", "Bash(go version)", "Bash(go env *)", "Bash(go doc *)",
		// Builtins that change nothing outside the shell (a writing
		// redirect is never covered; cd only within the project, never
		// into .git or .claude), and time.
		"Bash(cd *)", "Bash(echo *)", "Bash(printf *)", "Bash(true)", "Bash(sleep *)", "Bash(date)", "Bash(date +*)",
		// find without its acting predicates (-exec, -delete, -fprint:
		// policy's option table) and without following links.
		"Bash(find *)",
		// Text filters over files in the project: sed only with -n and a
		// script that reads no file it names and writes nothing (the
		// analysis reads the script; -i is a write), sort and uniq
		// without their output files (the option table).
		"Bash(sed -n *)", "Bash(nl *)", "Bash(sort *)", "Bash(uniq *)", "Bash(cut *)", "Bash(tr *)",
		"Bash(tac *)", "Bash(rev *)", "Bash(comm *)", "Bash(seq *)",
	}},
}

// presetTexts returns the rules of the named preset.
func presetTexts(name string) ([]string, bool) {
	for _, p := range presets {
		if p.name == name {
			return p.rules, true
		}
	}
	return nil, false
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var out []string
	for _, p := range presets {
		out = append(out, p.name)
	}
	sort.Strings(out)
	return out
}

// Preset returns the parsed, unpinned rules of the named preset, each
// accepted by Dangerous.
func Preset(name, home string) ([]Rule, error) {
	texts, ok := presetTexts(name)
	if !ok {
		return nil, fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	rules := make([]Rule, 0, len(texts))
	for _, t := range texts {
		r, err := Parse(t)
		if err != nil {
			return nil, fmt.Errorf("preset %s: %w", name, err)
		}
		if err := Dangerous(r, home); err != nil {
			return nil, fmt.Errorf("preset %s: %w", name, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// Unpinned is r without its pinned executable and content digest, as a
// person wrote it.
func (r Rule) Unpinned() Rule {
	r.exe, r.digest = "", ""
	return r
}

// presetRules maps the canonical text of every preset rule to its preset,
// built on first use.
var (
	presetRules     map[string]string
	presetRulesOnce sync.Once
)

// PresetOf names the preset a rule (pinned or not) belongs to, or "". A
// rule a human wrote that is the same as a preset's is the preset's rule.
func PresetOf(r Rule) string {
	presetRulesOnce.Do(func() {
		// The texts are canonical (TestPresetRules): no parse on the
		// hook's path.
		presetRules = map[string]string{}
		for _, p := range presets {
			for _, t := range p.rules {
				presetRules[t] = p.name
			}
		}
	})
	return presetRules[r.Unpinned().String()]
}

// presetFollows lists, per program of the preset, the options that read
// what no word of the call names: a recursion that follows symbolic links
// (grep -R, diff -r, which follows them by default, rg -L, du -L, ls -L) or
// a list of names read from a file (wc --files0-from, file -f). A symlink
// in the project (a cloned repository may hold one) would otherwise take
// the read outside it: diff -r a b with a/k and b/k linking to two
// directories prints the files of both. Short letters match anywhere in a
// cluster (-rnR), long options by any prefix (GNU getopt takes --deref for
// --dereference-recursive); either may refuse more than it must, never less.
var presetFollows = []struct {
	prog, short string
	long        []string
	// words are whole single-dash options (find's -L, -follow).
	words []string
}{
	{"grep", "R", []string{"--dereference-recursive"}, nil},
	{"diff", "r", []string{"--recursive"}, nil},
	{"rg", "L", []string{"--follow"}, nil},
	{"du", "L", []string{"--dereference", "--files0-from"}, nil},
	{"ls", "L", []string{"--dereference"}, nil},
	{"wc", "", []string{"--files0-from"}, nil},
	{"file", "fC", []string{"--files-from", "--compile"}, nil},
	{"find", "", nil, []string{"-L", "-follow", "-files0-from"}},
}

// presetFollowing returns the option of word v that presetFollows refuses
// for prog, or "".
func presetFollowing(prog, v string) string {
	for _, f := range presetFollows {
		if f.prog != prog {
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, _, _ := strings.Cut(v, "=")
			if len(name) <= 2 {
				return ""
			}
			for _, l := range f.long {
				if strings.HasPrefix(l, name) {
					return l
				}
			}
			return ""
		}
		for _, w := range f.words {
			if v == w {
				return v
			}
		}
		if f.short != "" && strings.HasPrefix(v, "-") && strings.ContainsAny(v[1:], f.short) {
			return v
		}
	}
	return ""
}

// matchPreset narrows a preset rule to the project: the call's cwd is in
// the project, and every word the rule's wildcard absorbs that could name
// a file (an operand, an option's value after '=' or an attached value
// from its first '/' or '~') names one in the project, resolved as the
// kernel will (fsx.Resolve). A glob word that could match a dot directory (.*)
// is not covered, nor an option presetFollows lists.
func matchPreset(bs bashSpec, c Call, argv []shellparse.Word) error {
	proj, cwd := c.ProjectDir, c.Cwd
	if !c.ProjectNamed || proj == "" || cwd == "" || !filepath.IsAbs(proj) || !filepath.IsAbs(cwd) {
		// A project taken from the call's own cwd is no bound: the agent
		// may choose the cwd (Gemini's dir_path: / or the home).
		return mismatch(ReasonPathEscapes, "a preset rule covers reading in the project only, and the agent's host named no project (CLAUDE_PROJECT_DIR) or the cwd is not known")
	}
	proj, perr := fsx.ResolvePath(filepath.Clean(proj))
	cwd, cerr := fsx.ResolvePath(filepath.Clean(cwd))
	if perr != nil || cerr != nil {
		return mismatch(ReasonPathEscapes, "cannot resolve the project or the cwd")
	}
	if !within(cwd, proj) {
		return mismatch(ReasonPathEscapes, "a preset rule covers reading in the project only; the cwd %s is outside %s", cwd, proj)
	}
	prog := ""
	if len(argv) > 0 {
		prog = filepath.Base(argv[0].Value)
	}
	if policy.ReadsNoFiles(prog) {
		return nil // its words are text, not paths (echo ---a/b---)
	}
	for i, w := range argv {
		if i < len(bs.words) && bs.words[i].literal() {
			continue // named by the rule
		}
		v := w.Value
		if o := presetFollowing(prog, v); o != "" {
			return nearMiss(ReasonPathEscapes, bs.named(), shownWord(w.Value), "it follows symbolic links or reads names from a file, which may lead outside the project",
				"word %d %q: %s %s reads what no word names (it follows symbolic links or reads names from a file), which may lie outside the project: not covered by a preset rule", i, w.Value, prog, o)
		}
		if strings.HasPrefix(v, "-") {
			if j := strings.IndexByte(v, '='); j >= 0 {
				v = v[j+1:]
			} else if j := strings.IndexAny(v, "/~"); j >= 0 {
				v = v[j:]
			} else {
				continue
			}
		}
		if v == "" {
			continue
		}
		if w.Glob {
			for _, seg := range strings.Split(v, "/") {
				if strings.HasPrefix(seg, ".") && strings.ContainsAny(seg, "*?[") {
					return nearMiss(ReasonPathEscapes, bs.named(), shownWord(w.Value), "a glob that could match a dot directory (..)",
						"word %d %q: a glob that could match a dot directory (..) is not covered by a preset rule", i, w.Value)
				}
			}
		}
		// The kernel's meaning of "..", symlinks (dangling ones too)
		// followed: where the read lands.
		p, err := fsx.ResolvePath(fsx.Abs(cwd, "", v))
		if err != nil {
			return nearMiss(ReasonPathEscapes, bs.named(), shownWord(w.Value), err.Error(), "word %d %q: %v", i, w.Value, err)
		}
		if c.Confined && !w.Glob {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				continue // nothing to read there; the kernel bounds the rest
			}
		}
		if !within(p, proj) {
			return nearMiss(ReasonPathEscapes, bs.named(), shownWord(w.Value), "it names "+p+", outside the project",
				"word %d %q names %s, outside the project %s: a preset rule covers reading in the project only", i, w.Value, p, proj)
		}
	}
	return nil
}
