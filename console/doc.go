// Package console is loopguard serve: the approval console over HTTP. It
// shows the calls waiting for a human, each rendered as loopguard review
// renders it (the caller supplies the rendering), and takes the decisions
// review has (approve once, approve and grant the narrowest rule, deny
// with a note), each signed by a passkey.
//
// A decision is a WebAuthn assertion, with user verification, over a
// Statement: the pending id, the call's digest, its view (a hash of what
// the page showed of it: its rendering, warnings included, which changes
// with no change of digest), the decision, the rule or the note, the
// console's origin and a nonce of the server's. The server verifies it,
// checks that the call is still the one signed for and would be shown
// the same, and only then has the caller mint (the same token the hook
// verifies: the hook is unchanged). The statement and the assertion go
// into the audit entry, and VerifyProof checks them later with the
// passkey's public key alone (statements of v1, which named no view,
// too: the audit log keeps them).
//
// The page shows one call at a time, whole (a call whose rendering is over
// MaxShown is approved at a terminal instead), and takes a click only on
// the call it drew, armed after a change; the decision names the digest
// and the view drawn and the server refuses any other.
//
// Passkeys are registered only through a one-time link that
// `loopguard passkey add` prints on the human's terminal (Enrollments).
// The server checks Host and Origin on every request, sends a strict
// Content-Security-Policy, changes nothing on GET, keeps the sign-in out
// of cookies (a header the page sends, from its own storage), limits
// registrations per link and decisions per sign-in (no limit is shared:
// no process without a passkey or a link can use one up), and keeps its
// files in loopguard's state directory, which the hook protects.
//
// The package never prints or exits; cmd/loopguard talks to people. The
// hook binary does not link it.
package console
