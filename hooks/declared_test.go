package hooks

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDeclaredReaders: each build file's reader names the local code it
// declares, as written, and nothing a word with a variable names or a
// registry's package.
func TestDeclaredReaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		read func([]byte) []string
		src  string
		want []string
	}{
		{"make", makeIncludes, "# include ../no.mk\ninclude ../lib2/common.mk  other.mk\n-include ../opt.mk\nsinclude $(TOP)/x.mk\nall:\n\techo include\n", []string{"../lib2/common.mk", "other.mk", "../opt.mk", "$(TOP)/x.mk"}},
		{"go.mod", goModPaths, "module a\nreplace example.com/x => ../x // local\nreplace example.com/y v1.0.0 => example.com/z v1.0.0\nreplace (\n\texample.com/w => \"../w\"\n)\n", []string{"../x", "../w"}},
		{"go.work", goModPaths, "go 1.22\nuse ./app\nuse (\n\t../lib\n\t.\n)\n", []string{"./app", "../lib", "."}},
		{"package.json", packageJSONPaths, `{"dependencies":{"a":"file:../a","b":"^1.0.0"},"devDependencies":{"c":"link:../c"},"optionalDependencies":{"d":"portal:../d"},"workspaces":["packages/*","../*"]}`, []string{"../a", "../c", "../d", "packages/*", "../*"}},
		{"package.json yarn", packageJSONPaths, `{"workspaces":{"packages":["../shared"]}}`, []string{"../shared"}},
		{"Cargo.toml", tomlPaths, "[dependencies]\nserde = \"1\"\nlib = { path = \"../lib\", version = \"0.1\" }\n[patch.crates-io]\nfoo = {path='../foo'}\n", []string{"../lib", "../foo"}},
		{"pyproject.toml", tomlPaths, "[project]\ndependencies = [\"x @ file:///opt/x\"]\n[tool.uv.sources]\nlib = { path = \"../lib\", editable = true }\n", []string{"/opt/x", "../lib"}},
		{"requirements", requirementsPaths, "# -e ../no\nrequests==2.0\n-e ../lib\n--editable=../lib2\n-r ../common/requirements.txt\nfile:../wheel\n../direct  # a comment ../no2\n", []string{"../lib", "../lib2", "../common/requirements.txt", "../wheel", "../direct"}},
		{"cmake", cmakePaths, "# add_subdirectory(../no)\nADD_SUBDIRECTORY(../lib build)\ninclude(\"../cmake/common.cmake\")\ninclude(CTest)\n", []string{"../lib", "../cmake/common.cmake", "CTest"}},
	} {
		if got := tc.read([]byte(tc.src)); !sameSet(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// sameSet: a and b hold the same words (package.json's maps are read in no order).
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestDeclaredPlaces: the places kept are outside the project, resolved
// from the build file's directory; a word with a variable is skipped, a
// pattern is expanded only where it leaves the project, and a file not
// there yet is its directory.
func TestDeclaredPlaces(t *testing.T) {
	base := t.TempDir()
	project := filepath.Join(base, "app")
	for _, d := range []string{"app/packages/p", "lib", "shared", "later"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.WriteFile(filepath.Join(base, "lib", "common.mk"), nil, 0o644)
	_ = os.WriteFile(filepath.Join(project, "Makefile"), []byte("include ../lib/common.mk $(X)/y.mk in.mk\n-include ../later/local.mk\n"), 0o644)
	_ = os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"workspaces":["packages/*","../sha*"]}`), 0o644)
	ents, err := os.ReadDir(project)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	declaredPlaces(project, project, ents, func(p string) {
		if !under(p, project) {
			got = append(got, p)
		}
	})
	slices.Sort(got)
	want := []string{filepath.Join(base, "later"), filepath.Join(base, "lib", "common.mk"), filepath.Join(base, "shared")}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// BenchmarkDeclaredPlaces is what relatedPlaces adds for a project whose
// top holds a Makefile, a go.mod and a package.json naming a sibling each
// (the entries of its top are listed already, for its links).
func BenchmarkDeclaredPlaces(b *testing.B) {
	base := b.TempDir()
	project := filepath.Join(base, "app")
	_ = os.MkdirAll(filepath.Join(base, "lib"), 0o755)
	_ = os.MkdirAll(project, 0o755)
	_ = os.WriteFile(filepath.Join(base, "lib", "common.mk"), nil, 0o644)
	_ = os.WriteFile(filepath.Join(project, "Makefile"), []byte("include ../lib/common.mk\nall:\n\ttrue\n"), 0o644)
	_ = os.WriteFile(filepath.Join(project, "go.mod"), []byte("module app\nreplace x => ../lib\n"), 0o644)
	_ = os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"dependencies":{"lib":"file:../lib"}}`), 0o644)
	ents, err := os.ReadDir(project)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		n := 0
		declaredPlaces(project, project, ents, func(string) { n++ })
		if n != 3 {
			b.Fatal(n)
		}
	}
}
