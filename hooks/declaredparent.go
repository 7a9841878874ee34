package hooks

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// The workspaces a project is in, declared above it: the ninety-sixth
// attack run's go.work in the project's parent directory (go uses the
// nearest one upward) named a sibling module, and `go run` in the project
// ran that sibling's code outside the jail after another session's jailed
// call rewrote it; pnpm-workspace.yaml and a package.json with workspaces
// in a parent do the same for pnpm, npm and yarn, and a Cargo.toml with a
// [workspace] for cargo. The directories above
// the project are looked in, up to the home directory (the project in it)
// or up to / (not read), and the nearest file of each kind that makes a
// workspace is read: the places it names outside the project are added.
// A filesystem boundary is not looked for (it would need a stat per
// platform); the home or / bound it.

// parentReaders: the workspace files looked for above a project, and the
// reader of the places each names; root reports whether the file makes a
// workspace (the search for its kind stops there: the nearest one is
// used).
var parentReaders = []struct {
	name string
	read func([]byte) (places []string, root bool)
}{
	{"go.work", func(src []byte) ([]string, bool) { return goModPaths(src), true }},
	{"pnpm-workspace.yaml", func(src []byte) ([]string, bool) { return pnpmPaths(src), true }},
	{"package.json", workspaceRoot},
	{"Cargo.toml", func(src []byte) ([]string, bool) { return cargoPaths(src), cargoWorkspace(src) }},
}

// parentPlaces calls add with the places outside project (absolute,
// clean) that the nearest go.work, pnpm-workspace.yaml, package.json with
// workspaces and Cargo.toml with a [workspace] at or above it name (resolved from the file's
// directory); one at the project's top is its own (declaredPlaces reads
// it) and ends the search for its kind. home, "" for none, bounds the
// search when the project is in it.
func parentPlaces(project, home string, add func(string)) {
	stop := "/"
	if home != "" && filepath.IsAbs(home) && under(project, filepath.Clean(home)) {
		stop = filepath.Dir(filepath.Clean(home))
	}
	done, all := 0, 1<<len(parentReaders)-1
	for dir := project; done != all; {
		for i, r := range parentReaders {
			if done&(1<<i) != 0 {
				continue
			}
			src := readBounded(filepath.Join(dir, r.name))
			if src == nil {
				continue
			}
			places, root := r.read(src)
			if !root {
				continue
			}
			done |= 1 << i
			for j, p := range places {
				if dir == project || j >= maxDeclared {
					break
				}
				declaredPlace(dir, project, p, add)
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir || parent == stop {
			return
		}
		dir = parent
	}
}

// workspaceRoot: a package.json's places (packageJSONPaths), and whether
// it has workspaces (npm's and yarn's root: a member is installed from it).
func workspaceRoot(src []byte) ([]string, bool) {
	var pj struct {
		Workspaces json.RawMessage `json:"workspaces"`
	}
	if json.Unmarshal(src, &pj) != nil || len(pj.Workspaces) == 0 || string(pj.Workspaces) == "null" {
		return nil, false
	}
	return packageJSONPaths(src), true
}

// pnpmPaths: pnpm-workspace.yaml's packages, a block list (`- 'x'`, one
// a line, indented or not) or a flow list (`[a, 'b']`); an exclusion
// (`!x`) names nothing. Only that much YAML is read.
func pnpmPaths(src []byte) []string {
	var out []string
	item := func(w string) {
		if w = strings.Trim(strings.TrimSpace(w), `"'`); w != "" && w[0] != '!' {
			out = append(out, w)
		}
	}
	in := false
	rawLines(src, func(line string) {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		t := strings.TrimSpace(line)
		switch {
		case t == "":
		case in && strings.HasPrefix(t, "-"):
			item(t[1:])
		case line[0] != ' ' && line[0] != '\t' && strings.HasPrefix(t, "packages:"):
			v := strings.TrimSpace(t[len("packages:"):])
			in = v == ""
			if strings.HasPrefix(v, "[") {
				for _, w := range strings.Split(strings.Trim(v, "[]"), ",") {
					item(w)
				}
			}
		default:
			in = false
		}
	})
	return out
}

// cargoWorkspace reports whether a Cargo.toml has a [workspace] table
// (cargo's workspace root: a member is built from it).
func cargoWorkspace(src []byte) bool {
	found := false
	rawLines(src, func(line string) { found = found || strings.TrimSpace(line) == "[workspace]" })
	return found
}

// cargoPaths: a Cargo.toml's path = entries (tomlPaths) and its
// [workspace]'s members and default-members (patterns; a list over lines
// or on one).
func cargoPaths(src []byte) []string {
	out := tomlPaths(src)
	inWS, inList := false, false
	rawLines(src, func(line string) {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && !inList {
			inWS = t == "[workspace]"
			return
		}
		if k, v, ok := strings.Cut(t, "="); inWS && !inList && ok {
			if k = strings.TrimSpace(k); k != "members" && k != "default-members" {
				return
			}
			t, inList = v, true
		}
		if inList {
			out = append(out, quotedWords(t)...)
			inList = !strings.Contains(t, "]")
		}
	})
	return out
}

// quotedWords: the "double" and 'single' quoted strings in s.
func quotedWords(s string) []string {
	var out []string
	for {
		i := strings.IndexAny(s, `"'`)
		if i < 0 {
			return out
		}
		q := s[i]
		j := strings.IndexByte(s[i+1:], q)
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+1+j])
		s = s[i+j+2:]
	}
}
