package policy

import (
	"slices"
	"strings"
)

// ProjectCode says why a command runs code the project chose (its
// scripts, its build files, its tests, a package it names) and, when
// there is one, the form of it that runs none.
//
// The jail lets a call write the project, so whatever code the project
// holds can be the agent's by the next call: a standing +network (or an
// unconfined) grant for a program that runs it gives that code the
// network at every later call with no human asked (issue 36). Such a
// program gets the network for one call at a time (an exact approval);
// the form that runs no code (npm install --ignore-scripts) can hold a
// standing grant, and the code it skipped then runs in the jail, without
// the network (npm rebuild, cargo build after cargo fetch).
type ProjectCode struct {
	Why string // for a person: "npm install runs the packages' lifecycle scripts"
	// Instead is the command in the form that runs no code, the
	// rule's words with the option that turns the code off, or the
	// download that fetches what the build needs (cargo fetch); nil when
	// there is none.
	Instead []string
	// Then is what runs the rest in the jail, for the screen ("npm
	// rebuild, in the jail"); "" when nothing needs to.
	Then string
	// Wild: Instead may keep the rule's wildcard (npm's, pnpm's and
	// yarn's options are tabled: a wildcard covers no word that turns
	// --ignore-scripts off).
	Wild bool
}

// RunsProjectCode reports whether a Bash rule whose literal words start
// with words (are words, when exact: the rule has no wildcard) runs code
// of the project, or code the words name, when it runs. It reads the
// rule, not a call: a wildcard may add any word the option tables let it
// cover (npm's never turn --ignore-scripts off: --ignore-scripts=false
// and --no-ignore-scripts are not covered), so a form safe only by an
// option is safe with a wildcard only for the programs whose tables
// guard that option (npm, pnpm, yarn); for the others the exact command
// is.
//
// It leans towards yes: a program it does not know to run no code is
// judged by its class (an interpreter, a shell, a wrapper run code), and
// otherwise, like the jail's table, by what it is known for.
func RunsProjectCode(words []string, exact bool) (ProjectCode, bool) {
	if len(words) == 0 {
		return ProjectCode{Why: "a rule with no literal program runs whatever the wildcard names"}, true
	}
	name := words[0]
	prog := Base(name)
	if strings.Contains(name, "/") && !strings.HasPrefix(name, "/") {
		return ProjectCode{Why: name + " is a program of the project"}, true
	}
	if f, ok := projectCodeTable[prog]; ok {
		return f(pcCall{prog: prog, words: words, exact: exact})
	}
	if _, _, ok := interpName(prog); ok {
		return ProjectCode{Why: prog + " runs the code it is given (a script of the project, -c code)"}, true
	}
	if _, ok := jailWrappers()[prog]; ok {
		return ProjectCode{Why: prog + " runs another command"}, true
	}
	if why, ok := alwaysProjectCode[prog]; ok {
		return ProjectCode{Why: prog + " " + why}, true
	}
	return ProjectCode{}, false
}

// pcCall is a rule's words as RunsProjectCode's table reads them.
type pcCall struct {
	prog  string
	words []string
	exact bool
}

// sub is the first word after the program that is not an option ("" if
// none).
func (c pcCall) sub() string {
	for _, w := range c.words[1:] {
		if !strings.HasPrefix(w, "-") {
			return w
		}
	}
	return ""
}

// lastSays reports whether the last of the words that set an option
// among on and off is one of on: npm reads its flags in order, so
// --ignore-scripts --ignore-scripts=false runs the scripts.
func (c pcCall) lastSays(on, off []string) bool {
	set := false
	for _, w := range c.words[1:] {
		switch {
		case slices.Contains(on, w):
			set = true
		case slices.Contains(off, w):
			set = false
		}
	}
	return set
}

