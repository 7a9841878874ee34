package scope

import (
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// dangerProbes are the words a rule's wildcard is probed with, beside the
// options policy's table lets it cover for the rule's subcommand: the
// operand shapes present's DANGER lines read (widerOperands: git checkout
// . and --, git push +ref and :ref, git clean NAME). A credentials file
// (cat .env) is a DANGER operand of every program, so it is not probed:
// grant says so under every rule with a wildcard.
var dangerProbes = widerOperands

// maxDangerExamples bounds the calls DangerOfRule lists.
const maxDangerExamples = 3

// DangerOfRule reads what a Bash rule's words say of DANGER calls, which
// no grant covers whatever its rule (the engine holds them for an exact
// approval: hooks' danger_not_covered). danger is the caller's reading of
// one command's argv (present.ArgvDanger: scope sits below present).
//
//   - every is the DANGER line of the rule's own literal words, which every
//     call it matches carries (Bash(git reset --hard), Bash(git push
//     --force *), Bash(rm -r src)): such a rule covers nothing, and grant
//     refuses it; "" when its words carry none.
//   - some are calls its wildcard could take that carry one (Bash(git push
//     *): git push --force), at most maxDangerExamples: grant shows them
//     under the rule, which still covers the calls that carry none.
//
// Any other rule (a file rule, the jail's Bash(*)) gives nothing.
func DangerOfRule(r Rule, danger func(argv []string) []string) (every string, some []string) {
	bs, err := r.bashSpecOf()
	if err != nil || danger == nil {
		return "", nil
	}
	var prefix []string // the literal words up to the first wildcard
	for _, w := range bs.words {
		if !w.literal() {
			break
		}
		prefix = append(prefix, w.lits[0])
	}
	if lines := danger(prefix); len(lines) > 0 {
		return lines[0], nil
	}
	if len(prefix) == len(bs.words) && !bs.trailing {
		return "", nil
	}
	probes := dangerProbes
	if len(prefix) >= 2 && policy.SubcommandFirst(prefix[0]) {
		if words, ok := coveredWords(policy.Base(prefix[0]), prefix[1]); ok {
			probes = append(append([]string{}, words...), dangerProbes...)
		}
	}
	seen := map[string]bool{}
	for _, p := range probes {
		argv := append(append([]string{}, prefix...), p)
		call := strings.Join(argv, " ")
		if seen[call] || len(danger(argv)) == 0 {
			continue
		}
		seen[call] = true
		some = append(some, call)
		if len(some) == maxDangerExamples {
			break
		}
	}
	return "", some
}
