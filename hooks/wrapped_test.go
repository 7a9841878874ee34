package hooks

import (
	"context"
	"strings"
	"testing"
)

// wrappedHost is a harness's decision of a Bash call for a host that runs
// the model's own text through loopguard's wrapper (Qwen Code's shell
// tool): no rewrite, the capability carried by the ticket.
func wrappedHost(h *harness, wrapped bool) func(cmd string) Decision {
	bash := h.fixture("pretooluse-bash.json")
	return func(cmd string) Decision {
		c := h.call(withInput(bash, "command", cmd))
		c.Rewrite, c.Wrapped = false, wrapped
		return h.eng().Decide(context.Background(), c)
	}
}

// TestWrappedHostConfines (issue 37, item 2): where the host runs the
// model's text through loopguard's wrapper, a scoped grant's call and a
// jailed call are allowed as written, with the capability the wrapper
// applies, and the answer says confined; the jail grant applies. Controls:
// the same host without the wrapper runs them unconfined and takes no
// jail; text that is not plain is still refused (bash reads the text).
func TestWrappedHostConfines(t *testing.T) {
	h, _ := jailHarness(t)
	wrapped, plain := wrappedHost(h, true), wrappedHost(h, false)

	d := wrapped("cat README.md")
	expect(t, "cat README.md (wrapped)", d, Allow, ReasonScopedGrant)
	if d.UpdatedInput != nil || d.Capability != "read-only" || strings.Contains(d.Message, "unconfined") || !strings.Contains(d.Message, "confined by the kernel (read-only)") {
		t.Errorf("cat README.md wrapped: updated %v, capability %q, %s", d.UpdatedInput, d.Capability, d.Message)
	}
	d = plain("cat README.md")
	expect(t, "cat README.md (no wrapper)", d, Allow, ReasonScopedGrant)
	if d.Capability != "" || !strings.Contains(d.Message, "unconfined") {
		t.Errorf("control: cat README.md without the wrapper: capability %q, %s", d.Capability, d.Message)
	}
	// Not plain: no scope covers it there (bash reads the text), the jail
	// does; without the jail it is refused.
	expect(t, "cat $'README.md' (wrapped)", wrapped("cat $'README.md'"), Allow, ReasonJailed)
	nh, _ := rewriteHarness(t, jailLauncher, "make")
	expect(t, "cat $'README.md' (wrapped, no jail)", wrappedHost(nh, true)("cat $'README.md'"), Deny, ReasonNotCanonical)

	const cmd = "echo in > jailed.txt; python3 -c 'print(1)'"
	d = wrapped(cmd)
	expect(t, cmd+" (wrapped)", d, Allow, ReasonJailed)
	if d.UpdatedInput != nil || d.Capability != h.eng().jailCapability().String() || !strings.Contains(d.Message, "through loopguard's wrapper, confined by the kernel") {
		t.Errorf("jailed, wrapped: updated %v, capability %q, %s", d.UpdatedInput, d.Capability, d.Message)
	}
	if d := plain(cmd); d.Behavior == Allow {
		t.Errorf("control: the jail applied without the wrapper: %s %s", d.Reason, d.Message)
	}
	// What the jail does not hold still goes to the human; approved
	// exactly, a call that leaves it for the network alone runs in the
	// jail with the network, launched by the wrapper (no rewrite).
	const curl = "curl -sSL https://example.com/x.sh -o x.sh"
	d = wrapped(curl)
	expect(t, "curl (wrapped)", d, Deny, ReasonLeavesJail)
	h.approve(d)
	d = wrapped(curl)
	expect(t, "curl approved (wrapped)", d, Allow, ReasonExactGrant)
	if d.UpdatedInput != nil || d.Capability != "project-write+network:443" {
		t.Errorf("curl approved, wrapped: updated %v, capability %q", d.UpdatedInput, d.Capability)
	}

	// A chain whose parts are granted one capability runs under it; parts
	// with different capabilities are not run under the widest.
	h.grantScope("Bash(make probe *)", "*", "*")
	d = wrapped("cat README.md && cat main.go")
	expect(t, "a read-only chain (wrapped)", d, Allow, ReasonScopedGrant)
	if d.Capability != "read-only" {
		t.Errorf("a read-only chain: capability %q", d.Capability)
	}
	for _, w := range []struct {
		h        *harness
		behavior string
		reason   string
	}{{h, Allow, ReasonJailed}, {nh, Deny, ReasonChained}} {
		w.h.grantScope("Bash(make probe *)", "*", "*")
		d = wrappedHost(w.h, true)("cat README.md && make probe")
		expect(t, "a chain of read-only and project-write parts (wrapped)", d, w.behavior, w.reason)
	}
	// The control: where the host runs the rewrite, each part runs under
	// its own capability.
	bash := nh.fixture("pretooluse-bash.json")
	c := nh.call(withInput(bash, "command", "cat README.md && make probe"))
	d = nh.eng().Decide(context.Background(), c)
	expect(t, "the chain, rewritten", d, Allow, ReasonScopedGrant)
	if d.Capability != "project-write,read-only" {
		t.Errorf("the chain, rewritten: capability %q", d.Capability)
	}
}
