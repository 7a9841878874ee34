package policy

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/fsx"
)

// importWhat is what a path InstructionImports gives is, for a person.
const importWhat = "a file the project's configuration loads (CLAUDE.md's, GEMINI.md's or AGENTS.md's @path, which the agent reads as its instructions; what direnv's .envrc sources or loads, which the user's shell runs; a program its configuration names, such as .yarnrc.yml's yarnPath or an MCP server's script, which its tools run)"

// instructionFiles are the project's instruction files that import
// others by @path, relative to the project: Claude Code's (memory, "@path
// imports": relative to the importing file, ~/ the home, at most five
// hops) and Gemini CLI's (its memory import processor, the same syntax,
// in every context file it reads: GEMINI.md, and AGENTS.md where its
// settings' context.fileName names it, as the AGENTS.md site tells Gemini
// users to). Codex and Copilot read AGENTS.md without imports: there an
// @path it mentions is kept from confined code for nothing, which costs
// a question, where leaving it writable would cost a standing instruction
// to a Gemini session.
var instructionFiles = []string{"CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", "GEMINI.md", ".gemini/GEMINI.md", "AGENTS.md"}

// maxImportHops is how far imports are followed: Claude Code's five.
const maxImportHops = 5

// maxInstructionFile bounds what is read of one instruction file.
const maxInstructionFile = 1 << 20

// InstructionImports are the files the project's instruction files import
// with @path, and what those import in turn (to maxImportHops), wherever
// they are: absolute, cleaned, each once. For Places.Imports: each is an
// instruction file too. An attack run appended to docs/notes.md, which the
// user's CLAUDE.md imported (`@docs/notes.md`): a standing instruction
// written by confined code, which may not write CLAUDE.md itself.
//
// Claude Code's rules (.claude/rules/, its Markdown files) import too.
// Nested instruction files in the project's subdirectories (loaded when
// the agent reads there) and those above the project are not read. A
// file that cannot be read, or is not a regular file (a FIFO would block),
// imports nothing; it never panics.
func InstructionImports(project, home string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	start := []string{}
	for _, f := range instructionFiles {
		start = append(start, filepath.Join(project, f))
	}
	return importsFrom(append(start, rulesFiles(project)...), home)
}

// nestedInstructionNames are the names of the instruction files an agent
// loads in a subdirectory, with their imports: Claude Code's CLAUDE.md
// and CLAUDE.local.md when it reads there, Gemini CLI's context files
// when it starts (it scans the subdirectories).
var nestedInstructionNames = []string{"CLAUDE.md", "CLAUDE.local.md", "GEMINI.md", "AGENTS.md"}

// NestedInstructionFile reports whether name is the name of an
// instruction file that imports (nestedInstructionNames) in a
// subdirectory.
func NestedInstructionFile(name string) bool { return slices.Contains(nestedInstructionNames, name) }

// InstructionImportsOf is InstructionImports from the instruction files
// files (absolute): a subdirectory's, which the agent loads when it reads
// there (Claude Code) or at its start (Gemini CLI), as the launcher's
// walk finds them: until 2026-12-07 confined code could write the
// src/notes.md a user's src/CLAUDE.md imports, a standing instruction.
// The files read share one budget.
func InstructionImportsOf(files []string, home string) []string {
	var start []string
	for _, f := range files {
		if filepath.IsAbs(f) {
			start = append(start, filepath.Clean(f))
		}
	}
	return importsFrom(start, home)
}

// NestedImportsAround are what the instruction files in the directory
// of target and those above it, below project's top, import
// (nestedInstructionNames): the hook's share of what the launcher's walk
// finds, for a file tool's target, since the hook walks no tree (a Write
// of src/notes.md that src/CLAUDE.md imports). One a directory beside
// those imports (src/CLAUDE.md's @../docs/x.md, for a Write of
// docs/x.md) is not found here.
func NestedImportsAround(target, project, home string) []string {
	if !filepath.IsAbs(target) || !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	var files []string
	for d := filepath.Dir(filepath.Clean(target)); strings.HasPrefix(d, project+"/"); d = filepath.Dir(d) {
		for _, n := range nestedInstructionNames {
			files = append(files, filepath.Join(d, n))
		}
	}
	if len(files) == 0 {
		return nil
	}
	return InstructionImportsOf(files, home)
}

// importsFrom follows the @path imports of the files start (absolute,
// clean), ~/ being home.
func importsFrom(start []string, home string) []string {
	budget := &readBudget{left: 512 << 10}
	return loadsFrom(start, func(file string) []string {
		var refs []string
		for _, ref := range importsOf(budget.read(file)) {
			switch {
			case strings.HasPrefix(ref, "~/"):
				if home != "" {
					refs = append(refs, filepath.Join(home, ref[2:]))
				}
			case filepath.IsAbs(ref):
				refs = append(refs, filepath.Clean(ref))
			default:
				refs = append(refs, filepath.Join(filepath.Dir(file), ref))
			}
		}
		return refs
	}, func(string) []string { return nil })
}

// loadsFrom follows, from the files start, what each one loads (refs,
// absolute), to maxImportHops: each reference once, in the order met,
// followed in turn, with what more gives of it (followed, not given).
func loadsFrom(start []string, refs func(file string) []string, more func(p string) []string) []string {
	var out pathSet
	seen := map[string]bool{}
	var follow func(file string, hop int)
	follow = func(file string, hop int) {
		if hop > maxImportHops || seen[file] || out.full() {
			return
		}
		seen[file] = true
		for _, p := range refs(file) {
			if !out.add(p) {
				return
			}
			follow(p, hop+1)
			for _, m := range more(p) {
				follow(m, hop+1)
			}
		}
	}
	for _, f := range start {
		follow(f, 0)
	}
	return out.out
}

