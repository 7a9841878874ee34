//go:build !linux

package undo

// prefaultSlice does nothing here (see prefault_linux.go).
func prefaultSlice[T any]([]T) {}
