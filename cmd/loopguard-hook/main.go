// Command loopguard-hook is loopguard's hook alone: what `loopguard hook`
// does, in a binary without the CLI and without the Vault client, so that it
// starts faster (BENCH.md measures by how much). The hook starts on every
// tool call of every session; `loopguard init` registers this binary when it
// is installed beside loopguard from the same build.
//
// Its arguments are those of `loopguard hook` ("hook" first, as registered,
// or left out: Copilot CLI runs a hook without its arguments). Under the
// Vault backend it replaces itself with the loopguard binary beside it,
// which decides with the Vault client; if that binary cannot be run, the
// call is denied.
package main

import (
	"os"

	"github.com/loopguard/loopguard/hookmain"
)

func main() { os.Exit(hookmain.Main(os.Args[1:])) }
