package review

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/internal/enginetest"
	"github.com/loopguard/loopguard/scope"
)

// offerWorld is an engine over a project with stub programs, and the
// decision of a Bash call there as Claude Code's hook makes it.
type offerWorld struct {
	enginetest.World
	ge     cli.GrantEnv
	keyErr error
}

func newOfferWorld(t *testing.T) *offerWorld {
	t.Helper()
	w := &offerWorld{World: enginetest.New(t, "go", "git", "ls", "rm", "python3")}
	w.Project = realPath(t, w.Project)
	w.Bin = realPath(t, w.Bin)
	if err := os.MkdirAll(filepath.Join(w.Project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.ge = cli.GrantEnv{Home: w.Home, Path: w.Bin, Trusted: []string{w.Bin}}
	return w
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (w *offerWorld) decide(t *testing.T, cmd string) hooks.Decision {
	t.Helper()
	e := &hooks.Engine{Store: w.Store, Audit: audit.Open(filepath.Join(w.Store.Dir, "audit")), LoadKey: enginetest.LoadKey(&w.keyErr), Now: time.Now,
		Env: hooks.Env{Path: w.Bin, Home: w.Home, Trusted: []string{w.Bin}, Self: filepath.Join(w.Base, "self", "loopguard"), StateDir: w.Store.Dir, ProjectDir: w.Project}}
	c := &hooks.Call{Event: hooks.PreToolUse, SessionID: "s-offer", Cwd: w.Project, ToolName: "Bash", ToolUseID: "toolu_" + cmd,
		PermissionMode: "default", ToolInput: map[string]any{"command": cmd}, Rewrite: true}
	return e.Decide(context.Background(), c)
}

// held decides cmd, which no grant covers yet, and returns review's offer
// for the pending call it leaves.
func (w *offerWorld) held(t *testing.T, cmd string) (grantOffer, string) {
	t.Helper()
	d := w.decide(t, cmd)
	if d.Behavior == hooks.Allow || d.Pending == "" {
		t.Fatalf("%s: %s/%s with no pending call, want held", cmd, d.Behavior, d.Reason)
	}
	p, err := w.Store.GetPending(d.Pending)
	if err != nil {
		t.Fatal(err)
	}
	session, _ := GrantBinding(p)
	return offerFor(w.Store, p, w.ge, time.Now()), session
}

// mint stores rules as review's g or w mints them: each a scoped grant
// for the call's binding (its project) and agent.
func (w *offerWorld) mint(t *testing.T, session string, rules ...scope.Rule) {
	t.Helper()
	for _, r := range rules {
		w.PutScoped(t, r, "alice", "main", session, time.Now())
	}
}

// The rules review's g offers for a held chain, minted, cover that very
// chain when the engine decides it again: it is allowed on them, part by
// part. A part a grant covers already gets no new rule. Attack: a chain
// hiding a DANGER part gets no g; control: the same shape without it
// does, and runs on what it mints.
func TestReviewChainRulesCoverTheChain(t *testing.T) {
	w := newOfferWorld(t)
	for _, cmd := range []string{"cd sub && go test ./...", "git add x && git commit -m y", "ls | ls -la"} {
		o, session := w.held(t, cmd)
		if o.err != nil || len(o.rules) == 0 {
			t.Fatalf("%s: no rules offered: %v", cmd, o.err)
		}
		if o.wErr == nil {
			t.Errorf("%s: a wider rule offered for a chain: %s", cmd, o.wider)
		}
		w.mint(t, session, o.rules...)
		if d := w.decide(t, cmd); d.Behavior != hooks.Allow || d.Reason != hooks.ReasonScopedGrant {
			t.Errorf("%s after minting %v: %s/%s (%s), want allowed by the grants", cmd, o.rules, d.Behavior, d.Reason, d.Message)
		}
	}
	// cd sub is covered now: a chain with it mints only its other part.
	o, _ := w.held(t, "cd sub && go vet ./...")
	if len(o.rules) != 1 || !strings.HasPrefix(o.rules[0].String(), "Bash(go vet ./...)@") || o.parts[0].covered == "" || o.parts[0].rule != "" {
		t.Errorf("cd covered already: rules %v, parts %+v", o.rules, o.parts)
	}

	// Attack: true && git reset --hard.
	o, _ = w.held(t, "true && git reset --hard")
	if o.err == nil || !errors.Is(o.err, ErrDangerRule) || o.rules != nil {
		t.Errorf("a chain hiding git reset --hard was offered %v (%v)", o.rules, o.err)
	} else if !strings.Contains(noGrantLine(o.err), "`git reset --hard`") {
		t.Errorf("the DANGER part is not named: %s", noGrantLine(o.err))
	}
	for _, cmd := range []string{"ls && rm -r sub", "ls && python3 x.py"} {
		if o, _ := w.held(t, cmd); o.err == nil {
			t.Errorf("%s was offered %v", cmd, o.rules)
		}
	}
	// Control: true && ls.
	o, session := w.held(t, "true && ls")
	if o.err != nil {
		t.Fatalf("true && ls: %v", o.err)
	}
	w.mint(t, session, o.rules...)
	if d := w.decide(t, "true && ls"); d.Behavior != hooks.Allow {
		t.Errorf("true && ls after minting %v: %s/%s", o.rules, d.Behavior, d.Reason)
	}
}

// The wider rule review's w offers for go test -v ./..., minted, covers
// other go test calls through the engine, never go test -exec or
// -toolexec (they run a program on the build) nor go run. Attack: rm -rf
// build and git reset HEAD x get no wider rule.
func TestReviewWiderRuleThroughEngine(t *testing.T) {
	w := newOfferWorld(t)
	o, session := w.held(t, "go test -v ./...")
	if o.wErr != nil || !strings.HasPrefix(o.wider.String(), "Bash(go test *)@") {
		t.Fatalf("go test -v ./...: wider %v %v", o.wider, o.wErr)
	}
	if o.err != nil || !strings.HasPrefix(o.rules[0].String(), "Bash(go test -v ./...)@") {
		t.Errorf("the exact rule beside it: %v %v", o.rules, o.err)
	}
	w.mint(t, session, o.wider)
	for cmd, allowed := range map[string]bool{
		"go test -v ./...":             true,
		"go test -run TestX ./sub":     true,
		"go test -exec evil ./...":     false,
		"go test -toolexec evil ./...": false,
		"go run ./sub":                 false,
	} {
		if d := w.decide(t, cmd); (d.Behavior == hooks.Allow) != allowed {
			t.Errorf("%s under %s: %s/%s, want allowed=%v", cmd, o.wider, d.Behavior, d.Reason, allowed)
		}
	}
	for _, cmd := range []string{"rm -rf build", "git reset HEAD x", "git push origin main"} {
		if o, _ := w.held(t, cmd); o.wErr == nil {
			t.Errorf("%s: wider rule %s offered", cmd, o.wider)
		}
	}
}
