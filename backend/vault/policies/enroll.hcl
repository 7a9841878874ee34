# loopguard-enroll: the policy of whoever sets up agent machines (an
# administrator): `loopguard team enroll NAME` makes an agent machine's
# token through the token role loopguard-agent, with an identity (entity
# alias) named NAME, so the agent policy's templated paths are that
# machine's own. Enrolling a name that exists gives another token of that
# machine: keep this policy to administrators.
path "auth/token/create/loopguard-agent" {
  capabilities = ["update"]
}

path "auth/token/lookup-self" {
  capabilities = ["read"]
}
