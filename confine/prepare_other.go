//go:build !linux

package confine

import "errors"

// ErrNotPrepared: plans are computed ahead only where Landlock is.
var ErrNotPrepared = errors.New("confinement needs Linux's Landlock; this system has none")

// Prepare is Linux's.
func Prepare(Spec, string, string, func(string) string, int) (string, error) {
	return "", ErrNotPrepared
}
