package vault

import _ "embed"

// The Vault ACL policies loopguard is deployed with (policies/*.hcl): the
// files the README's walk-through writes to Vault and the tests run against.
var (
	//go:embed policies/agent.hcl
	AgentPolicy string
	//go:embed policies/approver.hcl
	ApproverPolicy string
	//go:embed policies/enroll.hcl
	EnrollPolicy string
)

// AgentRole is the token role agent machines' tokens are made through
// (`loopguard team enroll`): the agent policy only, no default policy, an
// orphan token, an identity named by the enroller.
const AgentRole = "loopguard-agent"

// AgentRoleConfig is the role's definition, as an administrator writes it
// (vault write auth/token/roles/loopguard-agent ...) and the tests do.
var AgentRoleConfig = map[string]any{
	"allowed_policies":        []string{"loopguard-agent"},
	"disallowed_policies":     []string{"root"},
	"orphan":                  true,
	"token_no_default_policy": true,
	"allowed_entity_aliases":  []string{"*"},
	"renewable":               false,
}
