package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/install"
)

var testPaths = cli.SandboxPaths{
	Home:     "/home/u",
	State:    "/home/u/.local/state/loopguard",
	Config:   "/home/u/.config/loopguard",
	Binary:   "/home/u/go/bin/loopguard",
	Keyrings: "/home/u/.local/share/keyrings",
	GoCache:  "/home/u/.cache/loopguard-sandbox/go-build",
	Undo:     "/home/u/.local/state/loopguard-undo",
}

const testProject = "/home/u/proj"

// strictUser is what `loopguard init` writes in the user settings.
func strictUser(t *testing.T) []byte {
	t.Helper()
	o := install.Options{Binary: testPaths.Binary, Deadline: 5e9, Sandbox: testPaths.Spec()}
	out, _, err := install.Merge(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// netEntry, freeEntry and gitEntry are init's excludedCommands entries
// for testPaths' binary: the network form's, the unconfined form's and
// the git form's.
const (
	netEntry  = "/home/u/go/bin/loopguard-exec exec --cap project-write+network:* *"
	freeEntry = "/home/u/go/bin/loopguard-exec exec --cap unconfined *"
	gitEntry  = "/home/u/go/bin/loopguard-exec exec --cap project-write+git *"
)

// withExclusion is the strict user settings with entries as
// excludedCommands, and the wrapper as the shell prefix when prefix.
func withExclusion(t *testing.T, prefix bool, entries ...string) string {
	t.Helper()
	sb := testPaths.Spec()
	sb.Exclude = entries
	o := install.Options{Binary: testPaths.Binary, Deadline: 5e9, Sandbox: sb}
	out, _, err := install.Merge(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if !prefix {
		return string(out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	env, _ := m["env"].(map[string]any)
	env[install.PrefixEnv] = "/home/u/go/bin/loopguard-exec"
	b, _ := json.Marshal(m)
	return string(b)
}

func layersOf(t *testing.T, files map[string]string) []sandboxLayer {
	t.Helper()
	paths := map[string]string{
		"user":    "/home/u/.claude/settings.json",
		"project": testProject + "/.claude/settings.json",
		"local":   testProject + "/.claude/settings.local.json",
		"managed": "/etc/claude-code/managed-settings.json",
	}
	var out []sandboxLayer
	for _, sc := range []string{"user", "project", "local", "managed"} {
		data, ok := files[sc]
		if !ok {
			continue
		}
		s, err := install.ReadSandbox([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", sc, err)
		}
		out = append(out, sandboxLayer{scope: sc, path: paths[sc], s: s})
	}
	return out
}

// One row per setting that weakens the sandbox: each fails (or warns) with
// its own check name and a fix line; the control, init's own settings,
// passes every check.
func TestJudgeSandbox(t *testing.T) {
	strict := string(strictUser(t))
	for _, c := range []struct {
		name   string
		files  map[string]string // scope -> settings; "user" defaults to strict
		status checkStatus
		check  string // the failing check's name
		detail string // a piece of its detail
	}{
		{"control", nil, statusOK, "", ""},
		{"no sandbox anywhere (--no-sandbox)", map[string]string{"user": `{}`}, statusFail, "sandbox enabled", "no settings file turns the sandbox on"},
		{"user enabled false", map[string]string{"user": strings.Replace(strict, `"enabled": true`, `"enabled": false`, 1)}, statusFail, "sandbox enabled", "false in the user settings"},
		{"project enabled false", map[string]string{"project": `{"sandbox":{"enabled":false}}`}, statusFail, "sandbox enabled", "false in the project settings"},
		{"local enabled false", map[string]string{"local": `{"sandbox":{"enabled":false}}`}, statusFail, "sandbox enabled", "false in the local settings"},
		{"managed enabled false", map[string]string{"managed": `{"sandbox":{"enabled":false}}`}, statusFail, "sandbox enabled", "false in the managed settings"},
		{"failIfUnavailable false", map[string]string{"project": `{"sandbox":{"failIfUnavailable":false}}`}, statusFail, "sandbox failIfUnavailable", "UNSANDBOXED"},
		{"failIfUnavailable missing", map[string]string{"user": strings.Replace(strict, `"failIfUnavailable": true,`, ``, 1)}, statusFail, "sandbox failIfUnavailable", "no settings file sets it"},
		{"allowUnsandboxedCommands missing", map[string]string{"user": strings.Replace(strict, `"allowUnsandboxedCommands": false,`, ``, 1)}, statusFail, "sandbox allowUnsandboxedCommands", "the default is true"},
		{"allowUnsandboxedCommands true in user", map[string]string{"user": strings.Replace(strict, `"allowUnsandboxedCommands": false`, `"allowUnsandboxedCommands": true`, 1)}, statusFail, "sandbox allowUnsandboxedCommands", "dangerouslyDisableSandbox"},
		{"allowUnsandboxedCommands true in managed", map[string]string{"managed": `{"sandbox":{"allowUnsandboxedCommands":true}}`}, statusFail, "sandbox allowUnsandboxedCommands", "managed settings"},
		{"allowUnsandboxedCommands false only in project", map[string]string{
			"user": strings.Replace(strict, `"allowUnsandboxedCommands": false,`, ``, 1), "project": `{"sandbox":{"allowUnsandboxedCommands":false}}`},
			statusWarn, "sandbox allowUnsandboxedCommands", "settings.local.json can undo"},
		{"excludedCommands", map[string]string{"project": `{"sandbox":{"excludedCommands":["make *"]}}`}, statusFail, "sandbox excludedCommands", "OUTSIDE the sandbox"},
		// The network escalation's one entry (init with two-phase
		// enforcement): only the exact entry, in the user's file, beside
		// the wrapper as the shell prefix.
		{"excludedCommands: init's entry without the wrapper", map[string]string{"user": withExclusion(t, false, netEntry)}, statusFail, "sandbox excludedCommands", "without the wrapper"},
		{"excludedCommands: init's entry in a project", map[string]string{"project": `{"sandbox":{"excludedCommands":["` + netEntry + `"]}}`}, statusFail, "sandbox excludedCommands", "belong in your user settings"},
		{"excludedCommands: init's entry and another", map[string]string{"user": withExclusion(t, true, netEntry, "curl *")}, statusFail, "sandbox excludedCommands", "OUTSIDE the sandbox"},
		{"excludedCommands: a wider entry for the launcher", map[string]string{"user": withExclusion(t, true, "/home/u/go/bin/loopguard-exec *")}, statusFail, "sandbox excludedCommands", "OUTSIDE the sandbox"},
		{"excludedCommands: another launcher's entry", map[string]string{"user": withExclusion(t, true, "/tmp/x/loopguard-exec exec --cap project-write+network:* *")}, statusFail, "sandbox excludedCommands", "OUTSIDE the sandbox"},
		// The unconfined form's entry: the same rules.
		{"excludedCommands: the unconfined entry without the wrapper", map[string]string{"user": withExclusion(t, false, netEntry, freeEntry)}, statusFail, "sandbox excludedCommands", "without the wrapper"},
		{"excludedCommands: the unconfined entry in a project", map[string]string{"project": `{"sandbox":{"excludedCommands":["` + freeEntry + `"]}}`}, statusFail, "sandbox excludedCommands", "belong in your user settings"},
		{"excludedCommands: the unconfined entry and another", map[string]string{"user": withExclusion(t, true, netEntry, freeEntry, "git *")}, statusFail, "sandbox excludedCommands", "OUTSIDE the sandbox"},
		{"excludedCommands: another launcher's unconfined entry", map[string]string{"user": withExclusion(t, true, "/tmp/x/loopguard-exec exec --cap unconfined *")}, statusFail, "sandbox excludedCommands", "OUTSIDE the sandbox"},
		{"excludedCommands: the unconfined entry twice", map[string]string{"user": strings.Replace(withExclusion(t, true, freeEntry), `"`+freeEntry+`"`, `"`+freeEntry+`", "`+freeEntry+`"`, 1)}, statusFail, "sandbox excludedCommands", "OUTSIDE the sandbox"},
		{"allowAllUnixSockets", map[string]string{"local": `{"sandbox":{"network":{"allowAllUnixSockets":true}}}`}, statusFail, "sandbox network.allowAllUnixSockets", "D-Bus"},
		{"filesystem.disabled", map[string]string{"managed": `{"sandbox":{"filesystem":{"disabled":true}}}`}, statusFail, "sandbox filesystem.disabled", "no filesystem isolation"},
		{"allowNestedUserNamespaces", map[string]string{"project": `{"sandbox":{"allowNestedUserNamespaces":true}}`}, statusFail, "sandbox allowNestedUserNamespaces", "user namespaces"},
		{"allowWrite home", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["~"]}}}`}, statusFail, "sandbox writable paths", "whole home directory"},
		{"allowWrite root", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["//"]}}}`}, statusFail, "sandbox writable paths", "whole home directory"},
		{"allowWrite state", map[string]string{"local": `{"sandbox":{"filesystem":{"allowWrite":["~/.local/state/loopguard/grants"]}}}`}, statusFail, "sandbox writable paths", "loopguard's state"},
		{"allowWrite above the undo directory", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["~/.local/state"]}}}`}, statusFail, "sandbox writable paths", "loopguard's state"},
		{"allowWrite config parent", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["//home/u/.config"]}}}`}, statusFail, "sandbox writable paths", "loopguard's config"},
		{"allowWrite binary dir", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["~/go/bin"]}}}`}, statusFail, "sandbox writable paths", "the loopguard binary"},
		{"allowWrite keyrings, ambiguous slash", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["/home/u/.local/share"]}}}`}, statusFail, "sandbox writable paths", "the keyring files"},
		{"Edit rule home", map[string]string{"project": `{"permissions":{"allow":["Edit(~/**)"]}}`}, statusFail, "sandbox writable paths", "permissions.allow rule Edit(~/**)"},
		{"Edit rule state", map[string]string{"local": `{"permissions":{"allow":["Edit(//home/u/.local/state/loopguard/**)"]}}`}, statusFail, "sandbox writable paths", "loopguard's state"},
		{"allowWrite under home", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["~/.bashrc"]}}}`}, statusWarn, "sandbox writable paths", "may run later outside the sandbox"},
		{"Edit rule under home", map[string]string{"local": `{"permissions":{"allow":["Edit(~/.ssh/**)"]}}`}, statusWarn, "sandbox writable paths", "/home/u/.ssh"},
		{"allowRead keyrings", map[string]string{"project": `{"sandbox":{"filesystem":{"allowRead":["~/.local/share/keyrings"]}}}`}, statusFail, "sandbox readable paths", "re-opens"},
		{"denyWrite missing state", map[string]string{"user": strings.Replace(strict, `"//home/u/.local/state/loopguard",`, ``, 1)}, statusFail, "sandbox denyWrite", "loopguard's state"},
		{"denyRead missing keyrings", map[string]string{"user": strings.Replace(strict, `"//home/u/.local/share/keyrings"
      ],
      "allowWrite"`, `"//x"
      ],
      "allowWrite"`, 1)}, statusFail, "sandbox denyRead", "the keyring files"},
		{"denyRead with an ambiguous slash does not count", map[string]string{"user": strings.Replace(strict, `"//home/u/.local/share/keyrings"
      ],
      "allowWrite"`, `"/home/u/.local/share/keyrings"
      ],
      "allowWrite"`, 1)}, statusFail, "sandbox denyRead", "the keyring files"},
		{"enableWeakerNestedSandbox", map[string]string{"project": `{"sandbox":{"enableWeakerNestedSandbox":true}}`}, statusWarn, "sandbox enableWeakerNestedSandbox", "host's /proc"},
		{"autoAllowBashIfSandboxed", map[string]string{"local": `{"sandbox":{"autoAllowBashIfSandboxed":true}}`}, statusWarn, "sandbox autoAllowBashIfSandboxed", "without a prompt"},
		// Controls for the layer rules: these do not weaken.
		{"project enabled false under a managed mandate", map[string]string{"managed": `{"sandbox":{"allowUnsandboxedCommands":false}}`, "project": `{"sandbox":{"enabled":false}}`}, statusOK, "", ""},
		{"project allowUnsandboxedCommands true under user false", map[string]string{"project": `{"sandbox":{"allowUnsandboxedCommands":true}}`}, statusOK, "", ""},
		{"excludedCommands: init's entry with the wrapper in front", map[string]string{"user": withExclusion(t, true, netEntry)}, statusOK, "", ""},
		{"excludedCommands: init's two entries with the wrapper in front", map[string]string{"user": withExclusion(t, true, netEntry, freeEntry)}, statusOK, "", ""},
		{"excludedCommands: init's three entries with the wrapper in front", map[string]string{"user": withExclusion(t, true, netEntry, freeEntry, gitEntry)}, statusOK, "", ""},
		// init's own entry for the launcher's undo records (in the strict
		// user settings of every case) is no opening.
		{"allowWrite of the undo directory, again in a project", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["~/.local/state/loopguard-undo"]}}}`}, statusOK, "", ""},
		{"allowWrite of a build directory", map[string]string{"project": `{"sandbox":{"filesystem":{"allowWrite":["//tmp/build","~/proj/out"]}},"permissions":{"allow":["Edit(src/**)"]}}`}, statusOK, "", ""},
		{"deny lists split across layers", map[string]string{
			"user":    strings.Replace(strict, `"//home/u/.local/state/loopguard",`, ``, 1),
			"project": `{"sandbox":{"filesystem":{"denyWrite":["~/.local/state/loopguard"]}}}`}, statusOK, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"user": strict}
			for k, v := range c.files {
				files[k] = v
			}
			res := judgeSandbox(layersOf(t, files), testPaths, testProject)
			var bad []checkResult
			for _, r := range res {
				if r.status == statusFail || r.status == statusWarn {
					bad = append(bad, r)
				}
			}
			if c.status == statusOK {
				if len(bad) > 0 {
					t.Fatalf("want every check ok, got %+v", bad)
				}
				return
			}
			if len(bad) != 1 {
				t.Fatalf("want exactly one failing check, got %+v", bad)
			}
			r := bad[0]
			if r.status != c.status || r.name != c.check || !strings.Contains(r.detail, c.detail) || r.fix == "" {
				t.Errorf("got %v %q: %s (fix: %q); want %v %q with %q and a fix", r.status, r.name, r.detail, r.fix, c.status, c.check, c.detail)
			}
		})
	}
}

