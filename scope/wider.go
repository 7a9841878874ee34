package scope

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

// Wider returns the rule one step wider than Narrowest for a simple Bash
// command that names a subcommand: its program and subcommand, then *, as
// in Bash(go test *) for go test -v ./... . It is offered only where
// Narrowest offers a rule (no shell, interpreter, runner, glob,
// assignment or redirection), for a program policy reads as taking a
// subcommand first (policy.SubcommandFirst) and a subcommand its option
// table lists, and only when:
//
//   - Dangerous accepts it (a subcommand that runs code, npm exec, go
//     generate, is refused there) and, pinned, it covers the call under
//     Match, whose wildcard never takes an option the table calls code, a
//     write or unknown (go test -exec, -toolexec, -o);
//   - the call needs no network (policy.NeedsBeyondJail): a download or
//     an install is a different program with every name it is given;
//   - danger reports no loss for any word the wildcard may take: each
//     option the table lets it cover for this subcommand, and the operand
//     shapes present's danger lines read (".", "--", "*", "+ref", ":ref",
//     a name). danger is the caller's (present's danger lines: scope sits
//     below present); with it, git reset * (--hard), git checkout *
//     (-- .), git clean * (any operand) and git push * (--force, +ref) are
//     never offered. A nil danger offers nothing.
func Wider(c Call, env shellparse.Env, danger func(argv []string) bool) (Rule, error) {
	if danger == nil {
		return Rule{}, fmt.Errorf("%w: no danger check", ErrNoNarrowRule)
	}
	if c.Tool != toolBash || c.Shell == nil {
		return Rule{}, fmt.Errorf("%w: only a Bash command is widened", ErrNoNarrowRule)
	}
	if _, err := Narrowest(c, env); err != nil {
		return Rule{}, err
	}
	argv := c.Shell.Argv
	if len(argv) < 2 || !policy.SubcommandFirst(argv[0].Value) {
		return Rule{}, fmt.Errorf("%w: only a program's subcommand is widened", ErrNoNarrowRule)
	}
	prog, sub := policy.Base(argv[0].Value), argv[1].Value
	if sub == "" || strings.HasPrefix(sub, "-") || strings.ContainsAny(sub, "=/") {
		return Rule{}, fmt.Errorf("%w: %s names no subcommand first", ErrNoNarrowRule, prog)
	}
	words, ok := coveredWords(prog, sub)
	if !ok {
		return Rule{}, fmt.Errorf("%w: %s %s is not a subcommand loopguard's option table reads", ErrNoNarrowRule, prog, sub)
	}
	plain := make([]string, len(argv))
	for i, w := range argv {
		plain[i] = w.Value
	}
	for _, n := range policy.NeedsBeyondJail(plain, c.Cwd, c.ProjectDir, c.Home) {
		if n.Right == policy.JailNetwork {
			return Rule{}, fmt.Errorf("%w: %s %s needs the network (%s)", ErrNoNarrowRule, prog, sub, n.Why)
		}
	}
	for _, w := range append(words, widerOperands...) {
		if danger([]string{argv[0].Value, sub, w}) {
			return Rule{}, fmt.Errorf("%w: %s %s * would also cover %s %s %s, a DANGER call", ErrNoNarrowRule, prog, sub, prog, sub, w)
		}
	}
	bs := bashSpec{words: []bashWord{{lits: []string{argv[0].Value}}, {lits: []string{sub}}}, trailing: true}
	return offerable("Bash("+bs.String()+")", c, env)
}

// widerOperands are the operand shapes a wider rule is probed with: the
// shapes present's danger lines read in a subcommand's operands (git
// checkout . and --, git push +ref and :ref, git clean NAME).
var widerOperands = []string{".", "--", "*", "+x", ":x", "x"}

// coveredWords lists the options policy's table lets a wildcard cover
// (safe, or reading a named file) for prog's subcommand sub and prog's
// own options; ok is false when the table has no entry for sub.
func coveredWords(prog, sub string) ([]string, bool) {
	var out []string
	ok := false
	for _, class := range []policy.OptionClass{policy.Safe, policy.Reads} {
		for _, line := range policy.Options(class) {
			head, names, found := strings.Cut(line, ": ")
			if !found {
				continue
			}
			switch head {
			case prog + " " + sub:
				ok = true
			case prog:
			default:
				continue
			}
			out = append(out, strings.Fields(names)...)
		}
	}
	sort.Strings(out)
	return out, ok
}
