//go:build windows

package fsx

// NoFollow has no equivalent open flag on Windows, where the stores that
// use it are refused (ErrStateUnsupported).
const NoFollow = 0

// dirFlags: Windows opens no FIFO by a path name.
const dirFlags = 0
