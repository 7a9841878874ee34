package vault

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/loopguard/loopguard/state"
)

// Pending calls and approvals cross machines through KV v2, under the
// prefix:
//
//	pending/<id>    the hook (agent token) writes the call waiting for a human
//	approvals/<id>  an approver writes the grant token, or a refusal
//	claims/<grant>  the hook that uses a single-use grant, once (cas=0)
//
// A pending record is what an agent machine says: an approver's machine
// recomputes its digest from the canonical call and shows that call, so
// what is approved is what was shown, whatever else the record claims.

// TeamPending is a pending call as another machine published it.
type TeamPending struct {
	Host    string
	Pending *state.Pending
}

// Publish puts p where approvers see it, with this machine's name.
func (c *Custody) Publish(ctx context.Context, p *state.Pending) error {
	rec, err := json.Marshal(p)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	return c.KV.Put(ctx, "pending/"+p.ID, map[string]any{
		"host": host, "record": string(rec), "call": base64.StdEncoding.EncodeToString(p.Descriptor),
	})
}

// Fetch returns the approval an approver wrote for pending id: a grant
// token, or the name of who refused the call. Both are "" when there is
// none yet.
func (c *Custody) Fetch(ctx context.Context, id string) (tok, deniedBy string, err error) {
	m, err := c.KV.Get(ctx, "approvals/"+id)
	if errors.Is(err, ErrNotFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	tok, _ = m["token"].(string)
	deniedBy, _ = m["denied_by"].(string)
	return tok, deniedBy, nil
}

// TeamList returns the pending calls published across the team (newest
// first); records that do not read are skipped and counted.
func (c *Custody) TeamList(ctx context.Context) ([]TeamPending, int, error) {
	ids, err := c.KV.List(ctx, "pending")
	if err != nil {
		return nil, 0, err
	}
	var out []TeamPending
	bad := 0
	for _, id := range ids {
		tp, err := c.TeamGet(ctx, id)
		if err != nil {
			if Reason(err) != "" && !errors.Is(err, ErrNotFound) {
				return nil, 0, err
			}
			bad++
			continue
		}
		out = append(out, *tp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pending.Created.After(out[j].Pending.Created) })
	return out, bad, nil
}

// TeamGet reads one published pending call.
func (c *Custody) TeamGet(ctx context.Context, id string) (*TeamPending, error) {
	m, err := c.KV.Get(ctx, "pending/"+id)
	if err != nil {
		return nil, err
	}
	host, _ := m["host"].(string)
	rec, _ := m["record"].(string)
	call, _ := m["call"].(string)
	var p state.Pending
	if err := json.Unmarshal([]byte(rec), &p); err != nil {
		return nil, fmt.Errorf("pending call %s: unreadable record: %w", id, err)
	}
	if p.Descriptor, err = base64.StdEncoding.DecodeString(call); err != nil {
		return nil, fmt.Errorf("pending call %s: unreadable call: %w", id, err)
	}
	if p.ID != id {
		return nil, fmt.Errorf("pending call %s: the record names %s", id, p.ID)
	}
	return &TeamPending{Host: host, Pending: &p}, nil
}

// Decide records an approver's decision on pending id: a grant token, or a
// refusal by principal.
func (c *Custody) Decide(ctx context.Context, id, tok, principal string, now time.Time) error {
	data := map[string]any{"principal": principal, "time": now.UTC().Format(time.RFC3339)}
	if tok != "" {
		data["token"] = tok
	} else {
		data["denied_by"] = principal
	}
	return c.KV.Put(ctx, "approvals/"+id, data)
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
