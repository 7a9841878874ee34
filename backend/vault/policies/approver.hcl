# loopguard-approver: the policy of a human approver's Vault identity
# (attached to their userpass or OIDC login). It can mint grants with the
# Transit key and read the key's metadata (its latest version), never export
# or rotate it; it can read the claims, to see whether a grant was used.

path "transit/hmac/loopguard" {
  capabilities = ["update"]
}

path "transit/verify/loopguard" {
  capabilities = ["update"]
}

path "transit/keys/loopguard" {
  capabilities = ["read"]
}

path "secret/data/loopguard/claims/*" {
  capabilities = ["read"]
}

path "auth/token/lookup-self" {
  capabilities = ["read"]
}
