//go:build !windows

package fsx

import "runtime"

var osName = runtime.GOOS

var unsupported []*UnsupportedError
