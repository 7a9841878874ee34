package policy

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// importWhat is what a path InstructionImports gives is, for a person.
const importWhat = "a file an agent's instruction file imports (CLAUDE.md's or GEMINI.md's @path: the agent reads it as its instructions)"

// instructionFiles are the project's instruction files that import
// others by @path, relative to the project: Claude Code's (memory, "@path
// imports": relative to the importing file, ~/ the home, at most five
// hops) and Gemini CLI's (its memory import processor, the same syntax).
var instructionFiles = []string{"CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", "GEMINI.md", ".gemini/GEMINI.md"}

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
// An @path in a code span or a fenced code block is not an import (as
// Claude Code reads it). Nested instruction files in the project's
// subdirectories (loaded when the agent reads there) and those above the
// project are not read. A file that cannot be read imports nothing; it
// never panics.
func InstructionImports(project, home string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	var out []string
	seen := map[string]bool{}
	var follow func(file string, hop int)
	follow = func(file string, hop int) {
		if hop > maxImportHops || seen[file] {
			return
		}
		seen[file] = true
		for _, ref := range importsOf(readSmall(file)) {
			var p string
			switch {
			case strings.HasPrefix(ref, "~/"):
				if home == "" {
					continue
				}
				p = filepath.Join(home, ref[2:])
			case filepath.IsAbs(ref):
				p = filepath.Clean(ref)
			default:
				p = filepath.Join(filepath.Dir(file), ref)
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
			follow(p, hop+1)
		}
	}
	for _, f := range instructionFiles {
		follow(filepath.Join(project, f), 0)
	}
	return out
}

// readSmall is the file's first maxInstructionFile bytes ("" when it
// cannot be read, or is not a regular file).
func readSmall(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxInstructionFile))
	return string(b)
}

// importsOf are the @path references in the Markdown text: an @ at the
// start of a word, followed by a path (up to white space), outside code
// spans and fenced code blocks; an e-mail address or a bare @name with no
// path character is not one.
func importsOf(text string) []string {
	var refs []string
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		inCode := false
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case c == '`':
				inCode = !inCode
			case c == '@' && !inCode && (i == 0 || strings.ContainsRune(" \t([", rune(line[i-1]))):
				j := i + 1
				for j < len(line) && !strings.ContainsRune(" \t)]`,;", rune(line[j])) {
					j++
				}
				ref := strings.TrimRight(line[i+1:j], ".:!?")
				if ref != "" && (strings.ContainsAny(ref, "/.") || strings.HasPrefix(ref, "~")) {
					refs = append(refs, ref)
				}
				i = j - 1
			}
		}
	}
	return refs
}
