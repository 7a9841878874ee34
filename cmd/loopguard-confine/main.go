// Command loopguard-confine is loopguard's launcher and nothing else:
// `loopguard-confine exec --cap CAPABILITY ... -- PROGRAM ARGV` runs
// PROGRAM confined (package confine), as `loopguard-exec exec` and
// `loopguard-hook exec` do. It links package confine alone, so that a
// launch pays the start of a Go program of that size: loopguard-exec
// also links the hook's packages, to answer loopguard's hook in the
// wrapper's own process, which costs every launch through it about 4 ms
// (BENCH.md). The hook names this binary, when it sits beside it, in
// every Bash call it rewrites to run where the call runs (the jail, a
// scoped grant's capability); the forms that leave Claude Code's sandbox
// name loopguard-exec, which the sandbox's excludedCommands name.
package main

import (
	"os"

	"github.com/loopguard/loopguard/confine"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == confine.Subcommand {
		args = args[1:]
	}
	os.Exit(confine.Main(args, os.Stderr))
}
