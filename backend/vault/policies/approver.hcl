# loopguard-approver: the policy of a human approver's Vault identity
# (attached to their userpass or OIDC login). It can mint grants with the
# Transit key and read the key's metadata (its latest version), never export
# or rotate it; it can read the calls waiting across the team, delete the
# expired ones, and write approvals (once each: loopguard writes with
# check-and-set), and read the claims, to see whether a grant was used; it
# publishes, lists and revokes scoped grants.

path "transit/hmac/loopguard" {
  capabilities = ["update"]
}

path "transit/verify/loopguard" {
  capabilities = ["update"]
}

path "transit/keys/loopguard" {
  capabilities = ["read"]
}

# See the calls waiting across the team, and answer them.
path "secret/data/loopguard/pending/*" {
  capabilities = ["read"]
}

# Its metadata (when Vault wrote a record too large to read), and delete
# an expired record with all its versions (the reader expires records
# older than a day; a hook that still holds its call publishes it again).
path "secret/metadata/loopguard/pending/*" {
  capabilities = ["list", "read", "delete"]
}

path "secret/data/loopguard/approvals/*" {
  capabilities = ["create", "update", "read"]
}

path "secret/data/loopguard/claims/*" {
  capabilities = ["read"]
}

# Name the agent machine a call comes from: the alias `loopguard team
# enroll` gave its Vault identity (the record's own "host" is only what the
# machine says).
path "identity/entity/id/*" {
  capabilities = ["read"]
}

# Publish scoped grants (written once: no "update"), list them, and revoke
# them (delete the latest version). No undelete, no destroy: a revoked
# grant stays revoked and its history stays in Vault.
path "secret/data/loopguard/grants/*" {
  capabilities = ["create", "read", "delete"]
}

path "secret/metadata/loopguard/grants/*" {
  capabilities = ["list"]
}

path "auth/token/lookup-self" {
  capabilities = ["read"]
}
