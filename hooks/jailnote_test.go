package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/token"
)

// TestJailNote: the once-per-session note is short, names the capability
// and says what it withholds, exactly per capability.
func TestJailNote(t *testing.T) {
	for _, c := range []struct {
		cap       policy.Capability
		want, not []string
	}{
		{policy.Capability{}, []string{"(read-only)", "writes only $TMPDIR", "no network", "no Unix socket", "/dev/tty", "exact approval"}, []string{"writes the project"}},
		{policy.Capability{Network: true}, []string{"(read-only+network:443)", "; network;"}, []string{"no network"}},
		{policy.Capability{Write: true}, []string{"(project-write)", "writes the project and $TMPDIR", "never executable configuration (.git, .claude", "no network"}, []string{", .git and"}},
		{policy.Capability{Write: true, Git: true}, []string{"(project-write+git)", "writes the project, .git and $TMPDIR", "no other executable configuration (.claude"}, []string{".git, .claude"}},
		{policy.Capability{Write: true, Git: true, Network: true}, []string{"(project-write+git+network:443)", "; network;"}, []string{"no network"}},
	} {
		got := jailNote(c.cap)
		wantText(t, c.cap.String(), got, c.want, c.not)
		if len(got) > 250 {
			t.Errorf("%s: %d characters, want at most 250: %s", c.cap, len(got), got)
		}
	}
}

// confinedHarness is rewriteHarness with a launcher (the calls run
// confined) and a way to decide a call of another session or agent, and
// its PostToolUse with an output.
func confinedHarness(t *testing.T) (h *harness, pre func(cmd, session, agent string) Decision, post func(d Decision, session, event, output string) Decision) {
	h, _ = rewriteHarness(t, "/opt/lg/loopguard-hook")
	// git status for every agent of every session (the preset is the
	// main agent's).
	h.grantScope("Bash(git status)", token.Any, token.Any)
	bash := h.fixture("pretooluse-bash.json")
	pre = func(cmd, session, agent string) Decision {
		c := h.call(withInput(bash, "command", cmd))
		c.SessionID, c.AgentID = session, agent
		return h.eng().Decide(context.Background(), c)
	}
	after := h.fixture("posttooluse-bash.json")
	post = func(d Decision, session, event, output string) Decision {
		c := h.call(with(after, func(m map[string]any) { m["tool_input"] = clone(d.UpdatedInput) }))
		c.SessionID, c.Event, c.Output = session, event, output
		return h.eng().Decide(context.Background(), c)
	}
	return h, pre, post
}

// TestJailToldOncePerSession: the first confined call of a session's agent
// carries the jail's note, the next none; another session, or a subagent,
// is told again; a lost marker tells again.
func TestJailToldOncePerSession(t *testing.T) {
	h, pre, _ := confinedHarness(t)
	d := pre("git status", "s1", "")
	expect(t, "first", d, Allow, ReasonScopedGrant)
	if d.Context != jailNote(policy.Capability{}) {
		t.Errorf("first confined call of s1: context %q, want the jail's note", d.Context)
	}
	for _, cmd := range []string{"git status", "ls", "git log -1"} {
		if d := pre(cmd, "s1", ""); d.Behavior != Allow || d.Context != "" {
			t.Errorf("%s, again in s1: %s, context %q, want none", cmd, d.Behavior, d.Context)
		}
	}
	if d := pre("git status", "s2", ""); d.Context != jailNote(policy.Capability{}) {
		t.Errorf("first call of s2: context %q, want the note", d.Context)
	}
	if d := pre("git status", "s1", "sub1"); d.Context != jailNote(policy.Capability{}) {
		t.Errorf("first call of a subagent in s1: context %q, want the note", d.Context)
	}
	// The marker gone (pruned with the other notes, unreadable): told
	// again, never an error.
	if err := os.RemoveAll(filepath.Join(h.Store.Dir, "allowed")); err != nil {
		t.Fatal(err)
	}
	if d := pre("git status", "s1", ""); d.Behavior != Allow || d.Context == "" {
		t.Errorf("s1 with its marker gone: %s, context %q", d.Behavior, d.Context)
	}
	// A call that runs unconfined (no launcher: no Landlock) tells
	// nothing, and does not use up the session's note.
	h2, run2 := rewriteHarness(t, "")
	if d := run2("git status"); d.Behavior != Allow || d.Context != "" {
		t.Errorf("unconfined: %s, context %q", d.Behavior, d.Context)
	}
	if h2.Store.Told(h2.call(h2.bashCall("ls")).SessionID, token.MainAgent, toldJail) {
		t.Error("an unconfined call marked the session told")
	}
}

