package agents_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/qwen"
)

// trustRow is a trustedFolders.json (T: the fixture's root) and what
// Gemini CLI 0.61.0 and Qwen Code 0.24.4 decide for T/src/project with it:
// "yes", "no", or "error" (the client refuses the file).
type trustRow struct{ file, gemini, qwen string }

var trustRows = []trustRow{
	{`{"T/src/project": "TRUST_FOLDER"}`, "yes", "yes"},
	{`{"T/src": "TRUST_FOLDER"}`, "yes", "yes"},
	{`{"T/src/project/": "TRUST_FOLDER"}`, "yes", "yes"},
	{`{"T/src/project/x": "TRUST_PARENT"}`, "yes", "yes"},
	{`{"T/src/project": "TRUST_PARENT"}`, "yes", "yes"},
	{`{"T/link/project": "TRUST_FOLDER"}`, "yes", "yes"},
	{"// written by hand\n" + `{"T/src/project": "TRUST_FOLDER" /* mine */}`, "yes", "yes"},
	{`{"T/src": "DO_NOT_TRUST", "T/src/project": "TRUST_FOLDER"}`, "yes", "yes"},
	// Near misses and what overrides a trust.
	{`{"T/src/pro": "TRUST_FOLDER"}`, "no", "no"},
	{`{"T/src/project/sub": "TRUST_FOLDER"}`, "no", "no"},
	{`{"T/src/projectx/y": "TRUST_PARENT"}`, "no", "no"},
	{`{"T/src": "TRUST_FOLDER", "T/src/project": "DO_NOT_TRUST"}`, "no", "no"},
	{`{"T/src/project": "TRUST_FOLDER", "T/link/project": "DO_NOT_TRUST"}`, "no", "no"},
	{`{}`, "no", "no"},
	// Where the two differ: Gemini takes the longest path as written,
	// Qwen Code the deepest folder, DO_NOT_TRUST on a tie.
	{`{"T/src/project/a-long-name": "TRUST_PARENT", "T/src/project": "DO_NOT_TRUST"}`, "yes", "no"},
	// A level Gemini does not know stops it; Qwen Code skips the rule.
	{`{"T/src/project": "TRUST_ME"}`, "error", "no"},
	{`{"T/src": "TRUST_FOLDER", "T/src/project": true}`, "error", "yes"},
	{`["T/src/project"]`, "error", "error"},
	{`{"T/src/project": "TRUST_FOLDER"`, "error", "error"},
}

// trustFixture is T with T/src/project/sub, T/src/pro and T/link -> T/src.
func trustFixture(t *testing.T) (root, project string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"src/project/sub", "src/pro"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "src"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, "src", "project")
}

func verdict(ok bool, err error) string {
	switch {
	case err != nil:
		return "error"
	case ok:
		return "yes"
	}
	return "no"
}

// TestFolderTrust reads each row as each client's own code does (the
// rules above are the clients', read in their 0.61.0 and 0.24.4 bundles;
// TestFolderTrustOracle runs those bundles on the same rows).
func TestFolderTrust(t *testing.T) {
	root, project := trustFixture(t)
	for _, r := range trustRows {
		file := []byte(strings.ReplaceAll(r.file, "T/", root+"/"))
		ok, _, err := gemini.Trusted(file, project)
		if got := verdict(ok, err); got != r.gemini {
			t.Errorf("gemini %s: %s (%v), want %s", r.file, got, err, r.gemini)
		}
		ok, _, err = qwen.Trusted(file, project)
		if got := verdict(ok, err); got != r.qwen {
			t.Errorf("qwen %s: %s (%v), want %s", r.file, got, err, r.qwen)
		}
	}
}

