package shelltool

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/ticket"
)

// issueDerived writes the hook's ticket for a host that runs the model's
// own text (Qwen Code): the nonce derived, the capability and project the
// call runs under.
func (f *fixture) issueDerived(t *testing.T, host, cmd, capability, project string, key []byte) *ticket.Ticket {
	t.Helper()
	tk := &ticket.Ticket{Session: host, Nonce: Derived(host, f.cwd, cmd), Command: cmd, Capability: capability, Project: project,
		Cwd: f.cwd, Expiry: f.now.Add(ticket.Lifetime).Unix()}
	if err := f.store.Issue(tk, key); err != nil {
		t.Fatal(err)
	}
	return tk
}

// runLaunch is run with the launcher stubbed: it records each spec.
func (f *fixture) runLaunch(host string, args map[string]any, specs *[]confine.Spec) (int, string) {
	in, _ := json.Marshal(args)
	var stderr bytes.Buffer
	c := &Call{Store: f.store, Key: func() ([]byte, error) { return testKey, nil }, Host: host, Cwd: f.cwd, Stderr: &stderr,
		Exec: func(bash string, argv []string) error {
			f.ran = append(f.ran, argv[2])
			return nil
		},
		Launch: func(spec confine.Spec, _ io.Writer) int {
			*specs = append(*specs, spec)
			return 0
		}}
	return c.Run(in), stderr.String()
}

