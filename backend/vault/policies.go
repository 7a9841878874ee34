package vault

import _ "embed"

// The Vault ACL policies loopguard is deployed with (policies/*.hcl): the
// files the README's walk-through writes to Vault and the tests run against.
var (
	//go:embed policies/agent.hcl
	AgentPolicy string
	//go:embed policies/approver.hcl
	ApproverPolicy string
)
