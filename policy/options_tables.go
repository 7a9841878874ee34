package policy

import (
	"fmt"
	"strings"
	"sync"
)

// The option table: per program (and subcommand), the options it knows and
// their class. An option a tabled program does not list is Unknown: a
// scope's wildcard does not cover it, the call needs an exact approval.
// Lists are deliberately short: they name the everyday options; adding one
// is a reviewed change here, nowhere else.

// buildGeneric is the table of programs outside the table: only options
// that write a named file or run code for most programs that have them.
func buildGeneric() *table {
	t := parseTable("generic", `
		writes: --output= --output-file= --out-file= --outfile= --log-file= --output-dir= ;
		code: --exec= --eval= --require= --import= --node-options= --pre= --plugin= --loader=`, nil)
	t.open = true
	return t
}

// tables holds every program's table, for what lists them all (Options,
// the tests): loadTables builds them all. A call's check builds its
// program's alone (tableOf).
var (
	tables     map[string]*table
	tablesOnce sync.Once
)

func loadTables() {
	tablesOnce.Do(func() {
		tables = map[string]*table{}
		for name, build := range tableBuilders() {
			tables[name] = build()
		}
	})
}

// tableOf is prog's table, built on its first use: most hook calls never
// look at an option, and one that does looks at one program's (git's table
// takes most of the time of building them all: 0.6 ms of 0.9 in a warm
// process, more in the hook's new one).
func tableOf(prog string) (*table, bool) {
	build, ok := tableBuilders()[prog]
	if !ok {
		return nil, false
	}
	return build(), true
}

// genericTable is generic's table, built on first use.
var genericTable = sync.OnceValue(buildGeneric)

// goTools builds the go tools' flag tables (options_gotool.go), which go's
// table refers to.
var goTools = sync.OnceFunc(buildGoTools)