// rewriteTicket changes one field of the stored ticket as code that can
// write the ticket directory would, keeping its MAC.
func (f *fixture) rewriteTicket(t *testing.T, nonce string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(f.store.Dir, nonce)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestWrapperLaunchesTheTicketsCapability (issue 37, item 2): where the
// host runs the model's own text, the wrapper runs a command whose ticket
// names a capability through the launcher, bash -c COMMAND under it in the
// ticket's project, as the hook's rewrite does elsewhere; a ticket with
// none (an exact approval) runs unconfined, and a marked ticket (Gemini)
// carries its launch in its text. Attacks, each refused with nothing run:
// the ticket's capability widened, or removed, or its project moved, in
// the ticket file; the ticket replayed; a changed command.
func TestWrapperLaunchesTheTicketsCapability(t *testing.T) {
	const host = "host:100:5000"
	project := "/p/project"
	bash := policy.BashPath()
	if bash == "" {
		t.Skip("no bash")
	}
	t.Run("control: the capability is launched", func(t *testing.T) {
		f := newFixture(t)
		var specs []confine.Spec
		f.issueDerived(t, host, "make probe", "read-only", project, testKey)
		code, msg := f.runLaunch(host, map[string]any{"command": "make probe"}, &specs)
		want := confine.Spec{Cap: policy.Capability{}, Project: project, Cwd: f.cwd, Exe: bash, Argv: []string{"bash", "-c", "make probe"}}
		if code != 0 || msg != "" || len(f.ran) != 0 || len(specs) != 1 || !slices.Equal(specs[0].Args(), want.Args()) {
			t.Fatalf("exit %d %q, unconfined %q, launched %+v; want one launch %v", code, msg, f.ran, specs, want.Args())
		}
		specs = nil
		f.issueDerived(t, host, "curl -sO https://example.com/x", "project-write+network:443", project, testKey)
		if code, msg := f.runLaunch(host, map[string]any{"command": "curl -sO https://example.com/x"}, &specs); code != 0 || len(specs) != 1 ||
			!specs[0].Cap.Write || !specs[0].Cap.Network || specs[0].Cap.String() != "project-write+network:443" {
			t.Fatalf("the network: exit %d %q, %+v", code, msg, specs)
		}
		specs = nil
		f.issueDerived(t, host, "echo in > x", policy.CapJail, project, testKey)
		if code, msg := f.runLaunch(host, map[string]any{"command": "echo in > x"}, &specs); code != 0 || len(specs) != 1 || specs[0].Cap != policy.JailCapability {
			t.Fatalf("the jail: exit %d %q, %+v", code, msg, specs)
		}
	})
	t.Run("control: no capability runs unconfined", func(t *testing.T) {
		f := newFixture(t)
		var specs []confine.Spec
		f.issueDerived(t, host, "echo hi", "", "", testKey)
		if code, msg := f.runLaunch(host, map[string]any{"command": "echo hi"}, &specs); code != 0 || len(specs) != 0 || !slices.Equal(f.ran, []string{"echo hi"}) {
			t.Fatalf("exit %d %q, launched %+v, ran %q", code, msg, specs, f.ran)
		}
	})
	t.Run("the as-written word runs the as-written form", func(t *testing.T) {
		// An exact approval under the jail grant: as written, no
		// restriction, the ticket's project held while it runs.
		f := newFixture(t)
		var specs []confine.Spec
		f.issueDerived(t, host, "make all && git push", confine.CapAsWritten, project, testKey)
		code, msg := f.runLaunch(host, map[string]any{"command": "make all && git push"}, &specs)
		want := confine.Spec{Project: project, Cwd: f.cwd, Exe: bash, Argv: []string{"bash", "-c", "make all && git push"}, Unconfined: true, AsWritten: true}
		if code != 0 || msg != "" || len(f.ran) != 0 || len(specs) != 1 || !slices.Equal(specs[0].Args(), want.Args()) {
			t.Fatalf("exit %d %q, ran %q, launched %+v; want one launch %v", code, msg, f.ran, specs, want.Args())
		}
		// The unconfined word is not a ticket's (the hook never issues
		// it where the wrapper launches): refused.
		specs = nil
		f.issueDerived(t, host, "git push", confine.CapUnconfined, project, testKey)
		code, msg = f.runLaunch(host, map[string]any{"command": "git push"}, &specs)
		wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
		if len(specs) != 0 || len(f.ran) != 0 {
			t.Errorf("the unconfined word ran: %+v %q", specs, f.ran)
		}
	})
	t.Run("control: a marked ticket carries its launch", func(t *testing.T) {
		f := newFixture(t)
		var specs []confine.Spec
		nonce, _ := ticket.NewNonce()
		launch := "'/opt/lg/loopguard-exec' 'exec' '--cap' 'read-only' '--project' '/p' '--cwd' '/p' '--' '/usr/bin/cat' 'cat' 'x'"
		cmd := ticket.Mark(nonce, launch)
		tk := &ticket.Ticket{Session: host, Nonce: nonce, Command: cmd, Capability: "read-only", Project: project, Cwd: f.cwd, Expiry: f.now.Add(ticket.Lifetime).Unix()}
		if err := f.store.Issue(tk, testKey); err != nil {
			t.Fatal(err)
		}
		if code, msg := f.runLaunch(host, map[string]any{"command": cmd}, &specs); code != 0 || len(specs) != 0 || !slices.Equal(f.ran, []string{cmd}) {
			t.Fatalf("exit %d %q, launched %+v, ran %q", code, msg, specs, f.ran)
		}
	})
	for _, a := range []struct {
		name string
		edit func(m map[string]any)
	}{
		{"capability widened", func(m map[string]any) { m["capability"] = "project-write+network" }},
		{"capability removed", func(m map[string]any) { delete(m, "capability") }},
		{"the jail for read-only", func(m map[string]any) { m["capability"] = policy.CapJail }},
		{"the as-written word for read-only", func(m map[string]any) { m["capability"] = confine.CapAsWritten }},
		{"project moved", func(m map[string]any) { m["project"] = "/" }},
		{"project removed", func(m map[string]any) { delete(m, "project") }},
	} {
		t.Run("attack: "+a.name, func(t *testing.T) {
			f := newFixture(t)
			var specs []confine.Spec
			tk := f.issueDerived(t, host, "make probe", "read-only", project, testKey)
			f.rewriteTicket(t, tk.Nonce, a.edit)
			code, msg := f.runLaunch(host, map[string]any{"command": "make probe"}, &specs)
			wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
			if len(specs) != 0 || len(f.ran) != 0 {
				t.Errorf("ran: %+v %q", specs, f.ran)
			}
		})
	}
	t.Run("attack: replayed", func(t *testing.T) {
		f := newFixture(t)
		var specs []confine.Spec
		f.issueDerived(t, host, "make probe", "read-only", project, testKey)
		if code, msg := f.runLaunch(host, map[string]any{"command": "make probe"}, &specs); code != 0 {
			t.Fatalf("control: %q", msg)
		}
		code, msg := f.runLaunch(host, map[string]any{"command": "make probe"}, &specs)
		wantRefused(t, code, msg, ticket.ReasonTicketUsed)
		if len(specs) != 1 {
			t.Errorf("launched %d times", len(specs))
		}
	})
	t.Run("attack: a changed command", func(t *testing.T) {
		f := newFixture(t)
		var specs []confine.Spec
		f.issueDerived(t, host, "make probe", "read-only", project, testKey)
		code, msg := f.runLaunch(host, map[string]any{"command": "make probe; cat ~/.ssh/id_rsa"}, &specs)
		wantRefused(t, code, msg, ticket.ReasonNoDecision)
		if len(specs) != 0 || len(f.ran) != 0 {
			t.Errorf("ran: %+v %q", specs, f.ran)
		}
	})
	t.Run("a ticket with a capability and no project", func(t *testing.T) {
		f := newFixture(t)
		var specs []confine.Spec
		f.issueDerived(t, host, "make probe", "read-only", "", testKey)
		code, msg := f.runLaunch(host, map[string]any{"command": "make probe"}, &specs)
		wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
		if len(specs) != 0 || len(f.ran) != 0 {
			t.Errorf("ran: %+v %q", specs, f.ran)
		}
	})
	t.Run("attack: a capability the launcher cannot read", func(t *testing.T) {
		f := newFixture(t)
		var specs []confine.Spec
		f.issueDerived(t, host, "make probe", "everything", project, testKey)
		code, msg := f.runLaunch(host, map[string]any{"command": "make probe"}, &specs)
		wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
		if len(specs) != 0 || len(f.ran) != 0 {
			t.Errorf("ran: %+v %q", specs, f.ran)
		}
	})
}
