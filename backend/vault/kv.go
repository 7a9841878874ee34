package vault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// KV is a prefix in a KV v2 mount.
type KV struct {
	C      *Client
	Mount  string // "secret"
	Prefix string // "loopguard"
}

// errBadPath is a KV path refused before any request: an empty, dot or
// traversing segment, or a byte outside [A-Za-z0-9._-].
var errBadPath = errors.New("bad kv path")

func (k *KV) data(path string) (string, error) {
	for _, seg := range strings.Split(path, "/") {
		if seg == "" || strings.Trim(seg, ".") == "" || strings.IndexFunc(seg, notPathChar) >= 0 {
			return "", fmt.Errorf("%w %q", errBadPath, path)
		}
	}
	return k.Mount + "/data/" + k.Prefix + "/" + path, nil
}

func notPathChar(r rune) bool {
	return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' && r != '.'
}

// Create writes data at path only if nothing was ever written there (KV v2
// check-and-set 0): of any number of concurrent writers exactly one wins;
// the others get ErrCASMismatch.
func (k *KV) Create(ctx context.Context, path string, data map[string]any) error {
	return k.PutCAS(ctx, path, data, 0)
}

// Get reads the latest version at path (ErrNotFound when there is none).
func (k *KV) Get(ctx context.Context, path string) (map[string]any, error) {
	m, _, err := k.GetVersion(ctx, path)
	return m, err
}

// GetVersion is Get with the time Vault wrote that version (its metadata's
// created_time: Vault's clock, not the writer's).
func (k *KV) GetVersion(ctx context.Context, path string) (map[string]any, time.Time, error) {
	m, v, err := k.GetMeta(ctx, path)
	return m, v.Written, err
}

// Version is what Vault says of the version of a KV v2 record read: its
// number (what a check-and-set write names) and when Vault wrote it.
type Version struct {
	N       int
	Written time.Time
}

// GetMeta is Get with the version read.
func (k *KV) GetMeta(ctx context.Context, path string) (map[string]any, Version, error) {
	p, err := k.data(path)
	if err != nil {
		return nil, Version{}, err
	}
	var out struct {
		Data struct {
			Data     map[string]any `json:"data"`
			Metadata struct {
				CreatedTime time.Time `json:"created_time"`
				Version     int       `json:"version"`
			} `json:"metadata"`
		} `json:"data"`
	}
	if err := k.C.Do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return nil, Version{}, err
	}
	if out.Data.Data == nil {
		return nil, Version{}, &Error{Op: "GET " + p, Status: 404, Msg: "deleted", kind: ErrNotFound}
	}
	return out.Data.Data, Version{N: out.Data.Metadata.Version, Written: out.Data.Metadata.CreatedTime}, nil
}

// Written returns when Vault wrote the latest version at path, from its
// metadata (the data is not read: it may be larger than a client reads).
func (k *KV) Written(ctx context.Context, path string) (time.Time, error) {
	if _, err := k.data(path); err != nil {
		return time.Time{}, err
	}
	var out struct {
		Data struct {
			UpdatedTime time.Time `json:"updated_time"`
		} `json:"data"`
	}
	if err := k.C.Do(ctx, http.MethodGet, k.Mount+"/metadata/"+k.Prefix+"/"+path, nil, &out); err != nil {
		return time.Time{}, err
	}
	return out.Data.UpdatedTime, nil
}

// Destroy deletes every version at path and its metadata: the key is gone
// from listings.
func (k *KV) Destroy(ctx context.Context, path string) error {
	if _, err := k.data(path); err != nil {
		return err
	}
	return k.C.Do(ctx, http.MethodDelete, k.Mount+"/metadata/"+k.Prefix+"/"+path, nil, nil)
}

// ErrClaimed is a grant some hook, on any machine, has already used.
var ErrClaimed = errors.New("grant already claimed")

// Claim marks the single-use grant id as used by holder, atomically across
// every machine sharing the Vault: exactly one claimer gets nil, every other
// ErrClaimed. The hook's policy allows only creating a claim, never
// overwriting or deleting one.
func (k *KV) Claim(ctx context.Context, id string, holder map[string]any) error {
	err := k.Create(ctx, "claims/"+id, holder)
	if errors.Is(err, ErrCASMismatch) {
		return ErrClaimed
	}
	return err
}

// PutCAS writes data at path only if its latest version is still cas (0:
// nothing was ever written there): of concurrent writers that read the
// same version exactly one wins; the others get ErrCASMismatch.
func (k *KV) PutCAS(ctx context.Context, path string, data map[string]any, cas int) error {
	p, err := k.data(path)
	if err != nil {
		return err
	}
	return k.C.Do(ctx, http.MethodPost, p, map[string]any{"options": map[string]any{"cas": cas}, "data": data}, nil)
}

// Put writes data at path (a new version).
func (k *KV) Put(ctx context.Context, path string, data map[string]any) error {
	p, err := k.data(path)
	if err != nil {
		return err
	}
	return k.C.Do(ctx, http.MethodPost, p, map[string]any{"data": data}, nil)
}

// List returns the keys directly under dir (none when dir is empty).
func (k *KV) List(ctx context.Context, dir string) ([]string, error) {
	if _, err := k.data(dir); err != nil {
		return nil, err
	}
	var out struct {
		Data struct {
			Keys []string `json:"keys"`
		} `json:"data"`
	}
	err := k.C.Do(ctx, "LIST", k.Mount+"/metadata/"+k.Prefix+"/"+dir, nil, &out)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return out.Data.Keys, err
}
