//go:build windows

package fsx

const osName = "Windows"

// Each guarantee Windows breaks, once; Resolve and state.Open return these.
var (
	// ErrResolveUnsupported: Resolve models POSIX symlinks only. Windows
	// also redirects a path through junctions and other reparse points,
	// answers to 8.3 short names (PROGRA~1) and case-folded names, and
	// opens alternate data streams (file:stream), so a protected path
	// could be reached under a name the policy does not see.
	ErrResolveUnsupported = &UnsupportedError{What: "symlink resolution",
		Why: "junctions, reparse points, 8.3 short names, case-insensitive names and alternate data streams are not resolved as Windows will"}
	// ErrStateUnsupported: the state directory's safety rests on its
	// owner and mode (Windows has ACLs, which are not checked), and a
	// grant's single use on rename(2) failing for all but one claimant
	// (a Windows rename replaces the target).
	ErrStateUnsupported = &UnsupportedError{What: "the state directory",
		Why: "its ACL is not checked, and a single-use grant is claimed by a rename that Windows lets more than one process win"}
	// ErrSandboxUnsupported: Claude Code's OS sandbox runs on Linux
	// (bubblewrap) and macOS (Seatbelt) only.
	ErrSandboxUnsupported = &UnsupportedError{What: "Claude Code's OS sandbox",
		Why: "Claude Code sandboxes Bash on Linux and macOS only, so approved code would run unconfined"}
)

var unsupported = []*UnsupportedError{ErrResolveUnsupported, ErrStateUnsupported, ErrSandboxUnsupported}