// TestExcludedEntriesSayWhatIsMissing: an earlier init's entries pass,
// and doctor says which form then runs inside the sandbox and that init
// adds its entry; with all three it says where each runs.
func TestExcludedEntriesSayWhatIsMissing(t *testing.T) {
	detail := func(entries ...string) string {
		t.Helper()
		for _, r := range judgeSandbox(layersOf(t, map[string]string{"user": withExclusion(t, true, entries...)}), testPaths, testProject) {
			if r.name == "sandbox excludedCommands" {
				if r.status != statusOK {
					t.Fatalf("%q: %v %s", entries, r.status, r.detail)
				}
				return r.detail
			}
		}
		t.Fatalf("%q: no excludedCommands check", entries)
		return ""
	}
	if d := detail(netEntry, freeEntry); !strings.Contains(d, "writes git's own directory (git add -A && git commit) runs inside the sandbox") || !strings.Contains(d, "`loopguard init` adds the entry that runs it in the jail") {
		t.Errorf("two entries: %s", d)
	}
	if d := detail(netEntry, freeEntry, gitEntry); !strings.Contains(d, "one that writes git's own directory in the jail with it") || strings.Contains(d, "adds the entry") {
		t.Errorf("three entries: %s", d)
	}
}

func TestCheckSandboxRuntime(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/x", nil }
	okTrial := func(context.Context, string) error { return nil }
	statuses := func(rs []checkResult) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.status.String()+r.name)
		}
		return strings.Join(s, ",")
	}
	if got := statuses(checkSandboxRuntime(context.Background(), found, okTrial)); got != "ok  sandbox tools,ok  sandbox trial" {
		t.Errorf("control: %s", got)
	}
	noSocat := func(c string) (string, error) {
		if c == "socat" {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + c, nil
	}
	rs := checkSandboxRuntime(context.Background(), noSocat, okTrial)
	if rs[0].status != statusFail || !strings.Contains(rs[0].detail, "socat") || !strings.Contains(rs[0].fix, "apt-get install socat") {
		t.Errorf("no socat: %+v", rs)
	}
	badProc := func(context.Context, string) error {
		return errors.New("bwrap: Can't mount proc on /newroot/proc: Operation not permitted")
	}
	rs = checkSandboxRuntime(context.Background(), found, badProc)
	if rs[1].status != statusFail || !strings.Contains(rs[1].detail, "mount proc") || !strings.Contains(rs[1].fix, "enableWeakerNestedSandbox") {
		t.Errorf("bad /proc: %+v", rs)
	}
}

