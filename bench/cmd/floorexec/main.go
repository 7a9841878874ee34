//go:build unix

// Command floorexec is the launcher's floor: a static Go program that takes
// loopguard-confine's command line (exec, its options, --, the program, argv)
// and only execs the program, confining nothing. What loopguard-confine adds
// over it is the launcher's own work; what it adds over the program alone
// is the Go runtime's start. bench/cmd/launchbench runs it beside the
// launcher, interleaved.
package main

import (
	"os"
	"syscall"
)

func main() {
	args := os.Args[1:]
	for i, a := range args {
		if a == "--" && i+1 < len(args) {
			err := syscall.Exec(args[i+1], args[i+2:], os.Environ())
			os.Stderr.WriteString("floorexec: " + err.Error() + "\n")
			os.Exit(126)
		}
	}
	os.Stderr.WriteString("floorexec: no program after --\n")
	os.Exit(2)
}
