package install

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentFileOff: init sets an agent's settings named in Off to false
// beside its hooks (Qwen Code's general.gitCoAuthor.commit and .pr, a
// rewrite of the command after the hook), making the objects on the way
// and replacing an older scalar form; a second init changes nothing.
// Uninstall gives back the original bytes where nothing else changed, and
// deletes a file init created; where something else changed it takes out
// only what holds false. An array in the way is refused.
func TestAgentFileOff(t *testing.T) {
	bin := "/opt/lg/loopguard"
	f := agentFiles(bin)["nested"]
	f.Off = []string{"general.gitCoAuthor.commit", "general.gitCoAuthor.pr"}
	want := map[string]any{"commit": false, "pr": false}
	for _, orig := range []string{"", `{"general":{"gitCoAuthor":true,"vimMode":true}}`, `{"general":{"gitCoAuthor":"yes"}}`,
		`{"general":{"gitCoAuthor":{"commit":true}}}`, `{"model":"x"}`} {
		dir := t.TempDir()
		path := filepath.Join(dir, "settings.json")
		backups := filepath.Join(dir, "backups")
		if orig != "" {
			if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ApplyAgent(path, backups, f, false); err != nil {
			t.Fatalf("%q: %v", orig, err)
		}
		data, _ := os.ReadFile(path)
		var m struct {
			General struct {
				GitCoAuthor map[string]any `json:"gitCoAuthor"`
			} `json:"general"`
		}
		if err := json.Unmarshal(data, &m); err != nil || len(m.General.GitCoAuthor) != 2 || m.General.GitCoAuthor["commit"] != want["commit"] || m.General.GitCoAuthor["pr"] != want["pr"] {
			t.Errorf("%q: after init %s (%v), want gitCoAuthor %v", orig, data, err, want)
		}
		if strings.Contains(orig, "vimMode") && !strings.Contains(string(data), `"vimMode":true`) {
			t.Errorf("%q: another setting was lost: %s", orig, data)
		}
		if res, err := ApplyAgent(path, backups, f, false); err != nil || res.Changed {
			t.Errorf("%q: a second init changed the file: %v %+v", orig, err, res)
		}
		if _, err := RemoveAgent(path, backups, f, false); err != nil {
			t.Fatal(err)
		}
		after, err := os.ReadFile(path)
		switch {
		case orig == "" && !os.IsNotExist(err):
			t.Errorf("the file init created is still there: %q", after)
		case orig != "" && !bytes.Equal(after, []byte(orig)):
			t.Errorf("uninstall did not restore the original:\n got %q\nwant %q", after, orig)
		}
	}
	// Something else changed since init: only what holds false goes.
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if _, err := ApplyAgent(path, filepath.Join(dir, "b"), f, false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"pr": false`), []byte(`"pr": true`), 1)
	data = bytes.Replace(data, []byte("{"), []byte(`{"model": "y",`), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveAgent(path, filepath.Join(dir, "b"), f, false); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if s := strings.Join(strings.Fields(string(after)), ""); s != `{"model":"y","general":{"gitCoAuthor":{"pr":true}}}` {
		t.Errorf("changed since init, after uninstall: %s", after)
	}
	if _, _, err := MergeAgent([]byte(`{"general":[1]}`), f); err == nil {
		t.Error("an array in the way: merged, want an error")
	}
}
