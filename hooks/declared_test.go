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
		{"make recipes", makePaths, "all:\n\t$(MAKE) -C ../mlib all\n\t@+${MAKE} --directory=../m2\n\tmake -C$(TOP)/x -j4 --directory ../m3\n\tcd ../x && make\n\t(cd \"../y\"; ./build) | tee log\n\tV=1 gmake -C ../z\n\techo cd ../no -C ../no2 # cd ../no3\ncd ../not-a-recipe\n", []string{"../mlib", "../m2", "$(TOP)/x", "../m3", "../x", "../y", "../z"}},
		{"tsconfig", tsconfigPaths, "{\n  // a comment: \"extends\": \"../no\"\n  \"extends\": \"../tsconfig.base\", /* and \"../no2\" */\n  \"compilerOptions\": {\"paths\": {\"@/*\": [\"./src/*\"]},},\n  \"references\": [{\"path\": \"../shared\"}, {\"path\": \"./in\",},],\n}\n", []string{"../tsconfig.base.json", "../shared", "./in"}},
		{"tsconfig extends list", tsconfigPaths, `{"extends": ["@tsconfig/node20/tsconfig.json", "../base.json"]}`, []string{"../base.json"}},
		{"MODULE.bazel", bazelPaths, "bazel_dep(name = \"x\", version = \"1\")\n# local_path_override(module_name = \"n\", path = \"../no\")\nlocal_path_override(\n    module_name = \"lib\",\n    path = \"../lib\",\n)\n", []string{"../lib"}},
		{"WORKSPACE", bazelPaths, "local_repository(name = \"a\", path = '../a')\nnew_local_repository(\n  name = \"b\",\n  path = \"/opt/b\",\n  build_file = \"b.BUILD\",\n)\nhttp_archive(name = \"c\", path = \"../no\")\n", []string{"../a", "/opt/b"}},
		{"pnpm-workspace.yaml", pnpmPaths, "packages:\n  - 'packages/*'\n  - \"../shared\" # the sibling\n  - '!**/test/**'\ncatalog:\n  - ../no\n", []string{"packages/*", "../shared"}},
		{"Cargo workspace", cargoPaths, "[workspace]\nmembers = [\n  \"crates/*\", # ours\n  '../rlib',\n]\nexclude = [\"../no\"]\n[dependencies]\nx = { path = \"../x\" }\n[package]\nmembers = [\"../no2\"]\n", []string{"crates/*", "../rlib", "../x"}},
		{"Cargo one line", cargoPaths, "[workspace]\ndefault-members = [\"a\", \"../b\"]\n", []string{"a", "../b"}},
		{"pnpm flow", pnpmPaths, "packages: [apps/*, '../lib']\n", []string{"apps/*", "../lib"}},
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
	for _, d := range []string{"app/packages/p", "lib", "shared", "later", "mlib"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.WriteFile(filepath.Join(base, "lib", "common.mk"), nil, 0o644)
	_ = os.WriteFile(filepath.Join(project, "Makefile"), []byte("include ../lib/common.mk $(X)/y.mk in.mk\n-include ../later/local.mk\nall:\n\t$(MAKE) -C ../mlib && cd packages/p\n"), 0o644)
	_ = os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"workspaces":["packages/*","../sha*"]}`), 0o644)
	_ = os.WriteFile(filepath.Join(project, "tsconfig.json"), []byte("{\n  // the sibling's sources\n  \"references\": [{\"path\": \"../shared\"}, {\"path\": \"./packages/p\"},],\n}\n"), 0o644)
	_ = os.WriteFile(filepath.Join(project, "WORKSPACE"), []byte("local_repository(name = \"lib\", path = \"../lib\")\n"), 0o644)
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
	got = slices.Compact(got) // ../shared is named twice, ../lib by WORKSPACE and the include's directory...
	want := []string{filepath.Join(base, "later"), filepath.Join(base, "lib"), filepath.Join(base, "lib", "common.mk"), filepath.Join(base, "mlib"), filepath.Join(base, "shared")}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestParentPlaces: the nearest go.work, pnpm-workspace.yaml, package.json
// with workspaces and Cargo.toml with a [workspace] above a project add
// the places they name outside it (resolved from their directory); one
// that names only the project adds nothing, one at the project's top (its
// own) hides those above, a package.json without workspaces or a
// Cargo.toml without a [workspace] is passed over, and nothing
// above the home's directory is read.
func TestParentPlaces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // relative to base: home/ws/app is the project
		want  []string          // relative to base
	}{
		{"go.work", map[string]string{"home/ws/go.work": "go 1.22\nuse (\n\t./app\n\t./lib\n)\n"}, []string{"home/ws/lib"}},
		{"go.work two up", map[string]string{"home/go.work": "go 1.22\nuse ./ws/app\nreplace x => ./shared\n"}, []string{"home/shared"}},
		{"go.work names the project alone", map[string]string{"home/ws/go.work": "go 1.22\nuse ./app\n"}, nil},
		{"the project's own go.work", map[string]string{"home/ws/app/go.work": "go 1.22\nuse .\n", "home/ws/go.work": "go 1.22\nuse ./lib\n"}, nil},
		{"the nearest go.work", map[string]string{"home/ws/go.work": "go 1.22\nuse ./app\n", "home/go.work": "go 1.22\nuse ./shared\n"}, nil},
		{"pnpm", map[string]string{"home/ws/pnpm-workspace.yaml": "packages:\n  - '*'\n  - '../shared'\n"}, []string{"home/shared", "home/ws/lib", "home/ws/pnpm-workspace.yaml"}}, // a pattern's files too
		{"npm workspaces", map[string]string{"home/ws/app/package.json": `{"name":"app"}`, "home/ws/package.json": `{"workspaces":["app","lib"]}`}, []string{"home/ws/lib"}},
		{"yarn workspaces two up", map[string]string{"home/ws/package.json": `{"name":"ws"}`, "home/package.json": `{"workspaces":{"packages":["ws/*","shared"]}}`}, []string{"home/shared", "home/ws/lib", "home/ws/package.json"}},
		{"cargo workspace", map[string]string{"home/ws/app/Cargo.toml": "[package]\nname = \"app\"\n", "home/ws/Cargo.toml": "[workspace]\nmembers = [\"app\", \"lib\"]\n"}, []string{"home/ws/lib"}},
		{"a Cargo.toml without a workspace", map[string]string{"home/ws/Cargo.toml": "[package]\nname = \"ws\"\n[dependencies]\nx = { path = \"lib\" }\n"}, nil},
		{"above the home", map[string]string{"go.work": "go 1.22\nuse ./home/ws/lib\n", "pnpm-workspace.yaml": "packages: [home/shared]\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			project := filepath.Join(base, "home", "ws", "app")
			for _, d := range []string{"home/ws/app", "home/ws/lib", "home/shared"} {
				if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(base, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			parentPlaces(project, filepath.Join(base, "home"), func(p string) {
				if !under(p, project) && !under(project, p) {
					got = append(got, p)
				}
			})
			var want []string
			for _, w := range tc.want {
				want = append(want, filepath.Join(base, w))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
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
