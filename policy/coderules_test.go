package policy

import (
	"math/rand"
	"regexp"
	"testing"
)

// versionedName matches by hand what this regexp matches (a regexp
// compiled on every hook call cost more than the match).
var versionedNameRe = regexp.MustCompile(`^([a-z]+?)[0-9][0-9.]*[a-z]{0,2}(-dbg)?$`)

func TestVersionedNameMatchesRegexp(t *testing.T) {
	in := []string{"", "python", "python3", "python3.12", "python3.12-dbg", "python3.12-dbgx", "perl5.36.0",
		"node18", "node18ab", "node18abc", "3python", "python3-", "python3.1a-dbg", "py.3", "a1", "A1",
		"ruby3.2.2p", "-dbg", "x9-dbg-dbg", "bash5.2", "zsh5.9rc", "python3.12\n"}
	const alphabet = "az09.-+=_AZbdg\n é"
	r := rand.New(rand.NewSource(16))
	for range 20000 {
		b := make([]byte, r.Intn(12))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		in = append(in, string(b))
	}
	matched := 0
	for _, s := range in {
		name, ok := versionedName(s)
		m := versionedNameRe.FindStringSubmatch(s)
		if ok != (m != nil) || ok && name != m[1] {
			t.Errorf("versionedName(%q) = %q, %v; the regexp says %q", s, name, ok, m)
		}
		if ok {
			matched++
		}
	}
	if matched < 100 {
		t.Fatalf("only %d inputs matched: the comparison proves little", matched)
	}
}

// CodeInArgs is the one table the analysis reads: each row's attack is
// found, at the word that carries the code, and its control is not.
func TestCodeInArgs(t *testing.T) {
	for _, row := range []struct {
		argv []string
		at   int // -1: nothing found (the control)
	}{
		{[]string{"python3.12", "-c", "import os"}, 1},
		{[]string{"python3.12", "script.py"}, -1},
		{[]string{"bash", "-s"}, 1},
		{[]string{"bash", "build.sh"}, -1},
		{[]string{"find", ".", "-exec", "id", ";"}, 2},
		{[]string{"find", ".", "-name", "x"}, -1},
		{[]string{"git", "-c", "core.pager=id", "log"}, 1},
		{[]string{"git", "log"}, -1},
		{[]string{"sed", "-n", "1e id"}, 2},
		{[]string{"sed", "-n", "1p"}, -1},
	} {
		i, why, known := CodeInArgs(row.argv[0], row.argv)
		if !known {
			t.Errorf("%q: no entry", row.argv)
			continue
		}
		if i != row.at || (row.at >= 0) != (why != "") {
			t.Errorf("%q: at %d (%q), want %d", row.argv, i, why, row.at)
		}
	}
	if _, _, known := CodeInArgs("ls", []string{"ls", "-la"}); known {
		t.Error("ls has an entry")
	}
}

// The two tables of this package agree where both speak: whatever the
// analysis refuses as code in a program's arguments (CodeInArgs) is an
// option no scope's * covers (the option tables, CheckArgv) for every
// program that has a table. The analysis may refuse less (git -C is for
// the tables alone), never more unseen. Code in an operand's content (sed's
// script, awk's program) is the analysis's alone: the tables read options
// and subcommands.
func TestCodeRulesWithinTables(t *testing.T) {
	asked := 0
	for _, argv := range [][]string{
		{"git", "-c", "core.pager=id", "log"}, {"git", "--config-env=core.pager=X", "log"}, {"git", "--exec-path=/tmp", "log"},
		{"git", "rebase", "-x", "id"}, {"git", "bisect", "run", "id"}, {"git", "submodule", "foreach", "id"},
		{"git", "grep", "-O", "x"}, {"git", "grep", "--open-files-in-pager=id", "x"}, {"git", "clone", "-u", "id", "u"},
		{"git", "config", "core.pager", "id"},
		{"find", ".", "-exec", "id", ";"}, {"find", ".", "-execdir", "id", ";"}, {"find", ".", "-ok", "id", ";"},
		{"tar", "--to-command=id", "-xf", "a.tar"}, {"tar", "-I", "id", "-xf", "a.tar"}, {"tar", "--use-compress-program=id", "-xf", "a.tar"},
		{"rsync", "-e", "id", "a", "b"}, {"rsync", "--rsh=id", "a", "b"}, {"rsync", "--rsync-path=id", "a", "b"},
		{"zip", "-TT", "id", "a.zip", "f"},
	} {
		i, why, _ := CodeInArgs(argv[0], argv)
		if why == "" {
			t.Errorf("%q: the analysis's table finds no code (the example is wrong)", argv)
			continue
		}
		if !Tabled(argv[0]) {
			continue
		}
		asked++
		covered := true
		for _, f := range CheckArgv(argv) {
			covered = covered && f.Class.Covered()
		}
		if covered {
			t.Errorf("%q: the analysis refuses word %d (%s), the option table would let a * cover it", argv, i, why)
		}
	}
	if asked < 15 {
		t.Fatalf("only %d examples of tabled programs", asked)
	}
}

// TestShortOptionClusters: an option that runs a program is found inside
// a cluster of short options (rsync -avze, nc -lvc, scp -vF), where it is
// named; the controls, clusters without it and a long option that merely
// holds the letter, are not code.
func TestShortOptionClusters(t *testing.T) {
	for _, c := range []struct {
		argv []string
		i    int
		why  string
	}{
		{[]string{"rsync", "-avze", "id", "a", "b"}, 1, "rsync -e runs a remote shell"},
		{[]string{"rsync", "-avz", "a", "b"}, -1, ""},
		{[]string{"rsync", "--delete", "a", "b"}, -1, ""},
		{[]string{"nc", "-l", "-vc", "id", "9"}, 2, "netcat -e or -c runs a program for the connection"},
		{[]string{"nc", "-lv", "9"}, -1, ""},
		{[]string{"scp", "-vF", "cfg", "a", "h:b"}, 1, "scp -vF can run a local command"},
		{[]string{"scp", "-rv", "a", "h:b"}, -1, ""},
		{[]string{"sftp", "-vq", "h"}, -1, ""},
		{[]string{"sftp", "-D", "/x", "h"}, 1, "sftp -D can run a local command"},
	} {
		if i, why, _ := CodeInArgs(c.argv[0], c.argv); i != c.i || why != c.why {
			t.Errorf("%q: %d %q, want %d %q", c.argv, i, why, c.i, c.why)
		}
	}
}
