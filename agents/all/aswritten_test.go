package all_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
)

// TestApprovedCallHoldsTheProjectPerHost (the ninety-fifth attack run):
// under the jail grant an exactly approved call that takes no other form
// runs, through each host's own adapter, in the launcher's as-written
// form, which holds the project while it runs: Copilot CLI (modifiedArgs)
// and Claude Code registered without --ticket (updatedInput), where no
// approved call took the unconfined form and none held the project.
// Controls: without the jail grant it runs as written; a call granted
// by the jail runs in the jail.
func TestApprovedCallHoldsTheProjectPerHost(t *testing.T) {
	const cmd = "echo a && git push"
	for _, tc := range []struct {
		name, agent, event string
		payload            func(h *harness, ts int) []byte
		rewritten          func(out map[string]any) string
	}{
		{"copilot", "copilot", "preToolUse", func(h *harness, ts int) []byte {
			return edit(t, h.payload("copilot-pre-bash.json"), func(m map[string]any) {
				m["toolArgs"].(map[string]any)["command"] = cmd
				m["timestamp"] = json.Number(strconv.Itoa(1796033981600 + ts))
			})
		}, func(out map[string]any) string {
			args := out["modifiedArgs"]
			if s, ok := args.(string); ok {
				var m map[string]any
				_ = json.Unmarshal([]byte(s), &m)
				args = m
			}
			m, _ := args.(map[string]any)
			c, _ := m["command"].(string)
			return c
		}},
		{"claude without --ticket", "", "", func(h *harness, ts int) []byte {
			return h.claude("PreToolUse", "Bash", map[string]any{"command": cmd}, "toolu_hold"+strconv.Itoa(ts))
		}, func(out map[string]any) string {
			hs, _ := out["hookSpecificOutput"].(map[string]any)
			in, _ := hs["updatedInput"].(map[string]any)
			c, _ := in["command"].(string)
			return c
		}},
	} {
		for _, jail := range []bool{true, false} {
			name := tc.name
			if !jail {
				name += ", no jail grant (control)"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t)
				h.launcher, h.named = "/opt/lg/loopguard-exec", true
				if jail {
					h.grantAny("Bash(*)")
				}
				first := h.run(tc.agent, tc.event, tc.payload(h, 1))
				if strings.Contains(first.stdout, `"allow"`) {
					t.Fatalf("allowed before the approval: %+v", first)
				}
				h.approve(first)
				got := h.run(tc.agent, tc.event, tc.payload(h, 2))
				var out map[string]any
				if err := json.Unmarshal([]byte(got.stdout), &out); err != nil || !strings.Contains(got.stdout, `"allow"`) {
					t.Fatalf("the approved call: %+v", got)
				}
				ran := tc.rewritten(out)
				want := h.launcher + " exec --cap " + confine.CapAsWritten + " '--project' '" + h.Project + "' '--cwd' '" + h.Project + "' "
				switch {
				case jail && (!strings.HasPrefix(ran, want) || !strings.HasSuffix(ran, " '-c' '"+cmd+"'")):
					t.Errorf("approved under the jail grant, it runs %q; want the as-written form %s...", ran, want)
				case !jail && ran != "":
					t.Errorf("approved without the jail grant, it runs %q; want as written", ran)
				}
				if jail {
					// Control: a call the jail holds runs in it.
					got := h.run(tc.agent, tc.event, edit(t, tc.payload(h, 3), func(m map[string]any) {
						if a, ok := m["toolArgs"].(map[string]any); ok {
							a["command"] = "echo a > b.txt"
						} else {
							m["tool_input"].(map[string]any)["command"] = "echo a > b.txt"
						}
					}))
					var out map[string]any
					_ = json.Unmarshal([]byte(got.stdout), &out)
					if ran := tc.rewritten(out); !strings.HasPrefix(ran, "'"+h.launcher+"' 'exec' '--cap' 'jail' ") {
						t.Errorf("a jailed call (control) runs %q (%+v)", ran, got)
					}
				}
			})
		}
	}
}
