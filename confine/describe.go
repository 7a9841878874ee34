package confine

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/loopguard/loopguard/fsx"
)

// What a launch would grant, for a person (doctor): the plan a capability
// gets here, read back as the paths it reaches in a directory (the home).

// LaunchEnv is the Env the launcher binary self computes for user uid in
// the environment getenv reads: the one a launch from that environment
// would plan with (envFrom).
func LaunchEnv(getenv func(string) string, self string, uid int) Env {
	return envFrom(getenv, self, uid)
}

// Within returns the roots of p's read and write rules that lie in dir,
// leaving out those in any of except (the project, which the capability
// names anyway), each sorted: a root grants everything below it. The
// launch's private directories (its TMPDIR, its caches) are not among
// them.
func (p Plan) Within(dir string, except ...string) (reads, writes []string) {
	in := func(l []string) []string {
		var out []string
		for _, r := range l {
			if !fsx.Within(r, dir) || slices.ContainsFunc(except, func(x string) bool { return fsx.Within(r, x) }) {
				continue
			}
			out = append(out, r)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return in(slices.Concat(p.ReadDirs, p.ReadFiles)), in(slices.Concat(p.WriteDirs, p.WriteFiles))
}

// Reaches reports whether a rule of p reaches path: grants it or
// something below it. A path that is a link is judged by where it leads
// as well.
func (p Plan) Reaches(path string) bool {
	paths := []string{filepath.Clean(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != paths[0] {
		paths = append(paths, real)
	}
	for _, r := range slices.Concat(p.ReadDirs, p.ReadFiles, p.WriteDirs, p.WriteFiles, p.Private) {
		for _, q := range paths {
			if fsx.Within(q, r) || fsx.Within(r, q) {
				return true
			}
		}
	}
	return false
}

// Discard removes what NewPlan made for a launch that will not run: its
// own directory in the scratch directory (the private directories that
// outlive launches stay).
func (p Plan) Discard() error {
	removeMade(p.goStatMade)
	if p.RunDir == "" {
		return nil
	}
	return os.RemoveAll(p.RunDir)
}
