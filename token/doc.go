// Package token is loopguard's cryptography and nothing else: the
// canonical JSON a call's arguments are hashed in, the call's descriptor
// and its digest, the approval token (seven fields under HMAC-SHA256) with
// its Parse and Verify, and the derivation of every key from the master
// key in the OS keyring. It reads no file, asks no keyring and prints
// nothing; the vectors in testdata/vectors pin its output byte for byte.
package token
