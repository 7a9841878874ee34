// Package shellparse decides whether a Bash command string is one simple
// command with literal words, the only shape a scoped grant may cover.
// Everything else gets a verdict that says why it needs an exact approval.
//
// [Analyze] parses the command with mvdan.cc/sh/v3/syntax in the bash
// dialect and walks the tree. The walker knows a small set of node shapes;
// any other shape is denied (Unparseable), never allowed. The verdicts:
//
//   - Simple: exactly one command, every word a literal after quote removal
//     (including $'...') and brace expansion, the command name resolved to
//     an executable in a trusted directory (or a harmless bash builtin), no
//     wrapper or interpreter that runs code given on its command line.
//   - Chained: more than one command in any form: ; && || | |& & newlines,
//     ! pipelines, subshells, groups, if/for/while/until/case/select,
//     functions, coproc, command and process substitution, backticks.
//   - Indirect: the command runs other code or depends on run-time state:
//     eval, source, exec, command, builtin, declare and friends, trap and
//     every other builtin that changes the shell; shells and interpreters
//     given inline code or a script on stdin, and programs whose arguments
//     carry code they run (policy.CodeInArgs, the one table of them: find
//     -exec, git -c, awk's system(), ...); wrappers that run another
//     command (env, sudo, xargs, timeout, ...); parameter and
//     arithmetic expansion; here-documents and here-strings; a brace
//     expansion that builds the command name; [[ ]], (( )), let and time.
//   - PathShadowed: an assignment prefix that changes how commands are
//     found or what they load (PATH, LD_*, BASH_ENV, GIT_*, *_OPTIONS,
//     *FLAGS, ...); a command word with a slash that is not a clean
//     absolute path in a trusted directory; a name whose first PATH hit is
//     in a relative PATH entry, inside the project or the cwd, or outside
//     the trusted directories, or is a symlink into the project or the cwd;
//     a name that is not found at all.
//   - Unparseable: anything the parser rejects, input over MaxCommandLen,
//     invalid UTF-8, NUL bytes, brace expansions over the size bound, and
//     whatever bash and the parser may read differently: comments, raw
//     control characters other than tab and newline, a final backslash, a
//     quoted word after >& or <&, a target of digits run into the next
//     redirection, a literal } followed by a comma, a here-document line
//     ending in a backslash bash joins with the next before it looks for
//     the delimiter. The test oracle (confirm_test.go) checks simple verdicts
//     against real bash.
//
// # One model of a command
//
// Every entry point (Analyze, SketchOf, Shape, SplitShape, Outline, List,
// ParseRuleCommand) parses its text once, with the package's one parser,
// into a tree read by one walker, and reads every word with one quote
// removal: the analysis's argv, the sketch the danger lines read, the
// shape, the split, the outline's commands and a rule's words are the same
// words (TestViewsReadTheAnalysisWords). Analyze's sketch comes from its
// own parse. The walk is linear in the tree, however deep: a pipeline of
// 4,001 parts costs about four times one of 1,001, counted in nodes
// walked (TestPipelineLinear) and in allocations over several shapes
// (TestLongCommandsAllocateLinearly); present's TestLongCommandsCostLinear
// times the same work with the danger lines.
//
// # Assignment prefixes
//
// A prefix such as GOFLAGS=-toolexec=./x go test silently changes what a
// program runs, so assignments are treated conservatively. Names that load
// code or change command lookup are PathShadowed. Every other name is
// Indirect unless it is on a short list of inert variables (locale, colour,
// CI flags, GOOS/GOARCH/CGO_ENABLED, NODE_ENV, TZ, ...); those are kept in
// Result.Assigns, their values must be literal, and scopes match them as
// part of the command. A command made of assignments only is never Simple.
//
// # What the analysis cannot see
//
// Aliases and functions defined in the user's shell, binaries replaced
// inside trusted directories, and what a program does with its own
// arguments and files (make runs Makefiles, go test runs code, git runs
// hooks and configured commands). See README.md.
//
// Warnings report invisible, bidi, control and confusable characters with
// their position as line:column (1-based, column in bytes, like the parser)
// and code point.
package shellparse
