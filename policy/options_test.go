package policy

import (
	"fmt"
	"strings"
	"testing"
)

// findings renders CheckArgv's result as "index:class" pairs.
func findings(argv string) string {
	var out []string
	for _, f := range CheckArgv(strings.Fields(argv)) {
		out = append(out, fmt.Sprintf("%d:%s", f.Index, f.Class))
	}
	return strings.Join(out, " ")
}

func TestCheckArgv(t *testing.T) {
	const code, writes, unknown = "runs code", "writes a named file", "is not known to be safe"
	for _, c := range []struct{ argv, want string }{
		// Everyday calls: nothing a wildcard may not cover.
		{"git log --oneline -5", ""},
		{"git status -sb", ""},
		{"git diff --stat HEAD~1", ""},
		{"git commit -m msg", ""},
		{"make test", ""},
		{"make -j4 -k test lint", ""},
		{"npm run test", ""},
		{"npm run test -- src/a.test.js", ""},
		{"go build ./...", ""},
		{"go test -race -count=1 -run TestX ./...", ""},
		{"go build -ldflags=-s ./cmd/x", ""},
		{"gcc -O2 -Wall -Iinclude -c a.c", ""},
		{"sort -rn -k2,2 a.txt", ""},
		{"uniq -c a.txt", ""},
		{"rg -n --hidden TODO src", ""},
		{"fd -e go -t f", ""},
		{"tar -tzf a.tgz", "1:" + writes + " 2:" + writes},
		{"ls -la --output=x", "2:" + writes},
		{"curl -sS https://x", ""},
		// Clusters, attached and separate values, abbreviations.
		{"sort -ro /x a", "1:" + writes + " 2:" + writes},
		{"sort -o/x a", "1:" + writes},
		{"sort -o /x a", "1:" + writes + " 2:" + writes},
		{"sort --out=/x a", "1:" + writes},
		{"sort --comp sh a", "1:" + code + " 2:" + code},
		{"sort --frobnicate a", "1:" + unknown},
		{"sort -Q a", "1:" + unknown},
		{"uniq a b", "2:" + writes},
		{"uniq -c a b", "3:" + writes},
		{"tee a b", "1:" + writes + " 2:" + writes},
		// make: assignments, makefiles, eval.
		{"make X:=1", "1:" + code},
		{"make -f x.mk", "1:" + code + " 2:" + code},
		{"make -kfx.mk", "1:" + code},
		{"make --eval=x", "1:" + code},
		{"make -C dir", "1:" + code + " 2:" + code},
		// npm.
		{"npm run test --node-options=--require=x", "3:" + code},
		{"npm run test -- --watch", "4:" + unknown},
		{"npm exec x", "1:" + code},
		{"npm install left-pad", "2:" + code},
		{"npm ci", ""},
		{"npm --script-shell=/x test", "1:" + code},
		// go: single-dash long flags.
		{"go build -toolexec x", "2:" + code + " 3:" + code},
		{"go build --toolexec=x", "2:" + code},
		{"go build -ldflags -extld=x", "2:" + code + " 3:" + code},
		{"go build -o /x .", "2:" + writes + " 3:" + writes},
		{"go run example.com/x@latest", "2:" + code},
		{"go generate ./...", "1:" + code},
		{"go -C /x build", "1:" + code + " 2:" + code},
		{"go build -gcflags=all=-N", ""},
		// go passes -ldflags, -gcflags and -asmflags on to link, compile and
		// asm, whose -o wins over go's own: the binary lands where they say.
		{"go build -ldflags=-o=../x ./...", "2:" + writes},
		{"go test -ldflags=all=-o=../x ./...", "2:" + writes},
		{"go build --ldflags=-o=../x", "2:" + writes},
		{"go build -ldflags -o=../x", "2:" + writes + " 3:" + writes},
		{"go build -ldflags=-tmpdir=/x", "2:" + writes},
		{"go build -ldflags=-linkmode=external", "2:" + code},
		{"go build -ldflags=-extldflags=-fuse-ld=/x", "2:" + code},
		{"go build -ldflags=-frobnicate", "2:" + unknown},
		{"go build -ldflags=main.go", "2:" + unknown},
		{"go build -ldflags=-s=false", ""},
		{"go run -gcflags=-o=../x .", "2:" + writes},
		{"go test -gcflags=all=-importcfg=/x ./...", "2:" + code},
		{"go build -asmflags=-o=../x", "2:" + writes},
		{"go build -asmflags=all=-I=/x", "2:" + code},
		{"go build -gcflags=-m ./...", ""},
		// -buildvcs takes only an attached value: the next word is an option.
		{"go build -buildvcs -toolexec=/bin/sh ./...", "3:" + code},
		{"go build -buildvcs=false ./...", ""},
		// git: -U, --unified and --format take only an attached value,
		// blame's --reverse none: the next word is an option of its own.
		{"git log -1 -U --output=Makefile -s --format=tformat:x", "4:" + writes},
		{"git log --unified --output=x", "3:" + writes},
		{"git log --format --output=x", "3:" + writes},
		{"git log -U5 -p", ""},
		{"git log --format=%H -1", ""},
		{"git blame --reverse --output=x f", "3:" + writes},
		{"git stash show -m --output=x", "4:" + writes},
		{"git stash push -m msg", ""},
		{"git shortlog --committer --output=x", "3:" + writes},
		{"git shortlog -n -s", ""},
		{"git branch --contains HEAD~1", ""},
		// npm reads a value a flag does not take as an operand.
		{"npm install --json=left-pad", "2:" + unknown},
		{"npm install --json", ""},
		{"npm run build --color=always", ""},
		// gcc by prefix, longest first.
		{"gcc -fplugin=x.so a.c", "1:" + code},
		{"gcc -fno-omit-frame-pointer a.c", ""},
		{"gcc -Wl,--plugin=x a.c", "1:" + code},
		{"gcc -Wextra a.c", ""},
		{"gcc -B /x a.c", "1:" + code + " 2:" + code},
		{"gcc -o out a.c", "1:" + writes + " 2:" + writes},
		{"gcc @opts a.c", "1:" + code},
		{"clang -MJ db.json a.c", "1:" + writes + " 2:" + writes},
		{"gcc -fdump-tree-all=/x a.c", "1:" + writes},
		{"gcc -fopt-info-vec=/x a.c", "1:" + writes},
		{"gcc -fdump-tree-all -fopt-info-vec a.c", ""},
		{"gcc -lm a.c", ""},
		{"gcc -l m a.c", ""},
		// git: global options, -c anywhere, subcommands, transports.
		{"git -c x=y log", "1:" + code + " 2:" + code},
		{"git clone -c x=y u", "2:" + code + " 3:" + code},
		{"git log --output=/x", "2:" + writes},
		{"git --git-dir=/x log", "1:" + code},
		{"git --work-tree /x status", "1:" + code + " 2:" + code},
		{"git config user.name x", "1:" + code},
		{"git fetch ext::sh", "2:" + code},
		{"git log --frobnicate", "2:" + unknown},
		{"git frobnicate --x", "2:" + unknown},
		{"git frobnicate -c x=y", "2:" + code + " 3:" + code},
		{"git rebase --exec id", "2:" + code + " 3:" + code},
		// The read-only subcommands an agent runs (each with what stays out).
		{"git ls-tree -r --name-only HEAD", ""},
		{"git ls-tree --format %(path) HEAD", ""},
		{"git ls-tree -x HEAD", "2:" + unknown},
		{"git rev-list --left-right --count origin/main...main", ""},
		{"git rev-list --count HEAD --output=x", "4:" + writes},
		{"git rev-list -n 5 --output=x HEAD", "4:" + writes},
		{"git rev-list --objects --missing=allow-any HEAD", "3:" + unknown},
		{"git cat-file -p HEAD:a.txt", ""},
		{"git cat-file --textconv HEAD:a.txt", "2:" + code},
		{"git cat-file --filters HEAD:a.txt", "2:" + unknown},
		{"git show-ref --tags v0.1.1", ""},
		{"git show-ref -s8 --heads", ""},
		{"git merge-base --is-ancestor HEAD main", ""},
		{"git worktree list --porcelain", ""},
		{"git worktree add ../x", ""},
		{"git worktree add -f ../x", "3:" + unknown},
		{"git status --null -M50", ""},
		{"git grep -r -m 3 -e x", ""},
		{"git show --relative-date --compact-summary HEAD", ""},
		// git tag -l and git branch --list list: the options that create,
		// delete or verify are not known there; elsewhere they are the
		// subcommand's own (git tag -v runs gpg).
		{"git tag -l v*", ""},
		{"git tag --list --sort=-v:refname -n5", ""},
		{"git tag -l -d v1", "3:" + unknown},
		{"git tag --list -a v2", "3:" + unknown},
		{"git tag -l -f -m x v2", "3:" + unknown + " 4:" + unknown},
		{"git tag -l -F /x v2", "3:" + unknown},
		{"git tag -d v1", ""},
		{"git tag -d v1 -l", ""},
		{"git tag -v v1", "2:" + code},
		{"git tag -l -v v1", "3:" + unknown},
		{"git branch --list feat/*", ""},
		{"git branch -l -a -vv --merged main", ""},
		{"git branch --list -d x", "3:" + unknown},
		{"git branch -l -m a b", "3:" + unknown},
		{"git branch --list --set-upstream-to=origin/x", "3:" + unknown},
		{"git branch -d x", ""},
		// tar: old-style clusters take values from the next words.
		{"tar czf out.tgz src", "1:" + writes + " 2:" + writes},
		{"tar xf a.tar", "1:" + writes + " 2:" + writes},
		{"tar -czf out.tgz src", "1:" + writes + " 2:" + writes},
		{"tar --to-command=id -xf a", "1:" + code + " 2:" + writes + " 3:" + writes},
		{"tar -I zstd -cf a src", "1:" + code + " 2:" + code + " 3:" + writes + " 4:" + writes},
		// rg, fd.
		{"rg --pre x y", "1:" + code + " 2:" + code},
		{"fd -x rm", "1:" + code + " 2:" + code},
		{"fdfind --exec rm", "1:" + code + " 2:" + code},
		// A path or a versioned name finds the table.
		{"/usr/bin/sort -o x", "1:" + writes + " 2:" + writes},
	} {
		if got := findings(c.argv); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.argv, got, c.want)
		}
	}
}

