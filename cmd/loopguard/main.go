// Command loopguard binds a coding agent's tool calls to a human's approval of
// exactly that call. See README.md.
package main

import (
	"os"

	"github.com/loopguard/loopguard/internal/testknobs"
)

func main() {
	code := Main(os.Args[1:])
	if testknobs.Build {
		drainTTY()
	}
	os.Exit(int(code))
}