// TestRefusalToldAfterTheCall: after a confined call whose result shows a
// refusal by the jail, the model gets one line naming the right; a call
// that succeeded, or ran unconfined, gets none.
func TestRefusalToldAfterTheCall(t *testing.T) {
	_, pre, post := confinedHarness(t)
	d := pre("cat README.md", "s1", "")
	got := post(d, "s1", PostToolUseFailure, "Exit code 1\ncat: /home/u/.ssh/id_rsa: Permission denied")
	expect(t, "refused", got, Abstain, ReasonRan)
	if want := strings.Replace(readOnlyNote, "CAP", "read-only", 1); got.Context != want {
		t.Errorf("refused read: context %q, want %q", got.Context, want)
	}
	if Told(got) != got.Context {
		t.Errorf("the audit's told %q", Told(got))
	}
	// Control: the same call, succeeding.
	d = pre("cat README.md", "s1", "")
	if got := post(d, "s1", PostToolUse, "read me\n"); got.Reason != ReasonRan || got.Context != "" {
		t.Errorf("a call that succeeded: %s, context %q", got.Reason, got.Context)
	}
	// The network, refused to a read-only call.
	d = pre("git status", "s1", "")
	got = post(d, "s1", PostToolUseFailure, "fatal: unable to access 'https://example.com/': Could not resolve host: example.com\nconnect: Permission denied")
	wantText(t, "network", got.Context, []string{"(read-only) has no network", "+network", "loopguard approve"}, nil)
	// Unconfined: the output is not read.
	h2, run2 := rewriteHarness(t, "")
	d = run2("cat README.md")
	c := h2.call(with(h2.fixture("posttooluse-bash.json"), func(m map[string]any) { m["tool_input"] = clone(d.UpdatedInput) }))
	c.Output = "cat: x: Permission denied"
	if got := h2.eng().Decide(context.Background(), c); got.Reason != ReasonRan || got.Context != "" {
		t.Errorf("unconfined, refused: %s, context %q", got.Reason, got.Context)
	}
}

