// Package audit keeps loopguard's tamper-evident audit log.
//
// Every decision is appended as one JSON line to log.jsonl. Each line carries
// its sequence number and "prev", the hex SHA-256 of the previous line's exact
// bytes (64 zeros for the first line), so the lines form a hash chain. The
// chain alone needs no key, so anyone who can write the file could rebuild it;
// what makes it tamper-evident is the head: the file "head" records the last
// sealed point (seq, hash of that line, size of the log up to it) with an
// HMAC-SHA256 under a key derived from the master key in the OS keyring.
//
// Append takes no key, because the hook's deny paths must not read the
// keyring. It is O(1): under an exclusive lock on "lock" it reads only the
// log's last line (a few KB from the end, never the whole log) for the
// previous hash, and cuts off a torn last line a crash left. AppendNoSync is
// Append without the fsync, for the hook's denies. Seal, called whenever a
// key is at hand, makes the log durable and MACs its current end as the new
// head after checking that the line the old head vouched for is still in
// place, so it never blesses a rewritten history.
//
// Verify reads the whole log and reports, precisely, an edited entry, a
// deleted or reordered entry, a log truncated below its sealed head, and a
// head whose MAC is invalid or that is missing.
//
// What it cannot see: entries appended after the last seal are protected by
// the chain only, which has no key. They can be cut off the end (or rewritten
// consistently) back to the seal without detection. Verify says how many
// entries are in that state; every command that holds the key seals, so the
// window is the entries written since the last approval or CLI command.
//
// The first seal must happen while the log is empty (loopguard init): Seal
// refuses to vouch for a log that has entries but no head (ErrNoHead), since
// deleting the head and rewriting the log needs no key. After Verify found
// problems, Restart keeps the damaged log as log-<time>.jsonl and starts a new
// sealed one under the lock.
//
// The head lives in the same directory as the log, so a state directory that
// was removed, replaced or restored from an older copy carries a head that
// verifies. The anchor (anchor.go) is what tells: the directory's random
// identity (the file "id") and a sealed point of the log, MACed under the seal
// key, kept by the caller outside the directory (the keyring, package
// keyring). CheckAnchor refuses a directory that is not the one anchored with
// a *LostError (reason code state_lost).
package audit
