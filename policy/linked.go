package policy

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/fsx"
)

// A protected entry that is a link, or a link inside a protected
// directory, makes what it leads to the tool's file: the tool loads it
// through the link (.claude -> cc, CLAUDE.md -> docs/ai.md,
// .claude/settings.json -> ../conf/settings.json), so a write to the target
// is a write to it, and a link on the way there (.claude ->
// cfg/shared/claude, cfg/shared -> ../vendor/shared) retargeted is one
// too (the fifty-second and fifty-third attack runs).

// readDirN is at most n entries of the directory dir, unsorted: not a
// directory of 100,000 read whole; none where it cannot be read.
func readDirN(dir string, n int) []os.DirEntry {
	f, err := fsx.OpenDir(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(n)
	return ents
}

// maxLinkedEntries bounds the entries LinksIn reads, all together.
const maxLinkedEntries = 1024

// maxLinkedDepth bounds how deep LinksIn looks in a directory.
const maxLinkedDepth = 4

// LinksIn are the links in the directories among held (depth first, to
// maxLinkedDepth, max entries in all); of a git directory (.git), only its
// hooks, whose scripts are often links to the repository's own.
func LinksIn(held []string, max int) []string {
	var out []string
	left := max
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > maxLinkedDepth || left <= 0 {
			return
		}
		for _, e := range readDirN(dir, left) {
			if left--; left < 0 {
				return
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				out = append(out, p)
			case e.IsDir():
				walk(p, depth+1)
			}
		}
	}
	for _, h := range held {
		fi, err := os.Lstat(h)
		if err != nil || !fi.IsDir() {
			continue
		}
		if filepath.Base(h) == gitDirName {
			walk(filepath.Join(h, "hooks"), 1)
			continue
		}
		walk(h, 1)
	}
	return out
}

// LinkTargets are, for each of links (absolute), what it leads to in
// project and every link it crosses on the way there, spelled from
// project, and likewise for the links inside a target that is a
// directory (LinksIn; maxLinkedEntries links in all); a place outside the
// project is left out (no rule writes there). top is a link that leads
// to the project's top itself (.claude -> .): every file at the top is
// then its tool's, which no path protects short of the whole project (""
// when none does).
func LinkTargets(project string, links []string) (out []string, top string) {
	if len(links) == 0 || !filepath.IsAbs(project) {
		return nil, ""
	}
	project = filepath.Clean(project)
	real, err := fsx.Resolve(project)
	if err != nil {
		return nil, ""
	}
	links = slices.Clone(links)
	scanned := map[string]bool{}
	for i := 0; i < len(links) && i < maxLinkedEntries; i++ {
		l := links[i]
		r, err := fsx.Resolve(l)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(r.Path); err == nil && fi.IsDir() && !scanned[r.Path] && fsx.Within(r.Path, real.Path) && r.Path != real.Path {
			scanned[r.Path] = true
			links = append(links, LinksIn([]string{r.Path}, maxLinkedEntries)...)
		}
		for _, p := range append(slices.Clone(r.LinkPaths), r.Path) {
			rel, err := filepath.Rel(real.Path, p)
			switch {
			case err != nil || !filepath.IsLocal(rel) && rel != ".":
			case rel == ".":
				if top == "" {
					top = l
				}
			default:
				if t := filepath.Join(project, rel); t != l && !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	return out, top
}

// LinkedConfig is LinkTargets of the links among the executable
// configuration and instruction files at the project's top and in its
// .github, and inside those that are directories (LinksIn): the hook's
// share, which walks no tree (the launcher's walk finds every held link).
// One that leads to the top makes the whole project protected.
func LinkedConfig(project string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	var links, dirs []string
	var pl Places // the project's own entries alone; prepared once, where one is asked
	github := ""  // its name, as the top spells it
	look := func(dir string, every bool) {
		for _, e := range readDirN(dir, maxTopNames) {
			link := e.Type()&fs.ModeSymlink != 0
			if !link && !e.IsDir() || !every && !NameCouldBeProtected(e.Name()) {
				continue
			}
			if pl.prepared == nil {
				pl = pl.Prepare()
			}
			p := filepath.Join(dir, e.Name())
			pr := pl.Classify(p)
			switch {
			case pr.Holds && dir == project && strings.EqualFold(e.Name(), ".github") && !link:
				github = e.Name()
			case !pr.Protected():
			case link:
				links = append(links, p)
			case e.IsDir() && !pr.Holds:
				dirs = append(dirs, p)
			}
		}
	}
	look(project, false)
	if github != "" {
		look(filepath.Join(project, github), true)
	}
	out, top := LinkTargets(project, append(links, LinksIn(dirs, maxLinkedEntries)...))
	if top != "" {
		out = append(out, project)
	}
	return out
}
