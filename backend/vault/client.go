// Package vault keeps loopguard's approval key in HashiCorp Vault instead of
// the OS keyring: grants are MACed by Transit (transit/hmac, which only an
// approver's Vault token may call) and checked by transit/verify (which the
// hook's token may call), and a grant's single use is claimed across
// machines with a KV v2 check-and-set. It talks to Vault's HTTP API with
// net/http: the few endpoints it needs do not justify the Vault client
// module's dependencies on the hook path.
//
// Every failure to get an answer from Vault (down, sealed, token refused,
// too slow) is an *Error with a stable reason code; the hook turns each into
// a deny. The package never prints or exits.
package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Reason codes for a Vault that gives no usable answer.
const (
	ReasonUnavailable = "vault_unavailable" // no connection, or an error status
	ReasonSealed      = "vault_sealed"
	ReasonDenied      = "vault_denied" // token revoked, expired, or lacking the policy
	ReasonTimeout     = "vault_timeout"
)

// Reasons lists the Vault backend's reason codes, once each (the manual's
// docs/reasons.md is checked against it and hooks.Reasons).
func Reasons() []string {
	return []string{ReasonUnavailable, ReasonSealed, ReasonDenied, ReasonTimeout}
}

// Sentinels to branch on with errors.Is.
var (
	ErrSealed   = errors.New("vault is sealed")
	ErrDenied   = errors.New("permission denied by vault")
	ErrNotFound = errors.New("not found in vault")
	// ErrCASMismatch is a KV v2 write whose check-and-set lost.
	ErrCASMismatch = errors.New("check-and-set did not match")
	ErrTimeout     = errors.New("vault did not answer in time")
	ErrUnavailable = errors.New("vault is unavailable")
	// ErrTooLarge is an answer larger than a client reads (maxResponse):
	// Vault answered, with more than was asked for (a published record
	// or a listing that one agent machine made too large).
	ErrTooLarge = fmt.Errorf("%w: answer too large", ErrUnavailable)
)

// maxResponse bounds what is read from Vault.
const maxResponse = 1 << 20

// Error is a request Vault did not answer as wanted.
type Error struct {
	Op     string // "POST transit/verify/loopguard"
	Status int    // 0 when there was no HTTP answer
	Msg    string // Vault's error text, or the transport error
	kind   error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("vault %s: HTTP %d: %s", e.Op, e.Status, e.Msg)
	}
	return fmt.Sprintf("vault %s: %s", e.Op, e.Msg)
}

func (e *Error) Unwrap() error { return e.kind }

// Reason is the failure's reason code (see Reason); callers that do not
// import this package find it through an interface.
func (e *Error) Reason() string { return Reason(e) }

// Reason is the reason code of a failure to get an answer from Vault, or
// "" when err is not one (a MAC that does not verify is no Vault failure).
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrSealed):
		return ReasonSealed
	case errors.Is(err, ErrDenied):
		return ReasonDenied
	case errors.Is(err, ErrTimeout):
		return ReasonTimeout
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrNotFound), errors.Is(err, ErrCASMismatch):
		return ReasonUnavailable
	}
	return ""
}

// Client is a Vault HTTP API client bound to one token.
type Client struct {
	Addr  string // http(s)://host:port, no trailing path
	Token string
	HTTP  *http.Client
}

// NewClient returns a client with a transport that keeps connections alive,
// never follows redirects (a token is not sent elsewhere) and never uses a
// proxy from the environment.
func NewClient(addr, tok string) (*Client, error) {
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("vault address %q is not http(s)://host:port", addr)
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: 2 * time.Second,
	}
	return &Client{
		Addr:  strings.TrimSuffix(addr, "/"),
		Token: tok,
		HTTP: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
	}, nil
}

// Do sends one request to /v1/<path> with body as JSON (nil for none) and
// decodes the answer's JSON into out (nil to ignore it).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	op := method + " " + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("vault %s: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Addr+"/v1/"+path, rd)
	if err != nil {
		return &Error{Op: op, Msg: err.Error(), kind: ErrUnavailable}
	}
	if c.Token != "" {
		req.Header.Set("X-Vault-Token", c.Token)
	}
	req.Header.Set("X-Vault-Request", "true")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return &Error{Op: op, Msg: "no answer before the deadline", kind: ErrTimeout}
		}
		return &Error{Op: op, Msg: transportText(err), kind: ErrUnavailable}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		if ctx.Err() != nil {
			return &Error{Op: op, Msg: "no answer before the deadline", kind: ErrTimeout}
		}
		return &Error{Op: op, Status: resp.StatusCode, Msg: transportText(err), kind: ErrUnavailable}
	}
	if len(data) > maxResponse {
		return &Error{Op: op, Status: resp.StatusCode, Msg: "answer too large", kind: ErrTooLarge}
	}
	if resp.StatusCode/100 != 2 {
		return statusError(op, resp.StatusCode, data)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{Op: op, Status: resp.StatusCode, Msg: "answer is not the expected JSON", kind: ErrUnavailable}
	}
	return nil
}