// tableBuilders are the programs' tables, each built once, on first use;
// names that share a table share its builder.
var tableBuilders = sync.OnceValue(func() map[string]func() *table {
	m := map[string]func() *table{}
	add := func(build func() *table, names ...string) {
		once := sync.OnceValue(build)
		for _, n := range names {
			m[n] = once
		}
	}
	add(func() *table {
		sort := parseTable("sort", `
			safe: -b -d -f -g -h -i -M -n -R -r -V -c -C -s -u -z -m -k= -t= -S= --key= --field-separator=
				--buffer-size= --parallel= --reverse --numeric-sort --unique --stable --ignore-case
				--human-numeric-sort --version-sort --general-numeric-sort --month-sort --random-sort
				--dictionary-order --ignore-leading-blanks --ignore-nonprinting --zero-terminated --check=?
				--merge --debug --sort= --help --version ;
			reads: -T= --temporary-directory= --files0-from= --random-source= ;
			writes: -o= --output= ;
			code: --compress-program=`, map[string]string{
			"--compress-program": "sort --compress-program runs a program to compress its temporary files",
			"-o":                 "sort -o writes its output to the named file",
			"--output":           "sort --output writes its output to the named file",
		})
		return sort
	}, "sort")

	add(func() *table {
		uniq := parseTable("uniq", `
			safe: -c -d -D -u -i -z -f= -s= -w= --count --repeated --all-repeated=? --group=? --unique
				--ignore-case --skip-fields= --skip-chars= --check-chars= --zero-terminated --help --version`, nil)
		uniq.operand = func(nth int, _ string) (OptionClass, string) {
			if nth == 1 {
				return Writes, "this operand writes a named file: uniq writes its output to its second operand"
			}
			return Safe, ""
		}
		return uniq
	}, "uniq")

	add(func() *table {
		tee := parseTable("tee", `safe: -a -i -p --append --ignore-interrupts --output-error=? --help --version`, nil)
		tee.operand = func(int, string) (OptionClass, string) {
			return Writes, "this operand writes a named file: tee writes to every file it is given"
		}
		return tee
	}, "tee")

	add(func() *table {
		makeT := parseTable("make", `
			safe: -k -s -n -B -i -q -r -R -w -S -e -p -d -L -h -v -j=? -l=? -O=? -o= -W=
				--keep-going --silent --quiet --just-print --dry-run --recon --always-make --ignore-errors
				--question --no-builtin-rules --no-builtin-variables --print-directory --no-print-directory
				--stop --no-keep-going --environment-overrides --print-data-base --debug=? --jobs=?
				--load-average=? --output-sync=? --trace --warn-undefined-variables --check-symlink-times
				--old-file= --assume-old= --what-if= --new-file= --assume-new= --help --version ;
			writes: -t --touch ;
			code: -f= --file= --makefile= -C= --directory= -I= --include-dir= --eval= -E=`, map[string]string{
			"-f":         "make -f reads another makefile, whose recipes it runs",
			"--file":     "make --file reads another makefile, whose recipes it runs",
			"--makefile": "make --makefile reads another makefile, whose recipes it runs",
			"-C":         "make -C runs the makefile of another directory",
			"--eval":     "make --eval evaluates makefile code given inline",
			"-E":         "make -E evaluates makefile code given inline",
			"-I":         "make -I changes where included makefiles are found",
		})
		makeT.operand = func(_ int, word string) (OptionClass, string) {
			if strings.Contains(word, "=") {
				return Code, "this operand runs code: a variable assignment on make's command line can run a command ('X:=$(shell ...)') or change the shell or compiler make runs"
			}
			return Safe, ""
		}
		return makeT
	}, "make", "gmake")

	add(gitTable, "git")
	add(npmTable, "npm", "pnpm", "yarn")
	add(func() *table {
		goTools()
		return goTable()
	}, "go")
	add(findTable, "find")
	add(sedTable, "sed", "gsed")
	add(ccTable, "cc", "gcc", "g++", "c++", "clang", "clang++", "cpp")

	add(func() *table {
		return parseTable("rg", `
			safe: -i -S -s -w -v -n -N -l -c -F -o -x -U -P -0 -q -a -H -I -L -u -p -e= -g= -t= -T= -A= -B= -C=
				-m= -d= -r= -j= -M= -E= --glob= --iglob= --type= --type-not= --regexp= --hidden --no-ignore
				--no-ignore-vcs --follow --json --files --files-with-matches --files-without-match --count
				--count-matches --only-matching --max-count= --max-depth= --sort= --sortr= --color= --colors=
				--no-heading --heading --vimgrep --column --pretty --line-regexp --multiline
				--multiline-dotall --pcre2 --replace= --null --quiet --text --stats --trim --no-messages
				--smart-case --ignore-case --case-sensitive --fixed-strings --word-regexp --invert-match
				--context= --before-context= --after-context= --line-number --no-line-number --with-filename
				--no-filename --type-list --debug --max-columns= --max-filesize= --threads= --encoding=
				--search-zip -z --pre-glob= --unrestricted --help --version ;
			reads: -f= --file= --ignore-file= ;
			code: --pre=`, map[string]string{
			"--pre": "rg --pre runs a program on every file it searches",
		})
	}, "rg")

	add(func() *table {
		fd := parseTable("fd", `
			safe: -H -I -u -s -i -g -F -a -l -L -p -0 -1 -q -t= -e= -E= -d= -c= -S= -j= -o= --hidden --no-ignore
				--no-ignore-vcs --case-sensitive --ignore-case --glob --regex --fixed-strings --absolute-path
				--list-details --follow --full-path --print0 --max-depth= --min-depth= --exact-depth= --type=
				--extension= --exclude= --size= --changed-within= --changed-before= --color= --max-results=
				--threads= --base-directory= --search-path= --strip-cwd-prefix=? --prune --one-file-system
				--format= --path-separator= --show-errors --quiet --owner= --help --version ;
			reads: --ignore-file= ;
			code: -x= --exec= -X= --exec-batch=`, map[string]string{
			"-x":           "fd -x runs a command for every file it finds",
			"--exec":       "fd --exec runs a command for every file it finds",
			"-X":           "fd -X runs a command on the files it finds",
			"--exec-batch": "fd --exec-batch runs a command on the files it finds",
		})
		return fd
	}, "fd", "fdfind")

	// curl and wget: network clients whose options save files or read
	// other options from a file. Options that send local data (-d @file,
	// -F, -T, --json @file) are deliberately not listed: unknown, so a
	// wildcard never covers uploading a file.
	add(func() *table {
		curl := parseTable("curl", `
			safe: -s -S -L -f -I -i -v -k -N -g -G -4 -6 -H= -X= -A= -e= -m= -r= -u= -x= -w= --header= --request=
				--user-agent= --referer= --max-time= --connect-timeout= --retry= --retry-delay= --retry-max-time=
				--range= --user= --proxy= --compressed --silent --show-error --location --fail --fail-with-body
				--head --include --verbose --insecure --http1.1 --http2 --ipv4 --ipv6 --no-buffer --globoff
				--get --max-redirs= --limit-rate= --url= --help --version ;
			reads: -b= --cookie= --cacert= --capath= ;
			writes: -o= --output= -O --remote-name --remote-name-all -J --remote-header-name --output-dir=
				-D= --dump-header= -c= --cookie-jar= --trace= --trace-ascii= --stderr= --libcurl= --etag-save=
				--hsts= --alt-svc= --create-dirs ;
			code: -K= --config=`, map[string]string{
			"-o":       "curl -o saves the response to the named file",
			"--output": "curl --output saves the response to the named file",
			"-O":       "curl -O saves the response to a file named by the URL (the server chooses it with -J)",
			"-K":       "curl -K reads more options (an output file among them) from a file",
			"--config": "curl --config reads more options (an output file among them) from a file",
		})
		// -w (--write-out) is safe in curl before 8.3 only: %output{file}
		// writes a file since. Take it out of the safe list.
		delete(curl.short, 'w')
		return curl
	}, "curl")

	add(func() *table {
		wget := parseTable("wget", `
			safe: -q -v -S -4 -6 -T= -t= -w= -U= --quiet --verbose --no-verbose --server-response --spider
				--timeout= --tries= --wait= --limit-rate= --user-agent= --header= --max-redirect=
				--https-only --help --version ;
			writes: -O= --output-document= -o= --output-file= -a= --append-output= -P= --directory-prefix=
				-r --recursive -m --mirror -x --force-directories -c --continue -N --timestamping
				--save-cookies= --save-headers ;
			code: -e= --execute= --config= --use-askpass= -i= --input-file=`, map[string]string{
			"-O":        "wget -O saves the download to the named file",
			"-e":        "wget -e runs a .wgetrc command (output files, proxies, post-file)",
			"--execute": "wget --execute runs a .wgetrc command (output files, proxies, post-file)",
			"--config":  "wget --config reads .wgetrc commands from a file",
			"-i":        "wget -i reads the URLs (and their file names) from a file",
		})
		wget.operand = func(int, string) (OptionClass, string) {
			return Writes, "this operand writes a named file: wget saves every URL it is given to a file named after it"
		}
		return wget
	}, "wget")

	add(func() *table {
		tar := parseTable("tar", `
			safe: -v -z -j -J -a -p -O -k -m -h -t -V= --list --verbose --gzip --bzip2 --xz --zstd --lzma
				--auto-compress --exclude= --exclude-vcs --strip-components= --wildcards --no-wildcards
				--no-same-owner --no-same-permissions --preserve-permissions --same-owner --numeric-owner
				--owner= --group= --mode= --mtime= --sort= --format= --show-transformed-names
				--transform= --xform= --anchored --keep-old-files --skip-old-files --one-file-system
				--dereference --warning= --null --to-stdout --label= --totals=? --help --version ;
			reads: -C= --directory= -T= --files-from= -X= --exclude-from= ;
			writes: -x -c -r -u -A -f= --extract --get --create --append --update --catenate --concatenate
				--delete --file= --overwrite -g= --listed-incremental= --index-file= ;
			code: -I= -F= --use-compress-program= --to-command= --checkpoint-action= --info-script=
				--new-volume-script= --rsh-command= --rmt-command=`, map[string]string{
			"-x":                     "tar -x extracts the archive's files, which may name any path",
			"--extract":              "tar --extract writes the archive's files, which may name any path",
			"--get":                  "tar --get writes the archive's files, which may name any path",
			"-c":                     "tar -c creates the archive named by -f",
			"-f":                     "tar -f names the archive tar writes when creating or appending",
			"--file":                 "tar --file names the archive tar writes when creating or appending",
			"-I":                     "tar -I runs a program to compress or decompress",
			"--use-compress-program": "tar --use-compress-program runs a program",
			"--to-command":           "tar --to-command runs a command for every file",
			"-F":                     "tar -F runs a script at the end of each volume",
			"--checkpoint-action":    "tar --checkpoint-action can run a command",
		})
		tar.oldStyle = true
		return tar
	}, "tar")
	return m
})

