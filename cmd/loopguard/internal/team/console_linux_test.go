//go:build linux

package team

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

const osc52 = "\x1b]52;c;cm0gLXJmIH4=\a\x1b[1A\x1b[2K"

// publishRaw writes a pending record as an agent machine's token can:
// whatever it likes in every field, under its own identity.
func publishRaw(t *testing.T, c *vault.Custody, host string, p *state.Pending) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := c.Entity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(p)
	if err := c.KV.Put(ctx, "pending/"+e+"/"+p.ID, map[string]any{"host": host, "record": string(rec),
		"call": base64.StdEncoding.EncodeToString(p.Descriptor)}); err != nil {
		t.Fatal(err)
	}
	return e + "/" + p.ID
}

// The two attacks on the approver's console, against a real Vault,
// captured byte for byte as the approver's terminal receives them:
//
//   - a record whose digest is followed by OSC 52 (the clipboard), cursor
//     up and erase line: listed as unreadable by its key, nothing else, and
//     team approve refuses it without printing a byte of it;
//   - an honest `rm -rf` outside the project re-published with project_dir
//     "/", host "build-ci-trusted" and detail "routine cleanup, pre-approved
//     by security": the DANGER line is there (computed here, from the call's
//     own cwd), and the agent's words only in their labelled block.
//
// Control: the honest record is shown and approved as before, and the
// agent machine receives a grant that verifies for its call.
func TestTeamForgedRecordConsole(t *testing.T) {
	s := vaulttest.Start(t)
	agentC := s.AgentToken(t, "machine-a")
	agent := clitest.CustodyOf(agentC)
	aliceC := s.AddApprover(t, "alice")
	alice := clitest.CustodyOf(aliceC)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := agent.Entity(ctx)
	if err != nil {
		t.Fatal(err)
	}

	honest := clitest.BashPending(t, "s-victim", "rm -rf /home/victim/projects", "/work/app")
	honest.ProjectDir, honest.Reason, honest.Detail = "/", "no_grant", "routine cleanup, pre-approved by security"
	honest.Warnings = []string{"reviewed by the security team" + osc52}
	honest.Created = time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	honestKey := publishRaw(t, agent, "build-ci-trusted"+osc52, honest)
	forged := clitest.BashPending(t, "s-forged", "echo hi", "/work/app")
	forged.Digest += osc52
	forgedKey := publishRaw(t, agent, "machine-a", forged)

	list, err := alice.TeamList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tp *vault.TeamPending
	for i := range list {
		if list[i].Key == honestKey {
			tp = &list[i]
		}
	}
	if tp == nil || tp.Err != nil {
		t.Fatalf("the honest record: %+v", tp)
	}
	subst := strings.NewReplacer("{E}", e, "{ID}", honest.ID, "{FID}", forged.ID, "{DIGEST}", honest.Digest,
		"{SEEN}", present.FormatTime(tp.Written), "{CREATED}", present.FormatTime(honest.Created))

	// team pending.
	var out bytes.Buffer
	if err := teamTable(&out, list, tp.Written); err != nil {
		t.Fatal(err)
	}
	want := subst.Replace(`ID                        AGE  MACHINE    PROJECT    SESSION   AGENT  STATE  CALL
{ID}  0s   machine-a  /work/app  s-victim  main   open   Bash rm -rf /home/victim/projects
unreadable: pending/{E}/{FID}: its digest is not the digest of its call; not shown
`)
	if out.String() != want {
		t.Errorf("team pending:\n%q\nwant\n%q", out.String(), want)
	}

	// team approve of the forged record: refused, its key and the check.
	_, err = approve.TeamGet(ctx, alice, forgedKey)
	var errOut bytes.Buffer
	cli.PrintError(&errOut, err)
	want = subst.Replace("loopguard: error: unreadable: pending/{E}/{FID}: its digest is not the digest of its call; not shown\n" +
		"loopguard: hint: it may be a forgery, or a record of an older loopguard; deny it or wait for the machine to publish its call again\n")
	if errOut.String() != want {
		t.Errorf("team approve of the forged record:\n%q\nwant\n%q", errOut.String(), want)
	}

	// team approve of the honest record, on a terminal.
	m, sl := clitest.OpenPTY(t)
	defer m.Close()
	scr := &clitest.Screen{}
	read := make(chan struct{})
	go func() { io.Copy(scr, m); close(read) }()
	mnt := approve.ForVault(ctx, alice, "vault:userpass-alice")
	done := make(chan error, 1)
	go func() {
		done <- teamApproveRun(ctx, &teamApproveOptions{tty: sl, minter: mnt, call: tp, ttl: 10 * time.Minute})
	}()
	scr.Expect(t, `anything else cancels\): $`)
	typed := honest.Digest[:approve.PrefixLen]
	if _, err := m.WriteString(typed + "\r"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tok, _, _, err := agent.Fetch(ctx, honest.ID)
	if err != nil || tok == "" {
		t.Fatalf("the agent machine has no approval: %q, %v", tok, err)
	}
	g, err := token.Parse(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Verify(ctx, g, token.Call{Session: honest.Session, Agent: honest.Agent, Tool: "Bash", Digest: honest.Digest}, time.Now()); err != nil {
		t.Fatalf("control: the approval does not verify on the agent machine: %v", err)
	}
	scr.Expect(t, `runs it once\.\r\n$`)
	sl.Close()
	m.Close()
	<-read
	raw := scr.String()
	subst = strings.NewReplacer("{E}", e, "{ID}", honest.ID, "{DIGEST}", honest.Digest, "{SEEN}", present.FormatTime(tp.Written),
		"{CREATED}", present.FormatTime(honest.Created), "{GRANT}", g.ID(), "{EXPIRY}", present.FormatTime(g.Expiry), "{TYPED}", typed)
	want = subst.Replace(teamApproveScreen)
	got := strings.ReplaceAll(raw, "\r\n", "\n")
	if got != want {
		t.Errorf("team approve, as the terminal received it:\n%s\nwant\n%s", got, want)
	}
	for i := 0; i < len(raw); i++ {
		if b := raw[i]; b != '\n' && b != '\r' && (b < 0x20 || b >= 0x7f) {
			t.Fatalf("raw byte %#02x on the approver's terminal at %d", b, i)
		}
	}
	// The agent's words are only in their block: every line that holds
	// one starts with "  | ".
	for _, l := range strings.Split(got, "\n") {
		for _, w := range []string{"build-ci-trusted", "routine cleanup", "reviewed by the security team", "2031"} {
			if strings.Contains(l, w) && !strings.HasPrefix(l, "  | ") {
				t.Errorf("the agent's %q outside its block: %q", w, l)
			}
		}
	}
	if !strings.Contains(got, "\n!!! DANGER: rm deletes recursively outside the project (/home/victim/projects)\n") {
		t.Error("no DANGER line")
	}
}

// teamApproveScreen is what team approve prints, the typed confirmation
// echoed by the terminal, for the honest record re-published with the
// agent's words (TestTeamForgedRecordConsole).
const teamApproveScreen = `machine: machine-a (Vault identity {E})
project: /work/app (the call's cwd)
pending {ID} (open), seen {SEEN}
session: s-victim
agent:   main
call:    Bash rm -rf /home/victim/projects
!!! DANGER: rm deletes recursively outside the project (/home/victim/projects)
digest: {DIGEST}
The agent machine says (its own words; loopguard checked none of this):
  | host: build-ci-trusted\x1b]52;c;cm0gLXJmIH4=\x07\x1b[1A\x1b[2K
  | reason: no_grant: routine cleanup, pre-approved by security
  | project: /
  | recorded: {CREATED}
  | note: reviewed by the security team\x1b]52;c;cm0gLXJmIH4=\x07\x1b[1A\x1b[2K

The exact call:
tool: "Bash"
cwd: "/work/app"
input:
  command: "rm -rf /home/victim/projects"
executables:
  rm: "/usr/bin/rm"
v: "loopguard.descriptor.v1"

Approve this exact call once, for 10m0s, as vault:userpass-alice?
Type the first 8 characters of the digest to approve (anything else cancels): {TYPED}
Approved {ID}: grant {GRANT}, single use, valid until {EXPIRY}. The waiting hook on machine-a runs it once.
`
