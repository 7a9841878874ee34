# loopguard-agent: the policy of the Vault token an agent machine's hook holds.
# It can check a grant's MAC and claim a single-use grant, and nothing that
# mints: no transit/hmac, no reading or exporting the key. `loopguard doctor`
# proves the refusal by asking Vault to mint and expecting HTTP 403.
#
# Each agent machine has its own Vault identity (`loopguard team enroll`
# makes its token, with an entity of its own), and every path it writes or
# reads is under that identity ({{identity.entity.id}}): machine A's token
# cannot publish a call as machine B, read the approvals made for B, or
# claim B's grants first. A token without an entity matches none of these
# paths.
#
# Mount paths here are the defaults (transit/, secret/, key "loopguard",
# prefix "loopguard"); change them together with the config.

# Check a grant's MAC (transit/verify).
path "transit/verify/loopguard" {
  capabilities = ["update"]
}

# Claim a single-use grant: a KV v2 write with check-and-set 0, which only
# the first writer wins. "update" does not let a claim be undone: cas=0 fails
# once any version exists, even a deleted one, and there is no metadata
# access here to destroy the history.
path "secret/data/loopguard/claims/{{identity.entity.id}}/*" {
  capabilities = ["create", "update"]
}

# Publish a call waiting for a human, for approvers on other machines.
path "secret/data/loopguard/pending/{{identity.entity.id}}/*" {
  capabilities = ["create", "update"]
}

# Read the approver's answer for a waiting call of this machine (a grant
# token, or a refusal).
path "secret/data/loopguard/approvals/{{identity.entity.id}}/*" {
  capabilities = ["read"]
}

# Find the scoped grants approvers published (read and list only: a grant
# here is one an approver wrote; the hook can neither add, rewrite nor
# restore one, so a revoked grant stays revoked).
path "secret/data/loopguard/grants/*" {
  capabilities = ["read"]
}

path "secret/metadata/loopguard/grants/*" {
  capabilities = ["list"]
}

# Who am I (doctor, and the audit log's record of which agent token asked).
path "auth/token/lookup-self" {
  capabilities = ["read"]
}
