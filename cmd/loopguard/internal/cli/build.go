package cli

import (
	"debug/buildinfo"
	"fmt"
	"runtime/debug"
	"slices"
)

// SameBuild reports, as an error, when the binaries a and b were not built
// from the same source with the same toolchain and settings: their Go
// build information differs (the toolchain, the main module, the build
// settings: VCS revision and state, flags), a module both link is of two
// versions, or it cannot be read. Which modules each links may differ:
// loopguard-hook links fewer.
func SameBuild(a, b string) error {
	ia, err := buildinfo.ReadFile(a)
	if err != nil {
		return fmt.Errorf("cannot read the build of %s: %w", a, err)
	}
	ib, err := buildinfo.ReadFile(b)
	if err != nil {
		return fmt.Errorf("cannot read the build of %s: %w", b, err)
	}
	same := ia.GoVersion == ib.GoVersion && sameModule(&ia.Main, &ib.Main) && slices.Equal(ia.Settings, ib.Settings)
	deps := map[string]*debug.Module{}
	for _, m := range ia.Deps {
		deps[m.Path] = m
	}
	for _, m := range ib.Deps {
		if d, ok := deps[m.Path]; ok && !sameModule(d, m) {
			same = false
		}
	}
	if !same {
		return fmt.Errorf("%s and %s are not from the same build: install both with `make install` (or go install ./cmd/...)", a, b)
	}
	return nil
}

func sameModule(x, y *debug.Module) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.Path == y.Path && x.Version == y.Version && x.Sum == y.Sum && sameModule(x.Replace, y.Replace)
}
