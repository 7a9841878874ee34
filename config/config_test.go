package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

func TestLoadSaveRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loopguard", "config.json")
	c, found, err := Load(path)
	if err != nil || found || !slices.Equal(c.Trusted(), policy.DefaultTrusted) {
		t.Fatalf("missing file: %+v %v %v", c, found, err)
	}
	want := Config{TrustedDirs: []string{"/usr/bin", "/opt/go/bin"}, Principal: "alice"}
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	got, found, err := Load(path)
	if err != nil || !found || !slices.Equal(got.TrustedDirs, want.TrustedDirs) || got.Principal != "alice" {
		t.Fatalf("round trip: %+v %v %v", got, found, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"unknown field":    `{"v":1,"trusted":["/x"]}`,
		"wrong version":    `{"v":2}`,
		"relative dir":     `{"v":1,"trusted_dirs":["bin"]}`,
		"unclean dir":      `{"v":1,"trusted_dirs":["/usr/bin/../../tmp"]}`,
		"control in name":  `{"v":1,"principal":"a\u001bb"}`,
		"trailing":         `{"v":1} {}`,
		"not json":         `trusted_dirs = /tmp`,
		"trusted not list": `{"v":1,"trusted_dirs":"/tmp"}`,
	} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(data), 0o600)
		_, _, err := Load(p)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: Load = %v, want a config error", name, err)
		}
	}
	// A symlinked config is refused too.
	real := filepath.Join(dir, "real.json")
	os.WriteFile(real, []byte(`{"v":1}`), 0o600)
	link := filepath.Join(dir, "link.json")
	os.Symlink(real, link)
	if _, _, err := Load(link); err == nil {
		t.Error("symlinked config accepted")
	}
	// Control: the minimal file is fine.
	if _, _, err := Load(real); err != nil {
		t.Errorf("minimal config: %v", err)
	}
}

func TestToolchains(t *testing.T) {
	base := t.TempDir()
	gobin := filepath.Join(base, "go", "bin")
	os.MkdirAll(gobin, 0o755)
	os.WriteFile(filepath.Join(gobin, "go"), []byte("#!/bin/sh\n"), 0o755)
	nodeReal := filepath.Join(base, "node-v20", "bin")
	os.MkdirAll(nodeReal, 0o755)
	os.WriteFile(filepath.Join(nodeReal, "node"), []byte("#!/bin/sh\n"), 0o755)
	links := filepath.Join(base, "links")
	os.MkdirAll(links, 0o755)
	os.Symlink(filepath.Join(nodeReal, "node"), filepath.Join(links, "node"))
	path := "rel/bin" + string(os.PathListSeparator) + gobin + string(os.PathListSeparator) + links
	got := Toolchains(path, "go", "node", "absent")
	if !slices.Equal(got, []string{gobin, nodeReal}) {
		t.Fatalf("Toolchains = %v, want %v (a symlink resolves to its real dir)", got, []string{gobin, nodeReal})
	}
}

func TestBackendVault(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"unknown backend":      `{"v":1,"backend":"file"}`,
		"vault without config": `{"v":1,"backend":"vault"}`,
		"vault section unused": `{"v":1,"vault":{"address":"https://v:8200"}}`,
		"http to a remote":     `{"v":1,"backend":"vault","vault":{"address":"http://vault.corp:8200"}}`,
		"no scheme":            `{"v":1,"backend":"vault","vault":{"address":"127.0.0.1:8200"}}`,
		"path in address":      `{"v":1,"backend":"vault","vault":{"address":"https://v:8200/v1"}}`,
		"user in address":      `{"v":1,"backend":"vault","vault":{"address":"https://a:b@v:8200"}}`,
		"mount traversal":      `{"v":1,"backend":"vault","vault":{"address":"https://v","transit_mount":"../sys"}}`,
		"key with query":       `{"v":1,"backend":"vault","vault":{"address":"https://v","key":"k?x"}}`,
		"relative token file":  `{"v":1,"backend":"vault","vault":{"address":"https://v","token_file":"tok"}}`,
		"unknown vault field":  `{"v":1,"backend":"vault","vault":{"address":"https://v","token":"hvs.x"}}`,
	} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(data), 0o600)
		var ce *Error
		if _, _, err := Load(p); !errors.As(err, &ce) {
			t.Errorf("%s: Load = %v, want a config error", name, err)
		}
	}
	// Controls: loopback http, https anywhere, explicit keyring.
	for name, data := range map[string]string{
		"loopback http": `{"v":1,"backend":"vault","vault":{"address":"http://127.0.0.1:8200"}}`,
		"localhost":     `{"v":1,"backend":"vault","vault":{"address":"http://localhost:8200","kv_prefix":"team/a"}}`,
		"https":         `{"v":1,"backend":"vault","vault":{"address":"https://vault.corp:8200","token_file":"/etc/loopguard/agent-token"}}`,
		"keyring":       `{"v":1,"backend":"keyring"}`,
	} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(data), 0o600)
		if _, _, err := Load(p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	v := Vault{Address: "https://v"}.WithDefaults("/home/a")
	if v.TransitMount != "transit" || v.Key != "loopguard" || v.KVMount != "secret" || v.KVPrefix != "loopguard" || v.TokenFile != "/home/a/.vault-token" {
		t.Errorf("defaults: %+v", v)
	}
}