// maxLoads bounds the paths one reading of a project's configuration
// gives (ProjectLoads' parts, each), and readBudget the bytes it reads: a
// repository's own CLAUDE.md of 1 MiB of @a/0 @a/1 ..., or 64 hook
// scripts of 1 MiB, held every hook call past its deadline (the
// forty-seventh attack run's, up to 20 s and more). A configuration that
// large is a hostile repository's, whose own hooks run anyway.
const maxLoads = 1024

// pathSet is a reading's paths, each once, in the order found, to
// maxLoads.
type pathSet struct {
	out []string
	in  map[string]bool
}

// add keeps p, once; it reports whether the set had room for it.
func (s *pathSet) add(p string) bool {
	if s.full() {
		return false
	}
	if !s.in[p] {
		if s.in == nil {
			s.in = map[string]bool{}
		}
		s.in[p] = true
		s.out = append(s.out, p)
	}
	return true
}

// full reports whether the set holds maxLoads paths.
func (s *pathSet) full() bool { return len(s.out) >= maxLoads }

// readBudget reads files for one reading, at most left bytes in all: a
// file past it reads as empty, or cut.
type readBudget struct{ left int }

func (b *readBudget) read(file string) string {
	if b.left <= 0 {
		return ""
	}
	s := readSmall(file)
	if len(s) > b.left {
		s = s[:b.left]
	}
	b.left -= len(s)
	return s
}

// maxRules bounds the rules files read, and maxRulesEntries the entries
// looked at for them: the seventy-second attack run's 300,000 empty
// directories under .claude/rules cost every call 2.3 to 2.9 s.
const (
	maxRules        = 256
	maxRulesEntries = 4096
)

// rulesFiles are the Markdown files below the project's .claude/rules
// (Claude Code loads each as instructions), through no link, at most
// maxRules, among the first maxRulesEntries entries.
func rulesFiles(project string) []string {
	var out []string
	seen := 0
	root := filepath.Join(project, ".claude", "rules")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if seen++; len(out) >= maxRules || seen > maxRulesEntries {
			return filepath.SkipAll
		}
		if err != nil {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(strings.ToLower(d.Name()), ".md") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// readSmall is the file's first maxInstructionFile bytes ("" when it
// cannot be read, or is not a regular file).
func readSmall(file string) string {
	b, _ := fsx.ReadPrefix(file, maxInstructionFile, 0) // never blocks on a FIFO
	return string(b)
}

// importsOf are the @path references in the Markdown text, read as
// every agent that imports reads them, and then some: a wrong guess here
// costs a refused write, a missed import a standing instruction written
// by confined code. Claude Code takes `(?:^|\s)@((?:[^\s\\]|\\ )+)`
// (a backslash escapes a space), Gemini CLI `(?<!\S)@([./]?[^\s]+)`; each
// skips what it reads as code, by rules of its own, which is why code is
// not skipped here (the thirty-eighth attack run's stray backtick, a span
// over two lines and a fence that was none each hid an import the agent
// made). So an @ at the start of a line or after white space, ( or [
// begins a reference, and each of these is one: the word up to white
// space as it is, with Claude Code's escaped spaces, and each of those
// cut at the first of ),]`;, and with its last .:!?,;)] taken off. An
// e-mail address (an @ after a letter) is none.
func importsOf(text string) []string {
	var refs pathSet
	add := func(ref string) {
		if ref != "" {
			refs.add(ref)
		}
	}
	variants := func(word string) {
		for _, w := range []string{word, strings.TrimRight(word, ".:!?,;)]")} {
			add(w)
			if i := strings.IndexAny(w, "),]`;"); i >= 0 {
				add(strings.TrimRight(w[:i], ".:!?"))
			}
		}
	}
	escEnd := 0 // where the last reference read as Claude Code's ends
	for i := 0; i < len(text) && len(refs.out) < maxLoads; i++ {
		if text[i] != '@' || (i > 0 && !strings.ContainsRune(" \t\n\r\f\v([", rune(text[i-1]))) {
			continue
		}
		// The word up to white space; Claude Code's, whose "\ " is a
		// space. Neither longer than a path can be, and Claude Code's
		// matches do not overlap (its regular expression goes on after
		// each): an escaped space counts as the space an @ follows, and
		// each @ of "@a\ @a\ ..." was read to the end of the file
		// (quadratic: 64 KB took 3.5 s of a hook call, the seventy-fifth
		// attack run).
		end := min(len(text), i+1+maxImportRef)
		j := i + 1
		for j < end && !isSpace(text[j]) {
			j++
		}
		variants(text[i+1 : j])
		if i < escEnd {
			continue // inside the reference before, as Claude Code reads it
		}
		var esc strings.Builder
		k := i + 1
		for k < end {
			if text[k] == '\\' && k+1 < len(text) && text[k+1] == ' ' {
				esc.WriteByte(' ')
				k += 2
				continue
			}
			if isSpace(text[k]) || text[k] == '\\' {
				break
			}
			esc.WriteByte(text[k])
			k++
		}
		escEnd = k
		variants(esc.String())
	}
	return refs.out
}

// maxImportRef bounds the text an @ reference is read from: a path's
// longest (PATH_MAX).
const maxImportRef = 4096

// isSpace is white space as a regular expression's \s takes it (ASCII).
func isSpace(c byte) bool { return strings.IndexByte(" \t\n\r\f\v", c) >= 0 }