// with is the rule's words without those of drop, and with each of opt
// they lack inserted after the subcommand sub.
func (c pcCall) with(sub string, drop []string, opt ...string) []string {
	var words []string
	for _, w := range c.words {
		if !slices.Contains(drop, w) {
			words = append(words, w)
		}
	}
	var add []string
	for _, o := range opt {
		if !slices.Contains(words, o) {
			add = append(add, o)
		}
	}
	i := slices.Index(words, sub)
	if i < 0 {
		return append(words, add...)
	}
	out := slices.Clone(words[:i+1])
	out = append(out, add...)
	return append(out, words[i+1:]...)
}

// alwaysProjectCode run code of the project whatever their words: a
// build file that is code (a Makefile, build.gradle, a Gemfile,
// Package.swift, mix.exs), tests, or a package they download and run.
var alwaysProjectCode = map[string]string{
	"make": "runs the Makefile's recipes", "gmake": "runs the Makefile's recipes", "bmake": "runs the Makefile's recipes",
	"cmake": "runs the project's CMake code and its build", "ninja": "runs the project's build", "meson": "runs the project's build files",
	"just": "runs the justfile's recipes", "task": "runs the Taskfile's commands", "rake": "runs the Rakefile",
	"scons": "runs SConstruct, Python code", "bazel": "runs the project's build rules", "bazelisk": "runs the project's build rules",
	"mvn": "runs the plugins the pom names, and the tests", "mvnw": "runs the project's own Maven wrapper and its plugins",
	"gradle": "runs build.gradle, code", "gradlew": "runs the project's own Gradle wrapper and build.gradle", "ant": "runs build.xml's tasks",
	"sbt": "runs build.sbt, code", "lein": "runs project.clj, code", "mix": "runs mix.exs, code", "rebar3": "runs the project's build",
	"bundle": "evaluates the Gemfile, Ruby code", "gem": "builds a gem's native extension (extconf.rb) as it installs it",
	"swift": "evaluates Package.swift, code", "dotnet": "runs the project's MSBuild files", "cabal": "may run a package's Setup.hs",
	"stack": "may run a package's Setup.hs", "tox": "installs the project and runs its tests", "nox": "runs noxfile.py",
	"pytest": "runs the project's tests", "py.test": "runs the project's tests", "jest": "runs the project's tests",
	"vitest": "runs the project's tests", "mocha": "runs the project's tests", "ava": "runs the project's tests",
	"karma": "runs the project's tests", "phpunit": "runs the project's tests", "rspec": "runs the project's tests",
	"playwright": "runs the project's tests", "cypress": "runs the project's tests",
	"npx": "downloads and runs a package's code", "bunx": "downloads and runs a package's code", "pnpx": "downloads and runs a package's code",
	"uvx": "downloads and runs a package's code", "pipx": "installs and runs a package's code",
	"poetry": "installs the project itself (its build backend runs)", "pdm": "installs the project itself (its build backend runs)",
	"pipenv": "installs what the Pipfile names, local paths and sdists whose setup.py runs", "hatch": "runs the project's build hooks and scripts",
	"flutter": "runs the project's build and tests", "turbo": "runs the project's scripts", "nx": "runs the project's targets",
	"lerna": "runs the packages' scripts",
}

// projectCodeTable judges the programs that run code for some words only.
var projectCodeTable = map[string]func(pcCall) (ProjectCode, bool){
	"npm": pcNodePM, "pnpm": pcNodePM, "yarn": pcNodePM, "bun": pcNodePM,
	"cargo": pcCargo, "go": pcGo, "pip": pcPip, "uv": pcUv, "composer": pcComposer, "deno": pcDeno,
}

// nodeReadOnly are the package managers' subcommands that run no script
// and no package.
var nodeReadOnly = []string{"", "view", "v", "info", "show", "search", "s", "se", "find", "outdated", "ls", "list", "ll", "la",
	"why", "explain", "ping", "whoami", "login", "logout", "adduser", "config", "get", "set", "cache", "help", "fund", "doctor",
	"owner", "access", "token", "dist-tag", "deprecate", "unpublish", "star", "stars", "repo", "docs", "bugs", "home", "root",
	"bin", "prefix", "pkg", "query", "sbom", "audit", "org", "team", "profile", "licenses", "store", "--version", "-v", "--help", "-h"}

