package policy

import (
	"math"
	"strings"
	"testing"
)

func TestReadsCommands(t *testing.T) {
	for _, tc := range []struct {
		cmd   string
		reads bool
	}{
		// Shells and interpreters: a REPL, or a script on stdin.
		{"bash", true}, {"/usr/bin/bash --norc", true}, {"bash -e", true}, {"sh -s", true}, {"bash -i script.sh", true},
		{"python3", true}, {"python3.12 -", true}, {"python3 -i script.py", true}, {"node", true}, {"node --inspect", true},
		{"irb", true}, {"ghci", true}, {"bc -l", true}, {"awk", true},
		// Controls: a script, inline code, a module.
		{"bash script.sh", false}, {"bash -c 'echo hi'", false}, {"bash -lc make", false}, {"sh -- script.sh", false},
		{"python3 script.py", false}, {"python3 -c pass", false}, {"python3 -m pytest", false}, {"node app.js", false},
		{"node -e 1", false}, {"bash --version", false},
		// Clients: without the commands they were given.
		{"psql mydb", true}, {"psql -U me -d db", true}, {"mysql -u root -p", true}, {"sqlite3 app.db", true},
		{"sqlite3 -cmd '.tables' app.db", true}, {"redis-cli -h cache -p 6379", true}, {"ssh host", true},
		{"ssh -p 2222 host", true}, {"ssh -i key -l me host", true}, {"gdb ./prog", true}, {"gdb -ex run ./prog", true},
		// Controls: given their commands.
		{"psql -c 'select 1' mydb", false}, {"psql --command=select mydb", false}, {"mysql -e 'show tables'", false},
		{"sqlite3 app.db 'select 1'", false}, {"redis-cli -h cache get k", false}, {"ssh host uptime", false},
		{"ssh -p 2222 host uptime", false}, {"gdb --batch -ex run ./prog", false}, {"ssh -V", false},
		// Editors and pagers: always (their shell escapes).
		{"vim notes.txt", true}, {"less README.md", true}, {"man git", true}, {"ed", true},
		// Through wrappers (issue 37): what Codex's write_stdin then types
		// into runs unchecked.
		{"env bash", true}, {"env FOO=1 bash", true}, {"env -u HOME -- bash", true}, {"nice python3", true},
		{"nice -n 5 python3", true}, {"timeout 600 bash", true}, {"timeout -s KILL 10 bash", true},
		{"sudo bash", true}, {"sudo -u root bash", true}, {"exec bash", true}, {"xargs sh", true},
		{"xargs -n1 sh -c", true}, {"stdbuf -oL python3", true}, {"nohup node", true}, {"setsid bash", true},
		{"env -S bash", true}, {"nice env timeout 5 bash", true}, {"command bash", true},
		// Controls: the wrapped program does not read its stdin.
		{"env bash script.sh", false}, {"nice python3 -c pass", false}, {"timeout 600 bash -c make", false},
		{"sudo ls", false}, {"exec make", false}, {"xargs rm", false}, {"stdbuf -oL grep x", false},
		{"nohup node app.js", false}, {"timeout 600", false}, {"command -v bash", false}, {"env", false},
		// Programs that do not.
		{"ls -la", false}, {"git log", false}, {"cat", false}, {"grep x", false}, {"make test", false},
	} {
		got := ReadsCommands(strings.Fields(strings.ReplaceAll(tc.cmd, "'", "")))
		if (got != "") != tc.reads {
			t.Errorf("%s: %q, want reads=%v", tc.cmd, got, tc.reads)
		}
	}
}

func TestRunsCommands(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		runs bool
	}{
		{"psql -c select mydb", true}, {"sqlite3 app.db select", true}, {"mysql -e show", true}, {"sftp -b batch host", true},
		{"bash", true}, {"psql mydb", true},
		// Controls.
		{"ls -la", false}, {"bash script.sh", false}, {"git log", false}, {"redis-cli -h cache get k", false},
	} {
		if got := RunsCommands(strings.Fields(tc.cmd)); (got != "") != tc.runs {
			t.Errorf("%s: %q, want runs=%v", tc.cmd, got, tc.runs)
		}
	}
}

// TestReadsCommandsLongWrapperChains: a chain of wrappers is read in time
// and memory of its first maxWrappers links, however long it is (the
// seventy-first attack run's `env env ... ls` of 16,000 words took 3 s,
// each link looking through every word after it for env's -S), and a chain
// longer than that is not read on but said (a question, never a pass).
// Allocations are the deterministic measure: a chain of 10,000 links
// allocates no more than one of 100. Controls: a short chain is read
// through to bash, and the same long chain of a program that reads no
// commands is still said, not passed over.
func TestReadsCommandsLongWrapperChains(t *testing.T) {
	chain := func(n int, w, prog string) []string {
		argv := make([]string, 0, n+1)
		for range n {
			argv = append(argv, strings.Fields(w)...)
		}
		return append(argv, prog)
	}
	if got := ReadsCommands(chain(3, "env", "bash")); !strings.Contains(got, "bash") || strings.Count(got, "(through env)") != 3 {
		t.Errorf("control: env env env bash: %q, want bash's reason through env three times", got)
	}
	if got := ReadsCommands(chain(3, "env", "ls")); got != "" {
		t.Errorf("control: env env env ls: %q, want nothing", got)
	}
	for _, w := range []string{"env", "env -i", "env A=1", "nice -n 1", "env -u X"} {
		if got := ReadsCommands(chain(maxWrappers+1, w, "ls")); !strings.Contains(got, "not read to its end") {
			t.Errorf("%d links of %q then ls: %q, want the chain said as not read to its end", maxWrappers+1, w, got)
		}
		short, long := chain(100, w, "ls"), chain(10000, w, "ls")
		// The least of three: AllocsPerRun counts every allocation of
		// the process, and a make test run under -race once counted
		// three of another goroutine's (13 against 10).
		allocs := func(argv []string) float64 {
			least := math.Inf(1)
			for range 3 {
				least = min(least, testing.AllocsPerRun(5, func() { ReadsCommands(argv) }))
			}
			return least
		}
		a100, a10k := allocs(short), allocs(long)
		if a10k > a100+2 {
			t.Errorf("%q: a chain of 10,000 links allocates %.0f times, one of 100 %.0f: the chain is read past its bound", w, a10k, a100)
		}
	}
}
