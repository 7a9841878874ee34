//go:build windows

package fsx

// NoFollow has no equivalent open flag on Windows, where the stores that
// use it are refused (ErrStateUnsupported).
const NoFollow = 0