// TestJailRefusalNote: which right a refusal names, by what the output says
// and the capability the call had.
func TestJailRefusalNote(t *testing.T) {
	project := "/home/u/proj"
	site := jailSite{places: policy.Places{Home: "/home/u"}.Prepare(), project: project, cwd: project + "/src", home: "/home/u"}
	ro, rw, git, net := policy.Capability{}, policy.Capability{Write: true}, policy.Capability{Write: true, Git: true}, policy.Capability{Write: true, Network: true}
	for _, c := range []struct {
		name string
		cap  policy.Capability
		out  string
		want string // the note, before CAP is filled in; "" for none
	}{
		{"no refusal", rw, "ok\nPASS\n", ""},
		{"an unrelated failure", rw, "main.go:3: undefined: x\nFAIL", ""},
		{"launcher", rw, "loopguard: the program was not run: no Landlock", notRunNote},
		{"docker socket", net, "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock", unixNote},
		{"ssh-agent", rw, "Error connecting to agent: Permission denied (SSH_AUTH_SOCK)", unixNote},
		{"chmod", rw, "chmod: changing permissions of 'build/app': Operation not permitted", attrNote},
		{"touch -d", rw, "touch: setting times of 'x': Permission denied", attrNote},
		{"network", rw, "dial tcp 1.2.3.4:443: connect: permission denied", networkNote},
		{"unreachable", ro, "curl: (7) Failed to connect: Network is unreachable", networkNote},
		{"no name resolution (own network)", rw, "curl: (6) Could not resolve host: example.com", networkNote},
		{"no name resolution, node", rw, "Error: getaddrinfo EAI_AGAIN registry.npmjs.org", networkNote},
		{"no name resolution, python", rw, "socket.gaierror: [Errno -3] Temporary failure in name resolution", networkNote},
		{"the machine's localhost", rw, "curl: (7) Failed to connect to 127.0.0.1 port 5000 after 0 ms: Couldn't connect to server", loopbackNote},
		{"the machine's localhost, node", rw, "Error: connect ECONNREFUSED 127.0.0.1:3000", loopbackNote},
		{"the machine's localhost, granted the network", net, "curl: (7) Failed to connect to localhost port 5000: Connection refused", ""},
		{"network granted: by the path", net, "open /etc/hosts.new: permission denied", outsideNote},
		{"+network:443, another port", net, "dial tcp 10.0.0.5:5432: connect: permission denied", portsNote},
		{"+network:443, a listener", net, "Error: listen EACCES: permission denied 0.0.0.0:3000", portsNote},
		{"+network granted before ports were named: any port", policy.Capability{Write: true, Network: true, AnyPort: true}, "dial tcp 10.0.0.5:5432: connect: permission denied", outsideNote},
		{"shared temp", rw, "touch: cannot touch '/tmp/x': Permission denied", tempNote},
		{"shared temp, node", ro, "Error: EACCES: permission denied, open '/var/tmp/cache.json'", tempNote},
		{"git config", rw, "error: could not lock config file .git/config: Permission denied", configNote},
		{"git's index, without +git", rw, "fatal: Unable to create '/home/u/proj/.git/index.lock': Read-only file system", gitNote},
		{"a submodule's hooks, without +git", rw, "touch: cannot touch '/home/u/proj/.git/modules/lib/hooks/x': Read-only file system", configNote},
		{"git dir, +git", git, "error: could not lock config file /home/u/proj/.git/config: Permission denied", ""},
		{"claude settings, +git", git, "cp: cannot create regular file '../.claude/settings.json': Read-only file system", configNote},
		{"envrc below", rw, "bash: line 1: /home/u/proj/src/.envrc: Read-only file system", configNote},
		{"new top-level file", rw, "touch: cannot touch '../NEW.md': Permission denied", topNote},
		{"outside the project", rw, "mkdir: cannot create directory ‘/home/u/other’: Permission denied", outsideNote},
		{"a secret outside", rw, "cat: /home/u/.ssh/id_rsa: Permission denied", outsideNote},
		{"read-only writes the project", ro, "sed: couldn't open temporary file ./sedX: Permission denied", readOnlyNote},
		{"program path first", rw, "/usr/bin/touch: cannot touch '/tmp/y': Permission denied", tempNote},
		{"no path", rw, "bash: x: Permission denied", outsideNote},
		{"python", ro, "PermissionError: [Errno 13] Permission denied: 'out.txt'", readOnlyNote},
	} {
		got := refusalNote(c.cap, c.out, site)
		want := strings.Replace(c.want, "CAP", c.cap.String(), 1)
		if c.name == "git dir, +git" {
			// +git writes .git: the refusal is not the configuration's, and
			// the line falls back to the capability's.
			want = strings.Replace(outsideNote, "CAP", c.cap.String(), 1)
		}
		if got != want {
			t.Errorf("%s (%s): %q\n got %q\nwant %q", c.name, c.cap, c.out, got, want)
		}
	}
}

// TestJailRefusalNoteUnderTheJailGrant: a call the jail grant ran is
// jailed again when retried as it is; its refusal line says how to leave
// the jail (the flag Claude Code sends for a call outside its sandbox,
// which loopguard holds for the human's exact approval), never to widen
// the jail by a grant. Control: the same refusal under project-write
// keeps its own line.
func TestJailRefusalNoteUnderTheJailGrant(t *testing.T) {
	project := "/home/u/proj"
	site := jailSite{places: policy.Places{Home: "/home/u"}.Prepare(), project: project, cwd: project, home: "/home/u", escape: EscapeClaude}
	codex, none := site, site
	codex.escape, none.escape = EscapeCodex, ""
	for _, out := range []string{
		"dial tcp 1.2.3.4:443: connect: permission denied",
		"mkdir: cannot create directory ‘/home/u/other’: Permission denied",
		"error: could not lock config file .git/config: Permission denied",
	} {
		got := refusalNote(policy.JailCapability, out, site)
		wantText(t, out, got, []string{"(jail)", "dangerouslyDisableSandbox: true"}, []string{"loopguard grant", "unconfined"})
		if ctl := refusalNote(policy.Capability{Write: true}, out, site); strings.Contains(ctl, "dangerouslyDisableSandbox") || ctl == "" {
			t.Errorf("%s: project-write's line %q", out, ctl)
		}
		// Codex's own request; a host without one: the user runs it.
		wantText(t, out, refusalNote(policy.JailCapability, out, codex), []string{"(jail)", `sandbox_permissions: "require_escalated"`}, []string{"dangerouslyDisableSandbox", "loopguard grant"})
		wantText(t, out, refusalNote(policy.JailCapability, out, none), []string{"(jail)", "ask the user to run it themselves"}, []string{"dangerouslyDisableSandbox", "sandbox_permissions", "loopguard grant"})
	}
}

