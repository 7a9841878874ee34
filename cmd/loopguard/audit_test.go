package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/token"
)

var testMaster = bytes.Repeat([]byte{7}, token.MasterKeySize)

func loadTestMaster(context.Context) ([]byte, error) { return testMaster, nil }

func testSealKey(t *testing.T) []byte {
	t.Helper()
	k, err := token.SubKey(testMaster, token.LabelAudit)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testAuditLog returns a sealed log with n entries.
func testAuditLog(t *testing.T, n int) *audit.Log {
	t.Helper()
	l := audit.Open(filepath.Join(t.TempDir(), "audit"))
	if err := l.Seal(testSealKey(t)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := l.Append(audit.Entry{
			Time: time.Date(2026, 11, 30, 1, 2, i, 0, time.UTC), Event: "PreToolUse",
			Session: "3f6c1b0e-1111-4000-8000-00000000000" + fmt.Sprint(i%10), Agent: "main", Tool: "Bash",
			Digest: strings.Repeat(fmt.Sprintf("%x", i%16), 64), Decision: "deny", Reason: "no_grant",
		}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func TestAuditFlagsToOptions(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cases := []struct {
		args []string
		want string // fmt of the options that matter, or "error"
	}{
		{nil, "show json=false follow=false n=0 set=false"},
		{[]string{"--json", "-n", "5"}, "show json=true follow=false n=5 set=true"},
		{[]string{"--follow"}, "show json=false follow=true n=0 set=false"},
		{[]string{"-f", "-n", "0"}, "show json=false follow=true n=0 set=true"},
		{[]string{"-n", "-1"}, "error"},
		{[]string{"extra"}, "error"},
		{[]string{"verify"}, "verify json=false"},
		{[]string{"verify", "--json"}, "verify json=true"},
		{[]string{"restart"}, "restart"},
		{[]string{"--since", "1h"}, "show json=false follow=false n=0 set=false since=1h0m0s"},
		{[]string{"--today"}, "show json=false follow=false n=0 set=false today"},
		{[]string{"--since", "1h", "--today"}, "error"},
		{[]string{"--since", "-1h"}, "error"},
		{[]string{"--since", "soon"}, "error"},
	}
	for _, tc := range cases {
		var got string
		cmd := newAuditCmdWith(
			func(_ context.Context, o *auditShowOptions) error {
				got = fmt.Sprintf("show json=%v follow=%v n=%d set=%v", o.JSON, o.Follow, o.N, o.NSet)
				if !o.Since.IsZero() {
					ago := time.Since(o.Since)
					y, m, d := time.Now().Date()
					switch {
					case o.Since.Equal(time.Date(y, m, d, 0, 0, 0, 0, time.Local)):
						got += " today"
					case ago >= time.Hour && ago < time.Hour+time.Minute:
						got += " since=1h0m0s"
					default:
						got += " since=" + ago.String()
					}
				}
				if o.Log == nil || o.Out == nil {
					got += " missing log or output"
				}
				return nil
			},
			func(_ context.Context, o *auditVerifyOptions) error {
				got = fmt.Sprintf("verify json=%v", o.JSON)
				if o.Log == nil || o.LoadKey == nil {
					got += " missing log or key loader"
				}
				return nil
			},
			func(_ context.Context, o *auditRestartOptions) error {
				got = "restart"
				if o.Confirm == nil || o.LoadKey == nil {
					got += " missing confirm or key loader"
				}
				return nil
			})
		cmd.SetArgs(tc.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("audit %v: got %q, want %q (err %v)", tc.args, got, tc.want, err)
		}
	}
}

func TestAuditShowTable(t *testing.T) {
	l := testAuditLog(t, 3)
	var out bytes.Buffer
	if err := auditShowRun(context.Background(), &auditShowOptions{Log: l, Out: &out}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("got:\n%s", out.String())
	}
	for _, want := range []string{"PreToolUse", "3f6c1b0e ", "main", "Bash", "deny", "no_grant", "333333333333"} {
		if !strings.Contains(lines[3], want) {
			t.Errorf("row %q lacks %q", lines[3], want)
		}
	}
	if strings.Contains(lines[3], "3333333333333") || strings.Contains(lines[3], "3f6c1b0e-") {
		t.Errorf("row %q: digest or session not shortened", lines[3])
	}

	out.Reset()
	if err := auditShowRun(context.Background(), &auditShowOptions{Log: l, Out: &out, N: 2, NSet: true}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Fatalf("-n 2 printed %d lines:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "222222222222") || strings.Contains(out.String(), "111111111111") {
		t.Fatalf("-n 2 printed the wrong entries:\n%s", out.String())
	}
}

func TestAuditShowJSONIsRaw(t *testing.T) {
	l := testAuditLog(t, 3)
	var out bytes.Buffer
	if err := auditShowRun(context.Background(), &auditShowOptions{Log: l, Out: &out, JSON: true}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(l.Dir(), "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(raw) {
		t.Fatalf("--json is not the raw log:\n%s\nvs\n%s", out.String(), raw)
	}
}

// Strings the agent chose must not reach the human's terminal raw.
func TestAuditShowEscapesForTerminal(t *testing.T) {
	l := testAuditLog(t, 0)
	evil := "\u202eexe.txt\x1b]0\x07"
	if err := l.Append(audit.Entry{Event: "PreToolUse", Tool: evil, Decision: "deny", Session: "s\u200bx"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []auditShowOptions{{}, {JSON: true, TTY: true}} {
		var out bytes.Buffer
		o.Log, o.Out = l, &out
		if err := auditShowRun(context.Background(), &o); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u200b"} {
			if strings.Contains(out.String(), bad) {
				t.Errorf("json=%v: output contains %q raw: %q", o.JSON, bad, out.String())
			}
		}
		want := `\u{202e}`
		if o.JSON {
			want = `\u202e`
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("json=%v: bidi mark not shown escaped: %q", o.JSON, out.String())
		}
		if o.JSON {
			var e audit.Entry
			if err := json.Unmarshal(out.Bytes(), &e); err != nil || e.Tool != evil {
				t.Errorf("escaped JSON does not decode to the same entry: %v, %q", err, e.Tool)
			}
		}
	}
}

func TestAuditFollow(t *testing.T) {
	l := testAuditLog(t, 12)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out clitest.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- auditShowRun(ctx, &auditShowOptions{Log: l, Out: &out, Follow: true}) }()
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok(out.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("follow did not print %s:\n%s", what, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the last 10 entries", func(s string) bool { return strings.Count(s, "\n") == 11 })
	if err := l.Append(audit.Entry{Event: "cli", Decision: "approve", Pending: "k3v9x2ab", Digest: strings.Repeat("f", 64)}); err != nil {
		t.Fatal(err)
	}
	waitFor("the new entry", func(s string) bool { return strings.Contains(s, "approve") })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
	// Header, the last 10 of 12, the new one.
	if n := strings.Count(out.String(), "\n"); n != 12 {
		t.Fatalf("printed %d lines, want 12:\n%s", n, out.String())
	}
}

func TestAuditVerify(t *testing.T) {
	l := testAuditLog(t, 5)
	var out bytes.Buffer
	o := &auditVerifyOptions{Log: l, Out: &out, LoadKey: loadTestMaster}
	if err := auditVerifyRun(context.Background(), o); err != nil {
		t.Fatalf("clean log: %v\n%s", err, out.String())
	}
	for _, want := range []string{"entries:   5", "unsealed:  5 entries after the seal", "result:    OK", "sealed now up to seq 5"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// Edit entry 2.
	name := filepath.Join(l.Dir(), "log.jsonl")
	b, _ := os.ReadFile(name)
	lines := strings.SplitAfter(string(b), "\n")
	lines[1] = strings.Replace(lines[1], `"deny"`, `"allow"`, 1)
	os.WriteFile(name, []byte(strings.Join(lines, "")), 0o600)
	out.Reset()
	err := auditVerifyRun(context.Background(), o)
	var ve *auditVerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("tampered log: err %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "PROBLEM:   edited entry at seq 2 (line 2)") || strings.Contains(out.String(), "result:    OK") {
		t.Errorf("report:\n%s", out.String())
	}
	var msg bytes.Buffer
	cli.PrintError(&msg, err)
	if !strings.HasPrefix(msg.String(), "loopguard: error: audit log verification failed: 1 problem\n") ||
		!strings.Contains(msg.String(), "loopguard: hint: ") || !strings.Contains(msg.String(), "loopguard audit restart") {
		t.Errorf("error output:\n%s", msg.String())
	}

	// JSON report.
	out.Reset()
	o.JSON = true
	if err := auditVerifyRun(context.Background(), o); err == nil {
		t.Fatal("tampered log passed with --json")
	}
	var rep audit.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != audit.KindEdited {
		t.Fatalf("json report %v: %s", err, out.String())
	}
}

type hintedErr struct{}

func (hintedErr) Error() string { return "keyring load: no key" }
func (hintedErr) Hint() string  { return "run `loopguard init`" }

func TestAuditVerifyKeyError(t *testing.T) {
	l := testAuditLog(t, 1)
	var out bytes.Buffer
	err := auditVerifyRun(context.Background(), &auditVerifyOptions{Log: l, Out: &out,
		LoadKey: func(context.Context) ([]byte, error) { return nil, hintedErr{} }})
	var msg bytes.Buffer
	cli.PrintError(&msg, err)
	if err == nil || !strings.Contains(msg.String(), "loopguard: hint: run `loopguard init`") {
		t.Fatalf("got %v:\n%s", err, msg.String())
	}
}

func TestAuditRestart(t *testing.T) {
	l := testAuditLog(t, 3)
	name := filepath.Join(l.Dir(), "log.jsonl")
	os.WriteFile(name, []byte("garbage\n"), 0o600)
	var out bytes.Buffer
	o := &auditRestartOptions{Log: l, Out: &out, LoadKey: loadTestMaster,
		Confirm: func(string) error { return errors.New("not confirmed") }}
	if err := auditRestartRun(context.Background(), o); err == nil {
		t.Fatal("restart went on without confirmation")
	}
	if b, _ := os.ReadFile(name); string(b) != "garbage\n" {
		t.Fatal("unconfirmed restart changed the log")
	}
	o.Confirm = func(string) error { return nil }
	if err := auditRestartRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "The old audit log is kept as "+filepath.Join(l.Dir(), "log-")) {
		t.Errorf("output:\n%s", out.String())
	}
	out.Reset()
	if err := auditVerifyRun(context.Background(), &auditVerifyOptions{Log: l, Out: &out, LoadKey: loadTestMaster}); err != nil {
		t.Fatalf("new log does not verify: %v\n%s", err, out.String())
	}
}

// Inside Claude Code the restart confirmation refuses.
func TestAuditRestartRefusesInsideAgent(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	if err := confirmRestart(t.TempDir()); !errors.Is(err, cli.ErrNotHuman) {
		t.Fatalf("confirmRestart = %v, want errNotHuman", err)
	}
}

// TestAuditShowSince: --since (and --today) prints only the entries at or
// after the cut, the header still first; the control prints them all.
func TestAuditShowSince(t *testing.T) {
	l := testAuditLog(t, 3)
	var out bytes.Buffer
	cut := time.Date(2026, 11, 30, 1, 2, 2, 0, time.UTC)
	if err := auditShowRun(context.Background(), &auditShowOptions{Log: l, Out: &out, Since: cut}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 || strings.Contains(out.String(), "111111111111") || !strings.Contains(out.String(), "222222222222") {
		t.Errorf("--since printed:\n%s", out.String())
	}
	out.Reset()
	if err := auditShowRun(context.Background(), &auditShowOptions{Log: l, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 4 {
		t.Errorf("all (control) printed %d lines", n)
	}
}
