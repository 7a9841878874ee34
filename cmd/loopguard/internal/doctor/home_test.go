package doctor

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/internal/testfs"
)

// TestDoctorJailHome: in a fake home with a git configuration and some
// secrets, doctor's line for each capability counts what the launcher's
// plan reads in the home (one more once a toolchain's configuration
// appears), writes nothing there but the project, and names the secrets
// present that it refuses; a secret absent from the home is not listed.
func TestDoctorJailHome(t *testing.T) {
	base := t.TempDir()
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	project := filepath.Join(home, "src", "proj")
	for _, d := range []string{home, tmp, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testfs.Tree(t, home, []byte("[user]\n\tname = u\n"), 0o644, ".gitconfig")
	testfs.Tree(t, project, []byte("package main\n"), 0o644, "main.go")
	// Secrets present: the keyring files (the guard's key), ssh's keys and
	// npm's token. Absent: the macOS keychains, GnuPG's keys.
	testfs.Tree(t, home, []byte("secret\n"), 0o600, ".local/share/keyrings/login.keyring", ".ssh/id_ed25519", ".npmrc")
	vars := map[string]string{"HOME": home, "TMPDIR": tmp, "PATH": "/usr/bin:/bin"}
	env := confine.LaunchEnv(func(k string) string { return vars[k] }, filepath.Join(base, "bin", "loopguard"), os.Getuid())
	pl := env.Places.Prepare()

	reads := regexp.MustCompile(`^reads (\d+) paths? in your home besides the project`)
	count := func(r checkResult) int {
		m := reads.FindStringSubmatch(r.detail)
		if m == nil {
			t.Fatalf("%s: %q has no count of reads", r.name, r.detail)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	lines := jailHome(env, project)
	for _, r := range lines {
		t.Logf("%s  %s: %s", r.status, r.name, r.detail)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one per capability: %+v", len(lines), lines)
	}
	before := map[string]int{}
	for i, c := range []string{"read-only", "project-write", "project-write+network:443"} {
		r := lines[i]
		if r.name != "jail "+c || r.status != statusOK {
			t.Errorf("line %d: %s %s: %s, want jail %s ok", i, r.status, r.name, r.detail, c)
			continue
		}
		before[c] = count(r)
		want := []string{"(git config", "refuses: ", "~/.local/share/keyrings", "(secret)"}
		if c == "read-only" {
			want = append(want, "writes nothing but a private temp")
		} else {
			want = append(want, "writes nothing there but the project and a private temp")
		}
		for _, s := range []string{".ssh", ".npmrc"} {
			// What the protected set calls secret here.
			if pl.Classify(filepath.Join(home, s)).Secret && (s != ".npmrc" || c != "project-write+network:443") {
				want = append(want, "~/"+s)
			}
		}
		for _, w := range want {
			if !strings.Contains(r.detail, w) {
				t.Errorf("%s: lacks %q: %s", r.name, w, r.detail)
			}
		}
		// Controls: absent secrets are not listed; the project is not
		// counted among the home's reads.
		for _, n := range []string{"Library/Keychains", ".gnupg", "src/proj"} {
			if strings.Contains(r.detail, n) {
				t.Errorf("%s: names %s: %s", r.name, n, r.detail)
			}
		}
		if before[c] < 1 {
			t.Errorf("%s: reads %d paths in the home, want ~/.gitconfig at least", c, before[c])
		}
	}
	// A toolchain's configuration appears: one more read, under its name.
	testfs.Tree(t, home, []byte("[build]\n"), 0o644, ".cargo/config.toml")
	for _, r := range jailHome(env, project) {
		c := strings.TrimPrefix(r.name, "jail ")
		if got := count(r); got != before[c]+1 || !strings.Contains(r.detail, "Rust") {
			t.Errorf("%s with ~/.cargo/config.toml: reads %d (before %d): %s", c, got, before[c], r.detail)
		}
	}
	// An include git reads, private by its mode (0600): the jail does not
	// read it, and git stops there; doctor warns, naming it and its mode.
	// The control is every line above: ok, nothing named.
	testfs.Tree(t, home, []byte("[user]\n\tname = u\n[include]\n\tpath = ~/.gitconfig.local\n"), 0o644, ".gitconfig")
	testfs.Tree(t, home, []byte("[user]\n\temail = u@work\n"), 0o600, ".gitconfig.local")
	for _, r := range jailHome(env, project) {
		if r.status != statusWarn || !strings.Contains(r.detail, "leaves unread, other users kept out by their mode: ~/.gitconfig.local 0600") || !strings.Contains(r.fix, "chmod o+r") {
			t.Errorf("%s with a private include: %s %s (%s)", r.name, r.status, r.detail, r.fix)
		}
	}
	// The search path holds the home itself and ~/.local: left unread
	// whole, and said; ~/.local/bin beside them is read (control).
	testfs.Tree(t, home, []byte("#!/bin/sh\n"), 0o755, ".local/bin/tool")
	vars["PATH"] = strings.Join([]string{filepath.Join(home, ".local/bin"), home, filepath.Join(home, ".local"), "/usr/bin:/bin"}, ":")
	for _, r := range jailHome(env, project) {
		if !strings.Contains(r.detail, "leaves unread: ~ (the home itself") || !strings.Contains(r.detail, "~/.local (a hidden directory") ||
			strings.Contains(r.detail, "~/.local/bin (") {
			t.Errorf("%s with the home and ~/.local on the search path: %s", r.name, r.detail)
		}
	}
	vars["PATH"] = "/usr/bin:/bin"
	// A project that holds the home is planned nowhere: skipped, saying so.
	for _, r := range jailHome(env, home) {
		if r.status != statusSkip || !strings.Contains(r.detail, "run doctor in a project directory") {
			t.Errorf("the home as the project: %s %s", r.status, r.detail)
		}
	}
}
