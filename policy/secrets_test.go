package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every secret says what it is, why it is secret and the document that
// says so; paths are clean, relative to the home, listed once, and a
// variable that moves one moves the directory its path starts with.
func TestHomeSecretsDocumented(t *testing.T) {
	list := HomeSecrets()
	if len(list) < 40 {
		t.Fatalf("only %d secrets", len(list))
	}
	seen := map[string]bool{}
	prefix := map[string]string{"": "", "XDG_CONFIG_HOME": ".config/", "CODEX_HOME": ".codex/", "CLAUDE_CONFIG_DIR": ".claude/"}
	for _, s := range list {
		if s.What == "" || s.Why == "" || s.Doc == "" {
			t.Errorf("%s: no description, reason or document", s.Path)
		}
		if s.Path == "" || strings.HasPrefix(s.Path, "/") || filepath.ToSlash(filepath.Clean(s.Path)) != s.Path {
			t.Errorf("%q is not a clean relative path", s.Path)
		}
		if seen[s.Path] {
			t.Errorf("%s listed twice", s.Path)
		}
		seen[s.Path] = true
		if p, ok := prefix[s.Moves]; !ok || !strings.HasPrefix(s.Path, p) {
			t.Errorf("%s: Moves %q does not move it", s.Path, s.Moves)
		}
	}
	list[0].Path = "x"
	if HomeSecrets()[0].Path == "x" {
		t.Error("HomeSecrets returns the policy itself")
	}
}

// Each secret, and what is inside it, is guard-critical and secret under
// the home (every row, not a sample); a search of the home or of the
// directory that holds it reaches it; the same name in a project is not a
// secret; and the directory that holds it stays usable (ls ~/.kube).
func TestHomeSecretsClassified(t *testing.T) {
	pl := Places{Home: "/home/u"}.Prepare()
	for _, s := range HomeSecrets() {
		at := "/home/u/" + s.Path
		for _, p := range []string{at, at + "/inner"} {
			if got := pl.Classify(p); got.Tier != GuardCritical || !got.Secret {
				t.Errorf("Classify(%s) = %+v, want a guard-critical secret (%s)", p, got, s.What)
			}
		}
		if _, ok := pl.ContainsSecret(filepath.Dir(at)); !ok {
			t.Errorf("ContainsSecret(%s) = false, want it to reach %s", filepath.Dir(at), s.Path)
		}
		if got := pl.Classify("/p/" + s.Path); got.Secret {
			t.Errorf("Classify(/p/%s) = %+v: a project's file is not the home's secret", s.Path, got)
		}
	}
	if _, ok := pl.ContainsSecret("/home/u"); !ok {
		t.Error("a search of the home does not reach its secrets")
	}
	// Controls: the home itself (ls ~), the directories that hold a
	// secret, and their other files.
	for _, p := range []string{"/home/u", "/home/u/notes.txt", "/home/u/.kube", "/home/u/.kube/cache/x", "/home/u/.cargo",
		"/home/u/.cargo/bin/cargo", "/home/u/.docker/contexts", "/home/u/.m2/repository/x.jar", "/home/u/.gitignore_global",
		"/home/u/.bash_history_notes", "/home/u/snap/other"} {
		if got := pl.Classify(p); got.Secret || got.Tier == GuardCritical {
			t.Errorf("control: Classify(%s) = %+v", p, got)
		}
	}
	for _, p := range []string{"/home/u/proj", "/home/u/.cargo/bin", "/home/u/.m2/repository", "/home/u/go/pkg/mod"} {
		if g, ok := pl.ContainsSecret(p); ok {
			t.Errorf("control: ContainsSecret(%s) = %+v", p, g)
		}
	}
	// A read rule that reaches one is refused like one that reaches the
	// guard's state: the roots say so.
	found := false
	for _, r := range pl.Roots() {
		if r.Path == "/home/u/.netrc" && r.Secret {
			found = true
		}
	}
	if !found {
		t.Error("Roots does not hold ~/.netrc as a secret")
	}
}

