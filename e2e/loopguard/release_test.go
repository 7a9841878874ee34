package loopguard

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
)

// releaseDist is where `make release` (GoReleaser in snapshot mode) leaves
// the archives.
func releaseDist(t *testing.T) string {
	t.Helper()
	repo, err := claudetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(repo, "dist")
	if _, err := os.Stat(filepath.Join(dist, "SHA256SUMS")); err != nil {
		if os.Getenv("LOOPGUARD_REQUIRE_RELEASE") == "1" {
			t.Fatalf("LOOPGUARD_REQUIRE_RELEASE=1 but there is no release in %s (%v): make test runs make release first", dist, err)
		}
		t.Skipf("no release in %s: run make release (make test does)", dist)
	}
	return dist
}

// verifySums checks every archive against SHA256SUMS, as sha256sum -c does,
// and returns the names listed.
func verifySums(t *testing.T, dist string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not '<sum>  <name>'", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: SHA-256 %x, SHA256SUMS says %s", name, got, sum)
		}
		names = append(names, name)
	}
	return names
}

// unpack extracts the tar.gz archive into the empty directory dir.
func unpack(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean(h.Name)
		if !filepath.IsLocal(name) || h.Typeflag != tar.TypeReg {
			t.Fatalf("archive entry %q (type %c): want only regular files inside the archive", h.Name, h.Typeflag)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeNew(t, p, fs.FileMode(h.Mode).Perm(), tr)
	}
}

// The release as a user gets it: the SHA256SUMS verify; every platform's
// archive is there; the Linux archive for this machine, unpacked into an
// empty directory, holds the four binaries, static, stamped with this commit's
// snapshot version; and from there init registers its loopguard-hook, a
// call is held, a human approves it at a terminal, the retried call runs
// once, and uninstall takes the registration out again.
func TestReleaseArchive(t *testing.T) {
	t.Parallel()
	dist := releaseDist(t)
	names := verifySums(t, dist)
	for _, osArch := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		found := false
		for _, n := range names {
			found = found || (strings.HasPrefix(n, "loopguard_") && strings.HasSuffix(n, "_"+osArch+".tar.gz"))
		}
		if !found {
			t.Errorf("no archive for %s in SHA256SUMS: %v", osArch, names)
		}
	}
	var archive string
	for _, n := range names {
		if strings.HasSuffix(n, "_linux_"+runtime.GOARCH+".tar.gz") {
			archive = filepath.Join(dist, n)
		}
	}
	if archive == "" {
		t.Fatalf("no linux_%s archive", runtime.GOARCH)
	}
	dir := filepath.Join(t.TempDir(), "unpacked")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unpack(t, archive, dir)
	bin, hook := filepath.Join(dir, "loopguard"), filepath.Join(dir, "loopguard-hook")
	wrapper, launcher := filepath.Join(dir, "loopguard-exec"), filepath.Join(dir, "loopguard-confine")

	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))
	// Go stamps the commit only where .git is a directory (a clone, as CI
	// has), not in a git worktree, whose .git is a file.
	gitDir, err := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-dir").Output()
	if err != nil {
		t.Fatal(err)
	}
	stamped := !strings.Contains(string(gitDir), string(filepath.Separator)+"worktrees"+string(filepath.Separator))
	if !stamped {
		t.Logf("a git worktree (%s): Go stamps no commit here; the module version is checked in a clone", strings.TrimSpace(string(gitDir)))
	}
	for _, b := range []string{bin, hook, wrapper, launcher} {
		info, err := buildinfo.ReadFile(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		set := map[string]string{}
		for _, s := range info.Settings {
			set[s.Key] = s.Value
		}
		// What go version -m shows: static, the commit, a module version
		// naming it, and every dependency's version.
		if set["CGO_ENABLED"] != "0" || set["-trimpath"] != "true" || len(info.Deps) == 0 {
			t.Errorf("%s: build settings %v, %d modules; want static (CGO_ENABLED=0), -trimpath and the module list", b, set, len(info.Deps))
		}
		if stamped && (set["vcs.revision"] != commit || !strings.Contains(info.Main.Version, commit[:12])) {
			t.Errorf("%s: module version %q, revision %q; want this commit %s: rebuild with make release", b, info.Main.Version, set["vcs.revision"], commit)
		}
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "-SNAPSHOT-") || !strings.Contains(string(out), commit[:7]) {
		t.Errorf("loopguard --version = %q; want a snapshot of this commit (%s): rebuild with make release", out, commit[:7])
	}

	checkFormula(t, dist, bin)

	keyringtest.Require(t)
	claude := claudetest.Install(t)
	e := newEnvWith(t, claude, bin)
	settings := filepath.Join(e.Dir, ".claude", "settings.json")
	if b, err := os.ReadFile(settings); err != nil || !strings.Contains(string(b), `"command": "`+hook+`"`) {
		t.Fatalf("init from the archive did not register its loopguard-hook (%v):\n%s", err, b)
	}
	e.heldApprovedRunsOnce("toolu_rel", "released")
	if _, err := e.g.Run(e.ctx, e.Dir, "uninstall", "--project"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(settings); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after uninstall %s is still there (%v); init had created it", settings, err)
	}
}

// checkFormula checks the Homebrew formula the release wrote: every archive
// with its checksum, the four binaries installed side by side, and a test
// block whose commands pass on the unpacked binary bin.
func checkFormula(t *testing.T, dist, bin string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dist, "homebrew", "Formula", "loopguard.rb"))
	if err != nil {
		t.Fatal(err)
	}
	f := string(b)
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		i := strings.Index(f, "/"+name+`"`)
		if i < 0 || !strings.HasPrefix(strings.TrimSpace(f[i+len(name)+2:]), `sha256 "`+sum+`"`) {
			t.Errorf("the formula does not fetch %s with SHA-256 %s:\n%s", name, sum, f)
		}
	}
	for _, b := range []string{"loopguard", "loopguard-hook", "loopguard-exec", "loopguard-confine"} {
		if strings.Count(f, `bin.install "`+b+`"`) != 4 {
			t.Errorf("the formula does not install %s on every platform:\n%s", b, f)
		}
	}
	_, test, ok := strings.Cut(f, "test do")
	if !ok || !strings.Contains(test, `#{bin}/loopguard --version`) || !strings.Contains(test, `#{bin}/loopguard check 'ls -l'`) {
		t.Fatalf("the formula's test block does not run loopguard --version and loopguard check:\n%s", f)
	}
	// The test block's commands, as brew test runs them: a fresh HOME.
	home := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{{[]string{"--version"}, "loopguard 0.0.0-SNAPSHOT-"}, {[]string{"check", "ls -l"}, "simple"}} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("loopguard %v (the formula's test): %v\n%s", c.args, err, out)
		}
	}
}
