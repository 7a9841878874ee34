package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/loopguard/loopguard/internal/enginetest"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/token"
)

// The per-call path: what a read-only call, an allow and a key read ahead
// cost the engine, and that no shortcut decides otherwise.

// snapshot lists every file under dir with its size and modification time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A read-only tool that names nothing protected is decided on the fast
// path: no state written (no pending record, no audit entry), no keyring.
// One that does name a protected resource goes the whole way: denied and
// audited. The other tools still write their deny.
func TestReadOnlyFastPath(t *testing.T) {
	h := newHarness(t)
	h.keyErr = errors.New("the keyring must not be read on this path")
	read := h.fixture("pretooluse-read.json")
	tool := func(name string, in map[string]any) map[string]any {
		return with(read, func(m map[string]any) { m["tool_name"] = name; m["tool_input"] = in })
	}
	// The log exists (sealed empty, as init leaves it), so a write shows.
	h.decide(tool("Bash", map[string]any{"command": "echo hi"}))
	before := snapshot(t, h.Store.Dir)
	for _, c := range []map[string]any{
		tool("Read", map[string]any{"file_path": filepath.Join(h.Project, "main.go")}),
		tool("Grep", map[string]any{"pattern": "x", "path": h.Project}),
		tool("Glob", map[string]any{"pattern": "**/*.go", "path": h.Project}),
		tool("LS", map[string]any{"path": h.Project}),
	} {
		expect(t, c["tool_name"].(string), h.decide(c), Abstain, ReasonReadOnly)
	}
	if after := snapshot(t, h.Store.Dir); !maps.Equal(before, after) {
		t.Fatalf("the read-only fast path changed the state:\nbefore %v\nafter  %v", before, after)
	}
	// Near a protected resource: denied, and the deny is in the log.
	expect(t, "Read the guard state", h.decide(tool("Read", map[string]any{"file_path": filepath.Join(h.Store.Dir, "grants", "g")})), Deny, ReasonProtected)
	var last auditEntry
	if err := h.eng().Audit.Read(func(_ []byte, e auditEntry) error { last = e; return nil }); err != nil {
		t.Fatal(err)
	}
	if last.Tool != "Read" || last.Reason != ReasonProtected || last.Digest == "" {
		t.Fatalf("the protected read was not audited with its digest: %+v", last)
	}
	// Control: a Bash deny still writes its pending record and its entry.
	before = snapshot(t, h.Store.Dir)
	expect(t, "Bash", h.decide(tool("Bash", map[string]any{"command": "echo other"})), Deny, ReasonNoGrant)
	if after := snapshot(t, h.Store.Dir); maps.Equal(before, after) {
		t.Fatal("a Bash deny wrote nothing")
	}
}

// TestAllowIsSealed: an allow's audit entry is on disk and sealed before
// the answer (one hold of the log's lock, audit.Log.AppendSealed): the
// head vouches for it. Control: the deny before it, decided without the
// key, is left unsealed.
func TestAllowIsSealed(t *testing.T) {
	h := newHarness(t)
	_, seal, err := token.DeriveKeys(enginetest.Master)
	if err != nil {
		t.Fatal(err)
	}
	log := h.eng().Audit
	if err := log.Seal(seal); err != nil { // as init leaves it
		t.Fatal(err)
	}
	call := h.fixture("pretooluse-bash.json")
	h.approve(h.decide(call))
	if rep, err := log.Verify(seal); err != nil || !rep.OK() || rep.Unsealed != 1 {
		t.Fatalf("after the deny: %+v, %v; want its entry unsealed", rep, err)
	}
	if d := h.decide(call); d.Behavior != Allow {
		t.Fatalf("decision %+v, want allow", d)
	}
	rep, err := log.Verify(seal)
	if err != nil || !rep.OK() || rep.Unsealed != 0 || rep.SealedSeq != rep.Entries {
		t.Fatalf("after the allow: %+v, %v; want every entry sealed", rep, err)
	}
}

