package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
)

// TestCheckGadgets: `loopguard check` on each gadget of issue 11 either
// gives a verdict other than simple or names the option and what it does;
// the everyday controls are simple with no option named.
func TestCheckGadgets(t *testing.T) {
	env, root := checkEnv(t)
	for _, n := range []string{"make", "npm", "node", "go", "gcc", "cc", "clang", "sort", "uniq", "tee", "rg", "fd", "tar", "npx"} {
		if err := os.WriteFile(filepath.Join(root, "bin", n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"make test", "npm run test", "go build ./...", "git log --oneline -5"} {
		var out bytes.Buffer
		if err := checkRun(&checkOptions{Out: &out, Command: c, Env: env}); exitCodeOf(err) != cli.ExitOK {
			t.Errorf("control %q is not simple:\n%s", c, out.String())
		}
		if !strings.Contains(out.String(), "A scoped grant can cover this command.\n") {
			t.Errorf("control %q names an option:\n%s", c, out.String())
		}
	}
	for _, c := range []struct{ cmd, want string }{
		{`make test 'X:=$(shell id)'`, "runs code"},
		{"make test --eval='x:;id'", "indirect"},
		{"make test -f /tmp/evil.mk", "runs code"},
		{"npm run test --node-options=--import=/tmp/x.mjs", "runs code"},
		{"npm run test --require /tmp/x.js", "runs code"},
		{"npm exec evil", "runs code"},
		{"node --require /tmp/x.js app.js", "indirect"},
		{"go build -ldflags=-extld=/tmp/x ./...", "runs code"},
		{"go build -ldflags '-linkmode=external -extld=/tmp/x' ./...", "runs code"},
		{"go build -toolexec=/tmp/x ./...", "indirect"},
		{"go test -exec /tmp/x ./...", "indirect"},
		{"go build -overlay=/tmp/o.json ./...", "runs code"},
		{"go build -modfile=/tmp/go.mod ./...", "runs code"},
		{"gcc -wrapper /tmp/x,y a.c", "runs code"},
		{"cc -fplugin=/tmp/x.so a.c", "runs code"},
		{"clang -B/tmp/bin a.c", "runs code"},
		{"gcc -specs=/tmp/s a.c", "runs code"},
		{"git -c core.pager=id log", "indirect"},
		{"git clone -c core.sshCommand=id u", "runs code"},
		{"git log --output=/tmp/x", "writes a named file"},
		{"git fetch --upload-pack=id", "indirect"},
		{"git push --receive-pack=id", "indirect"},
		{"git rebase --exec id", "indirect"},
		{"git -C /tmp log", "runs code"},
		{"git --git-dir=/tmp/x log", "runs code"},
		{"git --work-tree=/tmp/x status", "runs code"},
		{"git config user.name x", "runs code"},
		{"sort -o /tmp/x a.txt", "writes a named file"},
		{"uniq a.txt /tmp/x", "writes a named file"},
		{"sort --output=/tmp/x a.txt", "writes a named file"},
		{"tee /tmp/x", "writes a named file"},
		{"sort --compress-program=/tmp/x a.txt", "runs code"},
		{"rg --pre /tmp/x TODO", "runs code"},
		{"fd -x rm", "runs code"},
		{"tar --to-command=id -xf a.tar", "indirect"},
		{"tar -I /tmp/x -cf a.tar src", "indirect"},
		{"tar -xf a.tar", "writes a named file"},
	} {
		var out bytes.Buffer
		err := checkRun(&checkOptions{Out: &out, Command: c.cmd, Env: env})
		s := out.String()
		switch {
		case exitCodeOf(err) != cli.ExitOK:
			if !strings.Contains(s, "verdict:  ") || strings.Contains(s, "verdict:  simple") {
				t.Errorf("%q: exit %d without a verdict:\n%s", c.cmd, exitCodeOf(err), s)
			}
			if c.want != "indirect" {
				t.Logf("%q: not simple (stricter than expected): %s", c.cmd, firstLine(s, "reason:"))
			}
		case c.want == "indirect":
			t.Errorf("%q: simple, want a non-simple verdict:\n%s", c.cmd, s)
		case !strings.Contains(s, "this option "+c.want) && !strings.Contains(s, "this operand "+c.want) && !strings.Contains(s, "this subcommand "+c.want):
			t.Errorf("%q: the output does not say the option %s:\n%s", c.cmd, c.want, s)
		}
	}
}

func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
