//go:build !unix

package main

// drainTTY: a test script's terminal (testscript's ttyin) is Unix's.
func drainTTY() {}
