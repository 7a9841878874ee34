package doctor

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
)

// checkVault is doctor's check of the Vault backend on an agent machine:
// Vault answers and is unsealed, this machine's token is valid, it can
// verify and read the scoped grants, and it cannot mint (doctor asks Vault
// to mint and expects 403).
func checkVault(ctx context.Context, cfg config.Config) []checkResult {
	ctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	c, v, err := cli.VaultClient(cfg)
	if err != nil {
		return []checkResult{{status: statusFail, name: "vault", detail: err.Error() + ": every call will be denied",
			fix: "put this machine's agent token (policy loopguard-agent) in " + v.TokenFile}}
	}
	var out []checkResult
	fail := func(name string, err error, fix string) []checkResult {
		r := vault.Reason(err)
		if r == "" {
			r = "vault_unavailable"
		}
		return append(out, checkResult{status: statusFail, name: name, detail: err.Error() + ": every call will be denied (" + r + ")", fix: fix})
	}
	// sys/health needs no token; a sealed or standby Vault is an error status.
	if err := c.Do(ctx, http.MethodGet, "sys/health", nil, nil); err != nil {
		return fail("vault", err, "start or unseal Vault at "+v.Address)
	}
	out = append(out, checkResult{status: statusOK, name: "vault", detail: v.Address + " answers, unsealed"})
	self, err := c.LookupSelf(ctx)
	if err != nil {
		return fail("vault token", err, "renew or replace the token in "+v.TokenFile+" (policy loopguard-agent)")
	}
	out = append(out, checkResult{status: statusOK, name: "vault token", detail: self.DisplayName + ", policies " + strings.Join(self.Policies, ", ")})
	// Every path the agent policy opens is under the token's own identity:
	// a token made before `team enroll` has none and publishes nothing.
	kv := &vault.KV{C: c, Mount: v.KVMount, Prefix: v.KVPrefix}
	enroll := "an administrator runs `loopguard team enroll NAME --out FILE` (README, Teams) and FILE goes to " + v.TokenFile
	if self.EntityID == "" {
		return fail("vault identity", vault.ErrNoEntity, enroll)
	}
	if _, err := kv.Get(ctx, "approvals/"+self.EntityID+"/doctorprobe"); err != nil && !errors.Is(err, vault.ErrNotFound) {
		return fail("vault identity", err, "the token needs this version's loopguard-agent policy (paths under {{identity.entity.id}}); "+enroll)
	}
	out = append(out, checkResult{status: statusOK, name: "vault identity", detail: "this machine is Vault identity " + self.EntityID + "; it reads and writes only its own calls, approvals and claims"})
	t := &vault.Transit{C: c, Mount: v.TransitMount, Key: v.Key}
	if err := t.CanVerify(ctx); err != nil {
		return fail("vault verify", err, "the token needs the loopguard-agent policy (backend/vault/policies/agent.hcl)")
	}
	out = append(out, checkResult{status: statusOK, name: "vault verify", detail: "the token verifies with " + v.TransitMount + "/" + v.Key})
	// The hook looks up scoped grants in Vault on every call they could
	// cover: a token without this (an agent policy from before grants were
	// published there) denies every such call with vault_denied.
	if _, err := kv.List(ctx, "grants/any"); err != nil {
		return fail("vault grants", err, "the token needs read and list on the grants (backend/vault/policies/agent.hcl, this version)")
	}
	out = append(out, checkResult{status: statusOK, name: "vault grants", detail: "the token reads the scoped grants approvers publish in " + v.KVMount + "/" + v.KVPrefix})
	switch can, err := t.CanMint(ctx); {
	case err != nil:
		return fail("vault mint refused", err, "")
	case can:
		return append(out, checkResult{status: statusFail, name: "vault mint refused",
			detail: "this machine's Vault token CAN mint grants (transit/hmac answered): code an agent runs here could approve its own calls",
			fix:    "give the hook a token with only the loopguard-agent policy; approvers log in on their own machines"})
	}
	return append(out, checkResult{status: statusOK, name: "vault mint refused", detail: "Vault refused to mint with this machine's token (HTTP 403)"})
}
