package loopguard

import (
	"os"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// refusalLine starts the line loopguard adds beside the result of a
// confined call the jail refused something (hooks.refusalNote).
const refusalLine = "loopguard: the jail ("

// A granted Bash call runs confined, the jail refuses its write outside the
// project and the command exits non-zero: Claude Code reports it to
// PostToolUseFailure, not PostToolUse, and the model's next request carries
// the jail's refusal line; the audit log says what ran is what was allowed.
// Control: with the registration an older init wrote, without
// PostToolUseFailure, the line never reaches the model.
func TestJailRefusalOfAFailedCallReachesTheModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		register bool // PostToolUseFailure registered
	}{
		{"registered", true},
		{"older registration (control)", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if !tt.register {
				if err := dropEvent(e.path(".claude/settings.json"), "PostToolUseFailure"); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(e.path("Makefile"), []byte("escape:\n\t@touch ../outside.txt\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			session := sessionID(t)
			if _, err := e.g.Grant(e.ctx, e.Dir, "--session", session, "Bash(make escape)"); err != nil {
				t.Fatal(err)
			}
			api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(bash("toolu_f1", "make escape")),
				claudetest.Text("done"),
			}}, nil, "--session-id", session)
			r := result(t, api, "toolu_f1")
			if !r.IsError || strings.Contains(r.Content, "loopguard: no_grant") {
				t.Fatalf("make escape should have run and failed: %+v", r)
			}
			if e.exists("../outside.txt") {
				t.Fatal("the jail let the write outside the project through")
			}
			// The request that carries the failed call's result back.
			var next string
			for _, req := range api.Requests() {
				for _, tr := range claudetest.RequestToolResults(req.Body) {
					if tr.ToolUseID == "toolu_f1" && next == "" {
						next = string(req.Body)
					}
				}
			}
			if next == "" {
				t.Fatal("no request carried the call's result")
			}
			if i := strings.Index(next, refusalLine); i >= 0 {
				line, _, _ := strings.Cut(next[i:], `"`)
				t.Logf("result %q; beside it: %s", r.Content, line)
			}
			if got := strings.Contains(next, refusalLine); got != tt.register {
				t.Errorf("the model's next request holds the jail's refusal line: %v, want %v; result %q", got, tt.register, r.Content)
			}
			entries, err := e.g.Audit(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			var post []string
			for _, en := range entries {
				if strings.HasPrefix(en.Event, "PostToolUse") && en.Tool == "Bash" {
					post = append(post, en.Event+"/"+en.Reason)
				}
			}
			want := ""
			if tt.register {
				want = "PostToolUseFailure/ran_as_approved"
			}
			if strings.Join(post, " ") != want {
				t.Errorf("the call's decisions after it ran: %v, want %q", post, want)
			}
		})
	}
}
