package hooks

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/undo"
)

// What the jail planted (issue 36, item 4). A held call, once approved,
// runs outside the jail: a build, an install, a commit or a push then runs
// or ships what jailed calls wrote, and a Write held for .envrc sources
// what they wrote on the next cd. The human deciding it is shown, beside
// the call, the files jailed calls changed (from the undo records the
// launcher keeps, and the trace of those prune removed) and the files the
// agent's file tools wrote with no decision of theirs (the trace the hook
// keeps, undo.Store.NoteWrite), in the project and the projects it is in
// or holds, since the human's last decision about a call in the project;
// or told plainly that what changed is not all known. The warning is
// computed when the call is held and again each time it is shown and
// when it is approved (RefreshPlanted, PlantedWarning): an approval whose
// warning changed since it was shown is refused (package approve).

// maxPlanted bounds the paths named; the rest are counted.
const maxPlanted = 12

// plantedScan bounds how far back the audit log is read for the human's
// last decision: past it, none is taken (the warning then goes back as
// far as the records and traces do, longer, never shorter).
const plantedScan = 500

// plantedWarning is the warning a held call carries, "" when nothing
// changed in its project since the human's last decision (or nothing is
// recorded), and the project the host names is the one it is about.
func (e *Engine) plantedWarning(c *Call, related []string) string {
	if e.Env.StateDir == "" || e.namedProject(c) == "" || e.Store == nil {
		return ""
	}
	return PlantedWarning(e.Env.StateDir, e.Store, e.Audit, filepath.Clean(e.projectDir(c)), related)
}

// RefreshPlanted recomputes the planted warning of p (PlantedWarning of
// its project) and puts it in p.Warnings in place of the one it carried
// (p.Planted), and when in p.PlantedAt, in p only: what show, review,
// approve and the console show is what is true when they show it, and an
// approval of it covers the project as of then (ApproveWith). The eighty-sixth attack run
// rewrote the Makefile from a jailed call after `make` was held; the
// warning shown was the one computed at the hold, and named README only.
func RefreshPlanted(st *state.Store, p *state.Pending) { RefreshPlantedAll(st, []*state.Pending{p}) }

// RefreshPlantedAll is RefreshPlanted of each of ps, the warning of each
// project computed once.
func RefreshPlantedAll(st *state.Store, ps []*state.Pending) {
	if st == nil {
		return
	}
	log := audit.Open(filepath.Join(st.Dir, "audit"))
	done, at := map[string]string{}, map[string]time.Time{}
	for _, p := range ps {
		if p == nil || p.ProjectDir == "" || !filepath.IsAbs(p.ProjectDir) {
			continue
		}
		project := filepath.Clean(p.ProjectDir)
		key := project + "\x00" + strings.Join(p.Related, "\x00")
		w, ok := done[key]
		if !ok {
			at[key] = time.Now() // before: a change while it is computed counts after
			w = PlantedWarning(st.Dir, st, log, project, p.Related)
			done[key] = w
		}
		p.SetPlanted(w)
		p.PlantedAt = at[key]
	}
}

// PlantedNow is the planted warning p would carry now (RefreshPlanted),
// for approve to compare with the one shown.
func PlantedNow(st *state.Store, p *state.Pending) string {
	q := *p
	q.Warnings = slices.Clone(p.Warnings)
	RefreshPlanted(st, &q)
	return q.Planted
}

// plantedStore is one undo store the warning reads: the project's own,
// one of a project it is in (an enclosing one), or one of a project in it.
type plantedStore struct {
	st      *undo.Store
	project string
}

