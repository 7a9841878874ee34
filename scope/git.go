package scope

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

// gitFront reads the options an agent writes before git's subcommand that
// a rule naming the subcommand covers (Bash(git status *) and git -C sub
// status): -C DIR, which makes git change to DIR before anything else, and
// --no-pager (-P), which starts no pager. It returns argv without them and
// the directory git runs in, resolved as the kernel will, so that the call
// is judged as git runs it: its words relative to DIR, the preset's
// project bound and the repository bound (gitRepository) from DIR. What
// runs is the call as written: git changes to DIR itself. Any other option
// there (-c, --git-dir, --work-tree, -p: the option table) keeps the call
// uncovered, as does a rule that names a front option itself.
//
// dir is the last -C word ("" when there is none), for a person.
func gitFront(bs bashSpec, c Call, argv []shellparse.Word) (out []shellparse.Word, cwd, dir string, err error) {
	cwd = c.Cwd
	if len(bs.words) < 2 || !bs.words[0].literal() || policy.Base(bs.words[0].lits[0]) != "git" ||
		!bs.words[1].literal() || strings.HasPrefix(bs.words[1].lits[0], "-") {
		return argv, cwd, "", nil
	}
	var dirs []shellparse.Word
	i := 1
	for i < len(argv) {
		switch v := argv[i].Value; {
		case v == "--no-pager" || v == "-P":
			i++
			continue
		case v == "-C" && i+1 < len(argv):
			dirs = append(dirs, argv[i+1])
			i += 2
			continue
		}
		break
	}
	if i == 1 {
		return argv, cwd, "", nil
	}
	out = append([]shellparse.Word{argv[0]}, argv[i:]...)
	if len(out) < 2 || out[1].Value != bs.words[1].lits[0] {
		// Another subcommand: nothing near to say about the front.
		return nil, "", "", mismatch(ReasonArgvMismatch, "git's subcommand is not %s", bs.words[1].lits[0])
	}
	if len(dirs) == 0 {
		return out, cwd, "", nil
	}
	if !filepath.IsAbs(cwd) {
		return nil, "", "", mismatch(ReasonRepositoryNotCovered, "no absolute cwd: cannot tell where git -C runs")
	}
	// Each -C is relative to the one before (git changes to each in turn).
	for _, d := range dirs {
		dir = d.Value
		if d.Glob || dir == "" {
			return nil, "", "", nearMiss(ReasonArgvMismatch, bs.named(), "-C "+shownWord(dir), "git -C is covered with one directory, named",
				"git -C %q: not one named directory", dir)
		}
		cwd = fsx.Abs(cwd, "", dir)
	}
	p, rerr := fsx.ResolvePath(filepath.Clean(cwd))
	if fi, serr := os.Stat(p); rerr != nil || serr != nil || !fi.IsDir() {
		return nil, "", "", nearMiss(ReasonArgvMismatch, bs.named(), "-C "+shownWord(dir), "it names no directory", "git -C %q names no directory", dir)
	}
	below := p
	if proj, err := fsx.ResolvePath(filepath.Clean(c.ProjectDir)); err == nil && filepath.IsAbs(c.ProjectDir) && within(p, proj) {
		below, _ = filepath.Rel(proj, p)
	}
	for _, seg := range strings.Split(below, string(filepath.Separator)) {
		if seg == ".git" {
			return nil, "", "", nearMiss(ReasonRepositoryNotCovered, bs.named(), "-C "+shownWord(dir), "git would use the .git directory there as a repository",
				"git -C %q runs git inside a .git directory, which git would use as the repository (its config and hooks run commands)", dir)
		}
	}
	return out, p, dir, nil
}
