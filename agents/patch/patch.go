// Package patch reads the apply_patch format OpenAI's models write ("***
// Begin Patch" ... "*** End Patch"), which Codex CLI and GitHub Copilot CLI
// (for GPT-5 models, as a free-form tool) both apply themselves, and maps a
// patch onto the file tool it is: the Write of the one file it adds, or the
// Edit of the one file it updates or deletes. The engine then binds that
// file's state, checks it against the protected paths and lets Edit(...)
// and Write(...) rules scope it, as for any agent's edit.
package patch

import (
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
)

// Operations of a patch on one file.
const (
	OpAdd    = "add"
	OpUpdate = "update"
	OpDelete = "delete"
)

// File is one file a patch changes.
type File struct {
	Op     string
	Path   string // as the patch names it
	MoveTo string // Update with "*** Move to:"
	// Lines are the patch lines for this file (the per-file diff).
	Lines []string
}

// maxFiles bounds a patch; more is malformed.
const maxFiles = 1000

// Parse reads the apply_patch format ("*** Begin Patch", one
// "*** Add File:", "*** Update File:" (optionally "*** Move to:") or
// "*** Delete File:" section per file, "*** End Patch"). It is strict: any
// other "***" line, a missing end, or a file section without a path is
// malformed, so a patch loopguard cannot read is never taken for one it can.
func Parse(body string) ([]File, error) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || strings.TrimSpace(lines[i]) != "*** Begin Patch" {
		return nil, agents.Errorf("apply_patch: the patch does not start with *** Begin Patch")
	}
	i++
	var files []File
	ended := false
	for ; i < len(lines); i++ {
		l := lines[i]
		if ended {
			if strings.TrimSpace(l) != "" {
				return nil, agents.Errorf("apply_patch: text after *** End Patch")
			}
			continue
		}
		switch {
		case strings.TrimSpace(l) == "*** End Patch":
			ended = true
		case strings.HasPrefix(l, "*** Add File: "):
			files = append(files, File{Op: OpAdd, Path: strings.TrimPrefix(l, "*** Add File: ")})
		case strings.HasPrefix(l, "*** Update File: "):
			files = append(files, File{Op: OpUpdate, Path: strings.TrimPrefix(l, "*** Update File: ")})
		case strings.HasPrefix(l, "*** Delete File: "):
			files = append(files, File{Op: OpDelete, Path: strings.TrimPrefix(l, "*** Delete File: ")})
		case strings.HasPrefix(l, "*** Move to: "):
			if len(files) == 0 || files[len(files)-1].Op != OpUpdate || files[len(files)-1].MoveTo != "" || len(files[len(files)-1].Lines) > 0 {
				return nil, agents.Errorf("apply_patch: *** Move to: outside an update")
			}
			files[len(files)-1].MoveTo = strings.TrimPrefix(l, "*** Move to: ")
		case l == "*** End of File":
			if len(files) == 0 {
				return nil, agents.Errorf("apply_patch: *** End of File outside a file")
			}
			files[len(files)-1].Lines = append(files[len(files)-1].Lines, l)
		case strings.HasPrefix(strings.TrimSpace(l), "***"):
			// Not a header at column 0: Codex may still read it as one
			// (its parser is lenient about whitespace), so refuse it.
			return nil, agents.Errorf("apply_patch: unknown patch line %q", clipLine(l))
		default:
			if len(files) == 0 {
				if strings.TrimSpace(l) == "" {
					continue
				}
				return nil, agents.Errorf("apply_patch: patch text before the first file")
			}
			files[len(files)-1].Lines = append(files[len(files)-1].Lines, l)
		}
		if len(files) > maxFiles {
			return nil, agents.Errorf("apply_patch: more than %d files", maxFiles)
		}
	}
	if !ended {
		return nil, agents.Errorf("apply_patch: the patch does not end with *** End Patch")
	}
	if len(files) == 0 {
		return nil, agents.Errorf("apply_patch: the patch changes no file")
	}
	for _, f := range files {
		if strings.TrimSpace(f.Path) == "" {
			return nil, agents.Errorf("apply_patch: a file section without a path")
		}
		if strings.TrimSpace(f.Path) != f.Path || strings.TrimSpace(f.MoveTo) != f.MoveTo {
			// Codex trims; a path loopguard would read differently is refused.
			return nil, agents.Errorf("apply_patch: a path with leading or trailing white space")
		}
		if strings.ContainsAny(f.Path+f.MoveTo, "\x00") {
			return nil, agents.Errorf("apply_patch: a path holds a NUL byte")
		}
	}
	return files, nil
}

func clipLine(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Map turns c, a call whose input holds the patch body, into the file tool
// the patch is. The input keeps every field it had (the digest covers the
// whole patch) and gains file_path, absolute. A patch over several files is
// refused: an approval binds one file's state.
func Map(c *hooks.Call, body string) error {
	files, err := Parse(body)
	if err != nil {
		return err
	}
	paths := map[string]bool{}
	for _, f := range files {
		paths[agents.Abs(c.Cwd, f.Path)] = true
		if f.MoveTo != "" {
			paths[agents.Abs(c.Cwd, f.MoveTo)] = true
		}
	}
	if len(paths) != 1 {
		var names []string
		for _, f := range files {
			names = append(names, f.Path)
			if f.MoveTo != "" {
				names = append(names, f.MoveTo)
			}
		}
		return agents.Errorf("apply_patch changes %d files (%v); loopguard binds one file's state per approval: patch one file per apply_patch call", len(paths), names)
	}
	c.ToolInput = agents.With(c.ToolInput, "file_path", agents.Abs(c.Cwd, files[0].Path))
	c.ToolName = "Edit"
	if files[0].Op == OpAdd {
		c.ToolName = "Write"
	}
	return nil
}