// plantedStores are the undo stores of project, of every directory above
// it that has one, and of every project below it: a jailed call in ~/mono
// that changed mono/svc/Makefile left its record in mono's store, and
// the held make in svc named nothing of it (the eighty-sixth attack run).
// And those of the projects a place of related is in (relatedPlaces: the
// eighty-eighth attack run's approved `make -C vendor-lib`, a link to
// ../lib, ran a Makefile another session's jailed call rewrote there).
// Only those with a record or a trace are returned.
func plantedStores(stateDir, project string, related []string) []plantedStore {
	var out []plantedStore
	// The index of the stores' projects (one small file): a project with
	// none in it, above or below, reads nothing more.
	projects, err := undo.Projects(stateDir)
	if err != nil {
		// Every directory above, and the project, as before the index.
		for p := project; ; p = filepath.Dir(p) {
			projects = append(projects, p)
			if filepath.Dir(p) == p {
				break
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range projects {
		if !under(project, p) && !under(p, project) && !slices.ContainsFunc(related, func(r string) bool { return under(r, p) }) || seen[p] {
			continue
		}
		seen[p] = true
		st, err := undo.Open(stateDir, p)
		if err != nil {
			continue
		}
		if rec, err := st.Recorded(); err != nil || rec || st.Traced() {
			out = append(out, plantedStore{st, p})
		}
	}
	return out
}

// under reports whether p is dir or below it, both clean and absolute
// (fsx.Within, without cleaning them again: the held call's warning asks
// of every project with an undo store).
func under(p, dir string) bool {
	return p == dir || dir == "/" || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// PlantedWarning is the warning a held call in project (absolute, clean)
// carries: the files jailed calls changed and file tools wrote in it (and
// in the projects it is in or holds, and those the places related are in:
// relatedPlaces) since the human's last decision
// about a call there, "" when nothing is recorded since. stateDir is
// loopguard's state directory; pendings (its store) and log tell the
// last decision. The audit log is read only when a store has a record or
// a trace: a held call where neither the jail nor a file tool ever ran
// reads a few directories, not the log.
func PlantedWarning(stateDir string, pendings *state.Store, log *audit.Log, project string, related []string) string {
	if stateDir == "" || !filepath.IsAbs(project) {
		return ""
	}
	stores := plantedStores(stateDir, project, related)
	if len(stores) == 0 {
		return ""
	}
	since := lastDecisionIn(log, pendings, project)
	when := "since your last decision about a call in this project"
	if since.IsZero() {
		when = "so far"
	}
	uid := os.Getuid()
	roots := confine.ScratchRoots(os.Getenv("TMPDIR"), uid)
	return plantedSince(stores, project, since, when, func(p string) bool { return confine.LiveLaunch(roots, uid, p) })
}

// ChangedAfter is the warning of what jailed calls and the agent's file
// tools changed in project (absolute, clean; and the projects it is in or
// holds) at or after approved, "" when nothing: an exact approval covers
// the call on the project as the approver was shown it, and a jailed
// call between the approval and the retry (no decision of anyone's)
// rewrote the Makefile the approved make then ran. A jailed call that
// was running when the approval was made and runs still is not counted
// (the warning the approver was shown said it was running); one that
// started after it, or ended after it, is.
func ChangedAfter(stateDir, project string, approved time.Time, related []string) string {
	if stateDir == "" || !filepath.IsAbs(project) {
		return ""
	}
	stores := plantedStores(stateDir, project, related)
	if len(stores) == 0 {
		return ""
	}
	return plantedSince(stores, project, approved, "after the approval", func(string) bool { return false })
}

// plantedSince is the warning of what the records and traces of stores
// (those of project and the projects it is in or holds) say changed at
// or after since; when says since in words, and live(p) reports whether
// a launch of project p runs now (a record with no after-state is then
// counted when its call began before since).
func plantedSince(stores []plantedStore, project string, since time.Time, when string, live func(string) bool) string {
	// name is p (absolute) as the human reads it: relative to the
	// project when in it, whole otherwise.
	name := func(p string) string {
		if rel, err := filepath.Rel(project, p); err == nil && fsx.Within(p, project) {
			return filepath.ToSlash(rel)
		}
		return p
	}
	var (
		paths, written                  []string
		seen                            = map[string]bool{}
		more, wroteMore, prunedCut, cut bool
		unfinished, unreadable, pruned  int
		prunedUnknown                   int
		left                            []string
		leftMore                        bool
		fails                           []string
	)
	for _, s := range stores {
		ch, err := s.st.ChangedSince(since, maxPlanted, live(s.project))
		if err != nil {
			fails = append(fails, err.Error())
		}
		for _, p := range ch.Paths {
			n := name(filepath.Join(s.project, filepath.FromSlash(p)))
			if seen[n] {
				continue
			}
			seen[n] = true
			if len(paths) == maxPlanted {
				more = true
				continue
			}
			paths = append(paths, n)
		}
		more = more || ch.More
		unfinished += ch.Unfinished
		unreadable += ch.Unreadable
		pruned += ch.Pruned
		prunedUnknown += ch.PrunedUnknown
		prunedCut = prunedCut || ch.PrunedCut
		for _, l := range ch.Left {
			n := name(filepath.Join(s.project, filepath.FromSlash(l)))
			if !slices.Contains(left, n) {
				left = append(left, n)
			}
		}
		leftMore = leftMore || ch.LeftMore
		ws, wcut, err := s.st.WrittenSince(since)
		if err != nil {
			fails = append(fails, err.Error())
		}
		cut = cut || wcut
		for _, w := range ws {
			n := name(w.Path)
			if slices.Contains(written, n) {
				continue
			}
			if len(written) == maxPlanted {
				wroteMore = true
				continue
			}
			written = append(written, n)
		}
	}
	var parts []string
	if len(fails) > 0 {
		parts = append(parts, "jailed calls or the agent's file tools may have changed the project "+when+", but what loopguard keeps of them cannot be read ("+present.EscapeText(fails[0])+"): look before approving")
	}
	if s := jailedPart(when, paths, more, unfinished, unreadable, left, leftMore); s != "" {
		parts = append(parts, s)
	}
	if pruned > 0 && prunedUnknown > 0 {
		parts = append(parts, fmt.Sprintf("the undo records of %d jailed call(s) %s were pruned; what %d of them changed is not known", pruned, when, prunedUnknown))
	}
	if prunedCut {
		parts = append(parts, "the undo records of jailed calls "+when+" were pruned and what they changed is no longer known: the files named here may not be all; look before approving")
	}
	if len(written) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "the agent's file tools wrote these files %s, with no decision of yours (allowed by your permissions); an approved call may run or send them: ", when)
		writeNames(&b, written, wroteMore)
		parts = append(parts, b.String())
	}
	if cut {
		parts = append(parts, "some of the file tools' writes "+when+" are no longer kept: the files named here may not be all; look before approving")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " (loopguard undo --list)"
}

// jailedPart is the warning's sentence on the jailed calls' records.
func jailedPart(when string, paths []string, more bool, unfinished, unreadable int, left []string, leftMore bool) string {
	if len(paths) == 0 && unfinished == 0 && unreadable == 0 && len(left) == 0 {
		return ""
	}
	var b strings.Builder
	onlyLeft := len(paths) == 0 && unfinished == 0 && unreadable == 0
	switch {
	case onlyLeft:
		fmt.Fprintf(&b, "jailed calls ran %s", when)
	case len(paths) == 0:
		fmt.Fprintf(&b, "jailed calls may have changed files in the project %s, which an approved call, run outside the jail, may run or send", when)
	default:
		fmt.Fprintf(&b, "jailed calls changed these files in the project %s; an approved call runs outside the jail and may run or send them: ", when)
	}
	writeNames(&b, paths, more)
	if unfinished > 0 {
		// A call still running when the human approves is not counted
		// against the approval (ChangedAfter): said here, where the
		// human decides (the eighty-eighth attack run's background call
		// rewrote the Makefile two seconds after the approval).
		fmt.Fprintf(&b, " (%d call(s) still running, or ended before their changes were recorded; what a call still running writes after you approve, the approved call may run)", unfinished)
	}
	if unreadable > 0 {
		fmt.Fprintf(&b, " (the undo records of %d call(s) cannot be read: what they changed is not known)", unreadable)
	}
	if len(left) > 0 {
		// Their records leave these out (regenerable): a jailed call
		// that edited node_modules/x/index.js is named nowhere above,
		// and npm test, approved, runs it.
		if onlyLeft {
			b.WriteString(" that could write, unrecorded, in ")
		} else {
			b.WriteString("; and they could write, unrecorded, in ")
		}
		for i, l := range left {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(present.EscapeText(l) + "/")
		}
		if leftMore {
			b.WriteString(" and more")
		}
		b.WriteString(", which an approved call may run (reinstall them to be sure)")
	}
	return b.String()
}

// lastDecisionIn is the time of the human's last decision about a call in
// project or in a project it is in (whose warning named what this one's
// does: PlantedWarning reads the stores of the projects a project is in
// and holds), the zero time when none is among the audit log's last
// plantedScan entries. A decision is an approval or a denial of a held
// call (the cli's, the console's, a team's), whose pending record names
// the call's project; one whose record is gone, or names another project,
// is not (the eighty-sixth attack run's approval of a curl in another
// project silenced the warning on a make in this one). Grants and undo
// are not: neither showed the human what changed.
func lastDecisionIn(log *audit.Log, pendings *state.Store, project string) time.Time {
	var last time.Time
	if log == nil || pendings == nil {
		return last
	}
	type cand struct {
		t  time.Time
		id string
	}
	var cands []cand
	_, _ = log.Last(plantedScan, func(_ []byte, en audit.Entry) error {
		switch en.Event {
		case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure:
			return nil
		}
		switch en.Decision {
		case "approve", "deny", "deny-pending":
			if en.Pending != "" {
				cands = append(cands, cand{en.Time, en.Pending})
			}
		}
		return nil
	})
	// Newest first: the first of this project is the answer.
	slices.SortFunc(cands, func(a, b cand) int { return b.t.Compare(a.t) })
	for _, c := range cands {
		p, err := pendings.GetPending(c.id)
		if err != nil || p.ProjectDir == "" {
			continue
		}
		if fsx.Within(project, filepath.Clean(p.ProjectDir)) {
			// The approval's own time where it is the earlier (the log's
			// entry is written after the grant): what changed between
			// the two is what re-held the call (ChangedAfter), and it
			// is named again.
			if !p.DecidedAt.IsZero() && p.DecidedAt.Before(c.t) {
				return p.DecidedAt
			}
			return c.t
		}
	}
	return last
}

// writeNames writes names to b, escaped, comma-separated, and ", and
// more" after them where more.
func writeNames(b *strings.Builder, names []string, more bool) {
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(present.EscapeText(n))
	}
	if more {
		b.WriteString(", and more")
	}
}

// maxRelatedWords bounds the words of a command relatedPlaces looks at
// (and the entries of a directory whose links it follows), and
// maxRelated the places it returns.
const (
	maxRelatedWords = 256
	maxRelated      = 32
)

// relatedPlaces are the places outside project that call c reaches and
// that jailed calls of another project may change, absolute and clean,
// links followed: what a word of its command names (a word, or what
// follows its first "=", from the call's cwd; ~/ the home) and its
// redirections' targets, a file tool's file, and where a link at the
// project's top or at the top of its node_modules (and its @scope
// directories) leads (a vendored or npm-linked project), and the local
// code outside the project its build files name (declaredPlaces: a
// Makefile's include ../lib/common.mk, go.mod's replace => ../lib, ...),
// and what the nearest go.work, pnpm-workspace.yaml and package.json with
// workspaces above the project name (parentPlaces).
// An approved call runs outside the jail and reads them: the
// eighty-eighth attack run's `make -C vendor-lib`, a link to ../lib, ran
// a Makefile another session's jailed call had rewritten there, and the
// ninety-fourth's `make all`, a Makefile's include of ../lib2/common.mk.
// A prediction, for the
// warning and the approval's check: what it misses is a place the human
// is not told of, as before.
func (e *Engine) relatedPlaces(c *Call, d *described, project string) []string {
	// Only where another project has an undo store: a held call where
	// the jail ran in this project alone (or never) looks no further.
	projects, err := undo.Projects(e.Env.StateDir)
	if err == nil && !slices.ContainsFunc(projects, func(p string) bool { return !under(project, p) && !under(p, project) }) {
		return nil
	}
	return e.reachedPlaces(c, d, project)
}

// reachedPlaces are relatedPlaces wherever other projects have stores or
// not: what an approved call holds while it runs (confine.Spec.Holds),
// since a session may start in one of them after it began.
func (e *Engine) reachedPlaces(c *Call, d *described, project string) []string {
	if d.reachedFor != project || project == "" {
		d.reached, d.reachedFor = e.findReached(c, d, project), project
	}
	return d.reached
}

// findReached is reachedPlaces made.
func (e *Engine) findReached(c *Call, d *described, project string) []string {
	var out []string
	add := func(p string) {
		if len(out) >= maxRelated || p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.Cwd, p)
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil || under(r, project) || under(project, r) || slices.Contains(out, r) {
			return
		}
		out = append(out, r)
	}
	word := func(w string) {
		if strings.HasPrefix(w, "~/") && e.Env.Home != "" {
			w = filepath.Join(e.Env.Home, w[2:])
		}
		if w == "" || w[0] == '-' && !strings.Contains(w, "=") {
			return
		}
		add(w)
		if _, v, ok := strings.Cut(w, "="); ok && v != "" {
			add(v)
		}
	}
	if sk := d.sketch(); sk != nil {
		n := 0
		for _, call := range sk.Calls {
			for _, w := range call {
				if n++; n > maxRelatedWords {
					break
				}
				word(w)
			}
		}
		for _, w := range sk.Writes {
			word(w)
		}
	}
	if t := d.desc.Target; t != nil {
		add(t.Path)
	}
	// links adds where the links of dir lead, and returns its entries.
	links := func(dir string) []os.DirEntry {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		for i, ent := range ents {
			if i >= maxRelatedWords {
				break
			}
			if ent.Type()&fs.ModeSymlink != 0 {
				add(filepath.Join(dir, ent.Name()))
			}
		}
		return ents
	}
	// The project's build files' declarations of local code outside it
	// (declaredPlaces), at its top and at the call's cwd.
	declaredPlaces(project, project, links(project), add)
	parentPlaces(project, e.Env.Home, add) // and the workspaces above it
	if cwd := filepath.Clean(c.Cwd); filepath.IsAbs(cwd) && cwd != project {
		if ents, err := os.ReadDir(cwd); err == nil {
			declaredPlaces(cwd, project, ents, add)
		}
	}
	nm := filepath.Join(project, "node_modules")
	for _, ent := range links(nm) { // listed once: its links, then its @scope directories'
		if ent.IsDir() && strings.HasPrefix(ent.Name(), "@") {
			links(filepath.Join(nm, ent.Name()))
		}
	}
	slices.Sort(out)
	return out
}