// remoteOperand refuses remote-helper transports (ext::sh -c ..., fd::).
func remoteOperand(_ int, word string) (OptionClass, string) {
	if strings.Contains(word, "::") {
		return Code, "this operand runs code: a remote-helper transport (ext::...) runs a program"
	}
	return Safe, ""
}

func gitTable() *table {
	whys := map[string]string{
		"-c":                    "git -c sets configuration that can run commands (core.pager, core.sshCommand, alias.x=!...)",
		"--config":              "git --config sets configuration that can run commands",
		"--config-env":          "git --config-env sets configuration that can run commands",
		"--exec-path":           "git --exec-path changes where git finds its commands",
		"--upload-pack":         "git --upload-pack runs a command",
		"--receive-pack":        "git --receive-pack runs a command",
		"--exec":                "git --exec runs a command",
		"--output":              "git --output writes to the named file",
		"-C":                    "git -C runs in another directory, with the hooks and configuration of its repository (a rule that names the subcommand covers -C DIR inside the project's own repository)",
		"--git-dir":             "git --git-dir uses another repository, with its hooks and configuration",
		"--work-tree":           "git --work-tree writes files in another directory",
		"--template":            "git --template copies hooks from another directory",
		"--ext-diff":            "git --ext-diff runs the external diff program the configuration names",
		"--textconv":            "git --textconv runs the text conversion programs the configuration names",
		"--show-signature":      "git --show-signature runs the configured gpg program",
		"--open-files-in-pager": "git grep -O runs a pager program",
		"--extcmd":              "git --extcmd runs a command",
		"--tool":                "git --tool runs a diff or merge tool",
		"-v":                    "git tag -v runs the configured gpg program to verify the tag",
		"--verify":              "git tag --verify runs the configured gpg program to verify the tag",
	}
	top := parseTable("git", `
		safe: -P -p --no-pager --paginate --version --help --bare --no-replace-objects --literal-pathspecs
			--glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice ;
		code: -C= --git-dir= --work-tree= --namespace= --super-prefix= --exec-path=?`, whys)
	anywhere := parseTable("git", `
		writes: --output= ;
		code: -c= --config= --config-env= --upload-pack= --receive-pack= --exec= --open-files-in-pager=?
			--ext-diff --textconv --extcmd= --tool= --template= --separate-git-dir= --show-signature
			--gpg-sign=? --sign --local-user=`, whys)
	top.anywhere = map[string]opt{}
	for k, o := range anywhere.long {
		top.anywhere[k] = o
	}
	for k, o := range anywhere.short {
		top.anywhere["-"+string(k)] = o
	}
	top.subClass = map[string]opt{}
	for _, s := range []string{"config", "filter-branch", "filter-repo", "difftool", "mergetool", "bisect",
		"submodule", "send-email", "daemon", "instaweb", "credential", "shell", "p4", "svn", "cvsimport",
		"archimport", "quiltimport", "fsmonitor--daemon", "hook", "upload-pack", "receive-pack",
		"remote-ext", "remote-fd", "web--browse", "help"} {
		top.subClass[s] = opt{class: Code, why: "git " + s + " runs commands given inline or in its configuration"}
	}
	top.subClass["config"] = opt{class: Code, why: "git config can set values that run commands (core.pager, alias.x=!..., core.sshCommand)"}

	// revdiff: the revision and diff options (revision.c, diff.c), read
	// by git log, show, diff, whatchanged, range-diff and shortlog alike.
	// Several take only an attached value (-U5, --unified=5, --format=x):
	// the next word is never theirs.
	revdiff := `safe: -NUM -p -u -s -z -R -a -w -b -W -D -i -E -F -m -n= -M=? -C=? -B=? -S= -G= -U=? -O=
		--patch --no-patch --stat=? --shortstat --numstat --name-only --name-status --raw --oneline
		--graph --all --abbrev-commit --abbrev=? --no-abbrev --format=?
		--pretty=? --date= --since= --after= --until= --before= --author= --committer= --grep=
		--all-match --invert-grep --regexp-ignore-case --extended-regexp --fixed-strings --max-count=
		--skip= --reverse --first-parent --merges --no-merges --follow --color=? --no-color --word-diff=?
		--word-diff-regex= --color-words=? --summary --dirstat=?
		--patch-with-stat --full-diff --relative=? --ignore-space-change --ignore-all-space
		--ignore-blank-lines --minimal --patience --histogram --diff-algorithm= --unified=?
		--function-context --check --src-prefix= --dst-prefix= --no-prefix --exit-code --quiet
		--diff-filter= --pickaxe-regex --pickaxe-all --left-right --cherry-pick --cherry-mark --cherry
		--boundary --topo-order --date-order --author-date-order --simplify-by-decoration
		--full-history --ancestry-path --branches=? --tags=? --remotes=? --not --no-walk=? --notes=?
		--no-notes --show-notes --diff-merges= --cc --remerge-diff --no-expand-tabs --expand-tabs=?
		--log-size --parents --children --encoding= --no-textconv
		--no-ext-diff --binary --full-index --no-renames --find-renames=? --find-copies=?
		--find-copies-harder --irreversible-delete --ignore-submodules=? --submodule=?
		--walk-reflogs -g --reflog --count --ignore-cr-at-eol
		--anchored= --indent-heuristic --no-indent-heuristic --ita-invisible-in-index
		--compact-summary --stat-width= --stat-name-width= --stat-graph-width= --stat-count= --relative-date
		--left-only --right-only --min-parents=? --max-parents=? --no-min-parents --no-max-parents
		--color-moved=? --no-color-moved --ignore-space-at-eol -I=
		--ignore-matching-lines= --patch-with-raw --no-relative -t`
	// logish adds what git log and show (-L, --decorate, --source) and git
	// diff (--cached, --no-index) read and git shortlog refuses.
	logish := revdiff + ` ; safe: -L= --decorate=? --no-decorate --source --mailmap --use-mailmap --no-mailmap
		--single-worktree --cached --staged --no-index --merge-base`
	sub := func(name, spec string, operand func(int, string) (OptionClass, string)) *table {
		t := parseTable("git "+name, spec, whys)
		t.operand = operand
		return t
	}
	top.subs = map[string]*table{}
	for _, s := range []string{"log", "show", "diff", "whatchanged", "range-diff"} {
		top.subs[s] = sub(s, logish, nil)
	}
	// git shortlog reads the revision and diff options too, but some of
	// its own spell the same as log's and take no value (-n, --committer).
	top.subs["shortlog"] = sub("shortlog", revdiff+` ; safe: -c -n -s -e -w=? --committer --numbered --summary
		--email --group=`, nil)
	top.subs["status"] = sub("status", `safe: -s -b -v -z -u=? --short --branch --porcelain=? --long --verbose
		--untracked-files=? --ignored=? --column=? --no-column --ahead-behind --no-ahead-behind --renames
		--no-renames --find-renames=? -M=? --show-stash --ignore-submodules=? --null`, nil)
	top.subs["branch"] = sub("branch", `safe: -a -r -v -l -i -d -D -m -M -f -t=? -u= --list --all --remotes
		--show-current --contains= --no-contains= --merged= --no-merged= --sort= --format= --color=?
		--no-color --column=? --no-column --points-at= --ignore-case --verbose --delete --move --force
		--set-upstream-to= --unset-upstream --track=? --no-track --abbrev=? --no-abbrev`, nil)
	top.subs["rev-parse"] = sub("rev-parse", `safe: -q --show-toplevel --abbrev-ref=? --short=? --verify
		--quiet --git-dir --is-inside-work-tree --is-inside-git-dir --show-prefix --show-cdup
		--symbolic-full-name --symbolic --all --branches=? --tags=? --remotes=? --git-common-dir
		--is-bare-repository --absolute-git-dir --show-superproject-working-tree --default= --sq --not
		--path-format=? --local-env-vars --show-object-format=? --revs-only --no-revs --flags --no-flags
		--git-path= --glob=? --exclude=? --disambiguate=? --since=? --after=? --until=? --before=?
		--shared-index-path`, nil)
	top.subs["ls-files"] = sub("ls-files", `safe: -c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted
		--modified --others --ignored --stage --unmerged --killed --directory --no-empty-directory
		--exclude= -x= --exclude-per-directory= --exclude-standard --error-unmatch --full-name
		--recurse-submodules --abbrev=? --debug --eol --format= --deduplicate --sparse --resolve-undo
		--empty-directory --with-tree= ;
		reads: --exclude-from= -X=`, nil)
	top.subs["blame"] = sub("blame", `safe: -L= -l -t -p -c -s -e -w -b -f -n -M=? -C=? --porcelain
		--line-porcelain --show-email --show-name --show-number --date= --root --reverse --first-parent
		--incremental --encoding= --abbrev=? --score-debug --color-lines --color-by-age --ignore-rev=
		--progress --no-progress ; reads: -S= --contents= --ignore-revs-file=`, nil)
	top.subs["describe"] = sub("describe", `safe: --tags --all --long --abbrev=? --always --dirty=? --broken=?
		--match= --exclude= --exact-match --contains --first-parent --candidates= --debug`, nil)
	top.subs["ls-tree"] = sub("ls-tree", `safe: -d -r -t -z -l --long --name-only --name-status --object-only
		--full-name --full-tree --format= --abbrev=?`, nil)
	// git rev-list reads the revision options (revision.c) and prints
	// commits or objects; the diff options it has no use for are left out.
	top.subs["rev-list"] = sub("rev-list", `safe: -NUM -n= -i -E -F -g --max-count= --skip= --since= --after=
		--until= --before= --max-age= --min-age= --author= --committer= --grep= --all-match --invert-grep
		--regexp-ignore-case --extended-regexp --fixed-strings --merges --no-merges --min-parents=?
		--max-parents=? --no-min-parents --no-max-parents --first-parent --not --all --branches=? --tags=?
		--remotes=? --glob= --exclude= --reflog --walk-reflogs --ancestry-path --simplify-by-decoration
		--full-history --sparse --remove-empty --topo-order --date-order --author-date-order --reverse
		--parents --children --objects --objects-edge --object-names --no-object-names --abbrev=?
		--no-abbrev --abbrev-commit --header --pretty=? --format=? --oneline --timestamp --left-right
		--left-only --right-only --cherry-pick --cherry-mark --cherry --boundary --count --quiet
		--disk-usage=? --unpacked --no-walk=? --do-walk --date= --encoding= --in-commit-order
		--bisect --bisect-vars --bisect-all --use-bitmap-index --indexed-objects --stdin`, nil)
	// git cat-file without --textconv and --filters (they run the filters
	// the configuration names) and --path (only with them).
	top.subs["cat-file"] = sub("cat-file", `safe: -e -p -t -s -z --allow-unknown-type --use-mailmap --mailmap
		--batch=? --batch-check=? --batch-command=? --batch-all-objects --buffer --follow-symlinks --unordered`, nil)
	top.subs["show-ref"] = sub("show-ref", `safe: -q -d -s=? --quiet --verify --head --dereference --hash=?
		--abbrev=? --tags --heads --exclude-existing=?`, nil)
	top.subs["merge-base"] = sub("merge-base", `safe: -a --all --octopus --independent --is-ancestor
		--fork-point`, nil)
	// git worktree: only list is tabled; its other subcommands add, move
	// and remove worktrees (their options are not known to be safe).
	top.subs["worktree"] = sub("worktree", `safe:`, nil)
	top.subs["worktree"].subs = map[string]*table{
		"list": sub("worktree list", `safe: -v -z --verbose --porcelain --expire=`, nil),
	}
	// git pull passes most fetch options on to git fetch; the merge
	// options are its own. -j takes the next word in fetch, only an
	// attached value in pull.
	fetchish := `safe: -p -t -q -v -f -n -a -k --all --prune --tags --no-tags --quiet --verbose --dry-run
		--depth= --deepen= --shallow-since= --shallow-exclude= --unshallow --force --set-upstream --progress
		--no-progress --recurse-submodules=? --no-recurse-submodules --update-shallow --append --keep`
	top.subs["fetch"] = sub("fetch", fetchish+` ; safe: -j= --jobs= --prune-tags --atomic --prefetch --refetch
		--multiple --update-head-ok`, remoteOperand)
	top.subs["pull"] = sub("pull", fetchish+` ; safe: -r=? -j=? --jobs=? --ff-only --ff --no-ff --rebase=?
		--no-rebase --autostash --no-autostash --squash --no-squash --commit --no-commit --no-edit --stat
		--no-stat --verify --no-verify --signoff --strategy= -X= --strategy-option= --allow-unrelated-histories`,
		remoteOperand)
	top.subs["ls-remote"] = sub("ls-remote", `safe: -h -t -q --heads --tags --refs --quiet --symref --sort=
		--get-url --branches`, remoteOperand)
	top.subs["push"] = sub("push", `safe: -u -f -d -n -q -v -o= --set-upstream --all --branches --tags
		--follow-tags --force --force-with-lease=? --force-if-includes --delete --dry-run --porcelain
		--prune --no-verify --atomic --progress --no-progress --push-option= --recurse-submodules=
		--mirror --quiet --verbose --no-signed`, remoteOperand)
	top.subs["add"] = sub("add", `safe: -A -u -N -n -v -f -p --all --update --intent-to-add --dry-run
		--verbose --force --patch --renormalize --chmod= --ignore-errors --ignore-missing --sparse
		--no-all --ignore-removal --refresh ; reads: --pathspec-from-file= --pathspec-file-nul`, nil)
	top.subs["commit"] = sub("commit", `safe: -m= -a -s -n -v -q -e -o -i --message= --all --amend
		--no-edit --edit --signoff --no-verify --verify --verbose --quiet --allow-empty
		--allow-empty-message --fixup= --squash= --author= --date= --dry-run --short --porcelain --only
		--include --cleanup= --reset-author --no-gpg-sign --status --no-status --trailer=
		--untracked-files=? --reuse-message= --reedit-message= ;
		reads: -F= --file= -t= --template= --pathspec-from-file=`, nil)
	checkoutish := `safe: -b= -B= -f -q -t=? -m -p -W --force --quiet --track=? --no-track --detach --merge
		--orphan= --patch --ours --theirs --conflict= --create= --force-create= --discard-changes --guess
		--no-guess -s= --source= --staged --worktree --overlay --no-overlay --progress --no-progress
		--recurse-submodules=? --no-recurse-submodules --ignore-skip-worktree-bits --ignore-other-worktrees`
	for _, s := range []string{"checkout", "switch", "restore"} {
		top.subs[s] = sub(s, checkoutish, nil)
	}
	// git stash: each subcommand reads its own options; with none, push.
	// Their letters differ: -m is push's message but a diff option of
	// show, which takes no value, so one list for all would hide a word.
	stashPush := `safe: -u -a -k -p -q -m= -S --include-untracked --all --keep-index --no-keep-index
		--message= --patch --quiet --staged ; reads: --pathspec-from-file= --pathspec-file-nul`
	stash := sub("stash", stashPush, nil)
	stash.subs = map[string]*table{
		"push":   sub("stash push", stashPush, nil),
		"save":   sub("stash save", `safe: -u -a -k -p -q -m= -S --include-untracked --all --keep-index --no-keep-index --message= --patch --quiet --staged`, nil),
		"pop":    sub("stash pop", `safe: -q --quiet --index`, nil),
		"apply":  sub("stash apply", `safe: -q --quiet --index`, nil),
		"drop":   sub("stash drop", `safe: -q --quiet`, nil),
		"store":  sub("stash store", `safe: -q --quiet -m= --message=`, nil),
		"show":   sub("stash show", revdiff+` ; safe: -u --include-untracked --only-untracked`, nil),
		"list":   sub("stash list", logish, nil),
		"clear":  sub("stash clear", `safe:`, nil),
		"branch": sub("stash branch", `safe:`, nil),
		"create": sub("stash create", `safe:`, nil),
	}
	top.subs["stash"] = stash
	top.subs["tag"] = sub("tag", `safe: -l -n=? -a -m= -d -f -i --list --sort= --contains= --no-contains=
		--points-at= --merged= --no-merged= --format= --annotate --delete --force --column=? --no-column
		--ignore-case --color=? --message= ; reads: -F= --file= ; code: -v --verify`, nil)
	// git tag -l and git branch --list list; git refuses an option that
	// creates, deletes or verifies there ("switch `d' is incompatible with
	// --list"), and the tables do not know those options in that mode.
	tagList := sub("tag --list", `safe: -l -n=? -i --list --sort= --contains= --no-contains= --points-at=
		--merged= --no-merged= --format= --column=? --no-column --ignore-case --color=?`, nil)
	top.subs["tag"].modes = map[string]*table{"-l": tagList, "--list": tagList}
	branchList := sub("branch --list", `safe: -a -r -v -l -i --list --all --remotes --contains= --no-contains=
		--merged= --no-merged= --points-at= --sort= --format= --color=? --no-color --column=? --no-column
		--ignore-case --verbose --abbrev=? --no-abbrev`, nil)
	top.subs["branch"].modes = map[string]*table{"-l": branchList, "--list": branchList}
	top.subs["remote"] = sub("remote", `safe: -v -f -t= -m= --verbose --tags --no-tags --mirror=? --push --add
		--delete --all --dry-run -n`, remoteOperand)
	top.subs["grep"] = sub("grep", `safe: -i -v -w -n -l -L -c -E -F -P -G -h -H -o -q -z -I -W -p -e= -A= -B= -C=
		--cached --untracked --no-index --recurse-submodules --context= --after-context= --before-context=
		--max-depth= --and --or --not --all-match --name-only --files-with-matches --files-without-match
		--count --heading --break --full-name --color=? --no-color --threads= --exclude-standard
		--line-number --column --function-context --show-function --ignore-case --word-regexp
		--invert-match --fixed-strings --extended-regexp --basic-regexp --perl-regexp --only-matching
		--quiet --null --text -r --recursive --no-recursive -m= --max-count= -a -NUM ; reads: -f= ; code: -O=?`, nil)
	top.subs["merge"] = sub("merge", `safe: -m= -n -q -v -s= -X= --no-ff --ff --ff-only --squash --no-squash
		--commit --no-commit --abort --continue --quit --message= --no-edit --strategy= --strategy-option=
		--stat --no-stat --quiet --verbose --allow-unrelated-histories --autostash --no-autostash
		--no-verify --signoff --log=? --no-log --no-gpg-sign`, nil)
	top.subs["reset"] = sub("reset", `safe: -q -p -N --soft --mixed --hard --merge --keep --quiet --patch
		--no-refresh --recurse-submodules=? --no-recurse-submodules`, nil)
	top.subs["clone"] = sub("clone", `safe: -b= -o= -j= -q -v -n -l -s --depth= --branch= --single-branch
		--no-single-branch --recursive --recurse-submodules=? --shallow-submodules --no-tags --bare
		--mirror --quiet --verbose --progress --no-checkout --origin= --filter= --sparse --shallow-since=
		--shallow-exclude= --jobs= --no-hardlinks --local --shared --dissociate ; reads: --reference= ;
		code: -u=`, remoteOperand)
	top.subs["init"] = sub("init", `safe: -q -b= --quiet --bare --initial-branch= --object-format= --shared=?`, nil)
	return top
}