// nodeInstalls are their subcommands that run the lifecycle scripts
// (preinstall, install, postinstall, prepare) unless told not to.
var nodeInstalls = []string{"install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "add", "ci",
	"clean-install", "ic", "install-clean", "isntall-clean", "update", "up", "upgrade", "udpate", "dedupe", "ddp", "rebuild",
	"rb", "link", "ln", "pack", "publish", "audit", "remove", "rm", "uninstall", "un", "unlink", "r", "prune", "import"}

func pcNodePM(c pcCall) (ProjectCode, bool) {
	sub := c.sub()
	if c.prog == "yarn" && sub == "" && c.exact && len(c.words) == 1 {
		sub = "install" // yarn alone installs
	}
	if slices.Contains(nodeReadOnly, sub) && (sub != "audit" || !slices.Contains(c.words, "fix")) {
		return ProjectCode{}, false
	}
	if !slices.Contains(nodeInstalls, sub) {
		return ProjectCode{Why: c.prog + " " + sub + " runs the project's scripts or a package's code"}, true
	}
	on := []string{"--ignore-scripts", "--ignore-scripts=true"}
	off := []string{"--ignore-scripts=false", "--no-ignore-scripts"}
	if c.prog == "yarn" {
		on = append(on, "--mode=skip-build")
	}
	pc := ProjectCode{
		Why:     c.prog + " " + sub + " runs the lifecycle scripts (preinstall, install, postinstall, prepare) of the project and of the packages it installs",
		Instead: c.with(sub, off, "--ignore-scripts"),
		Then:    c.prog + " rebuild (the scripts), in the jail without the network",
	}
	if c.prog == "bun" {
		pc.Then = "the scripts, in the jail without the network"
	}
	pc.Wild = !c.exact && c.prog != "bun"
	if !c.lastSays(on, off) {
		return pc, true
	}
	if !c.exact && c.prog == "bun" {
		// bun's options are not tabled: a wildcard could add what
		// turns the scripts back on.
		pc.Why = "bun's options are not checked under a wildcard, which could turn --ignore-scripts off"
		pc.Instead = slices.Clone(c.words)
		return pc, true
	}
	return ProjectCode{}, false
}

// cargoNoCode are cargo's subcommands that build and run nothing.
var cargoNoCode = []string{"", "fetch", "update", "search", "tree", "metadata", "vendor", "add", "remove", "rm", "login", "logout",
	"owner", "yank", "info", "version", "generate-lockfile", "locate-project", "pkgid", "verify-project", "--version", "-V", "help", "--help"}

func pcCargo(c pcCall) (ProjectCode, bool) {
	sub := c.sub()
	if slices.Contains(cargoNoCode, sub) {
		return ProjectCode{}, false
	}
	return ProjectCode{Why: "cargo " + sub + " builds the crates, which runs their build.rs and procedural macros",
		Instead: []string{c.words[0], "fetch"}, Then: "cargo " + sub + " --offline, in the jail without the network"}, true
}

func pcGo(c pcCall) (ProjectCode, bool) {
	switch sub := c.sub(); sub {
	case "test", "generate", "run", "tool":
		return ProjectCode{Why: "go " + sub + " runs code of the project (its tests, its generators, its main package, a tool it names)",
			Instead: []string{c.words[0], "mod", "download"}, Then: "go " + sub + ", in the jail without the network"}, true
	}
	return ProjectCode{}, false
}

// pipBuilds are pip's subcommands that may build a source distribution
// (setup.py, or a build backend the package names: code).
var pipBuilds = []string{"install", "download", "wheel"}

func pcPip(c pcCall) (ProjectCode, bool) {
	return pcPipFrom(c, 1)
}

