package scenarios

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// gateResult is one case of the preview-gate fixture as the hook answered it.
type gateResult struct {
	Case, Want, Got string
	Executed        bool // exit 0 and permissionDecision allow
	Blocked         bool // exit 2 and permissionDecision deny
}

// gateLog collects the fixture's gates in the order the script ran them.
type gateLog struct {
	mu      sync.Mutex
	results []gateResult
}

var reasonCode = regexp.MustCompile(`^loopguard: ([a-z_]+):`)

// cmd is the script command `gate CASE WANT`: run `loopguard hook --event
// PreToolUse` on the current stdin (set with `stdin FILE`) and record the
// outcome. WANT is "allow" or the reason code of a deny. A gate that does not
// match is logged, not fatal: the count of matches is part of the summary
// the test asserts.
func (l *gateLog) cmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gate CASE WANT")
	}
	err := ts.Exec("loopguard", "hook", "--event", "PreToolUse")
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		ts.Fatalf("gate %s: %v", args[0], err)
	}
	var a hookAnswer
	_ = json.Unmarshal([]byte(ts.ReadFile("stdout")), &a)
	h := a.HookSpecificOutput
	r := gateResult{Case: args[0], Want: args[1],
		Executed: code == 0 && h.PermissionDecision == "allow",
		Blocked:  code == 2 && h.PermissionDecision == "deny"}
	switch {
	case r.Executed:
		r.Got = "allow"
	case r.Blocked:
		if m := reasonCode.FindStringSubmatch(h.PermissionDecisionReason); m != nil {
			r.Got = m[1]
		} else {
			r.Got = "deny without a reason code"
		}
	default:
		r.Got = fmt.Sprintf("exit %d with permissionDecision %q", code, h.PermissionDecision)
	}
	if r.Got != r.Want {
		ts.Logf("GATE MISMATCH: case %s: want %s, got %s", r.Case, r.Want, r.Got)
	}
	l.mu.Lock()
	l.results = append(l.results, r)
	l.mu.Unlock()
}

// summary is the fixture's summary line, computed from the results.
func summary(results []gateResult) string {
	var matched, executed, blocked int
	for _, r := range results {
		if r.Got == r.Want {
			matched++
		}
		if r.Executed {
			executed++
		}
		if r.Blocked {
			blocked++
		}
	}
	return fmt.Sprintf("%d cases, %d expected gates matched, %d executed, %d blocked", len(results), matched, executed, blocked)
}

// statedSummary is the "# summary: ..." line of the script's comment.
func statedSummary(t *testing.T, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var found []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "# summary: "); ok {
			found = append(found, s)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Fatalf("%s: want exactly one '# summary: ' line in its comment, found %d", path, len(found))
	}
	return found[0]
}

// TestPreviewGateFixture runs seed two's ten preview-gate cases, adapted to
// Claude Code (see the script's comment), in order through the real binary,
// prints the fixture's summary line and checks it against the one the
// script states.
func TestPreviewGateFixture(t *testing.T) {
	path := filepath.Join("testdata", fixtureScript)
	want := statedSummary(t, path)
	log := &gateLog{}
	p := scriptParams(t, []string{path})
	p.Cmds["gate"] = log.cmd
	// t.Run returns only when the script, a parallel subtest, has finished.
	t.Run("script", func(t *testing.T) { testscript.Run(t, p) })

	log.mu.Lock()
	results := log.results
	log.mu.Unlock()
	if len(results) == 0 && !realKeyring(t) {
		t.Skip("the fixture needs the OS keyring: run through scripts/with-keyring (make test)")
	}
	for i, r := range results {
		outcome := "blocked"
		if r.Executed {
			outcome = "EXECUTED"
		} else if !r.Blocked {
			outcome = "neither"
		}
		mark := "ok"
		if r.Got != r.Want {
			mark = "MISMATCH"
		}
		t.Logf("%2d %-32s want %-22s got %-22s %-8s %s", i+1, r.Case, r.Want, r.Got, outcome, mark)
	}
	got := summary(results)
	t.Logf("%s", got)
	if got != want {
		t.Errorf("fixture summary:\n got %s\nwant %s (stated in %s)", got, want, path)
	}
}
