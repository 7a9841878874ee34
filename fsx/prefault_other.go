//go:build !linux

package fsx

// PrefaultSlice does nothing here (see prefault_linux.go).
func PrefaultSlice[T any]([]T) {}
