package hooks

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
)

// versionFileWhat is what a version file that runs a program is, for a
// person.
const versionFileWhat = "a version file that mise or asdf reads (.nvmrc, .python-version...), holding a version of path:, ref: or a path, which makes that directory's programs the tool the user's shell runs after the next cd"

// versionFile is the finding of a file tool's call that leaves a version
// file (policy.IsVersionFile) holding what makes mise run a program of
// the file system (policy.VersionFileRuns: the ninety-third attack run's
// .nvmrc of path:$PWD/build/nd made node its script): judged on the
// file as the call would leave it, as the launcher's sweep judges one a
// confined call made. One holding a version (20, 3.12.1) is ordinary; one
// whose next text cannot be told (an edit loopguard cannot apply, a file
// it cannot read) is taken as running one.
func (e *Engine) versionFile(c *Call, j judged) finding {
	p := j.literal
	if j.resErr == nil {
		p = j.res.Path
	}
	if !policy.IsVersionFile(filepath.Base(j.literal)) && !policy.IsVersionFile(filepath.Base(p)) {
		return finding{}
	}
	cur, err := fsx.ReadRegular(p, 1<<20, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return versionFinding(p)
	}
	next, err := present.Applied(c.ToolName, c.ToolInput, cur)
	if err != nil || policy.VersionFileRuns(next) {
		return versionFinding(p)
	}
	return finding{}
}

func versionFinding(p string) finding {
	return finding{Protection: policy.Protection{Tier: policy.ExecConfig, Path: p, What: versionFileWhat},
		why: "it would change " + present.EscapeText(p) + ", " + versionFileWhat}
}