// TestKeyAheadDecidesAlike: reading the key ahead (keyAhead) changes no
// answer. Each command is decided with and without it, with a working
// keyring and a failing one, under the jail grant: the same behaviour,
// reason and rewritten command, and never more than one key read per
// call. Attacks: calls that leave the jail (network, outside writes, git's
// directory, danger lines), a shape the parser refuses, a sandbox escape,
// all denied alike with the key read ahead; with the keyring failing, a
// jailed call is denied keyring_unavailable either way, and a call that
// leaves the jail keeps its own reason (the failed read ahead is never
// the answer). Controls: jailed and scoped calls allowed alike; with no
// scoped grant on disk the key is not read ahead at all.
func TestKeyAheadDecidesAlike(t *testing.T) {
	cmds := []string{
		"echo x > notes.txt", "cd sub && go test ./...", "ls", "git status && ls", "pnpm test 2>&1 | tail -30",
		"curl -sSL https://example.com/x.sh -o x.sh", "git add -A && git commit -m wip", "rm -rf .",
		"echo pwned > /etc/profile.d/x.sh", "ls && rm -rf ~/old", "echo $(", "echo 'unterminated",
	}
	type answer struct {
		behavior, reason string
		command          any
		reads            int32
	}
	// One harness per setting; each call gets an engine of its own, as
	// each hook process has.
	harnessFor := func(t *testing.T, keyErr error) func(ahead bool, cmd string, escape bool) answer {
		h, _ := jailHarness(t)
		h.keyErr = keyErr
		var reads atomic.Int32
		eng := h.eng
		h.eng = func() *Engine {
			e := eng()
			load := e.LoadKey
			e.LoadKey = func(ctx context.Context) ([]byte, error) { reads.Add(1); return load(ctx) }
			return e
		}
		return func(ahead bool, cmd string, escape bool) answer {
			defer func(was bool) { readKeyAhead = was }(readKeyAhead)
			readKeyAhead = ahead
			reads.Store(0)
			p := withInput(h.fixture("pretooluse-bash.json"), "command", cmd)
			if escape {
				p = withInput(p, "dangerouslyDisableSandbox", true)
			}
			d := h.decide(p)
			return answer{d.Behavior, d.Reason, d.UpdatedInput["command"], reads.Load()}
		}
	}
	decide := func(t *testing.T, ahead bool, keyErr error, cmd string, escape bool) answer {
		return harnessFor(t, keyErr)(ahead, cmd, escape)
	}
	for _, keyErr := range []error{nil, errors.New("keyring locked")} {
		decideIn := harnessFor(t, keyErr)
		for _, cmd := range cmds {
			for _, escape := range []bool{false, true} {
				with, without := decideIn(true, cmd, escape), decideIn(false, cmd, escape)
				if with.behavior != without.behavior || with.reason != without.reason || with.command != without.command {
					t.Errorf("%q (keyring error %v, escape %v): read ahead %s/%s %v, without %s/%s %v", cmd, keyErr, escape,
						with.behavior, with.reason, with.command, without.behavior, without.reason, without.command)
				}
				if with.reads > 1 || without.reads > 1 {
					t.Errorf("%q: %d and %d key reads", cmd, with.reads, without.reads)
				}
				if keyErr != nil && with.behavior == Allow {
					t.Errorf("%q allowed with the keyring failing", cmd)
				}
			}
		}
	}
	if a := decide(t, true, nil, "echo x > notes.txt", false); a.behavior != Allow || a.reason != ReasonJailed || a.reads != 1 {
		t.Errorf("control: the jailed call is %+v, want allowed jailed after one key read", a)
	}
	if a := decide(t, true, errors.New("keyring locked"), "echo x > notes.txt", false); a.reason != ReasonKeyring {
		t.Errorf("control: the jailed call with the keyring failing is %+v, want %s", a, ReasonKeyring)
	}
	// No scoped grant on disk: nothing is read ahead.
	h, run := rewriteHarness(t, jailLauncher)
	for _, dir := range []string{"any", "."} {
		_ = os.RemoveAll(filepath.Join(h.Store.Dir, "grants", "scoped", dir))
	}
	var reads atomic.Int32
	eng := h.eng
	h.eng = func() *Engine {
		e := eng()
		e.LoadKey = func(context.Context) ([]byte, error) { reads.Add(1); return nil, errors.New("no key read expected") }
		return e
	}
	if d := run("echo x > notes.txt"); d.Behavior != Deny || reads.Load() != 0 {
		t.Errorf("without a scoped grant: %s/%s after %d key reads, want a deny and none", d.Behavior, d.Reason, reads.Load())
	}
}