func npmTable() *table {
	whys := map[string]string{
		"--node-options": "npm --node-options makes node load code (--require, --import)",
		"--script-shell": "npm --script-shell names the shell that runs scripts",
		"--userconfig":   "npm --userconfig reads settings (script-shell, node-options) from another file",
		"--globalconfig": "npm --globalconfig reads settings from another file",
		"--prefix":       "npm --prefix runs another package's scripts",
		"-C":             "npm -C runs another package's scripts",
		"--require":      "--require loads code",
		"--import":       "--import loads code",
	}
	spec := `safe: -s -q -d -w= --silent --quiet --loglevel= --no-color --color=? --workspace= --workspaces
		--include-workspace-root --if-present --ignore-scripts --no-audit --no-fund --no-progress
		--json --parseable --long --help --version -h -v ;
		code: -C= --node-options= --script-shell= --userconfig= --globalconfig= --prefix= --require=
			--import= --loader=`
	top := parseTable("npm", spec, whys)
	run := parseTable("npm run", spec, whys)
	run.passDashDash = true
	install := parseTable("npm install", spec+` ; safe: -D -E -O -P -g --save-dev --save-exact --save
		--no-save --save-optional --save-prod --global --legacy-peer-deps --production --omit= --include=`, whys)
	install.operand = func(int, string) (OptionClass, string) {
		return Code, "this operand runs code: npm installs the package and runs its install scripts"
	}
	for _, t := range []*table{top, run, install} {
		npmFlags(t)
	}
	top.subs = map[string]*table{}
	for _, s := range []string{"run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop",
		"restart", "build"} {
		top.subs[s] = run
	}
	for _, s := range []string{"install", "i", "in", "ins", "inst", "add", "ci", "clean-install"} {
		top.subs[s] = install
	}
	top.subClass = map[string]opt{}
	for _, s := range []string{"exec", "x", "dlx", "create", "init", "explore", "edit"} {
		top.subClass[s] = opt{class: Code, why: "npm " + s + " downloads or runs a package or a command, like npx"}
	}
	return top
}