// TestCheckArgvWords covers words that hold spaces (one shell word each).
func TestCheckArgvWords(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want []int // indexes of findings
	}{
		{[]string{"go", "build", "-ldflags", "-s -o ../x", "./..."}, []int{2, 3}},
		{[]string{"go", "build", "-ldflags=-s -w -o ../x"}, []int{2}},
		{[]string{"go", "build", "-ldflags=all='-o' '../x'"}, []int{2}},
		{[]string{"go", "build", "-ldflags=-X 'main.v=1 2' -o=../x"}, []int{2}},
		{[]string{"go", "build", "-ldflags=-X main.v=x -- -o=../x"}, []int{2}},
		{[]string{"go", "build", "-ldflags='-o ../x"}, []int{2}},
		{[]string{"go", "build", "-gcflags=all=-N -l -o=../x", "."}, []int{2}},
		// Controls: the everyday spellings.
		{[]string{"go", "build", "-ldflags", "-s -w -X main.version=1.2.3", "./..."}, nil},
		{[]string{"go", "build", "-ldflags=-X 'main.v=a b'", "."}, nil},
		{[]string{"go", "build", "-gcflags=all=-N -l", "."}, nil},
		{[]string{"go", "test", "-gcflags", "-m -m", "./..."}, nil},
	} {
		var got []int
		for _, f := range CheckArgv(c.argv) {
			got = append(got, f.Index)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q: findings at %v, want %v", c.argv, got, c.want)
		}
	}
}

