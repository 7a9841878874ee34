package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loopguard/loopguard/shellparse"
)

func TestLoadSaveRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loopguard", "config.json")
	c, found, err := Load(path)
	if err != nil || found || !slices.Equal(c.Trusted(), shellparse.DefaultTrusted) {
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