// npmFlags: npm reads a value given to one of its flags that the flag does
// not take (--json=x; --color takes always) as an operand: npm install
// --json=left-pad installs left-pad. Such a word is not known to be safe.
func npmFlags(t *table) {
	for k, o := range t.long {
		if o.value && !o.optional {
			continue
		}
		k := k
		o.check = func(v string) (OptionClass, string) {
			switch v {
			case "", "true", "false":
				return Safe, ""
			case "always":
				if k == "--color" {
					return Safe, ""
				}
			}
			return Unknown, fmt.Sprintf("this option %s: npm reads a value %s does not take as an operand (npm install %s=x installs x)", Unknown, k, k)
		}
		t.long[k] = o
	}
}

func goTable() *table {
	whys := map[string]string{
		"-toolexec": "go -toolexec runs a program for every tool it starts",
		"-exec":     "go -exec runs the built binary through another program",
		"-overlay":  "go -overlay replaces source files with other files",
		"-modfile":  "go -modfile can point outside the project",
		"-C":        "go -C builds and runs another module",
		"-vettool":  "go vet -vettool runs another program",
		"-o":        "go -o writes the binary to the named file",
	}
	// The build flags, as each command reads them (go help build): -mod
	// not in go get, -cover not in go vet or get, -exec only where the
	// binary runs. -buildvcs takes an attached value only (-buildvcs=false):
	// the next word is never its.
	build := `safe: -a -n -v -x -race -msan -asan -work -trimpath -linkshared -modcacherw -buildvcs=?
		-p= -tags= -installsuffix= ; reads: -pgo= ; code: -toolexec= -overlay= -modfile= -C=`
	const mod, cover, json = ` ; safe: -mod=`, ` ; safe: -cover -covermode= -coverpkg=`, ` ; safe: -json`
	mk := func(name, spec string, operand func(int, string) (OptionClass, string)) *table {
		t := parseTable("go "+name, spec, whys)
		t.goStyle = true
		t.operand = operand
		return t
	}
	// mkBuild adds the flags go passes to its tools, judged by what each
	// tool does with them (goToolFlags).
	mkBuild := func(name, spec string, operand func(int, string) (OptionClass, string)) *table {
		t := mk(name, spec, operand)
		for flag, tool := range map[string]*table{"-ldflags": linkFlags, "-gcflags": compileFlags, "-asmflags": asmFlags} {
			tool := tool
			t.long[flag] = opt{class: Safe, value: true, check: func(v string) (OptionClass, string) { return goToolFlags(tool, v) }}
		}
		return t
	}
	runOperand := func(_ int, word string) (OptionClass, string) {
		if strings.Contains(word, "@") {
			return Code, "this operand runs code: go downloads and runs the named module version"
		}
		return Safe, ""
	}
	installOperand := func(_ int, word string) (OptionClass, string) {
		if strings.Contains(word, "@") {
			return Writes, "this operand writes a file: go install downloads a program into GOBIN"
		}
		return Safe, ""
	}
	test := ` ; safe: -c -run= -bench= -benchtime= -benchmem -count= -cpu= -failfast -fullpath -fuzz= -fuzztime=
		-fuzzminimizetime= -list= -parallel= -short -shuffle= -skip= -timeout= -vet= ;
		writes: -o= -coverprofile= -cpuprofile= -memprofile= -blockprofile= -mutexprofile= -trace= -outputdir=`
	const exec = ` ; code: -exec=`
	top := mk("", `safe: -h -help --help ; code: -C=`, nil)
	top.subs = map[string]*table{
		"build":   mkBuild("build", build+mod+cover+json+` ; writes: -o=`, nil),
		"install": mkBuild("install", build+mod+cover+json, installOperand),
		"run":     mkBuild("run", build+mod+cover+json+exec, runOperand),
		"test":    mkBuild("test", build+mod+cover+json+exec+test, nil),
		"vet":     mkBuild("vet", build+mod+json+` ; code: -vettool=`, nil),
		"list":    mkBuild("list", build+mod+cover+json+` ; safe: -f= -m -u -e -versions -deps -test -export -find -compiled -retracted -reuse=`, nil),
		"get":     mkBuild("get", build+json+` ; safe: -d -t -u=?`, nil),
		"clean":   mkBuild("clean", build+mod+` ; safe: -cache -testcache -modcache -fuzzcache -i -r`, nil),
		"fmt":     mk("fmt", `safe: -n -x -mod=`, nil),
		"version": mk("version", `safe: -m -v -json`, nil),
		"doc":     mk("doc", `safe: -all -c -cmd -short -src -u`, nil),
		"env":     mk("env", `safe: -json -changed ; writes: -w -u`, nil),
		"mod":     mk("mod", `safe: -v -e -x -json -go= -compat= -print -fmt -require= -droprequire= -replace= -dropreplace= -exclude= -dropexclude= -retract= -dropretract= -toolchain= -module=`, nil),
	}
	top.subClass = map[string]opt{
		"generate": {class: Code, why: "go generate runs the commands written in the source"},
		"tool":     {class: Code, why: "go tool runs a tool, possibly one the module declares"},
	}
	return top
}