func TestNotifyConfig(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"relative program": `{"v":1,"notify":{"command":["notify-send","x"]}}`,
		"unclean program":  `{"v":1,"notify":{"command":["/usr/bin/../bin/tmux"]}}`,
		"NUL":              `{"v":1,"notify":{"command":["/bin/echo","a\u0000b"]}}`,
		"unknown field":    `{"v":1,"notify":{"shell":"x"}}`,
		"ntfy http remote": `{"v":1,"notify":{"ntfy":{"url":"http://ntfy.example/t"}}}`,
		"ntfy no topic":    `{"v":1,"notify":{"ntfy":{"url":"https://ntfy.example/"}}}`,
		"ntfy sub path":    `{"v":1,"notify":{"ntfy":{"url":"https://ntfy.example/a/b"}}}`,
		"ntfy query":       `{"v":1,"notify":{"ntfy":{"url":"https://ntfy.example/t?x=1"}}}`,
		"ntfy userinfo":    `{"v":1,"notify":{"ntfy":{"url":"https://u:p@ntfy.example/t"}}}`,
		"ntfy token rel":   `{"v":1,"notify":{"ntfy":{"url":"https://ntfy.example/t","token_file":"tok"}}}`,
	} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(data), 0o600)
		var ce *Error
		if _, _, err := Load(p); !errors.As(err, &ce) {
			t.Errorf("%s: Load = %v, want a config error", name, err)
		}
	}
	p := filepath.Join(dir, "ok.json")
	os.WriteFile(p, []byte(`{"v":1,"notify":{"desktop":false,"command":["/usr/bin/tmux","display-message","$(id) is data"]}}`), 0o600)
	c, _, err := Load(p)
	if err != nil || c.DesktopOn() || len(c.NotifyCommand()) != 3 {
		t.Errorf("control: %+v %v", c, err)
	}
	for _, u := range []string{"https://ntfy.example/my-topic_1", "http://127.0.0.1:8080/t", "http://localhost/t"} {
		os.WriteFile(p, []byte(`{"v":1,"notify":{"ntfy":{"url":"`+u+`","token_file":"/home/u/.config/loopguard/ntfy-token"}}}`), 0o600)
		if c, _, err := Load(p); err != nil || c.NotifyNtfy() == nil || c.NotifyNtfy().URL != u {
			t.Errorf("control %s: %+v %v", u, c.NotifyNtfy(), err)
		}
	}
	if !(Config{}).DesktopOn() || (Config{}).NotifyCommand() != nil || (Config{}).NotifyNtfy() != nil {
		t.Error("defaults: desktop on, no command")
	}
}

func TestToolchainDirs(t *testing.T) {
	base := t.TempDir()
	cargo := filepath.Join(base, ".cargo", "bin")
	shims := filepath.Join(base, ".pyenv", "shims")
	for _, d := range []string{cargo, shims} {
		os.MkdirAll(d, 0o755)
	}
	for _, f := range []string{filepath.Join(cargo, "cargo"), filepath.Join(cargo, "rustc"), filepath.Join(shims, "pip"), filepath.Join(shims, "cargo")} {
		os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755)
	}
	os.WriteFile(filepath.Join(shims, "uv"), []byte("not executable"), 0o644)
	path := strings.Join([]string{"rel", cargo, shims, "/usr/bin"}, string(os.PathListSeparator))
	got := ToolchainDirs(path, []string{"/usr/bin"})
	if len(got) != 2 || got[0].Dir != cargo || !slices.Equal(got[0].Names, []string{"cargo", "rustc"}) ||
		got[1].Dir != shims || !slices.Equal(got[1].Names, []string{"pip"}) {
		t.Fatalf("ToolchainDirs = %+v (cargo is found first in %s; uv is not executable)", got, cargo)
	}
	if got := ToolchainDirs(path, []string{"/usr/bin", cargo, shims}); len(got) != 0 {
		t.Errorf("trusted dirs offered again: %+v", got)
	}
}

// TestLoadSaysWhere: a config the decoder refuses is named with the line
// and column it refused at (the error doctor and the hook both print).
func TestLoadSaysWhere(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		data string
		want string
	}{
		"syntax":        {"{\n  \"v\": 1,\n  \"trusted_dirs\": [\"/usr/bin\",]\n}\n", ":3:31: invalid character ']'"},
		"wrong type":    {"{\n  \"v\": 1,\n  \"principal\": 7\n}\n", ":3:16: json: cannot unmarshal number"},
		"unknown field": {"{\n  \"v\": 1,\n    \"trusted\": []\n}\n", `:3:5: json: unknown field "trusted"`},
		"trailing":      {"{\"v\": 1}\n\n  {}\n", ":3:3: trailing data"},
		"multibyte":     {"{\"principal\": \"é\", \"v\": 1,}", ":1:27: invalid character '}'"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(p, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := Load(p)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), p+c.want) {
			t.Errorf("%s: Load = %v, want %q after the path", name, err, c.want)
		}
	}
	// Control: the same file made valid loads.
	p := filepath.Join(dir, "good.json")
	if err := os.WriteFile(p, []byte("{\n  \"v\": 1,\n  \"trusted_dirs\": [\"/usr/bin\"]\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, found, err := Load(p); err != nil || !found {
		t.Errorf("good config: found %v, %v", found, err)
	}
}

// key_holder: on unless false; anything but a boolean is a config error.
func TestKeyHolder(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	for body, want := range map[string]bool{`{"v":1}`: true, `{"v":1,"key_holder":true}`: true, `{"v":1,"key_holder":false}`: false} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if c, _, err := Load(p); err != nil || c.KeyHolderOn() != want {
			t.Errorf("%s: on %v, %v; want %v", body, c.KeyHolderOn(), err, want)
		}
	}
	if err := os.WriteFile(p, []byte(`{"v":1,"key_holder":"no"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *Error
	if _, _, err := Load(p); !errors.As(err, &ce) {
		t.Errorf(`key_holder "no": %v, want a config error`, err)
	}
}