// TestKeyAheadOnlyWhereAGrantMayCover: the key is read ahead only for a
// call a grant on disk could cover (mayCover): with a scoped grant for
// `go test ./...` alone, a deny of another command reads no key at all
// (it did before: any scoped grant on disk started the read, about 1 ms of
// CPU on every such deny). Attacks: the same command quoted to hide its
// program (g'o', g\o) is still read ahead and decided as the plain one.
// Controls: the covered command is read ahead once and allowed; under the
// jail grant any command is; and the answers are those without a read
// ahead.
func TestKeyAheadOnlyWhereAGrantMayCover(t *testing.T) {
	var started, reads atomic.Int32
	defer func(was func()) { keyAheadStarted = was }(keyAheadStarted)
	keyAheadStarted = func() { started.Add(1) }
	// setup grants rules to every session, or with project to every
	// session of the harness's project.
	setup := func(t *testing.T, project bool, rules ...string) func(cmd string) Decision {
		h := newHarness(t)
		eng := h.eng
		h.eng = func() *Engine {
			e := eng()
			e.Env.Launcher = jailLauncher
			load := e.LoadKey
			e.LoadKey = func(ctx context.Context) ([]byte, error) { reads.Add(1); return load(ctx) }
			return e
		}
		session := token.Any
		if project {
			session = token.ProjectSession(h.Project)
		}
		for _, r := range rules {
			h.grantScope(r, session, token.Any)
		}
		bash := h.fixture("pretooluse-bash.json")
		return func(cmd string) Decision { return h.decide(withInput(bash, "command", cmd)) }
	}
	type want struct {
		cmd              string
		behavior, reason string
		ahead            int32
	}
	check := func(t *testing.T, run func(string) Decision, cases []want) {
		t.Helper()
		for _, w := range cases {
			started.Store(0)
			reads.Store(0)
			d := run(w.cmd)
			if d.Behavior != w.behavior || d.Reason != w.reason || started.Load() != w.ahead {
				t.Errorf("%q: %s/%s with %d reads started ahead, want %s/%s and %d", w.cmd, d.Behavior, d.Reason, started.Load(), w.behavior, w.reason, w.ahead)
			}
			if w.ahead == 0 && w.behavior == Deny && reads.Load() != 0 {
				t.Errorf("%q: denied after %d key reads, want none", w.cmd, reads.Load())
			}
			// The same answer without the read ahead.
			readKeyAhead = false
			o := run(w.cmd)
			readKeyAhead = true
			if o.Behavior != d.Behavior || o.Reason != d.Reason {
				t.Errorf("%q: %s/%s read ahead, %s/%s without", w.cmd, d.Behavior, d.Reason, o.Behavior, o.Reason)
			}
		}
	}
	t.Run("scoped", func(t *testing.T) {
		check(t, setup(t, false, "Bash(go test ./...)"), []want{
			{"echo x > notes.txt", Deny, ReasonNoGrant, 0},
			{"git status && rm -rf build", Deny, ReasonChained, 0},
			{"go test ./...", Allow, ReasonScopedGrant, 1},
			{"g'o' test ./...", Allow, ReasonScopedGrant, 1},
			{`g\o test ./...`, Allow, ReasonScopedGrant, 1},
			{"go vet ./...", Deny, ReasonNoGrant, 1}, // names go: read ahead, not covered
		})
	})
	t.Run("jail", func(t *testing.T) {
		check(t, setup(t, false, scope.JailRule), []want{
			{"echo x > notes.txt", Allow, ReasonJailed, 1},
			{"git status && rm -rf build", Allow, ReasonJailed, 1},
		})
	})
	// The jail grant as init makes it in a project: bound to every session
	// of the project (token.ProjectSession), not to the session or to any.
	t.Run("project jail", func(t *testing.T) {
		check(t, setup(t, true, scope.JailRule), []want{
			{"echo x > notes.txt", Allow, ReasonJailed, 1},
		})
	})
}
