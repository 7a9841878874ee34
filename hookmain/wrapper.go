package hookmain

import (
	"io"
	"os"
	"time"

	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/ticket"
)

// setupWait bounds InWrapper's read of the setup, before which it has
// read nothing from stdin; past it the wrapper runs the hook as a child,
// whose own deadline answers.
const setupWait = time.Second

// InWrapper is the hook run inside the ticket wrapper (ticket.Gate's
// Hook). argv is loopguard's own hook command line, which the wrapper
// found to name the loopguard or loopguard-hook binary beside it: the
// binary, "hook", its arguments. It answers as that binary would, in this
// process, so that a hook run through Claude Code's prefix costs one
// process start instead of two; the proof that the wrapper stands in
// front of the session is then this process's own /proc entry
// (ticket.InFrontSelf), where a hook run as the wrapper's child reads its
// parent's (ticket.InFront). ran is false, with nothing read from stdin,
// where the answer is another process's to give: under the Vault backend
// (this binary has no Vault client, and the full binary it would hand the
// call to must find the wrapper as its parent), or when the setup was not
// read within setupWait. The wrapper then runs argv as a child.
func InWrapper(argv []string) (code int, ran bool) {
	return inWrapper(argv, os.Stdin, os.Stdout, os.Stderr)
}

func inWrapper(argv []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ran bool) {
	if len(argv) < 2 {
		return 0, false
	}
	got, read := make(chan setup, 1), readSetup
	go func() { got <- read() }()
	var s setup
	select {
	case s = <-got:
	case <-time.After(setupWait):
		return 0, false
	}
	if s.err == nil && s.cfg.Backend == config.BackendVault {
		return 0, false
	}
	return Run(argsAfterHook(argv[1:]), stdin, stdout, stderr, Options{InFront: ticket.InFrontSelf, read: func() setup { return s }}), true
}
