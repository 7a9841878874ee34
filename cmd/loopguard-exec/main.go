// Command loopguard-exec is loopguard's launcher alone: what
// `loopguard-hook exec` does (package confine), in a binary that links
// nothing else, so that a Bash call a scoped grant allows pays only one
// small process start for its confinement (BENCH.md measures it). The hook
// rewrites such a call into `loopguard-exec exec --cap ... -- PROGRAM ARGV`
// when this binary sits beside it, and into `loopguard-hook exec ...`
// otherwise.
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
