package layout

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// foreign are the extensions of source in a language other than Go that
// a build could compile into a binary (C and C++, assembly, Rust, Zig) or
// link in (syso objects).
var foreign = []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".s", ".S", ".rs", ".zig", ".syso"}

func isForeignSource(name string) bool {
	return slices.Contains(foreign, filepath.Ext(name))
}

// vforkAssembly are the one exception, the launch's vfork (confine,
// forkChild): a system call that keeps its return address in a register,
// as the syscall package's own vfork does, for the two architectures the
// release builds; nothing else may join them (docs/confinement.md, One
// launcher).
var vforkAssembly = map[string]bool{
	"confine/vfork_linux_amd64.s": true,
	"confine/vfork_linux_arm64.s": true,
}

// TestOneLanguage: the launcher is Go, and so is every binary: the module
// holds no source of another language (the small C launcher, which
// re-applied a plan the Go code wrote, is retired: issue #39) but the
// vfork's few lines of assembly (vforkAssembly), and no package compiles
// any through cgo. The controls: the walk reaches the
// launcher's own main, the predicate knows the retired launcher's file
// for what it was, and go list names the packages it was asked for.
func TestOneLanguage(t *testing.T) {
	root := filepath.Join("..", "..")
	sawLauncher := false
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// Not the module's source: git's objects, the tests' and the
			// release's downloads and builds.
			if d.Name() == ".git" || d.Name() == "node_modules" || rel == ".cache" || rel == "bin" || rel == "dist" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "cmd/loopguard-exec/main.go" {
			sawLauncher = true
		}
		if isForeignSource(rel) && !vforkAssembly[rel] {
			t.Errorf("%s: source in another language than Go (a launcher is Go: docs/confinement.md, One launcher)", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawLauncher {
		t.Error("control: the walk did not reach cmd/loopguard-exec/main.go")
	}
	if !isForeignSource("cmd/loopguard-launch/loopguard-launch.c") || isForeignSource("cmd/loopguard-exec/main.go") || !isForeignSource("confine/vfork_linux_amd64.s") {
		t.Error("control: isForeignSource does not tell C or assembly from Go")
	}
	out, err := exec.Command("go", "list", "-json", "github.com/loopguard/loopguard/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath                                 string
			CgoFiles, CFiles, CXXFiles, HFiles, SFiles []string
			SwigFiles, SwigCXXFiles, SysoFiles, FFiles []string
			MFiles                                     []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		for _, files := range [][]string{p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SwigFiles, p.SwigCXXFiles, p.SysoFiles, p.FFiles, p.MFiles} {
			files = slices.DeleteFunc(slices.Clone(files), func(f string) bool {
				return p.ImportPath == "github.com/loopguard/loopguard/confine" && vforkAssembly["confine/"+f]
			})
			if len(files) > 0 {
				t.Errorf("%s compiles source other than Go: %v", p.ImportPath, files)
			}
		}
	}
	if n < 20 {
		t.Errorf("control: go list named only %d packages", n)
	}
}

// hookUsesOfConfine are the only names of package confine that the code
// the hook links may use: to describe a launch (Spec, Redirect, and
// NetworkCommand and UnconfinedCommand, which write a Spec as the command
// text one of Claude Code's excludedCommands entries matches, with
// CapUnconfined, the unconfined form's word; AsWrittenCommand and
// CapAsWritten, the as-written form that no entry matches), to know
// whether the kernel can confine (ABI, MinABI), and to be the launcher
// itself, in its own process (Main, Subcommand: loopguard-hook exec),
// and to say why a jailed call was refused a file of the home
// (PrivateInHome: its mode, as the launch judged it), and to start the
// launcher's recovery of a launch killed before its sweep after a call
// (ScratchRoots, KilledLaunch, RecoverArgs: the launcher sweeps, from the
// record the killed launch wrote; LiveLaunch: the guard in the project's
// watcher runs while one lives), and to refuse the jail where the
// launcher would (HeldTempDir). Nothing that
// computes a plan for a launch that has not started, so the
// hook writes no plan file for a launcher to pick up: the launch computes
// its plan when it runs (hooks' TestLaunchWritesNothing checks the state
// directory the same way at run time).
var hookUsesOfConfine = []string{"Spec", "Redirect", "NetworkCommand", "UnconfinedCommand", "GitCommand", "CapUnconfined", "AsWrittenCommand", "CapAsWritten", "ABI", "MinABI", "Main", "Subcommand", "PrivateInHome",
	"ScratchRoots", "KilledLaunch", "LiveLaunch", "RecoverArgs", "HeldTempDir"}

// TestHookPreparesNoPlan: no package the hook binary links, confine
// aside, uses a name of confine beyond hookUsesOfConfine. The control:
// the engine (hooks) does use confine.Spec, so a listing or a parse that
// finds nothing fails.
func TestHookPreparesNoPlan(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json", "./../../cmd/loopguard-hook").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	engineSpec := false
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel, ok := local(p.ImportPath)
		if !ok || rel == "confine" {
			continue
		}
		for _, f := range p.GoFiles {
			for _, name := range confineNames(t, filepath.Join(p.Dir, f)) {
				if !slices.Contains(hookUsesOfConfine, name) {
					t.Errorf("%s (%s) uses confine.%s: the hook describes a launch, the launcher computes its plan", rel, f, name)
				}
				if rel == "hooks" && name == "Spec" {
					engineSpec = true
				}
			}
		}
	}
	if !engineSpec {
		t.Error("control: hooks does not use confine.Spec (the listing or the parse found nothing)")
	}
}

// confineNames are the names of package confine the Go file at path
// uses (confine.X, under whatever name the file imports it).
func confineNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"confine" {
			local = "confine"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
				names = append(names, sel.Sel.Name)
			}
		}
		return true
	})
	return names
}

// notInTheConfiner are packages loopguard-confine must not link: the
// hook's (its engine, the shell parser, the keyring's D-Bus client, the
// audit log, the tickets), whose initialisation and size every launch
// would pay for (docs/confinement.md, One launcher).
var notInTheConfiner = []string{
	"github.com/loopguard/loopguard/hooks", "github.com/loopguard/loopguard/hookmain",
	"github.com/loopguard/loopguard/shellparse", "github.com/loopguard/loopguard/keyring",
	"github.com/loopguard/loopguard/audit", "github.com/loopguard/loopguard/ticket",
	"mvdan.cc/sh/v3/syntax", "github.com/godbus/dbus/v5",
}

// TestConfinerLinksConfineAlone: loopguard-confine, the launcher the hook
// names, links none of notInTheConfiner, and does link confine. Control:
// loopguard-exec, which answers the hook, links every one of them, so a
// listing that finds nothing fails.
func TestConfinerLinksConfineAlone(t *testing.T) {
	deps := func(cmd string) []string {
		out, err := exec.Command("go", "list", "-deps", "./../../cmd/"+cmd).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", cmd, err)
		}
		return strings.Fields(string(out))
	}
	confiner := deps("loopguard-confine")
	if !slices.Contains(confiner, "github.com/loopguard/loopguard/confine") {
		t.Error("loopguard-confine does not link package confine")
	}
	wrapper := deps("loopguard-exec")
	for _, p := range notInTheConfiner {
		if slices.Contains(confiner, p) {
			t.Errorf("loopguard-confine links %s", p)
		}
		if !slices.Contains(wrapper, p) {
			t.Errorf("control: loopguard-exec does not link %s", p)
		}
	}
}