// ccTable reads C compiler command lines by option prefix: gcc and clang
// take hundreds of options; those that run another program or load a
// plugin are named, the common safe families pass, the rest are Unknown.
func ccTable() *table {
	t := &table{name: "cc", goStyle: true, long: map[string]opt{}, short: map[byte]opt{}}
	p := func(c OptionClass, value bool, why string, prefixes ...string) {
		for _, pre := range prefixes {
			t.prefixes = append(t.prefixes, prefixOpt{prefix: pre, o: opt{class: c, value: value, why: why}})
		}
	}
	p(Code, true, "the compiler driver runs every subprogram through the named wrapper", "-wrapper")
	p(Code, false, "the compiler loads a plugin", "-fplugin", "-fpass-plugin", "-load", "-Xclang")
	p(Code, true, "the compiler runs its subprograms from the named directory", "-B")
	p(Code, true, "a specs file rewrites the commands the driver runs", "-specs", "--specs")
	p(Code, false, "the compiler runs the named linker", "-fuse-ld", "--ld-path")
	p(Code, true, "passes options to the linker, assembler or preprocessor (a plugin, a script)", "-Xlinker", "-Xassembler", "-Xpreprocessor")
	p(Code, false, "passes options to the linker, assembler or preprocessor (a plugin, a script)", "-Wl,", "-Wa,", "-Wp,")
	p(Code, true, "the compiler uses another toolchain", "--gcc-toolchain", "-ccc-", "--sysroot", "-isysroot")
	p(Writes, true, "the compiler writes the named file", "-o", "-MF", "-MT", "-MQ", "-MJ", "--output", "-dumpdir", "-dumpbase")
	// -fdump-tree-all=FILE and -fopt-info-vec=FILE write the named file.
	for _, pre := range []string{"-fdump-", "-fopt-info"} {
		t.prefixes = append(t.prefixes, prefixOpt{prefix: pre, o: opt{class: Safe, check: func(v string) (OptionClass, string) {
			if v != "" {
				return Writes, "this option writes a named file: gcc " + pre + "...=FILE writes its dump to FILE"
			}
			return Safe, ""
		}}})
	}
	p(Writes, false, "the compiler keeps its temporary files where told", "-save-temps")
	p(Safe, true, "", "-I", "-D", "-U", "-L", "-l", "-x", "-include", "-isystem", "-iquote", "-idirafter", "-imacros")
	p(Safe, false, "", "-c", "-S", "-E", "-g", "-O", "-W", "-w", "-std=", "-f", "-m", "-v", "-pipe",
		"-shared", "-static", "-pthread", "-pedantic", "-M", "-nostdlib", "-nostdinc", "-rdynamic", "-s", "-P",
		"--version", "--help", "-print-", "-dumpversion", "-dumpmachine", "-ansi", "-fsyntax-only")
	// Longest prefix first, so -fplugin beats -f and -Wl, beats -W.
	sortPrefixes(t.prefixes)
	t.operand = func(_ int, word string) (OptionClass, string) {
		if strings.HasPrefix(word, "@") {
			return Code, "this operand runs code: @FILE reads more compiler options from a file"
		}
		return Safe, ""
	}
	return t
}