// TestJailRefusalNoteForALink: under the jail a refused link (ln, Node,
// python -m venv's lib64) gets the line that says the jail makes none and
// how to leave it. The control: the same refusal under an approved
// project-write capability, which makes links, falls back to its own.
func TestJailRefusalNoteForALink(t *testing.T) {
	project := "/home/u/proj"
	site := jailSite{places: policy.Places{Home: "/home/u"}.Prepare(), project: project, cwd: project, home: "/home/u", escape: EscapeClaude}
	for _, out := range []string{
		"ln: failed to create symbolic link 'lnk': Permission denied",
		"Error: EACCES: permission denied, symlink '/etc' -> 'x'",
		"Error: [Errno 13] Permission denied: 'lib' -> '/home/u/proj/.venv/lib64'",
	} {
		got := refusalNote(policy.JailCapability, out, site)
		if !strings.Contains(got, "makes no symbolic link") || !strings.Contains(got, "dangerouslyDisableSandbox") {
			t.Errorf("%q under the jail: %q", out, got)
		}
		if ctl := refusalNote(policy.Capability{Write: true}, out, site); strings.Contains(ctl, "symbolic link") {
			t.Errorf("%q under project-write (control): %q", out, ctl)
		}
	}
}

// TestJailRefusalNotePrivate: a refused read of a file of the home whose
// mode keeps other users out (or a directory's on the way) is named, with
// that mode: git says its ~/.gitconfig has a bad line when it is the
// include it could not read (the usability run after the thirty-first
// attack run). Controls: a file open to others (refused as not on the
// jail's list) and the same path under a mode the jail would read keep
// the capability's line.
func TestJailRefusalNotePrivate(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, mode := range map[string]os.FileMode{".gitconfig.local": 0o600, ".config/git/ignore": 0o644, "notes.txt": 0o644} {
		if err := os.WriteFile(filepath.Join(home, f), []byte("x\n"), mode); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(filepath.Join(home, f), mode)
	}
	site := jailSite{places: policy.Places{Home: home}.Prepare(), project: project, cwd: project, home: home}
	ro := policy.Capability{}
	include := "warning: unable to access '" + home + "/.gitconfig.local': Permission denied\nfatal: bad config line 5 in file " + home + "/.gitconfig\n"
	wantText(t, "private include", refusalNote(ro, include, site), []string{"(read-only)", home + "/.gitconfig.local is mode 0600", "chmod o+r", "loopguard approve"}, nil)
	// A private directory on the way (~/.config is a container; git below
	// it is not).
	if err := os.Chmod(filepath.Join(home, ".config", "git"), 0o700); err != nil {
		t.Fatal(err)
	}
	ignore := "fatal: cannot use " + home + "/.config/git/ignore as an exclude file\nwarning: unable to access '" + home + "/.config/git/ignore': Permission denied\n"
	wantText(t, "private directory", refusalNote(ro, ignore, site), []string{home + "/.config/git is mode 0700"}, nil)
	// Controls.
	if got := refusalNote(ro, "cat: "+home+"/notes.txt: Permission denied", site); strings.Contains(got, "mode 0") || got == "" {
		t.Errorf("a file open to others: %q", got)
	}
	if err := os.Chmod(filepath.Join(home, ".gitconfig.local"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := refusalNote(ro, include, site); strings.Contains(got, "mode 0") {
		t.Errorf("the include open to others: %q", got)
	}
}

// TestJailRefusalNoteKeepsCase: a refusal's path is judged as it is
// written: the lines were lower-cased whole, and a project in ~/MyProject
// was taken for a path outside it. Control: the marks still match in any
// case.
func TestJailRefusalNoteKeepsCase(t *testing.T) {
	project := "/home/u/MyProject"
	site := jailSite{places: policy.Places{Home: "/home/u"}.Prepare(), project: project, cwd: project, home: "/home/u"}
	rw := policy.Capability{Write: true}
	for out, want := range map[string]string{
		"bash: line 1: /home/u/MyProject/src/.envrc: Read-only file system": configNote,
		"touch: cannot touch '/home/u/MyProject/NEW.md': PERMISSION DENIED": topNote,
	} {
		if got := refusalNote(rw, out, site); got != strings.Replace(want, "CAP", rw.String(), 1) {
			t.Errorf("%q: %q", out, got)
		}
	}
}
