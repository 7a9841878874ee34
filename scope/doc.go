// Package scope parses standing-permission rules written in Claude Code's
// permission rule syntax and decides whether a rule covers a tool call.
// loopguard mints these rules as signed, expiring, session- and agent-bound
// grants; this package is the grammar and the matcher. It fails closed:
// whatever it cannot establish is a mismatch with a stable reason code.
//
// Where Claude Code is looser than a security tool should be, scope is
// stricter; each such place is marked "Stricter:" below.
//
// # Grammar
//
//	rule      = bare | bash | file | webfetch | mcp
//	bare      = TodoWrite | ExitPlanMode | WebSearch | Task | Agent | BashOutput
//	bash      = "Bash(" command ")" [ "@" [ "sha256:" hex64 ":" ] abspath ]
//	file      = ( "Edit" | "Write" | "Read" ) "(" anchor pattern ")"
//	anchor    = "//" | "~/" | "/" | "./" | ""
//	webfetch  = "WebFetch(domain:" host ")"
//	mcp       = "mcp__" server [ "__" tool [ "*" ] | "__*" ]
//
// A rule is at most 4096 bytes of valid UTF-8 with no control, format
// (bidi, zero-width) or other invisible characters. Parse errors are
// *ParseError values giving the byte offset and the reason.
//
// # Bash rules
//
// The text between the parentheses is split into words by a real bash
// parser (mvdan.cc/sh), with bash's quoting: 'single', "double", $'ANSI-C'
// and backslashes. It must be one simple command: no ; && || | &, no
// subshells, groups, keywords, assignments, comments, or expansions ($VAR,
// $(...), `...`, ~, {a,b}, ?, [...]). The command name must be a literal
// word, either a bare name looked up in PATH or an absolute path.
//
// Matching is on the argv that shellparse produced for the call, never on
// the raw string, and only for a call whose verdict is simple:
//
//   - A literal word matches the same word exactly.
//   - A word with an unquoted * inside it (test*, --out=*) matches one word
//     of the call; the * matches any characters within that word.
//   - A whole-word * in the middle (git * main) matches exactly one word.
//     Stricter: in Claude Code it matches any run of text, spaces included.
//   - A whole-word * at the end (git log *) matches zero or more further
//     words; Claude Code's legacy prefix form "git log:*" means the same and
//     is rewritten to it. Because matching is by word, Bash(ls *) covers
//     "ls" and "ls -la" but never "lsof"; Bash(ls*) is refused (the command
//     name must be literal; Claude Code would let it cover lsof).
//   - A wildcard never covers a word that runs code or writes a named
//     file (make X:=$(shell ...), go -toolexec, git -c, sort -o, --output=),
//     nor an option that package policy's option table does not list for a
//     tabled program (make, npm, go, cc, git, sort, uniq, tee, tar, rg, fd,
//     curl, wget):
//     such a call is option_not_covered. Stricter: Claude Code's * covers
//     them.
//   - A call word with unquoted glob characters (bash expands it against the
//     file system to any number of words) matches only inside the trailing
//     *; anywhere else it is refused with glob_word.
//   - Writing redirections (> >> &> &>> >| <>), and also reading ones (<),
//     are covered only if the rule names them with the same operator,
//     descriptor and literal target: Bash(go test ./... >test.log). Stricter:
//     Claude Code ignores redirections when matching. Descriptor
//     duplication (2>&1, >&2, >&-) and /dev/null need no naming. Here-docs
//     and here-strings are never covered.
//   - A Bash rule pinned to an executable that is not root's alone (the
//     file or a directory above it is owned by another user, or writable
//     by group or others: ~/.cargo/bin, ~/go/bin, pyenv shims, /tmp) is
//     also pinned to its content, a SHA-256 in the canonical form
//     (@sha256:HEX:/path); the call must find the same content there
//     (executable_content_changed). Call.ExeDigest reads it (the hook's is
//     cached by file identity in the state dir).
//   - A call under a rule pinned to git is covered only when git would use
//     the project's own repository (or one above the project), never a
//     nested or bare repository inside it nor one from a cwd outside it:
//     their configuration runs commands (repository_not_covered).
//   - A Bash rule is pinned (Rule.Pin) to the executable its command name
//     resolves to when the grant is minted; the pinned path is part of the
//     canonical form and so of the MAC. The call must resolve to exactly
//     that path: a grant for git minted when git was /usr/bin/git does not
//     cover a git that now resolves to ~/.local/bin/git. An unpinned Bash
//     rule covers nothing.
//
// Canonical form: words single-quoted only where needed, the open end as a
// final " *", redirections after the words, then "@" and the pinned path:
//
//	Bash(go test ./...)@/usr/local/go/bin/go
//	Bash(npm run test *)@/usr/bin/npm      (written Bash(npm run test:*))
//	Bash(git log *)@/usr/bin/git
//	Bash(sort 'a b' >out.txt)@/usr/bin/sort
//
// # File rules: Edit, Write, Read
//
// Patterns are doublestar globs: * matches within one path segment, ** (a
// whole segment) matches any number of segments, ? and [...] match one
// character. Braces, backslash escapes, empty, "." and ".." segments and a
// trailing / are refused. Anchors:
//
//	//path   absolute, from the file system root: Edit(//tmp/scratch/**)
//	~/path   from the home directory:             Read(~/notes/**)
//	/path    from the project directory:          Edit(/src/**)
//	./path   from the project directory:          Edit(./src/**)
//	path     from the project directory:          Edit(src/**)
//
// Stricter: Claude Code reads path and ./path relative to the current
// directory and follows gitignore rules, so that a pattern without a slash
// (*.env) matches at any depth. Here every relative pattern is anchored at
// the project directory (CLAUDE_PROJECT_DIR, else the cwd) and matches
// from there only: a cd by the agent does not move what a grant covers. The
// canonical form writes project-relative patterns bare (src/**).
//
// Matching a call: the target (file_path; notebook_path for NotebookEdit) is
// refused if it contains a ".." segment (path_escapes); made absolute against
// the cwd; every symlink resolved, also for a file that does not exist yet
// (its deepest existing ancestor is resolved) and for a dangling symlink
// (writing through it would create its target); made relative to the
// resolved anchor directory and refused when it leaves it (path_escapes);
// only then matched against the pattern (path_mismatch). So src/** covers
// src/a.go but not src/../../etc/passwd, a symlink src/x -> /etc, or
// srcx/a.go. An absolute pattern is matched against the fully resolved path
// (on macOS write //private/tmp/..., not //tmp/...).
//
// Which tools a rule covers (Rule.CoversTool): as in Claude Code, an Edit
// rule covers every built-in tool that edits files: Edit, MultiEdit, Write
// and NotebookEdit. Stricter: a Write rule covers Write only, and a Read rule
// covers Read only (Claude Code also applies Read rules, best effort, to
// Grep, Glob and LS).
//
// # WebFetch rules
//
// WebFetch(domain:pkg.go.dev) covers a URL whose scheme is http or https and
// whose host is exactly pkg.go.dev (ASCII, case-insensitive; IDNs in xn--
// form). Not covered: other hosts including pkg.go.dev.evil.example and
// sub.pkg.go.dev (no suffix matching, no wildcards), a URL with user info
// (https://pkg.go.dev@evil.example/), a non-default port, a trailing dot, or
// any backslash, whitespace, control or raw non-ASCII character, on which
// URL parsers disagree (bad_url).
//
// # MCP rules
//
// mcp__github__get_issue covers exactly that tool; mcp__github__get_*
// covers the github server's tools whose names start with get_;
// mcp__github__* (also written mcp__github) covers all of them. The server
// name is literal and ends at the first "__"; a wildcard never covers a
// tool name containing "__" (which could belong to a server named
// github__x).
//
// # Bare names
//
// A bare tool name is accepted only for tools with no arguments worth
// scoping: TodoWrite, ExitPlanMode, WebSearch, Task, Agent, BashOutput. Bare
// Bash, Edit, Write, Read, MultiEdit, NotebookEdit and WebFetch parse, so
// that Dangerous can explain why they are refused, but cover nothing.
//
// # Refused scopes
//
// Dangerous refuses rules that would let the agent escape the guard: bare
// Bash and the other bare scoped tools; Bash scopes over shells,
// interpreters and wrappers (bash, python, node, env, xargs, sudo, find,
// timeout, ssh, docker...), over loopguard, the claude CLI and the keyring
// tools (secret-tool, gnome-keyring-daemon, security, dbus-send, busctl,
// gdbus...); Bash scopes with a wildcard right after git, make, npm, go...,
// or anywhere in a command that writes the files it names (cp, mv, rm, tee,
// chmod...); and file scopes that can reach the hook settings (.claude/ in
// the project, ~/.claude/), .git/, .vscode/ or .idea/, the guard's state,
// config and binary, or the keyrings. Such calls can still be approved one at a time with
// `loopguard approve <id>`.
//
// # Reason codes
//
// Match returns nil or a *MatchError whose Reason is one of: tool_mismatch,
// not_simple, argv_mismatch, executable_changed, redirect_not_covered,
// glob_word, path_escapes, path_mismatch, bad_url, domain_mismatch,
// malformed_input.
//
// # Limits
//
// A scope trusts the program it names with any arguments its wildcards
// allow: Bash(go test *) runs test code the agent may have written, and
// Bash(git log *) lets the agent pick any git log option. Keep wildcards
// narrow. File matching resolves symlinks when the hook runs; a process
// that swaps a symlink between the check and the write is outside what a
// pre-call check can see.
package scope
