package confine

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/loopguard/loopguard/policy"
)

// Landlock cannot refuse a name: a right to create in a directory covers
// every name in it, so a program the capability lets write src/ can
// create src/.git (with core.fsmonitor set, run by the next git status
// an editor runs there), src/CLAUDE.md or src/.envrc. sweep runs after
// the launch's last process has exited: every executable configuration
// or instruction file that appeared in the project is moved out of it,
// into the state directory's held/ folder where that can be written (not
// under Claude Code's sandbox), else beside itself under a name nothing
// loads (NAME.loopguard-held), and each is said on stderr.
//
// What it cannot close: while the call runs, such an entry exists in the
// project, and an unconfined process that reads it then (an editor's git
// integration polling the tree) is not stopped. docs/confinement.md says
// so.
func sweep(p Plan, e Env) []string {
	e.Places.HooksPaths = p.hooksPaths
	pl := e.Places.Prepare()
	before := map[string]bool{}
	for _, h := range p.Held {
		before[h] = true
	}
	for _, s := range p.Kept {
		before[s] = true
	}
	var found []string
	var look func(dir string)
	look = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, ent := range ents {
			path := dir + "/" + ent.Name()
			if before[path] {
				continue
			}
			if policy.NameCouldBeProtected(ent.Name()) && pl.Classify(path).Protected() {
				found = append(found, path)
				continue
			}
			if ent.IsDir() {
				if _, seen := p.Dirs[path]; !seen {
					look(path) // new, or moved here: all of it is new here
				}
			}
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(p.Dirs)) {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || changeTime(fi) == p.Dirs[dir] {
			continue
		}
		look(dir)
	}
	var lines []string
	for _, path := range found {
		rel, _ := filepath.Rel(p.Project, path)
		to, err := holdBack(path, rel, p, e)
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: %s, created by this call, is executable configuration or an instruction file, and could not be moved out of the project: %v", rel, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: held back %s, created by this call: executable configuration and instruction files reach the project only with the user's approval (moved to %s)", rel, to))
	}
	return lines
}

// holdBack moves path out of the project: into the state directory's
// held/RUN/REL, or beside itself as NAME.loopguard-held.
func holdBack(path, rel string, p Plan, e Env) (string, error) {
	if e.Places.StateDir != "" {
		to := filepath.Join(e.Places.StateDir, "held", filepath.Base(p.RunDir), rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err == nil {
			if err := os.Rename(path, to); err == nil {
				return to, nil
			}
		}
	}
	to := path + ".loopguard-held"
	if _, err := os.Lstat(to); err == nil {
		return "", errors.New(to + " exists")
	}
	if err := os.Rename(path, to); err != nil {
		return "", err
	}
	return to, nil
}