// pcPipFrom judges pip's words from words[at] (1 for pip, 2 for uv pip).
func pcPipFrom(c pcCall, at int) (ProjectCode, bool) {
	sub := ""
	for _, w := range c.words[at:] {
		if !strings.HasPrefix(w, "-") {
			sub = w
			break
		}
	}
	if !slices.Contains(pipBuilds, sub) {
		return ProjectCode{}, false
	}
	pc := ProjectCode{Why: strings.Join(c.words[:at], " ") + " " + sub + " builds a source distribution or a local project when it gets one, running its setup.py or build backend",
		Instead: c.with(sub, nil, "--only-binary=:all:")}
	if !c.exact {
		pc.Why += "; under a wildcard any operand could be one"
		return pc, true
	}
	binaryOnly := false
	for i, w := range c.words[at:] {
		switch {
		case w == "--only-binary=:all:", w == ":all:" && i > 0 && c.words[at+i-1] == "--only-binary":
			binaryOnly = true
		case w == "-e", w == "--editable", w == "-r", w == "--requirement", strings.HasPrefix(w, "--no-binary"),
			strings.HasPrefix(w, "--editable="), strings.HasPrefix(w, "--requirement="), strings.HasPrefix(w, "-r"), strings.HasPrefix(w, "-e"):
			pc.Why = strings.Join(c.words[:at], " ") + " " + sub + " " + w + " installs what a file of the project or a local path names"
			pc.Instead = nil
			return pc, true
		case !strings.HasPrefix(w, "-") && w != sub && (strings.ContainsAny(w, "/\\") || strings.HasPrefix(w, ".") || strings.Contains(w, "://") ||
			strings.HasSuffix(w, ".tar.gz") || strings.HasSuffix(w, ".zip") || strings.HasSuffix(w, ".whl")):
			pc.Why = strings.Join(c.words[:at], " ") + " " + sub + " " + w + " builds or installs a local path or a URL"
			pc.Instead = nil
			return pc, true
		}
	}
	if binaryOnly {
		return ProjectCode{}, false
	}
	return pc, true
}

func pcUv(c pcCall) (ProjectCode, bool) {
	switch sub := c.sub(); sub {
	case "pip":
		return pcPipFrom(c, 2)
	case "", "--version", "-V", "version", "help", "cache", "python", "self":
		return ProjectCode{}, false
	default:
		return ProjectCode{Why: "uv " + sub + " installs or runs the project (its build backend, its scripts)"}, true
	}
}

func pcComposer(c pcCall) (ProjectCode, bool) {
	switch sub := c.sub(); sub {
	case "install", "i", "update", "u", "upgrade", "require", "r", "remove", "rm", "create-project", "reinstall", "dump-autoload", "dumpautoload", "run-script", "run", "exec", "global":
		pc := ProjectCode{Why: "composer " + sub + " runs the scripts and plugins composer.json names",
			Instead: c.with(sub, nil, "--no-scripts", "--no-plugins"), Then: "composer run-script, in the jail without the network"}
		if sub == "run-script" || sub == "run" || sub == "exec" || sub == "global" {
			pc.Instead, pc.Then = nil, ""
			return pc, true
		}
		if !c.exact || !slices.Contains(c.words, "--no-scripts") || !slices.Contains(c.words, "--no-plugins") {
			return pc, true
		}
	}
	return ProjectCode{}, false
}

func pcDeno(c pcCall) (ProjectCode, bool) {
	switch sub := c.sub(); sub {
	case "run", "test", "task", "bench", "serve", "repl", "eval", "x", "jupyter":
		return ProjectCode{Why: "deno " + sub + " runs code"}, true
	}
	if !c.exact {
		return ProjectCode{Why: "deno runs a script it is given, which a wildcard may name"}, true
	}
	if sub := c.sub(); sub != "" && strings.ContainsAny(sub, "./") {
		return ProjectCode{Why: "deno " + sub + " runs a script"}, true
	}
	return ProjectCode{}, false
}
