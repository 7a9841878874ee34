//go:build unix

package main

import (
	"os"
	"syscall"
	"time"
)

// drainTTY gives a test script's terminal time to be read before this
// process exits, when it has one (ttyin). It runs in this package's script
// tests and in a test build (the lgtest tag: the scenarios' binary), never
// in a release build. testscript (go-internal v1.16.0) closes the
// pty's master as soon as the command has exited, and output its reader
// goroutine has not read by then is lost: under load a `ttyout` then found
// nothing (approve_exact's 'Not confirmed', seen once in CI; a scenario's,
// once on a clean clone). The slave side cannot see what the master has
// not read yet (TIOCOUTQ on it is 0 whatever is pending), so a wait is all
// a command can do. The wait only
// lets the reader catch up; what is matched is what loopguard wrote.
// Only a command run with ttyin leads its own session (testscript starts it
// with Setsid): a command that merely inherits a developer's terminal does
// not wait.
func drainTTY() {
	if syscall.Getpgrp() != os.Getpid() {
		return
	}
	if f, err := os.Open("/dev/tty"); err == nil {
		f.Close()
		time.Sleep(100 * time.Millisecond)
	}
}
