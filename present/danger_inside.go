package present

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
)

// InsideDanger names a loss inside the project that a jail (which may
// write the project) lets through and a human should see first (issue
// 36: rm -r of the project's directories, git clean, git reset --hard,
// git checkout -- .), "" for none. Undo could take them back; they are asked all the same, as the
// human would want to know before, not after.
func InsideDanger(argv []string, cwd, project string) string {
	name := filepath.Base(argv[0])
	args := argv[1:]
	switch name {
	case "rm":
		if !hasFlag(args, 'r', "--recursive") && !hasFlag(args, 'R') {
			return ""
		}
		for _, t := range operandsOf(args) {
			if regenerable(t) {
				continue
			}
			p := t
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			if strings.ContainsAny(t, "$*?[") || fsx.Within(project, p) {
				return "rm -r " + t + " deletes a whole tree"
			}
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() && fsx.Within(p, project) {
				return "rm -r " + t + " deletes a directory of the project"
			}
		}
	case "git":
		ops := operandsOf(args)
		if len(ops) == 0 {
			return ""
		}
		switch ops[0] {
		case "clean":
			if !hasFlag(args, 'n', "--dry-run") {
				return "git clean deletes untracked files"
			}
		case "reset":
			if hasFlag(args, 0, "--hard", "--merge", "--keep") {
				return "git reset --hard discards changes"
			}
		case "checkout", "restore":
			for _, o := range ops[1:] {
				if o == "." || o == "--" || o == "*" {
					return "git " + ops[0] + " " + o + " discards changes in the work tree"
				}
			}
			for _, a := range args {
				if a == "--" {
					return "git " + ops[0] + " -- discards changes to the files named"
				}
			}
		}
	case "find":
		for _, a := range args {
			if a == "-delete" {
				return "find -delete deletes what it finds"
			}
		}
	case "xargs":
		if rest := operandsOf(args); len(rest) > 0 {
			if filepath.Base(rest[0]) == "rm" {
				return "xargs rm deletes files named by its input"
			}
		}
	}
	return ""
}

// regenerable are the directory names a build makes and an rm -r of them
// loses nothing (undo leaves them out too).
func regenerable(t string) bool {
	switch filepath.Base(filepath.Clean(t)) {
	case "node_modules", "target", "dist", "build", "out", "coverage", ".cache", "__pycache__", ".pytest_cache",
		".mypy_cache", ".ruff_cache", ".next", ".nuxt", ".turbo", ".parcel-cache", ".tox", ".nox", "bin", "obj", "tmp":
		return true
	}
	return false
}
