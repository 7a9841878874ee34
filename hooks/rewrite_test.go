package hooks

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/shellparse"
)

// rewriteHarness: the read-only preset minted, a launcher named, the
// project with ordinary files and a link to a key outside it.
func rewriteHarness(t *testing.T, launcher string, stubs ...string) (*harness, func(cmd string) Decision) {
	t.Helper()
	h := newHarness(t)
	h.stubs(append([]string{"head"}, stubs...)...)
	eng := h.eng
	h.eng = func() *Engine {
		e := eng()
		e.Env.Launcher = launcher
		return e
	}
	if n := h.mintPreset(); n < 4 {
		t.Fatalf("only %d preset rules pinned", n)
	}
	for f, body := range map[string]string{"README.md": "read me\n", "main.go": "package main\n"} {
		if err := os.WriteFile(filepath.Join(h.Project, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bash := h.fixture("pretooluse-bash.json")
	return h, func(cmd string) Decision {
		return h.decide(withInput(bash, "command", cmd))
	}
}

// plainHost is rewriteHarness's decision of a Bash call for a host that
// runs the model's own text (the call cannot carry a rewrite).
func plainHost(t *testing.T) func(cmd string) Decision {
	h, _ := rewriteHarness(t, "/opt/lg/loopguard-hook")
	bash := h.fixture("pretooluse-bash.json")
	return func(cmd string) Decision {
		c := h.call(withInput(bash, "command", cmd))
		c.Rewrite = false
		return h.eng().Decide(context.Background(), c)
	}
}

// TestScopedBashIsRewritten: an allowed scoped Bash call comes back as the
// canonical command, through the launcher when there is one, every other
// input field kept; an exact approval runs the approved text unchanged.
func TestScopedBashIsRewritten(t *testing.T) {
	launcher := "/opt/lg/loopguard-hook"
	h, run := rewriteHarness(t, launcher)
	git := filepath.Join(h.Bin, "git")
	d := run("git log -1 --format='%h %s'")
	expect(t, "git log", d, Allow, ReasonScopedGrant)
	want := "'" + launcher + "' 'exec' '--cap' 'read-only' '--project' '" + h.Project + "' '--cwd' '" + h.Project + "' '--' '" + git + "' 'git' 'log' '-1' '--format=%h %s'"
	if got, _ := d.UpdatedInput["command"].(string); got != want {
		t.Errorf("command:\n got %s\nwant %s", got, want)
	}
	if d.UpdatedInput["description"] == nil {
		t.Error("the other input fields were dropped")
	}
	if d.Capability != "read-only" {
		t.Errorf("capability %q", d.Capability)
	}
	// git -C DIR is judged where git goes, and runs as written: git
	// changes to DIR itself, the launcher's cwd is the call's.
	_ = os.MkdirAll(filepath.Join(h.Project, "sub"), 0o755)
	for cmd, words := range map[string]string{
		"git -C sub status --short": "'git' '-C' 'sub' 'status' '--short'",
		"git --no-pager stash list": "'git' '--no-pager' 'stash' 'list'",
	} {
		d := run(cmd)
		expect(t, cmd, d, Allow, ReasonScopedGrant)
		want := "'" + launcher + "' 'exec' '--cap' 'read-only' '--project' '" + h.Project + "' '--cwd' '" + h.Project + "' '--' '" + git + "' " + words
		if got, _ := d.UpdatedInput["command"].(string); got != want {
			t.Errorf("%s:\n got %s\nwant %s", cmd, got, want)
		}
	}
	// Without a launcher (no Landlock): canonical, unconfined.
	h2, run2 := rewriteHarness(t, "")
	d = run2("cat README.md main.go")
	expect(t, "cat", d, Allow, ReasonScopedGrant)
	if got := d.UpdatedInput["command"]; got != "'"+filepath.Join(h2.Bin, "cat")+"' 'README.md' 'main.go'" {
		t.Errorf("command %q", got)
	}
	if d.Capability != "" {
		t.Errorf("capability %q without a launcher", d.Capability)
	}
	// An exact approval: no rewrite.
	held := run2("echo hi > out.txt")
	expect(t, "echo > out.txt", held, Deny, ReasonNoGrant)
	h2.approve(held)
	d = run2("echo hi > out.txt")
	expect(t, "approved echo > out.txt", d, Allow, ReasonExactGrant)
	if d.UpdatedInput != nil {
		t.Errorf("an exact approval was rewritten: %v", d.UpdatedInput)
	}
}

// TestRewriteRunsWhatWasAnalysed: the globs of the attack run are judged
// file by file, and the canonical command passes exactly the files judged.
func TestRewriteRunsWhatWasAnalysed(t *testing.T) {
	h, run := rewriteHarness(t, "")
	cat := filepath.Join(h.Bin, "cat")
	d := run("cat *")
	expect(t, "cat * over ordinary files (control)", d, Allow, ReasonScopedGrant)
	if got := d.UpdatedInput["command"]; got != "'"+cat+"' 'README.md' 'main.go'" {
		t.Errorf("cat *: %q", got)
	}
	// A link in the project to a key outside it.
	home := h.eng().Env.Home
	key := filepath.Join(home, ".ssh", "id_rsa")
	_ = os.MkdirAll(filepath.Dir(key), 0o700)
	_ = os.WriteFile(key, []byte("KEY"), 0o600)
	_ = os.Symlink(key, filepath.Join(h.Project, "notes.txt"))
	_ = os.MkdirAll(filepath.Join(h.Project, "docs", "x"), 0o755)
	_ = os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(h.Project, "docs", "ssh"))
	for _, cmd := range []string{"cat *", "head n*", "grep -r x *", "cat docs/*/*", "cat ./n?tes.txt"} {
		if d := run(cmd); d.Behavior == Allow {
			t.Errorf("%s: allowed, runs %q", cmd, d.UpdatedInput["command"])
		}
	}
	for _, cmd := range []string{`cat $'\x{7e}\x{2f}.ssh\x{2f}id_rsa'`, `go vet $'\x{2d}toolexec=\x{2f}bin\x{2f}sh' ./...`} {
		expect(t, cmd, run(cmd), Deny, ReasonUnparseable)
	}
	expect(t, "cat README.md (control)", run("cat README.md"), Allow, ReasonScopedGrant)
	// A glob that matches nothing is passed as the literal it is: nothing
	// for bash to expand later, when a file to match could have appeared.
	d = run("ls .eslintrc* eslint.config.*")
	expect(t, "ls of globs that match nothing", d, Allow, ReasonScopedGrant)
	if got := d.UpdatedInput["command"]; got != "'"+filepath.Join(h.Bin, "ls")+"' '.eslintrc*' 'eslint.config.*'" {
		t.Errorf("ls .eslintrc*: %q", got)
	}
}

// TestNoRewriteNeedsPlainText: for a host that runs the model's own text,
// a scope covers a command only when its text is already canonical.
func TestNoRewriteNeedsPlainText(t *testing.T) {
	decide := plainHost(t)
	for _, cmd := range []string{"cat README.md", "cat 'README.md' \"main.go\"", "git log -1"} {
		d := decide(cmd)
		expect(t, cmd+" (plain)", d, Allow, ReasonScopedGrant)
		if d.UpdatedInput != nil {
			t.Errorf("%s: rewritten for a host that cannot", cmd)
		}
		if !strings.Contains(d.Message, "unconfined") {
			t.Errorf("%s: the answer does not say it runs unconfined on this host: %s", cmd, d.Message)
		}
	}
	// The control: where the host runs the rewrite, the answer says confined.
	_, run := rewriteHarness(t, "/opt/lg/loopguard-hook")
	if d := run("cat README.md"); d.Behavior != Allow || strings.Contains(d.Message, "unconfined") {
		t.Errorf("cat README.md with the rewrite: %s %s", d.Behavior, d.Message)
	}
	for _, cmd := range []string{"cat $'README.md'", "cat READ*", "cat README\\.md", "cat {README.md,main.go}", "cat ~/x"} {
		d := decide(cmd)
		if d.Behavior == Allow {
			t.Errorf("%s: allowed without a rewrite", cmd)
		}
		if d.Reason != ReasonNotCanonical && d.Reason != ReasonNoGrant {
			t.Errorf("%s: reason %s (%s)", cmd, d.Reason, d.Message)
		}
	}
	expect(t, "cat $'README.md'", decide("cat $'README.md'"), Deny, ReasonNotCanonical)
}

// TestPostToolUseChecksTheRewrite: what ran is compared with the rewritten
// command; the model's own text running instead is an alarm (another hook
// or a host that dropped the rewrite).
func TestPostToolUseChecksTheRewrite(t *testing.T) {
	h, run := rewriteHarness(t, "/opt/lg/loopguard-hook")
	d := run("git status")
	expect(t, "git status", d, Allow, ReasonScopedGrant)
	post := h.fixture("posttooluse-bash.json")
	id := post["tool_use_id"]
	pre := h.fixture("pretooluse-bash.json")
	if pre["tool_use_id"] != id {
		t.Fatalf("fixtures disagree on tool_use_id")
	}
	ran := with(post, func(m map[string]any) { m["tool_input"] = clone(d.UpdatedInput) })
	expect(t, "the rewritten command ran", h.decide(ran), Abstain, ReasonRan)

	// A chain with a cd: PostToolUse reports the cwd the shell ended in.
	sub := filepath.Join(h.Project, "sub")
	_ = os.MkdirAll(sub, 0o755)
	d = run("cd sub && git status")
	expect(t, "cd sub && git status", d, Allow, ReasonScopedGrant)
	ran = with(post, func(m map[string]any) { m["tool_input"] = clone(d.UpdatedInput); m["cwd"] = sub })
	expect(t, "the rewritten chain ran and moved the shell", h.decide(ran), Abstain, ReasonRan)

	d = run("git status")
	ran = withInput(post, "command", "git status")
	got := h.decide(ran)
	expect(t, "the model's text ran instead", got, Alarm, ReasonInputChanged)
	if !strings.Contains(got.SystemMessage, "ALARM") {
		t.Errorf("system message %q", got.SystemMessage)
	}
}

// TestCanonicalIsOneWord: whatever the words, each is one single-quoted
// bash word (shellparse's oracle runs them through bash).
func TestCanonicalIsOneWord(t *testing.T) {
	for _, w := range []string{"a b", "it's", `\`, "$(id)", "`id`", "\n", "*", "-rf", "'", "''", "é"} {
		q := shellparse.Quote(w)
		if !strings.HasPrefix(q, "'") || !strings.HasSuffix(q, "'") {
			t.Errorf("%q quoted as %q", w, q)
		}
	}
}

// TestDescriptionIsNotTheCall: a retry that words Bash's description anew
// is the call the human approved; a retry with another command is not,
// and the model is shown what differs.
func TestDescriptionIsNotTheCall(t *testing.T) {
	h, _ := rewriteHarness(t, "")
	bash := h.fixture("pretooluse-bash.json")
	call := func(cmd, desc string) Decision {
		return h.decide(with(bash, func(m map[string]any) {
			input(m)["command"] = cmd
			input(m)["description"] = desc
		}))
	}
	held := call("echo hi > out.txt", "Write a greeting")
	expect(t, "held", held, Deny, ReasonNoGrant)
	p, err := h.Store.GetPending(held.Pending)
	if err != nil || p.Shown["description"] != "Write a greeting" {
		t.Fatalf("the description is not shown apart: %+v %v", p, err)
	}
	if strings.Contains(string(p.Descriptor), "Write a greeting") {
		t.Error("the description is part of the digested descriptor")
	}
	h.approve(held)
	other := call("echo bye > out.txt", "Write a greeting")
	expect(t, "another command", other, Deny, ReasonCallChanged)
	if !strings.Contains(other.Message, "What differs:") || !strings.Contains(other.Message, "-") || !strings.Contains(other.Message, "bye") {
		t.Errorf("no diff in the reason: %s", other.Message)
	}
	expect(t, "the description reworded", call("echo hi > out.txt", "Greet, in a file"), Allow, ReasonExactGrant)
}

// TestConfinedPresetReadsPatterns: a preset rule judges every word it
// absorbs as a path in the project; a word that names nothing on disk (sed's
// /func/p, grep's /api/) is refused when the call would run unconfined, and
// covered when the kernel confines the read to the project anyway. A word
// that names something outside the project stays refused either way.
func TestConfinedPresetReadsPatterns(t *testing.T) {
	for _, launcher := range []string{"/opt/lg/loopguard-exec", ""} {
		_, run := rewriteHarness(t, launcher, "sed", "grep")
		want, reason := Allow, ReasonScopedGrant
		if launcher == "" {
			want, reason = Deny, ReasonNoGrant
		}
		expect(t, "sed -n /func/p, launcher "+launcher, run("sed -n '/func/p' main.go"), want, reason)
		expect(t, "grep -n /api/, launcher "+launcher, run("grep -n /api/ main.go"), want, reason)
		expect(t, "sed -n 1p /etc/hostname, launcher "+launcher, run("sed -n 1p /etc/hostname"), Deny, ReasonNoGrant)
	}
}

// TestLaunchWritesNothing: the hook answers a scoped launch, read-only or
// writing, with the launcher's command line alone (loopguard-exec computes
// the plan when the call runs) and leaves nothing for it in the state
// directory: the files there after the allows are the ones the same
// calls leave unconfined (control: the same calls with no launcher), the
// audit log and the grants' records, never a plan.
func TestLaunchWritesNothing(t *testing.T) {
	files := func(launcher string) ([]string, []string) {
		h, run := rewriteHarness(t, launcher, "go")
		h.grantScope("Bash(go test ./...)", "*", "main")
		var cmds []string
		for _, c := range []string{"git log -1", "go test ./..."} {
			d := run(c)
			expect(t, c+", launcher "+launcher, d, Allow, ReasonScopedGrant)
			got, _ := d.UpdatedInput["command"].(string)
			cmds = append(cmds, got)
		}
		dir := h.eng().Env.StateDir
		var names []string
		_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			if rel, _ := filepath.Rel(dir, p); err == nil {
				// Grants, pending calls and notes are named by ids that
				// differ from run to run: their directory is what counts.
				names = append(names, filepath.Dir(rel))
			}
			return nil
		})
		return slices.Compact(slices.Sorted(slices.Values(names))), cmds
	}
	launcher := "/opt/lg/loopguard-exec"
	confined, cmds := files(launcher)
	for i, want := range []string{"read-only", "project-write"} {
		if !strings.HasPrefix(cmds[i], "'"+launcher+"' 'exec' '--cap' '"+want+"' ") {
			t.Errorf("the %s launch is not the launcher's alone: %s", want, cmds[i])
		}
	}
	if plain, _ := files(""); !slices.Equal(confined, plain) {
		t.Errorf("the state directory after confined launches holds %q; after the same calls unconfined, %q", confined, plain)
	}
}

// TestPinQuote: the pinned command is one word, read back as the same
// bytes by sh (dash here) and bash.
func TestPinQuote(t *testing.T) {
	for _, sh := range []string{"sh", "bash"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		for _, s := range []string{"", "a", "'", `\`, `\\'`, "a'b\\c\n$x `id` \"q\" \\\n#", ": $'\\'\nid > pwned.txt\n#'"} {
			out, err := exec.Command(path, "-c", `printf '%s' `+pinQuote(s)).Output()
			if err != nil || string(out) != s {
				t.Errorf("%s reads %s as %q (%v), want %q", sh, pinQuote(s), out, err, s)
			}
		}
	}
}
