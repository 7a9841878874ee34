package present

import (
	"strings"

	"github.com/loopguard/loopguard/shellparse"
)

// ArgvDanger is the danger lines of one simple command, argv as the shell
// passes it, run in cwd of project: Danger's lines for it and the loss
// inside the project InsideDanger names. review asks it of each part of a
// chain before it offers to grant the parts, and scope.Wider asks it of
// what a wider rule's wildcard could take.
func ArgvDanger(argv []string, cwd, project string) []string {
	if len(argv) == 0 {
		return nil
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellparse.Quote(a)
	}
	out := DangerOf("Bash", map[string]any{"command": strings.Join(q, " ")}, nil, project)
	if w := InsideDanger(argv, cwd, project); w != "" {
		out = append(out, w)
	}
	return out
}
