package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
)

// TestDemo plays the demo as `make demo` does and checks its story.
func TestDemo(t *testing.T) {
	keyringtest.Require(t)
	var out bytes.Buffer
	err := run(context.Background(), config{claude: claudetest.Install(t), out: &out})
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	story := out.String()
	for _, want := range []string{
		"Claude Code " + claudetest.Version,
		"REFUSED by loopguard: no_grant",
		"loopguard approve ",
		"REFUSED by loopguard: approved_call_changed",
		"ALLOWED by loopguard: exact_grant",
		"| transfer 20 to vendor-approved\n",
		"Every step went as expected",
	} {
		if !strings.Contains(story, want) {
			t.Errorf("the demo did not tell %q", want)
		}
	}
	if strings.Count(story, "| transfer ") != 1 {
		t.Errorf("the final ledger should hold one transfer")
	}
}