// The real bubblewrap on this machine (scripts/deps installs it): the trial
// runs, and a trial that cannot work (a missing executable) fails.
func TestBwrapTrialReal(t *testing.T) {
	bwrap, err := execLookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed (scripts/deps installs it)")
	}
	if err := runBwrapTrial(context.Background(), bwrap); err != nil {
		t.Fatalf("trial: %v", err)
	}
	if err := runBwrapTrial(context.Background(), "/nonexistent/bwrap"); err == nil {
		t.Fatal("a missing bwrap passed the trial")
	}
}

// An allowWrite entry that is a symlink counts as where it leads.
func TestJudgeSandboxSymlinkedAllowWrite(t *testing.T) {
	dir := t.TempDir()
	p := testPaths
	p.Home = filepath.Join(dir, "home")
	p.State = filepath.Join(p.Home, ".local", "state", "loopguard")
	p.Config = filepath.Join(p.Home, ".config", "loopguard")
	p.Binary = filepath.Join(p.Home, "go", "bin", "loopguard")
	p.Keyrings = filepath.Join(p.Home, ".local", "share", "keyrings")
	p.GoCache = filepath.Join(p.Home, ".cache", "loopguard-sandbox", "go-build")
	if err := os.MkdirAll(p.State, 0o700); err != nil {
		t.Fatal(err)
	}
	link, plain := filepath.Join(dir, "build"), filepath.Join(dir, "out")
	if err := os.Symlink(filepath.Join(p.Home, ".local"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, err := install.Merge(nil, install.Options{Binary: p.Binary, Deadline: 5e9, Sandbox: p.Spec()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		entry string
		fail  bool
	}{{"/" + link, true}, {"/" + plain, false}} {
		layers := layersOf(t, map[string]string{"user": string(out), "project": `{"sandbox":{"filesystem":{"allowWrite":["` + c.entry + `"]}}}`})
		failed := false
		for _, r := range judgeSandbox(layers, p, filepath.Join(dir, "proj")) {
			if r.status == statusFail {
				failed = true
				if r.name != "sandbox writable paths" || !strings.Contains(r.detail, "loopguard's state") {
					t.Errorf("%s: %+v", c.entry, r)
				}
			}
		}
		if failed != c.fail {
			t.Errorf("%s: failed = %v, want %v", c.entry, failed, c.fail)
		}
	}
}

// Under the Vault backend init denies sandboxed commands reading (and
// writing) this machine's Vault token, wherever the config puts it, and
// ~/.vault-token when that is the one in use; doctor fails settings that
// do not, or that re-open it. Control: the settings init writes pass.
func TestSandboxHidesVaultToken(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	cfgDir := filepath.Join(home, ".config", "loopguard")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "bin", "loopguard")
	for _, c := range []struct{ name, vault, want string }{
		{"token_file", `{"address":"http://127.0.0.1:8200","token_file":"` + home + `/secrets/agent.token"}`, home + "/secrets/agent.token"},
		{"~/.vault-token", `{"address":"http://127.0.0.1:8200"}`, home + "/.vault-token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := `{"v":1,"backend":"vault","vault":` + c.vault + `}`
			if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := cli.ResolveSandboxPaths(bin)
			if err != nil {
				t.Fatal(err)
			}
			if p.VaultToken != c.want {
				t.Fatalf("vault token %q, want %q", p.VaultToken, c.want)
			}
			spec := p.Spec()
			for _, list := range [][]string{spec.DenyRead, spec.DenyWrite} {
				if !slices.Contains(list, install.SandboxPath(c.want)) {
					t.Errorf("%v does not deny %s", list, c.want)
				}
			}
			layers := func(s *install.Sandbox, extra string) []sandboxLayer {
				out, _, err := install.Merge(nil, install.Options{Binary: p.Binary, Deadline: 5e9, Sandbox: s})
				if err != nil {
					t.Fatal(err)
				}
				files := map[string]string{"user": string(out)}
				if extra != "" {
					files["project"] = extra
				}
				return layersOf(t, files)
			}
			failed := func(res []checkResult) []string {
				var out []string
				for _, r := range res {
					if r.status == statusFail {
						out = append(out, r.name+": "+r.detail)
					}
				}
				return out
			}
			if bad := failed(judgeSandbox(layers(spec, ""), p, testProject)); len(bad) > 0 {
				t.Fatalf("control: init's settings fail: %v", bad)
			}
			// The keyring's settings (written before the Vault backend).
			old := p
			old.VaultToken = ""
			bad := failed(judgeSandbox(layers(old.Spec(), ""), p, testProject))
			if len(bad) != 2 || !strings.Contains(bad[0], "denyRead: no settings file lists the Vault token") || !strings.Contains(bad[1], "denyWrite: no settings file lists the Vault token") {
				t.Errorf("settings without the token: %v", bad)
			}
			reopen := `{"sandbox":{"filesystem":{"allowRead":["/` + filepath.Dir(c.want) + `"]}}}`
			bad = failed(judgeSandbox(layers(spec, reopen), p, testProject))
			if len(bad) != 1 || !strings.Contains(bad[0], "re-opens") {
				t.Errorf("allowRead of the token's directory: %v", bad)
			}
		})
	}
	// Control: under the keyring nothing about Vault is added.
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"v":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := cli.ResolveSandboxPaths(bin)
	if err != nil || p.VaultToken != "" {
		t.Fatalf("keyring backend: %q, %v", p.VaultToken, err)
	}
}
