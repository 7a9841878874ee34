package scenarios

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/loopguard/loopguard/internal/keyringtest"
	"github.com/loopguard/loopguard/internal/scripttest"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// binDir holds the loopguard binary built by TestMain; scripts find it first
// on their PATH and run it with `exec loopguard ...`.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "loopguard-scenarios-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scenarios:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scenarios: the go command is needed to build loopguard:", err)
		return 1
	}
	// A test build (lgtest, every knob off unless a script names one):
	// it waits for its terminal's output to be read before it exits
	// (cmd/loopguard's drainTTY), which testscript's ttyout needs.
	build := exec.Command(gobin, "build", "-tags", "lgtest", "-o", filepath.Join(dir, "loopguard"), "github.com/loopguard/loopguard/cmd/loopguard")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "scenarios: failed to build loopguard:", err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// fixtureScript runs on its own in TestPreviewGateFixture, which counts its
// gates.
const fixtureScript = "preview_gate_fixture.txtar"

// minScenarios guards against a lost glob.
const minScenarios = 12

// scriptParams gives every script the shared harness (its own HOME and
// state dir, the keyring condition, typedigest, lastpending, expandenv), the
// built binary first on PATH, and the scenarios' own commands.
func scriptParams(t *testing.T, files []string) testscript.Params {
	p := scripttest.Params(t, map[string]scripttest.Cmd{
		"awaitpending":   cmdAwaitPending,
		"rawbytes":       cmdRawBytes,
		"rewritepending": cmdRewritePending,
		"dispatch":       cmdDispatch,
		"forgegrant":     cmdForgeGrant,
		"race":           cmdRace,
	})
	p.Files = files
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
		return nil
	}
	return p
}

func realKeyring(t testing.TB) bool { return keyringtest.Want(t) }

// scenarioFiles lists the scripts in testdata, without the fixture.
func scenarioFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if filepath.Base(f) != fixtureScript {
			out = append(out, f)
		}
	}
	// A lost glob must not pass as "no scenario failed".
	if len(out) < minScenarios {
		t.Fatalf("found %d scenario scripts in testdata, want at least %d", len(out), minScenarios)
	}
	return out
}

func TestScenarios(t *testing.T) {
	testscript.Run(t, scriptParams(t, scenarioFiles(t)))
}

// awaitpending VAR: wait (at most 10s) until a pending call is recorded
// whose status is open, for a hook held in the background with --wait, and
// set VAR to its id.
func cmdAwaitPending(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: awaitpending VAR")
	}
	st := scripttest.Store(ts)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, _ := st.ListPending()
		for _, p := range list {
			if p.Status == state.StatusOpen {
				ts.Setenv(args[0], p.ID)
				return
			}
		}
	}
	ts.Fatalf("no open pending call within 10s")
}

var hexEscape = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)

// rawbytes IN OUT: copy IN to OUT with each literal \xHH replaced by that
// byte, for payloads that must hold invalid UTF-8 (JSON cannot escape it).
func cmdRawBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rawbytes IN OUT")
	}
	out := hexEscape.ReplaceAllFunc([]byte(ts.ReadFile(args[0])), func(m []byte) []byte {
		b, err := hex.DecodeString(string(m[2:]))
		ts.Check(err)
		return b
	})
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o600))
}

// descriptorWith returns the canonical descriptor of pending call id with
// its input replaced by PAYLOAD's tool_input (what the hook would compute
// for that call), and the same without its target state.
func descriptorWith(ts *testscript.TestScript, id, payload string) (canonical, callCanonical []byte) {
	p, err := scripttest.Store(ts).GetPending(id)
	ts.Check(err)
	desc, err := token.Decode(p.Descriptor)
	ts.Check(err)
	m, ok := desc.(map[string]any)
	if !ok {
		ts.Fatalf("pending %s: descriptor is not an object", id)
	}
	m["input"] = toolInput(ts, payload)
	canonical, err = token.Encode(m)
	ts.Check(err)
	delete(m, "target")
	callCanonical, err = token.Encode(m)
	ts.Check(err)
	return canonical, callCanonical
}

// rewritepending [--stale-digest] ID PAYLOAD: play an attacker who can write
// loopguard's state directory: replace the input of pending call ID, on
// disk, with PAYLOAD's tool_input, keeping its id, session, agent, tool and
// status. The record's digests are recomputed so that it is consistent,
// unless --stale-digest keeps the old digest (a clumsier rewrite). The file
// is written directly, not through the state package.
func cmdRewritePending(ts *testscript.TestScript, neg bool, args []string) {
	stale := len(args) > 0 && args[0] == "--stale-digest"
	if stale {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rewritepending [--stale-digest] ID PAYLOAD")
	}
	path := filepath.Join(ts.Getenv("XDG_STATE_HOME"), "loopguard", "pending", args[0]+".json")
	var rec map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(path)), &rec))
	canonical, callCanonical := descriptorWith(ts, args[0], args[1])
	// The call's bytes live beside the record, in ID.call.
	ts.Check(os.WriteFile(strings.TrimSuffix(path, ".json")+".call", canonical, 0o600))
	if !stale {
		rec["digest"] = token.DigestOf(canonical)
		rec["call_digest"] = token.DigestOf(callCanonical)
	}
	data, err := json.Marshal(rec)
	ts.Check(err)
	ts.Check(os.WriteFile(path, data, 0o600))
}

