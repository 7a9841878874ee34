//go:build linux

package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

// writePathHome makes below dir a home of mode 0700 with the tools
// developers install in it on their search path: a pipx tool and a uv
// tool (links in ~/.local/bin into their Python environments), a script
// in ~/.local/bin, go install's ~/go/bin, rustup's proxies in
// ~/.cargo/bin beside cargo's token (cargo -> rustup, which runs the
// toolchain its settings name), ~/bin, bun's ~/.bun/bin, Playwright's
// browser; a program in the home itself and one in ~/.local, whose
// directories are on the search path too; the secrets beside them. It
// returns the home, the project (~/work/proj) and the environment.
func writePathHome(t *testing.T, dir, tmp, python string) (home, proj string, env []string) {
	t.Helper()
	home = filepath.Join(dir, "home")
	proj = filepath.Join(home, "work", "proj")
	sh := func(body string) string { return "#!/bin/sh\n" + body + "\n" }
	venv := func(name string) string {
		return fmt.Sprintf("#!%s/bin/python\nimport sys\nprint(%q, sys.prefix == %q)\n", filepath.Dir(filepath.Dir(name)), filepath.Base(name), filepath.Dir(filepath.Dir(name)))
	}
	pipx := filepath.Join(home, ".local/share/pipx/venvs/mytool/bin/mytool")
	uv := filepath.Join(home, ".local/share/uv/tools/ruff/bin/ruff")
	files := map[string]string{
		".local/bin/plain":                    sh("echo plain in ~/.local/bin"),
		"go/bin/hello":                        sh(`echo go-installed "$@"`),
		".cargo/bin/rustup":                   sh(`exec "$HOME/.rustup/toolchains/$(cat "$HOME/.rustup/settings.toml")/bin/${0##*/}" "$@"`),
		".rustup/settings.toml":               "stable",
		".rustup/toolchains/stable/bin/cargo": sh(`echo "cargo 1.0 (the stable toolchain) $*"`),
		"bin/mine":                            sh("echo mine in ~/bin"),
		".bun/bin/bun":                        sh(`cat "$HOME/.bun/install/global/package.json"`),
		".bun/install/global/package.json":    "{\"dependencies\":{}}\n",
		".cache/ms-playwright/chromium-1140/chrome-linux/chrome": sh("echo chromium 1140"),
		"hometool":                            sh("echo a program in the home"),
		".local/hidden-tool":                  sh("echo a program in ~/.local"),
		".cargo/credentials.toml":             "[registry]\ntoken = \"cio_SECRET\"\n",
		".local/share/keyrings/login.keyring": "KEYRING\n",
		".npmrc":                              "//registry.npmjs.org/:_authToken=npm_SECRETTOKEN\n",
		".ssh/id_rsa":                         "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"other/.env":                          "OTHER_SECRET=1\n",
		"work/proj/README.md":                 "# proj\n",
	}
	if python != "" {
		for _, p := range []string{pipx, uv} {
			rel, _ := filepath.Rel(home, p)
			files[rel] = venv(p)
			files[filepath.Join(filepath.Dir(filepath.Dir(rel)), "pyvenv.cfg")] = "home = " + filepath.Dir(python) + "\ninclude-system-site-packages = false\n"
		}
	}
	testHome(t, home, files)
	for rel := range files {
		if strings.HasPrefix(files[rel], "#!") {
			if err := os.Chmod(filepath.Join(home, rel), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	links := map[string]string{".cargo/bin/cargo": "rustup"}
	if python != "" {
		links[".local/bin/mytool"] = "../share/pipx/venvs/mytool/bin/mytool"
		links[".local/bin/ruff"] = uv
		links[".local/share/pipx/venvs/mytool/bin/python"] = python
		links[".local/share/uv/tools/ruff/bin/python"] = python
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	for p, m := range map[string]os.FileMode{home: 0o700, filepath.Join(home, ".ssh"): 0o700, filepath.Join(home, ".ssh/id_rsa"): 0o600} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	var path []string
	for _, d := range []string{".local/bin", "go/bin", ".cargo/bin", "bin", ".bun/bin", "", ".local"} {
		path = append(path, filepath.Join(home, d))
	}
	env = []string{"HOME=" + home, "PATH=" + strings.Join(path, ":") + ":/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + tmp}
	return home, proj, env
}

// TestHomePathToolsAsUnconfined: the tools a developer installed under the
// home on the search path (pipx's and uv's in ~/.local/bin, go install's,
// rustup's proxies, ~/bin, bun) run through the launcher, as a bash -c
// call, printing byte for byte what they print unconfined, under
// read-only and the jail; Playwright's browser under the jail, which runs
// tests; run by an unprivileged user whose home it is (0700). In the same
// home the secrets beside them (cargo's token in ~/.cargo, the keyrings in
// ~/.local/share), npm's token, a key and another project's .env stay
// unreadable, and a program in the home itself or in ~/.local, which are
// on the search path too, does not run: each beside its unconfined
// control.
func TestHomePathToolsAsUnconfined(t *testing.T) {
	u := newUserHomes(t)
	python := ""
	if fi, err := os.Stat("/usr/bin/python3"); err == nil && fi.Mode().IsRegular() {
		python, _ = filepath.EvalSymlinks("/usr/bin/python3")
	}
	dir := filepath.Join(u.root, "h")
	home, proj, env := writePathHome(t, dir, u.tmp, python)
	testfs.Chown(t, dir, u.uid, u.gid)
	bash := "/bin/bash"
	same := []string{"plain", "hello world", "cargo --version", "mine", "bun"}
	if python != "" {
		same = append(same, "mytool", "ruff")
	} else {
		t.Log("no /usr/bin/python3: the pipx and uv tools are not run")
	}
	refused := []string{"hometool", "hidden-tool", "cat ~/.cargo/credentials.toml", "cat ~/.local/share/keyrings/login.keyring",
		"cat ~/.npmrc", "cat ~/.ssh/id_rsa", "cat ~/other/.env", "ls ~/.cargo"}
	var table []string
	for _, c := range []policy.Capability{{}, policy.JailCapability} {
		rows := same
		if c.Write {
			rows = append(rows[:len(rows):len(rows)], "~/.cache/ms-playwright/chromium-1140/chrome-linux/chrome")
		}
		for _, cmd := range rows {
			free := u.run(t, nil, proj, proj, env, bash, "bash", "-c", cmd)
			confined := u.run(t, &c, proj, proj, env, bash, "bash", "-c", cmd)
			switch {
			case free == confined && free.code == 0:
				table = append(table, fmt.Sprintf("%-12s %-60s same", c, cmd))
			case free.code != 0:
				t.Errorf("%s: control: %s fails unconfined: %s", c, cmd, free)
			default:
				table = append(table, fmt.Sprintf("%-12s %-60s DIFFERS", c, cmd))
				t.Errorf("%s: %s: confined is not what runs unconfined\n--- unconfined\n%s\n--- confined\n%s", c, cmd, free, confined)
			}
		}
		for _, cmd := range refused {
			free := u.run(t, nil, proj, proj, env, bash, "bash", "-c", cmd)
			confined := u.run(t, &c, proj, proj, env, bash, "bash", "-c", cmd)
			if free.code != 0 {
				t.Errorf("%s: control: %s fails unconfined: %s", c, cmd, free)
			}
			verdict := "refused (runs unconfined)"
			if confined.code == 0 || !strings.Contains(confined.stderr, "Permission denied") {
				verdict = "RUNS"
				t.Errorf("%s: %s confined: %s", c, cmd, confined)
			}
			table = append(table, fmt.Sprintf("%-12s %-60s %s", c, cmd, verdict))
		}
	}
	t.Logf("as uid %d, in %s:\n%s", u.uid, home, strings.Join(table, "\n"))
}
