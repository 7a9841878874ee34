package main

import (
	"io"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/hookmain"
	"github.com/loopguard/loopguard/hooks"
)

// runHook is `loopguard hook [agent]`: the coding agent runs it for every
// tool call (package hookmain). It is dispatched before cobra is built and
// never exits 1. This binary has the Vault client, so it decides under
// either backend; loopguard-hook (cmd/loopguard-hook) runs this one under
// the Vault backend.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer) cli.ExitCode {
	return cli.ExitCode(hookmain.Run(args, stdin, stdout, stderr, hookmain.Options{
		Vault: func(cfg config.Config) (hooks.Custody, error) { return approve.VaultCustody(cfg) },
	}))
}
