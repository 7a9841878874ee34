package initcmd

import (
	"fmt"
	"io"

	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/internal/udiff"
)

// ReportRemoval tells out what taking loopguard out of a file did (res):
// on a dry run the diff, else one line. by is the command that had
// registered it there ("init", "init --managed").
func ReportRemoval(out io.Writer, res *install.Result, dryRun bool, by string) {
	what := "loopguard hooks removed"
	if res.Sandbox {
		what += " (with the settings " + by + " had added)"
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(out, "%s: no loopguard hooks; nothing to remove.\n", res.Path)
	case dryRun:
		fmt.Fprint(out, udiff.Diff(res.Path, res.Old, res.New))
	case res.Unrecorded && res.Deleted:
		fmt.Fprintf(out, "%s: removed: it held nothing but what %s adds (there was no backup of it from %s).\n", res.Path, by, by)
	case res.Unrecorded && res.Sandbox:
		fmt.Fprintf(out, "%s: %s; there was no backup of the file from %s (the state directory that kept it was removed, or %s did not write it), so what %s adds was taken out by value: a setting of yours with the very same value went too.\n", res.Path, what, by, by, by)
	case res.Unrecorded:
		fmt.Fprintf(out, "%s: %s; there was no backup of the file from %s, so the rest is kept as it is now (whitespace normalised).\n", res.Path, what, by)
	case res.Restored:
		fmt.Fprintf(out, "%s: %s; the original file is back, byte for byte.\n", res.Path, what)
	case res.Deleted && res.DirGone:
		fmt.Fprintf(out, "%s: removed (%s had created it), with its directory.\n", res.Path, by)
	case res.Deleted:
		fmt.Fprintf(out, "%s: removed (%s had created it).\n", res.Path, by)
	default:
		fmt.Fprintf(out, "%s: %s; other settings changed since %s, so they were kept as they are now (whitespace normalised).\n", res.Path, what, by)
	}
}