func TestFindingsSayWhy(t *testing.T) {
	for _, argv := range []string{"sort --compress-program=x", "git log --output=x", "make X=1", "uniq a b", "ls --output=x", "git log --frobnicate"} {
		fs := CheckArgv(strings.Fields(argv))
		if len(fs) == 0 {
			t.Fatalf("%s: no finding", argv)
		}
		if !strings.HasPrefix(fs[0].Why, "this option "+fs[0].Class.String()) && !strings.HasPrefix(fs[0].Why, "this operand "+fs[0].Class.String()) {
			t.Errorf("%s: why %q does not start with what it does", argv, fs[0].Why)
		}
	}
}

func TestClasses(t *testing.T) {
	if !Safe.Covered() || !Reads.Covered() || Unknown.Covered() || Writes.Covered() || Code.Covered() {
		t.Error("Covered")
	}
	if len(Options(Code)) < 8 || len(Options(Writes)) < 5 {
		t.Errorf("option listings are short: %q %q", Options(Code), Options(Writes))
	}
	if !Tabled("git") || !Tabled("/usr/bin/gmake") || Tabled("ls") {
		t.Error("Tabled")
	}
	if !SubcommandFirst("git") || SubcommandFirst("ls") {
		t.Error("SubcommandFirst")
	}
}

