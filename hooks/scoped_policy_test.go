package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/token"
)

// mintByHand writes a scoped grant the way a tool other than `loopguard
// grant` could: pinned and MACed with the real key, but without grant's
// refusals.
func (h *harness) mintByHand(rule string) *token.Grant {
	h.t.Helper()
	return h.mintScope("mallory", rule, token.Any, "main")
}

func (h *harness) stubs(names ...string) {
	h.t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(h.Bin, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			h.t.Fatal(err)
		}
	}
}

// TestRefusedRuleGrantIsInvalid: a scoped grant with a valid MAC whose rule
// `loopguard grant` refuses today is grant_invalid, whoever minted it; the
// control, minted the same way with a rule grant accepts, is allowed.
func TestRefusedRuleGrantIsInvalid(t *testing.T) {
	for _, c := range []struct{ rule, cmd, control, controlCmd string }{
		{"Bash(go *)", "go vet ./...", "Bash(go vet *)", "go vet ./..."},
		{"Bash(rm -rf *)", "rm -rf build", "Bash(ls *)", "ls -la"},
		{"Bash(git config *)", "git config user.name x", "Bash(git status *)", "git status -sb"},
		{"Bash(git log -c core.pager=id)", "git log -c core.pager=id", "Bash(git log --oneline)", "git log --oneline"},
		{"Bash(sort -o *)", "sort -o", "Bash(sort -o out.txt *)", "sort -o out.txt in.txt"},
		{"Bash(secret-tool lookup *)", "secret-tool lookup a b", "Bash(echo hi)", "echo hi"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			h := newHarness(t)
			h.stubs("sort")
			bash := h.fixture("pretooluse-bash.json")
			if err := scope.Dangerous(mustParse(t, c.rule), h.eng().Env.Home); err == nil {
				t.Fatalf("%s: grant would accept it; the test needs a refused rule", c.rule)
			}
			g := h.mintByHand(c.rule)
			d := h.decide(withInput(bash, "command", c.cmd))
			if c.rule == "Bash(secret-tool lookup *)" {
				expect(t, c.cmd, d, Deny, ReasonProtected) // the keyring check comes first
			} else {
				expect(t, c.cmd, d, Deny, ReasonGrantInvalid)
				if !strings.Contains(d.Message, g.ID()) || !strings.Contains(d.Message, "refused by the current policy") {
					t.Errorf("message does not name the grant and the policy: %s", d.Message)
				}
			}
			h.mintByHand(c.control)
			expect(t, c.controlCmd+" (control)", h.decide(withInput(bash, "command", c.controlCmd)), Allow, ReasonScopedGrant)
		})
	}
}

func mustParse(t *testing.T, rule string) scope.Rule {
	t.Helper()
	r, err := scope.Parse(rule)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGadgetsUnderScopes: through the hook, each gadget is denied under the
// rule that would have covered it, and the everyday call is allowed.
func TestGadgetsUnderScopes(t *testing.T) {
	h := newHarness(t)
	h.stubs("make", "npm", "sort", "rg")
	bash := h.fixture("pretooluse-bash.json")
	for _, rule := range []string{"Bash(make test *)", "Bash(npm run test:*)", "Bash(go build *)", "Bash(git log *)", "Bash(sort *)", "Bash(rg *)"} {
		h.grantScope(rule, token.Any, "main")
	}
	run := func(cmd string) Decision {
		return h.decide(withInput(bash, "command", cmd))
	}
	for _, ok := range []string{"make test", "npm run test", "go build ./...", "git log --oneline -5", "sort -rn a.txt", "rg -n TODO src"} {
		expect(t, ok, run(ok), Allow, ReasonScopedGrant)
	}
	for _, bad := range []string{
		`make test 'X:=$(shell id)'`, "make test --eval='x:;id'", "make test -f /tmp/evil.mk",
		"npm run test --node-options=--import=/tmp/x.mjs", "npm run test -- --require=/tmp/x.js",
		"go build -ldflags=-extld=/tmp/x ./...", "go build -overlay=/tmp/o.json ./...", "go build -o /tmp/x ./...",
		"git log --output=/tmp/x", "git log -c core.pager=id", "git log --ext-diff -p",
		"sort -o /tmp/x a.txt", "sort --compress-program=/tmp/x a.txt", "rg --pre /tmp/x TODO",
	} {
		d := run(bad)
		if d.Behavior == Allow {
			t.Errorf("%s: allowed (%s)", bad, d.Reason)
		}
	}
}

// TestKeyringToolsFromPolicy: the hook asks policy which tools reach the
// keyring; every one of them, run as a command, is a protected resource,
// and an ordinary tool is not.
func TestKeyringToolsFromPolicy(t *testing.T) {
	h := newHarness(t)
	bash := h.fixture("pretooluse-bash.json")
	tools := policy.KeyringTools()
	h.stubs(tools...)
	for _, n := range tools {
		expect(t, n, h.decide(withInput(bash, "command", n+" lookup x")), Deny, ReasonProtected)
	}
	d := h.decide(withInput(bash, "command", "ls lookup x"))
	if d.Reason == ReasonProtected {
		t.Errorf("ls is protected: %+v", d)
	}
}
