// Package layout holds the test of the module's floors: which package may
// import which. A reviewer reads the engine in one package and each
// security fact in one home; this test keeps it so.
package layout

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/loopguard/loopguard/"

// floors: a package imports packages of its own floor or below, never
// above. A new package must be placed here.
var floors = map[string]int{
	// Facts with no opinion about a call.
	"fsx": 0, "token": 0, "keyring": 0, "notify": 0, "internal/testknobs": 0, "internal/udiff": 0, "internal/gitconfig": 0,
	// The one table of each security fact.
	"policy": 1,
	// Readers of one thing each: bash, the audit log, the state, the
	// configuration, the kernel's confinement, the undo records.
	"shellparse": 2, "audit": 2, "state": 2, "config": 2, "confine": 2, "undo": 2,
	// The wrapper of two-phase enforcement: a reader of the host's line;
	// loopguard's own shell tool for hosts with no shell prefix; the
	// wrapper as a host's configured shell (OpenCode).
	"ticket": 2, "shelltool": 2, "shellwrap": 2,
	// What a grant covers; what a person or a model reads about a call.
	"scope": 3, "present": 3,
	// The engine; the team backend.
	"hooks": 4, "backend/vault": 4,
	// Agents' contracts and files.
	"install": 5, "agents": 5, "agents/patch": 5, "agents/claude": 5, "agents/codex": 5, "agents/copilot": 5,
	"agents/cursor": 5, "agents/gemini": 5, "agents/qwen": 5, "agents/opencode": 5, "register": 5,
	"agents/all": 6,
	// Programs' mains and the console.
	"hookmain": 7, "console": 7,
	"cmd/loopguard": 8, "cmd/loopguard-hook": 8, "cmd/loopguard-exec": 8, "cmd/loopguard-confine": 8,
	// The CLI's verb families (gh's one folder per command) and what they
	// share with the root command.
	"cmd/loopguard/internal/cli": 8, "cmd/loopguard/internal/approve": 8, "cmd/loopguard/internal/doctor": 8,
	"cmd/loopguard/internal/review": 8, "cmd/loopguard/internal/team": 8, "cmd/loopguard/internal/initcmd": 8,
}

// tooling is the module's test and measurement code: it may import any
// package, and no product package imports it.
var tooling = []string{"bench", "e2e", "scenarios", "internal/scripttest", "internal/keyringtest", "internal/enginetest", "internal/testfs", "internal/seccomptest", "backend/vault/vaulttest", "internal/layout", "cmd/loopguard/internal/clitest"}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func list(t *testing.T, args ...string) []pkg {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-json"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		t.Fatal("go list found no packages")
	}
	return ps
}

func local(path string) (string, bool) {
	if path+"/" == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, module)
	return rel, ok
}

func isTooling(rel string) bool {
	for _, p := range tooling {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// TestFloors: no package imports one above its floor, and no product
// package imports test or measurement code. The control: the table places
// every product package (an unplaced one fails), so an empty listing
// cannot pass.
func TestFloors(t *testing.T) {
	placed := 0
	for _, p := range list(t, "github.com/loopguard/loopguard/...") {
		rel, _ := local(p.ImportPath)
		if isTooling(rel) {
			continue
		}
		floor, ok := floors[rel]
		if !ok {
			t.Errorf("%s is not placed on a floor (internal/layout)", rel)
			continue
		}
		placed++
		for _, imp := range p.Imports {
			r, ok := local(imp)
			if !ok {
				continue
			}
			if isTooling(r) {
				t.Errorf("%s imports %s, test or measurement code", rel, r)
				continue
			}
			if f, ok := floors[r]; ok && f > floor {
				t.Errorf("%s (floor %d) imports %s (floor %d)", rel, floor, r, f)
			}
		}
	}
	if placed < 20 {
		t.Errorf("only %d packages placed", placed)
	}
}

// TestOneReaderOfBash: only shellparse reads bash's syntax; every other
// package, tests included, asks shellparse.
// hostLineReader: package ticket reads the line Claude Code hands its
// shell prefix (the host's preamble and one eval of the ticketed command),
// not an agent's command; it parses it with mvdan's syntax and expand
// until shellparse offers that reading (shellparse was not to be edited
// when ticket landed).
var hostLineReader = map[string]bool{"mvdan.cc/sh/v3/syntax": true, "mvdan.cc/sh/v3/expand": true}

func TestOneReaderOfBash(t *testing.T) {
	readers := 0
	for _, p := range list(t, "github.com/loopguard/loopguard/...") {
		rel, _ := local(p.ImportPath)
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if !strings.HasPrefix(imp, "mvdan.cc/sh/") {
				continue
			}
			if rel == "ticket" && hostLineReader[imp] {
				continue
			}
			if rel != "shellparse" {
				t.Errorf("%s imports %s: ask shellparse", rel, imp)
			} else {
				readers++
			}
		}
	}
	if readers == 0 {
		t.Error("control: shellparse does not import mvdan.cc/sh (the module moved?)")
	}
}

// TestHookLinksNoInstaller: the hook-only binary reads its own command
// line (register) but links none of the code that edits settings and
// hook files (install): it starts on every tool call, and it has no
// business writing an agent's configuration. The control: it does link
// register and the agents' adapters, so an empty or wrong listing fails.
func TestHookLinksNoInstaller(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./../../cmd/loopguard-hook").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		if rel, ok := local(d); ok {
			deps[rel] = true
		}
	}
	for d := range deps {
		if d == "install" || strings.HasPrefix(d, "install/") {
			t.Errorf("loopguard-hook links %s", d)
		}
	}
	for _, want := range []string{"register", "hookmain", "agents/codex", "agents/all"} {
		if !deps[want] {
			t.Errorf("control: loopguard-hook does not link %s (go list -deps:\n%s)", want, out)
		}
	}
}
