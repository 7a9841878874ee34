package shellparse

// Verdict is the class of a command. Only Simple can be covered by a scope.
type Verdict string

const (
	Simple       Verdict = "simple"
	Chained      Verdict = "chained"
	Indirect     Verdict = "indirect"
	PathShadowed Verdict = "path_shadowed"
	Unparseable  Verdict = "unparseable"
)

// Word is one argument after quote removal and literal expansion.
type Word struct {
	Value string `json:"value"`
	// Glob is true when the word has unquoted glob characters and matched
	// no file when it was analysed: bash keeps such a word as it is, unless
	// a file to match appears before it runs.
	Glob bool `json:"glob,omitempty"`
	// Pattern is the glob pattern (quoted characters escaped with a
	// backslash) the word was expanded from: a matched file's name, or the
	// pattern itself when Glob. "" for a word without glob characters.
	Pattern string `json:"pattern,omitempty"`
}

// Redirect is one redirection of the simple command.
type Redirect struct {
	Op     string `json:"op"`           // ">", ">>", "&>", ">|", "<>", "<", ...
	Fd     string `json:"fd,omitempty"` // explicit fd ("2"), empty for default
	Target string `json:"target"`       // literal target after quote removal
	Writes bool   `json:"writes"`       // true for >, >>, &>, &>>, >|, <>
}

// Env is what the analysis resolves command names against.
type Env struct {
	Cwd        string   // the call's cwd (absolute)
	Path       string   // PATH as the command will see it
	ProjectDir string   // CLAUDE_PROJECT_DIR, or cwd
	Trusted    []string // trusted executable directories; nil means DefaultTrusted
	// Home is $HOME, used for tilde expansion. Empty: a word with a tilde
	// to expand is Indirect.
	Home string
}

// Assign is one allowed assignment prefix of a simple command (NAME=value).
type Assign struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Result is the analysis of one command string.
type Result struct {
	Verdict Verdict `json:"verdict"`
	// Sketch is every command the text runs, wherever nested, and its
	// pipelines, from the same parse (nil when bash cannot parse it): what
	// the danger lines read, so a call is parsed once.
	Sketch *Sketch `json:"-"`
	// parsed is the parse the analysis read (nil when bash cannot parse
	// the command): Outline prints it rather than parsing again.
	parsed *tree
	// Reason says, for a person, why the verdict is not Simple ("" if Simple).
	Reason string `json:"reason,omitempty"`
	// Pos is "line:col" of the first offending node ("" if Simple).
	Pos string `json:"pos,omitempty"`
	// Argv is set when Verdict is Simple (and, where it can be told, for
	// PathShadowed), argv[0] being the command name as written.
	Argv []Word `json:"argv,omitempty"`
	// Executable is argv[0] resolved to an absolute path, symlinks resolved.
	Executable string `json:"executable,omitempty"`
	// Builtin is true when argv[0] names a bash builtin: bash runs it without
	// a PATH lookup, and Executable is empty.
	Builtin bool `json:"builtin,omitempty"`
	// Assigns are the assignment prefixes of a simple command; only names
	// on a short list of inert variables can be part of one (see the
	// package documentation). Scopes must match them like arguments.
	Assigns   []Assign   `json:"assigns,omitempty"`
	Redirects []Redirect `json:"redirects,omitempty"`
	// Executables maps every literal command name found anywhere in the
	// command (also inside chains) to its resolved absolute path, or "" when
	// it does not resolve. The descriptor of an exact approval includes it.
	Executables map[string]string `json:"executables,omitempty"`
	// Warnings name invisible, bidi, control and confusable characters.
	Warnings []string `json:"warnings,omitempty"`
	// Plain is true when the command's text is already what Canonical
	// writes, up to quoting: no $'...', no backslash, no glob, brace or
	// tilde expansion, only plain single and double quotes. An agent whose
	// hook cannot rewrite the command runs its own text; only a Plain
	// command is covered by a scope there.
	Plain bool `json:"plain,omitempty"`
	// Cwd is the directory the command is judged in: Env.Cwd, or for a
	// part of a chain, the directory an earlier cd of the chain moved to.
	Cwd string `json:"cwd,omitempty"`
	// Chdir, for a cd part of a chain, is the absolute directory (symlinks
	// resolved) it changes to; the later parts are judged there.
	Chdir string `json:"chdir,omitempty"`
	// Parts and Ops are set for a Chained command that is only simple
	// commands joined by ;, newlines, &&, || and pipes, each part analysed
	// as a simple command of its own (Parts[i].Verdict is Simple) and Ops[i]
	// the operator between Parts[i] and Parts[i+1], in source order (";"
	// for a newline). A scope can cover such a chain when it covers every
	// part; the chain then runs as the parts' canonical forms joined by the
	// same operators, which bash parses into the same tree.
	Parts []Result `json:"parts,omitempty"`
	Ops   []string `json:"ops,omitempty"`
}
