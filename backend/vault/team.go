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
	"strings"
	"sync"
	"time"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Pending calls and approvals cross machines through KV v2, under the
// prefix, each agent machine under its own Vault identity (entity id E,
// given by `loopguard team enroll`):
//
//	pending/E/<id>    E's hook writes the call waiting for a human
//	approvals/E/<id>  an approver writes the grant token, or a refusal
//	claims/E/<grant>  E's hook uses a single-use grant, once (cas=0)
//
// The agent policy is templated on {{identity.entity.id}}: a machine's token
// writes, reads and claims under its own E only, so one machine cannot
// publish under another's name, read the approvals made for it, or claim
// its grants first.
//
// A pending record is what an agent machine says, and an approver trusts
// none of it: TeamGet checks that the record's digest is the digest of its
// call and that its id is the id that call, session and agent give, before
// anything of it is returned; the approver's side computes what it warns
// about from the call itself; what only the agent machine knows (its host
// name, its reason) comes back apart, as AgentSays, for a labelled block.

// ErrNoEntity is a Vault token with no identity of its own: it was not made
// by `loopguard team enroll`, and the agent policy lets it write nothing.
var ErrNoEntity = fmt.Errorf("%w: this machine's Vault token has no identity (entity); enroll the machine with `loopguard team enroll`", ErrDenied)

// entity is this custody's Vault identity, asked once (again after a
// Vault that did not answer).
type entity struct {
	mu  sync.Mutex
	id  string
	err error // ErrNoEntity, kept: the token will not grow one
}

// Entity returns the Vault entity id of the custody's token (the name of
// its directories under pending/, approvals/ and claims/).
func (c *Custody) Entity(ctx context.Context) (string, error) {
	c.ent.mu.Lock()
	defer c.ent.mu.Unlock()
	if c.ent.id != "" || c.ent.err != nil {
		return c.ent.id, c.ent.err
	}
	self, err := c.KV.C.LookupSelf(ctx)
	switch {
	case err != nil:
		return "", err
	case self.EntityID == "" || strings.IndexFunc(self.EntityID, notPathChar) >= 0:
		c.ent.err = ErrNoEntity
		return "", c.ent.err
	}
	c.ent.id = self.EntityID
	return c.ent.id, nil
}

// AgentSays is what an agent machine published about a call that only it
// can know and no one checked: shown in a block labelled as its words,
// never in loopguard's voice, never deciding whether a warning appears.
type AgentSays struct {
	Host       string
	Reason     string
	Detail     string
	Warnings   []string
	ProjectDir string
	AgentType  string
	Created    time.Time
	HeldUntil  time.Time
}

// TeamPending is a pending call published by an agent machine, as the
// approver's side read it.
type TeamPending struct {
	// Key is the record's path under pending/ ("E/<id>"), as listed.
	Key string
	// Machine is the Vault entity that wrote it (its directory: the agent
	// policy lets a token write only under its own), and MachineName the
	// name Vault knows it by ("" when the approver may not read it).
	Machine, MachineName string
	// Written is when Vault stored this version of the record (its own
	// metadata): the order of the team's queue.
	Written time.Time
	// Err is why the record is unreadable (nil when it verified); nothing
	// else of an unreadable record is returned.
	Err error
	// Pending holds only what the checks bind (id, session, agent, tool,
	// digest, the call) and what follows from the call (its cwd, as the
	// project): the rest of the record is in Says.
	Pending *state.Pending
	Says    AgentSays
}

// maxRecordFields bounds the agent's free text kept from a record.
const (
	maxSaysText     = 2048
	maxSaysWarnings = 32
)

// Publish puts p where approvers see it, under this machine's identity.
func (c *Custody) Publish(ctx context.Context, p *state.Pending) error {
	e, err := c.Entity(ctx)
	if err != nil {
		return err
	}
	rec, err := json.Marshal(p)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	return c.KV.Put(ctx, "pending/"+e+"/"+p.ID, map[string]any{
		"host": host, "record": string(rec), "call": base64.StdEncoding.EncodeToString(p.Descriptor),
	})
}

// Fetch returns the approval an approver wrote for this machine's pending
// id: a grant token, or the name of who refused the call. Both are "" when
// there is none yet.
func (c *Custody) Fetch(ctx context.Context, id string) (tok, deniedBy string, err error) {
	e, err := c.Entity(ctx)
	if err != nil {
		return "", "", err
	}
	return c.Answer(ctx, e+"/"+id)
}

