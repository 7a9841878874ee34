package doctor

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkKeyHolder: none running is ok; one that failed lately is a warning
// with its reason; one that answers the keyring's key is ok; one that
// answers another key fails; key_holder false, or no loopguard-exec
// beside the binary, skips.
func TestCheckKeyHolder(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "s"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "c"))
	dir := filepath.Join(root, "s", "loopguard")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(bin, "loopguard")
	if r := checkKeyHolder(context.Background(), self, nil); r.status != statusSkip || !strings.Contains(r.detail, "no loopguard-exec") {
		t.Errorf("no loopguard-exec: %s %s", r.status, r.detail)
	}
	if err := os.WriteFile(filepath.Join(bin, "loopguard-exec"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	master := bytes.Repeat([]byte{3}, 32)
	if r := checkKeyHolder(context.Background(), self, master); r.status != statusOK || !strings.Contains(r.detail, "none runs now") {
		t.Errorf("none: %s %s", r.status, r.detail)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.failed"), []byte("mlock: cannot allocate memory\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := checkKeyHolder(context.Background(), self, master); r.status != statusWarn || !strings.Contains(r.detail, "mlock: cannot allocate memory") {
		t.Errorf("failed: %s %s", r.status, r.detail)
	}
	serve := func(key []byte) func() {
		l, err := net.Listen("unix", filepath.Join(dir, "key.sock"))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				var req [1]byte
				_, _ = c.Read(req[:])
				_, _ = c.Write(append(append([]byte("LGK1\x00\x20"), key...), 0, 0))
				c.Close()
			}
		}()
		return func() { l.Close() }
	}
	stop := serve(master)
	if r := checkKeyHolder(context.Background(), self, master); r.status != statusOK || !strings.Contains(r.detail, "running") {
		t.Errorf("the keyring's key: %s %s", r.status, r.detail)
	}
	stop()
	stop = serve(bytes.Repeat([]byte{4}, 32))
	if r := checkKeyHolder(context.Background(), self, master); r.status != statusFail || !strings.Contains(r.detail, "another key") {
		t.Errorf("another key: %s %s", r.status, r.detail)
	}
	stop()
	if err := os.MkdirAll(filepath.Join(root, "c", "loopguard"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "c", "loopguard", "config.json"), []byte(`{"v":1,"key_holder":false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := checkKeyHolder(context.Background(), self, master); r.status != statusSkip || !strings.Contains(r.detail, "off in the configuration") {
		t.Errorf("off: %s %s", r.status, r.detail)
	}
}