// A variable that moves a tool's files moves its secret: $XDG_CONFIG_HOME
// (gh, git's credential store, Chrome), $CODEX_HOME, $CLAUDE_CONFIG_DIR.
// The place under the home stays secret; without the variable the moved
// place is ordinary (the control).
func TestHomeSecretsMoved(t *testing.T) {
	pl := Places{Home: "/home/u", XDGConfigHome: "/x/conf", CodexHome: "/x/codex", ClaudeConfigDir: "/x/claude"}.Prepare()
	moved := []string{"/x/conf/gh/hosts.yml", "/x/conf/git/credentials", "/x/conf/google-chrome/Default/Login Data",
		"/x/codex/auth.json", "/x/claude/.credentials.json", "/x/claude/.claude.json", "/home/u/.config/gh/hosts.yml", "/home/u/.codex/auth.json"}
	for _, p := range moved {
		if got := pl.Classify(p); got.Tier != GuardCritical || !got.Secret {
			t.Errorf("Classify(%s) = %+v, want a secret", p, got)
		}
	}
	plain := Places{Home: "/home/u"}.Prepare()
	for _, p := range moved[:5] {
		if got := plain.Classify(p); got.Secret {
			t.Errorf("control: without the variables Classify(%s) = %+v", p, got)
		}
	}
	if got := pl.Classify("/x/conf/gh/config.yml"); got.Protected() {
		t.Errorf("control: gh's config.yml = %+v", got)
	}
}

// Secret wins over executable configuration: ~/.ssh/config and ~/.npmrc
// are both, and reading them is denied. The same names in a project stay
// executable configuration, readable.
func TestSecretOverExecConfig(t *testing.T) {
	pl := Places{Home: "/home/u"}.Prepare()
	for _, p := range []string{"/home/u/.ssh/config", "/home/u/.ssh/id_ed25519", "/home/u/.npmrc"} {
		if got := pl.Classify(p); got.Tier != GuardCritical || !got.Secret {
			t.Errorf("Classify(%s) = %+v", p, got)
		}
	}
	if got := pl.Classify("/p/.npmrc"); got.Tier != ExecConfig || got.Secret {
		t.Errorf("Classify(/p/.npmrc) = %+v, want executable configuration, readable", got)
	}
	if got := pl.Classify("/p/CLAUDE.md"); got.Tier != ExecConfig || got.Secret {
		t.Errorf("Classify(/p/CLAUDE.md) = %+v, want executable configuration, readable", got)
	}
}

// TestHomeSecretsRun93: the ninety-third attack run's secrets that were
// on no list (a database's password file, rclone's and s3cmd's keys,
// podman's registry login, sops's age keys, the Hugging Face token,
// glab's token) are secrets, moved by $XDG_CONFIG_HOME where their tool
// follows it. Controls: the model cache beside the Hugging Face token,
// rclone's other files, and a project's own .pgpass stay readable.
func TestHomeSecretsRun93(t *testing.T) {
	pl := Places{Home: "/home/u", XDGConfigHome: "/x/conf"}.Prepare()
	for _, p := range []string{"/home/u/.pgpass", "/home/u/.my.cnf", "/home/u/.s3cfg", "/home/u/.config/rclone/rclone.conf",
		"/x/conf/rclone/rclone.conf", "/home/u/.config/containers/auth.json", "/x/conf/containers/auth.json",
		"/home/u/.config/sops/age/keys.txt", "/x/conf/sops/age/keys.txt", "/home/u/.cache/huggingface/token",
		"/home/u/.cache/huggingface/stored_tokens", "/home/u/.huggingface/token", "/home/u/.config/glab-cli/config.yml",
		"/x/conf/glab-cli/config.yml"} {
		if got := pl.Classify(p); got.Tier != GuardCritical || !got.Secret {
			t.Errorf("Classify(%s) = %+v, want a secret", p, got)
		}
	}
	for _, p := range []string{"/home/u/.cache/huggingface/hub/models--x/config.json", "/home/u/.config/rclone/filters.txt",
		"/home/u/.config/containers/registries.conf", "/p/.pgpass", "/p/.s3cfg"} {
		if got := pl.Classify(p); got.Secret {
			t.Errorf("control: Classify(%s) = %+v", p, got)
		}
	}
}