// TestFolderTrustSetting: folder trust is on for Gemini and off for Qwen
// Code unless a settings file says otherwise, the last in merge order
// (system defaults, user, system) winning; comments are allowed.
func TestFolderTrustSetting(t *testing.T) {
	off := []byte(`{"security": {"folderTrust": {"enabled": false}}} // off`)
	on := []byte("/* on */ {\"security\": {\"folderTrust\": {\"enabled\": true}}}")
	other := []byte(`{"security": {"auth": {"selectedType": "gemini-api-key"}}}`)
	for _, c := range []struct {
		def   bool
		files [][]byte
		want  bool
		from  int
	}{
		{true, nil, true, -1},
		{false, nil, false, -1},
		{true, [][]byte{nil, other, nil}, true, -1},
		{true, [][]byte{nil, off, nil}, false, 1},
		{false, [][]byte{nil, on, nil}, true, 1},
		{true, [][]byte{nil, off, on}, true, 2},
		{true, [][]byte{off, nil, nil}, false, 0},
		{true, [][]byte{on, off, nil}, false, 1},
		{true, [][]byte{nil, []byte(`{"security": `), nil}, true, -1},
	} {
		got, from := agents.FolderTrustSetting(c.def, c.files...)
		if got != c.want || from != c.from {
			t.Errorf("FolderTrustSetting(%v, %q) = %v, %d; want %v, %d", c.def, c.files, got, from, c.want, c.from)
		}
	}
}

// oracle is a script that runs each row through a client's own trust code
// in its installed bundle (the path in argv[2]); rows arrive on stdin.
const oracle = `
const mod = await import(process.argv[2]);
const rows = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = [];
for (const r of rows) {
  require('fs').writeFileSync(r.path, r.file);
  process.env[process.argv[3]] = r.path;
  mod.resetTrustedFoldersForTesting();
  try {
    const res = process.argv[4] === 'gemini'
      ? mod.checkPathTrust({path: r.dir, isFolderTrustEnabled: true})
      : mod.isWorkspaceTrusted({security: {folderTrust: {enabled: true}}}, undefined, r.dir);
    out.push(res.isTrusted ? 'yes' : 'no');
  } catch (e) { out.push('error'); }
}
console.log(JSON.stringify(out));
`

// TestFolderTrustOracle runs the rows through Gemini CLI 0.61.0's and Qwen
// Code 0.24.4's own code, from the bundles the end-to-end tests install
// (e2e/agenttest); it skips when they are not installed.
func TestFolderTrustOracle(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	cache := filepath.Join("..", ".cache", "agents")
	if c := os.Getenv("LOOPGUARD_AGENTS_CACHE"); c != "" {
		cache = c
	}
	for _, c := range []struct{ name, glob, env string }{
		{"gemini", "gemini/node_modules/@google/gemini-cli/bundle/chunk-*.js", "GEMINI_CLI_TRUSTED_FOLDERS_PATH"},
		{"qwen", "qwen/node_modules/@qwen-code/qwen-code/chunks/chunk-*.js", "QWEN_CODE_TRUSTED_FOLDERS_PATH"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The chunk that exports the trust code.
			chunks, _ := filepath.Glob(filepath.Join(cache, c.glob))
			mod := ""
			for _, f := range chunks {
				b, err := os.ReadFile(f)
				if err == nil && strings.Contains(string(b), "resetTrustedFoldersForTesting,") &&
					(c.name == "qwen" && strings.Contains(string(b), "  isWorkspaceTrusted\n") || c.name == "gemini" && strings.Contains(string(b), "  checkPathTrust,\n")) {
					mod, _ = filepath.Abs(f)
					break
				}
			}
			if mod == "" {
				t.Skipf("%s is not installed in %s (the e2e tests install it)", c.name, cache)
			}
			root, project := trustFixture(t)
			var rows []map[string]string
			for i, r := range trustRows {
				rows = append(rows, map[string]string{"path": filepath.Join(t.TempDir(), "trusted"+string(rune('a'+i))+".json"),
					"file": strings.ReplaceAll(r.file, "T/", root+"/"), "dir": project})
			}
			stdin, _ := json.Marshal(rows)
			script := filepath.Join(t.TempDir(), "oracle.mjs")
			if err := os.WriteFile(script, []byte("import { createRequire } from 'module'; const require = createRequire(import.meta.url);\n"+oracle), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(node, script, "file://"+mod, c.env, c.name)
			cmd.Dir = t.TempDir()
			cmd.Stdin = strings.NewReader(string(stdin))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			var got []string
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || len(got) != len(trustRows) {
				t.Fatalf("oracle said %s", out)
			}
			for i, r := range trustRows {
				want := r.gemini
				if c.name == "qwen" {
					want = r.qwen
				}
				if got[i] != want {
					t.Errorf("%s's own code on %s: %s; the row says %s", c.name, r.file, got[i], want)
				}
			}
		})
	}
}
