// Command loopguard binds a coding agent's tool calls to a human's approval of
// exactly that call. See README.md.
package main

import "os"

func main() {
	os.Exit(int(Main(os.Args[1:])))
}
