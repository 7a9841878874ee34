package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// TestGlobProtectionCoversWhatBashExpands holds GlobProtection to real
// bash: for each pattern, bash expands it in a home and a project that
// hold protected names, and every protected path it expands to must make
// the pattern at least as protected. Patterns bash expands to nothing
// protected are the controls: GlobProtection must leave them ordinary, so
// a GlobProtection that protects everything fails too.
func TestGlobProtectionCoversWhatBashExpands(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	testfs.Tree(t, root, nil, 0o644,
		"home/.ssh/id_rsa", "home/.bashrc", "home/.claude/settings.json", "home/.claude/skills/x",
		"home/.local/state/loopguard/k", "home/notes.txt",
		"proj/.git/config", "proj/.envrc", "proj/.npmrc", "proj/main.go", "proj/src/x.go",
	)
	pl := Places{Home: home}
	for _, c := range []struct {
		pat     string
		control bool // bash expands it to nothing protected
	}{
		{"~/.[!S]sh/id_rsa", false}, // [!S] matches s on a file system that tells case apart
		{"~/.[!X]laude/settings.json", false},
		{"~/.[!C]laude/settings.json", false},
		{"~/.[[:lower:]]sh/*", false},
		{"~/.[a-z]ashrc", false},
		{"~/.?ashrc", false},
		{"~/.l*/st*/l*/k", false},
		{"~/.*/settings.json", false},
		{"@/.[!G]it/config", false},
		{"@/.[e]nvrc", false},
		{"@/.n?mrc", false},
		{"~/.[!s]sh/id_rsa", true},
		{"~/*.txt", true},
		{"~/n[!x]*", true},
		{"@/*.go", true},
		{"@/*/x.go", true},
		{"@/[ms]*", true},
	} {
		pat := strings.NewReplacer("~", home, "@", proj).Replace(c.pat)
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `shopt -s nullglob; for f in $P; do printf '%s\n' "$f"; done`)
		cmd.Env = append(os.Environ(), "P="+pat)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		var strongest Protection
		for _, f := range strings.Fields(string(out)) {
			strongest = strongest.max(pl.Classify(f))
		}
		if c.control == strongest.Protected() {
			t.Fatalf("%s: the fixture is wrong: bash expands it to %q", c.pat, out)
		}
		got := pl.GlobProtection(pat)
		if got.Tier < strongest.Tier || strongest.Secret && !got.Secret {
			t.Errorf("%s: bash expands it to %s (%s), GlobProtection says %v (%s)", c.pat, strings.TrimSpace(string(out)), strongest.What, got.Tier, got.What)
		}
		if c.control && got.Protected() {
			t.Errorf("control %s: bash expands it to %q, GlobProtection says %v (%s)", c.pat, out, got.Tier, got.What)
		}
	}
}