func TestParseTableRejectsBadSpecs(t *testing.T) {
	for _, spec := range []string{"safe -a", "runs: -a", "safe: a"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q: no panic", spec)
				}
			}()
			parseTable("x", spec, nil)
		}()
	}
}

func FuzzCheckArgv(f *testing.F) {
	for _, s := range []string{"git log -c x", "tar czf a b", "gcc -o x a.c", "make X=1 -f y", "go build -ldflags x ."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Fields(s)
		prev := -1
		for _, fd := range CheckArgv(argv) {
			if fd.Index <= prev || fd.Index >= len(argv) || fd.Word != argv[fd.Index] || fd.Class.Covered() || fd.Why == "" {
				t.Fatalf("%q: bad finding %+v", s, fd)
			}
			prev = fd.Index
		}
	})
}

// tableOf builds one program's table, the one loadTables lists for it:
// the same table for every name that shares it (make and gmake, npm, pnpm
// and yarn), and none for a program outside the table.
func TestTableOfIsTheListedTable(t *testing.T) {
	if _, ok := tableOf("no-such-program"); ok {
		t.Fatal("tableOf found a table for a program outside the table")
	}
	g, ok := tableOf("git")
	if !ok || g == nil {
		t.Fatal("no table for git")
	}
	loadTables()
	if len(tables) < 20 {
		t.Fatalf("loadTables listed %d programs", len(tables))
	}
	for name, want := range tables {
		got, ok := tableOf(name)
		if !ok || got != want {
			t.Errorf("tableOf(%q) is not the table loadTables lists", name)
		}
		if !Tabled(name) {
			t.Errorf("Tabled(%q) is false", name)
		}
	}
	if tables["make"] != tables["gmake"] || tables["npm"] != tables["yarn"] || tables["cc"] != tables["clang++"] {
		t.Error("names that share a table got tables of their own")
	}
	if Tabled("no-such-program") {
		t.Error("Tabled of a program outside the table")
	}
}

// An abbreviation of several long options takes the worst class among
// them, whatever order the table's map gives them in: tar --ex abbreviates
// --extract (writes) and --exclude= (safe, with a value), and the one found
// last won when it took a value (the twenty-fourth attack run: no finding
// in about one call in three). Control: an abbreviation of safe options
// alone is no finding.
func TestAbbreviationTakesTheWorstClass(t *testing.T) {
	for i := 0; i < 300; i++ {
		got := CheckArgv([]string{"tar", "--ex", "a.tar"})
		if len(got) == 0 || got[0].Word != "--ex" || got[0].Class < Writes {
			t.Fatalf("call %d: tar --ex: %+v, want --ex as writes at least", i, got)
		}
	}
	o, ok := lookupLong(map[string]opt{"--extract": {class: Writes}, "--exclude": {class: Safe, value: true}}, "--ex", true)
	if !ok || o.class != Writes || !o.value {
		t.Errorf("lookupLong(--ex) = %+v, %v: want writes, taking a value (one of them does)", o, ok)
	}
	if got := CheckArgv([]string{"sort", "--numeric", "f"}); len(got) != 0 {
		t.Errorf("sort --numeric (--numeric-sort, safe): %+v", got)
	}
}