// Answer returns the approval written for the record at key ("E/<id>"):
// a grant token, or who refused it; both "" when there is none yet.
func (c *Custody) Answer(ctx context.Context, key string) (tok, deniedBy string, err error) {
	m, err := c.KV.Get(ctx, "approvals/"+key)
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

// TeamKeys lists the keys of the records published across the team
// ("E/<id>"); a key that is not under a machine's directory (a record of
// an older layout) is listed as it is, and reads as unreadable.
func (c *Custody) TeamKeys(ctx context.Context) ([]string, error) {
	top, err := c.KV.List(ctx, "pending")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, t := range top {
		e, dir := strings.CutSuffix(t, "/")
		if !dir {
			keys = append(keys, t)
			continue
		}
		ids, err := c.KV.List(ctx, "pending/"+e)
		if errors.Is(err, errBadPath) {
			keys = append(keys, t)
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			keys = append(keys, e+"/"+id)
		}
	}
	return keys, nil
}

// TeamList returns the records published across the team, the ones that
// verified and the unreadable ones (Err set), newest first by Vault's own
// time of writing.
func (c *Custody) TeamList(ctx context.Context) ([]TeamPending, error) {
	keys, err := c.TeamKeys(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	var out []TeamPending
	for _, k := range keys {
		tp, err := c.teamGet(ctx, k, names)
		if err != nil {
			return nil, err
		}
		out = append(out, *tp)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Written.After(out[j].Written) })
	return out, nil
}

// TeamGet reads and verifies the record at key ("E/<id>"). A record that
// does not verify comes back with Err set and nothing else of it; an error
// is Vault's (no answer, no permission).
func (c *Custody) TeamGet(ctx context.Context, key string) (*TeamPending, error) {
	return c.teamGet(ctx, key, map[string]string{})
}

func (c *Custody) teamGet(ctx context.Context, key string, names map[string]string) (*TeamPending, error) {
	tp := &TeamPending{Key: key}
	e, id, ok := strings.Cut(key, "/")
	if !ok || strings.Contains(id, "/") {
		tp.Err = errors.New("not under an agent machine's identity (a record of an older layout, or not loopguard's)")
		return tp, nil
	}
	tp.Machine = e
	m, written, err := c.KV.GetVersion(ctx, "pending/"+key)
	switch {
	case errors.Is(err, errBadPath):
		tp.Err = errors.New("its key is not a pending id")
		return tp, nil
	case errors.Is(err, ErrNotFound):
		tp.Err = errors.New("it was deleted")
		return tp, nil
	case err != nil:
		return nil, err
	}
	tp.Written = written
	if name, ok := names[e]; ok {
		tp.MachineName = name
	} else {
		tp.MachineName = c.machineName(ctx, e)
		names[e] = tp.MachineName
	}
	if tp.Pending, tp.Says, tp.Err = VerifyRecord(id, m); tp.Err == nil {
		// Its age is Vault's, not what the record claims.
		tp.Pending.Created, tp.Pending.Seen = written, written
	}
	return tp, nil
}

// machineName is the name Vault knows entity e by: the alias `team
// enroll` gave it, or the entity's own name ("" when the approver's token
// may not read identities).
func (c *Custody) machineName(ctx context.Context, e string) string {
	var out struct {
		Data struct {
			Name    string `json:"name"`
			Aliases []struct {
				Name      string `json:"name"`
				MountType string `json:"mount_type"`
			} `json:"aliases"`
		} `json:"data"`
	}
	if err := c.KV.C.Do(ctx, http.MethodGet, "identity/entity/id/"+e, nil, &out); err != nil {
		return ""
	}
	for _, a := range out.Data.Aliases {
		if a.MountType == "token" && a.Name != "" {
			return a.Name
		}
	}
	if !autoEntity.MatchString(out.Data.Name) {
		return out.Data.Name
	}
	return ""
}

// Reasons a published record is unreadable. They name the check that
// failed, never the record's contents.
var (
	errRecordShape  = errors.New("it does not decode as a pending call")
	errRecordDigest = errors.New("its digest is not the digest of its call")
	errRecordID     = errors.New("its id is not the id of its call, session, agent and tool")
	errRecordTool   = errors.New("its tool is not its call's tool")
)

// VerifyRecord checks the KV data m published under pending id id and
// returns what an approver may show: the pending call built from what the
// checks bind (the call's canonical bytes, whose digest must be the
// record's digest; session, agent, tool and digest, which must give id)
// and from the call itself (its cwd, which is also the project); and,
// apart, what the agent machine says. A record that fails a check is an
// error and nothing of it is returned.
func VerifyRecord(id string, m map[string]any) (*state.Pending, AgentSays, error) {
	rec, _ := m["record"].(string)
	call, _ := m["call"].(string)
	var r state.Pending
	if err := json.Unmarshal([]byte(rec), &r); err != nil {
		return nil, AgentSays{}, errRecordShape
	}
	desc, err := base64.StdEncoding.DecodeString(call)
	if err != nil || len(desc) == 0 {
		return nil, AgentSays{}, errRecordShape
	}
	if token.DigestOf(desc) != r.Digest {
		return nil, AgentSays{}, errRecordDigest
	}
	if r.ID != id || state.PendingID(r.Session, r.Agent, r.Tool, r.Digest) != id {
		return nil, AgentSays{}, errRecordID
	}
	v, err := token.Decode(desc)
	if err != nil {
		return nil, AgentSays{}, errRecordShape
	}
	dm, _ := v.(map[string]any)
	tool, _ := dm["tool"].(string)
	cwd, _ := dm["cwd"].(string)
	if tool != r.Tool {
		return nil, AgentSays{}, errRecordTool
	}
	p := &state.Pending{
		ID: id, Session: r.Session, Agent: r.Agent, Tool: r.Tool, Digest: r.Digest, Descriptor: desc,
		Cwd: cwd, ProjectDir: cwd, Status: state.StatusOpen, Away: true,
	}
	host, _ := m["host"].(string)
	says := AgentSays{Host: clip(host), Reason: clip(r.Reason), Detail: clip(r.Detail), ProjectDir: clip(r.ProjectDir),
		AgentType: clip(r.AgentType), Created: r.Created, HeldUntil: r.HeldUntil}
	for i, w := range r.Warnings {
		if i == maxSaysWarnings {
			says.Warnings = append(says.Warnings, fmt.Sprintf("(%d more not shown)", len(r.Warnings)-i))
			break
		}
		says.Warnings = append(says.Warnings, clip(w))
	}
	return p, says, nil
}

// clip bounds one of the agent's strings.
func clip(s string) string {
	if len(s) > maxSaysText {
		return s[:maxSaysText] + "..."
	}
	return s
}

// Decide records an approver's decision on the record at key ("E/<id>"): a
// grant token, or a refusal by principal. Only machine E reads it.
func (c *Custody) Decide(ctx context.Context, key, tok, principal string, now time.Time) error {
	data := map[string]any{"principal": principal, "time": now.UTC().Format(time.RFC3339)}
	if tok != "" {
		data["token"] = tok
	} else {
		data["denied_by"] = principal
	}
	return c.KV.Put(ctx, "approvals/"+key, data)
}

// Enrolled is an agent machine's new Vault identity and token.
type Enrolled struct {
	Token    string
	EntityID string
	Name     string
}

// Enroll makes the token of agent machine name (an administrator's client
// c, with the enroll policy): through the token role AgentRole, with the
// entity alias name, so the token has an identity of its own and the agent
// policy's paths are that machine's. Enrolling a name again makes another
// token of the same identity.
func Enroll(ctx context.Context, c *Client, name string, ttl time.Duration) (*Enrolled, error) {
	if name == "" || len(name) > 64 || strings.IndexFunc(name, notPathChar) >= 0 {
		return nil, fmt.Errorf("machine name %q: want 1 to 64 letters, digits, '.', '-', '_'", name)
	}
	var out struct {
		Auth struct {
			ClientToken string   `json:"client_token"`
			EntityID    string   `json:"entity_id"`
			Policies    []string `json:"token_policies"`
		} `json:"auth"`
	}
	body := map[string]any{"entity_alias": name, "display_name": name, "ttl": ttl.String(), "policies": []string{"loopguard-agent"}}
	if err := c.Do(ctx, http.MethodPost, "auth/token/create/"+AgentRole, body, &out); err != nil {
		return nil, err
	}
	if out.Auth.ClientToken == "" || out.Auth.EntityID == "" {
		return nil, &Error{Op: "enroll", Msg: "Vault made a token without an identity (is the role's allowed_entity_aliases set?)", kind: ErrUnavailable}
	}
	return &Enrolled{Token: out.Auth.ClientToken, EntityID: out.Auth.EntityID, Name: name}, nil
}