// toolInput returns the tool_input object of the hook payload in file.
func toolInput(ts *testscript.TestScript, file string) map[string]any {
	v, err := token.Decode([]byte(ts.ReadFile(file)))
	ts.Check(err)
	payload, _ := v.(map[string]any)
	in, ok := payload["tool_input"].(map[string]any)
	if !ok {
		ts.Fatalf("%s: no tool_input object", file)
	}
	return in
}

// hookAnswer is the part of a PreToolUse or PermissionRequest answer the
// executor acts on.
type hookAnswer struct {
	HookSpecificOutput struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		Decision                 struct {
			Behavior string `json:"behavior"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// allowed reports whether hook stdout is an allow (PreToolUse or
// PermissionRequest form). Anything else, including no answer, is not.
func allowed(stdout string) bool {
	var a hookAnswer
	if json.Unmarshal([]byte(stdout), &a) != nil {
		return false
	}
	h := a.HookSpecificOutput
	return h.PermissionDecision == "allow" || h.Decision.Behavior == "allow"
}

// dispatch PAYLOAD LEDGER: play the executor that Claude Code is. If the
// last command's stdout is the hook's allow, the tool "runs": one line with
// the tool name and the canonical tool_input of PAYLOAD is appended to
// LEDGER (created if needed). Otherwise nothing is written. Scripts end by
// comparing LEDGER with what should have run.
func cmdDispatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: dispatch PAYLOAD LEDGER")
	}
	ledger := ts.MkAbs(args[1])
	f, err := os.OpenFile(ledger, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	ts.Check(err)
	defer f.Close()
	if !allowed(ts.ReadFile("stdout")) {
		return
	}
	v, err := token.Decode([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	payload, _ := v.(map[string]any)
	in, err := token.Encode(payload["tool_input"])
	ts.Check(err)
	tool, _ := payload["tool_name"].(string)
	_, err = fmt.Fprintf(f, "%s %s\n", tool, strings.TrimSpace(string(in)))
	ts.Check(err)
}

// forgegrant ID PAYLOAD: play an attacker who can write loopguard's state
// directory and edits the serialized approval: copy the exact grant minted
// for pending call ID to the file name under which the hook looks for the
// grant of PAYLOAD's call (its digest). The grant's MAC still binds ID's
// digest.
func cmdForgeGrant(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: forgegrant ID PAYLOAD")
	}
	st := scripttest.Store(ts)
	p, err := st.GetPending(args[0])
	ts.Check(err)
	canonical, _ := descriptorWith(ts, args[0], args[1])
	grants, err := st.AllGrants()
	ts.Check(err)
	for _, gf := range grants {
		if gf.Grant != nil && gf.Grant.Exact() && gf.Grant.ArgHash == p.Digest {
			data, err := os.ReadFile(gf.Path)
			ts.Check(err)
			to := filepath.Join(filepath.Dir(gf.Path), token.DigestOf(canonical)+filepath.Ext(gf.Path))
			ts.Check(os.WriteFile(to, data, 0o600))
			return
		}
	}
	ts.Fatalf("no unconsumed exact grant for pending call %s", args[0])
}

// hookEnv is the environment a hook run by `race` gets: the script's own
// values of the variables loopguard reads.
func hookEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "TMPDIR", "CLAUDE_PROJECT_DIR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// race N PAYLOAD OUT: start N `loopguard hook --event PreToolUse` processes
// at once, each with PAYLOAD on stdin, and write to OUT how many answered
// allow (exit 0 and an allow) and how many denied (exit 2 and a deny), as
// "allowed A\ndenied D\nother O\n".
func cmdRace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: race N PAYLOAD OUT")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	if n < 2 || n > 64 {
		ts.Fatalf("race: N must be between 2 and 64")
	}
	payload := []byte(ts.ReadFile(args[1]))
	path, err := exec.LookPath(filepath.Join(binDir, "loopguard"))
	ts.Check(err)
	env := hookEnv(ts)
	type outcome struct {
		allow, deny bool
	}
	results := make(chan outcome, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(path, "hook", "--event", "PreToolUse")
			cmd.Env = env
			cmd.Dir = ts.MkAbs(".")
			cmd.Stdin = bytes.NewReader(payload)
			<-start
			out, err := cmd.Output()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			results <- outcome{
				allow: code == 0 && allowed(string(out)),
				deny:  code == 2 && strings.Contains(string(out), `"permissionDecision":"deny"`),
			}
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	var a, d, o int
	for r := range results {
		switch {
		case r.allow:
			a++
		case r.deny:
			d++
		default:
			o++
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), fmt.Appendf(nil, "allowed %d\ndenied %d\nother %d\n", a, d, o), 0o600))
}