func statusError(op string, status int, data []byte) error {
	var v struct {
		Errors []string `json:"errors"`
	}
	_ = json.Unmarshal(data, &v)
	msg := strings.Join(strings.Fields(strings.Join(v.Errors, "; ")), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &Error{Op: op, Status: status, Msg: msg, kind: ErrUnavailable}
	switch {
	case status == http.StatusServiceUnavailable && strings.Contains(msg, "sealed"):
		e.kind = ErrSealed
	case status == http.StatusForbidden:
		e.kind = ErrDenied
	case status == http.StatusNotFound:
		e.kind = ErrNotFound
	case status == http.StatusBadRequest && strings.Contains(msg, "check-and-set parameter did not match"):
		e.kind = ErrCASMismatch
	}
	return e
}

// transportText is a transport error without the URL (which carries no
// secret, but is noise in a reason).
func transportText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// Self is what Vault says about the client's own token.
type Self struct {
	DisplayName string            `json:"display_name"`
	EntityID    string            `json:"entity_id"`
	Path        string            `json:"path"` // the login path: "auth/userpass/login/alice"
	Meta        map[string]string `json:"meta"`
	Policies    []string          `json:"policies"`
	TTL         int64             `json:"ttl"`
}

// LookupSelf asks Vault who the client's token belongs to.
func (c *Client) LookupSelf(ctx context.Context) (*Self, error) {
	var out struct {
		Data Self `json:"data"`
	}
	if err := c.Do(ctx, http.MethodGet, "auth/token/lookup-self", nil, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// Principal is the token's display name as a principal: "vault:" and the
// name Vault gives a login ("<auth mount>-<user>": "userpass-alice",
// "oidc-<user claim>"). Identity is what a grant records.
func (s *Self) Principal() string { return "vault:" + s.DisplayName }

// ErrNoPerson is a token whose identity names no one: a login whose
// display name is its auth mount alone (approle, a token made by hand)
// and whose entity has only the name Vault made up.
var ErrNoPerson = errors.New("this Vault token names no person: its display name is only its auth method's, and its entity has no name of its own")

// autoEntity is the name Vault gives an entity it creates at first login.
var autoEntity = regexp.MustCompile(`^entity_[0-9a-f]{8}$`)

// Identity is the principal a grant minted with this token records, as
// Vault knows its holder:
//
//   - the token's entity, when an administrator named it ("vault:alice"
//     for the entity alice, whichever auth method alice logged in with:
//     userpass, OIDC or approle aliases of one entity are one principal);
//   - otherwise the display name of the login, when it names a user
//     ("vault:userpass-alice", "vault:oidc-alice@example.com");
//   - otherwise ErrNoPerson (an approle login is "approle" for every role).
//
// The entity is read with the default policy's right to read one's own
// entity; a token without it falls back to the display name.
func (c *Client) Identity(ctx context.Context) (string, *Self, error) {
	self, err := c.LookupSelf(ctx)
	if err != nil {
		return "", nil, err
	}
	if self.EntityID != "" && strings.IndexFunc(self.EntityID, notPathChar) < 0 {
		var out struct {
			Data struct {
				Name string `json:"name"`
			} `json:"data"`
		}
		err := c.Do(ctx, http.MethodGet, "identity/entity/id/"+self.EntityID, nil, &out)
		switch {
		case err == nil && out.Data.Name != "" && !autoEntity.MatchString(out.Data.Name):
			return "vault:" + out.Data.Name, self, nil
		case err != nil && !errors.Is(err, ErrDenied) && !errors.Is(err, ErrNotFound):
			return "", nil, err
		}
	}
	if src := loginSource(self.Path); !strings.HasPrefix(self.DisplayName, src+"-") || len(self.DisplayName) == len(src)+1 {
		return "", self, ErrNoPerson
	}
	return self.Principal(), self, nil
}

// loginSource is the display-name prefix Vault derives from a token's
// path ("auth/userpass/login/alice" -> "userpass", "auth/team/oidc/oidc/
// callback" -> "team-oidc"; tokens made with auth/token/create -> "token"):
// a display name names a user only past it.
func loginSource(path string) string {
	p, ok := strings.CutPrefix(path, "auth/")
	if !ok || strings.HasPrefix(p, "token/") {
		return "token"
	}
	for _, end := range []string{"/login", "/oidc/callback", "/oidc/auth_url"} {
		if i := strings.Index(p, end); i >= 0 {
			p = p[:i]
			break
		}
	}
	return strings.ReplaceAll(p, "/", "-")
}

// LoginUserpass logs in with the userpass auth method mounted at mount and
// returns the client token.
func (c *Client) LoginUserpass(ctx context.Context, mount, user, password string) (string, error) {
	var out struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	if err := c.Do(ctx, http.MethodPost, "auth/"+mount+"/login/"+url.PathEscape(user), map[string]string{"password": password}, &out); err != nil {
		return "", err
	}
	if out.Auth.ClientToken == "" {
		return "", &Error{Op: "login", Msg: "no client token in the answer", kind: ErrUnavailable}
	}
	return out.Auth.ClientToken, nil
}
