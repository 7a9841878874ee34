// Command record re-records the hook payload fixtures in testdata/payloads
// from the pinned Claude Code client:
//
//	go run ./e2e/record -out testdata/payloads
//
// It installs the client (see e2e/claudetest), runs one scripted session per
// fixture against a fake Messages API, and keeps the payloads that a
// recording hook (this same binary, run with claudetest.HookArg) wrote.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/loopguard/loopguard/e2e/claudetest"
	lg "github.com/loopguard/loopguard/e2e/loopguard"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == claudetest.HookArg {
		os.Exit(claudetest.HookMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	out := flag.String("out", "", "folder to write the payload fixtures to")
	claude := flag.String("claude", "", "claude executable (default: install the pinned client into the cache)")
	keep := flag.Bool("keep", false, "keep the scratch folder")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./e2e/record -out testdata/payloads")
		os.Exit(2)
	}
	if err := run(*out, *claude, *keep); err != nil {
		fmt.Fprintf(os.Stderr, "record: error: %v\n", err)
		os.Exit(1)
	}
}

func run(out, claude string, keep bool) error {
	ctx := context.Background()
	repo, err := claudetest.RepoRoot()
	if err != nil {
		return err
	}
	if claude == "" {
		if claude, err = claudetest.InstallCached(); err != nil {
			return err
		}
	}
	v, err := claudetest.ClientVersion(claude)
	if err != nil {
		return err
	}
	fmt.Printf("client: %s\n", v)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "loopguard-record-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Printf("scratch: %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	mcp, err := lg.BuildMCP(ctx, repo, work)
	if err != nil {
		return err
	}
	return record(ctx, config{
		claude: claude, hook: self, mcp: mcp, work: work, out: out,
		logf: func(format string, args ...any) { fmt.Printf(format+"\n", args...) },
	})
}
