package codex

import (
	"strings"

	"github.com/loopguard/loopguard/agents"
)

// Operations of a patch on one file.
const (
	OpAdd    = "add"
	OpUpdate = "update"
	OpDelete = "delete"
)

// PatchFile is one file a Codex patch changes.
type PatchFile struct {
	Op     string
	Path   string // as the patch names it
	MoveTo string // Update with "*** Move to:"
	// Lines are the patch lines for this file (the per-file diff).
	Lines []string
}

// maxPatchFiles bounds a patch; more is malformed.
const maxPatchFiles = 1000

// ParsePatch reads Codex's apply_patch format ("*** Begin Patch", one
// "*** Add File:", "*** Update File:" (optionally "*** Move to:") or
// "*** Delete File:" section per file, "*** End Patch"). It is strict: any
// other "***" line, a missing end, or a file section without a path is
// malformed, so a patch loopguard cannot read is never taken for one it can.
func ParsePatch(body string) ([]PatchFile, error) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || strings.TrimSpace(lines[i]) != "*** Begin Patch" {
		return nil, agents.Errorf("apply_patch: the patch does not start with *** Begin Patch")
	}
	i++
	var files []PatchFile
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
			files = append(files, PatchFile{Op: OpAdd, Path: strings.TrimPrefix(l, "*** Add File: ")})
		case strings.HasPrefix(l, "*** Update File: "):
			files = append(files, PatchFile{Op: OpUpdate, Path: strings.TrimPrefix(l, "*** Update File: ")})
		case strings.HasPrefix(l, "*** Delete File: "):
			files = append(files, PatchFile{Op: OpDelete, Path: strings.TrimPrefix(l, "*** Delete File: ")})
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
		if len(files) > maxPatchFiles {
			return nil, agents.Errorf("apply_patch: more than %d files", maxPatchFiles)
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