func sortPrefixes(ps []prefixOpt) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && len(ps[j].prefix) > len(ps[j-1].prefix); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// findTable is GNU find's: its options and tests take at most one word
// (-fprintf's format is read as an operand: the table already classes it as
// a write), none clusters. The actions that run commands (-exec, -ok) are
// refused by the analysis itself; those that delete or write named files
// are writes; the tests that read another file's times are reads.
func findTable() *table {
	newer := ""
	for _, x := range "aBcm" {
		for _, y := range "aBcmt" {
			if y == 't' {
				continue
			}
			newer += " -newer" + string(x) + string(y) + "="
		}
	}
	dates := ""
	for _, x := range "aBcm" {
		dates += " -newer" + string(x) + "t="
	}
	t := parseTable("find", `
		safe: -H -L -P -depth -d -daystart -ignore_readdir_race -noignore_readdir_race -mount -xdev
			-noleaf -nowarn -warn -print -print0 -ls -prune -quit -true -false -empty -executable
			-readable -writable -nogroup -nouser -a -and -o -or -not -follow -help --help -version --version
			-maxdepth= -mindepth= -name= -iname= -path= -ipath= -wholename= -iwholename= -regex= -iregex=
			-regextype= -lname= -ilname= -type= -xtype= -size= -perm= -user= -group= -uid= -gid= -links=
			-inum= -mtime= -mmin= -atime= -amin= -ctime= -cmin= -used= -fstype= -context= -printf= -D= -O=?`+dates+` ;
		reads: -newer= -anewer= -cnewer= -samefile= -files0-from=`+newer+` ;
		writes: -delete -fprint= -fprint0= -fprintf= -fls= ;
		code: -exec= -execdir= -ok= -okdir=`, map[string]string{
		"-delete":  "find -delete removes every file it matches",
		"-fprint":  "find -fprint writes its list to the named file",
		"-fprint0": "find -fprint0 writes its list to the named file",
		"-fprintf": "find -fprintf writes its list to the named file",
		"-fls":     "find -fls writes its list to the named file",
		"-exec":    "find -exec runs a command for each file",
		"-execdir": "find -execdir runs a command for each file",
		"-ok":      "find -ok runs a command for each file",
		"-okdir":   "find -okdir runs a command for each file",
	})
	t.goStyle = true
	return t
}

// sedTable is GNU sed's options. Its scripts (the first operand, or each
// -e) are read by the analysis (shellparse: e, r, R, w, W and the s flags e
// and w make the command indirect; a script from -f is refused there); the
// table classes the options: -i writes the files it edits.
func sedTable() *table {
	return parseTable("sed", `
		safe: -n -E -r -s -u -z -b --quiet --silent --regexp-extended --separate --unbuffered
			--null-data --zero-terminated --posix --debug --sandbox --binary --help --version
			-e= --expression= -l= --line-length= ;
		reads: --follow-symlinks ;
		writes: -i=? --in-place=? ;
		code: -f= --file=`, map[string]string{
		"-i":         "sed -i rewrites the files it reads",
		"--in-place": "sed --in-place rewrites the files it reads",
		"-f":         "sed -f reads its script, which may run commands, from a file",
		"--file":     "sed --file reads its script, which may run commands, from a file",
	})
}
