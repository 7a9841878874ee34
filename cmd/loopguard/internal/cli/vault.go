package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/config"
)

// VaultTimeout bounds one CLI request to Vault (the hook's requests are
// bounded by its own deadline).
const VaultTimeout = 10 * time.Second

// VaultClient builds a Vault client from the config, with the token read
// from its token file.
func VaultClient(cfg config.Config) (*vault.Client, config.Vault, error) {
	home, _ := os.UserHomeDir()
	v := cfg.Vault.WithDefaults(home)
	tok, err := ReadToken(v.TokenFile)
	if err != nil {
		return nil, v, err
	}
	c, err := vault.NewClient(v.Address, tok)
	return c, v, err
}

// ReadToken reads a Vault token file: a regular file, at most 4 KiB, one
// printable line.
func ReadToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("failed to read the Vault token: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("vault token file %s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", fmt.Errorf("failed to read the Vault token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(b) > 4096 || tok == "" || strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return "", fmt.Errorf("vault token file %s does not hold one token", path)
	}
	return tok, nil
}
