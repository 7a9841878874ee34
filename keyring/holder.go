package keyring

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"time"
)

// The key's holder. The hook needs the key on every call it allows, and a
// read from the Secret Service is a D-Bus exchange that costs a new
// process about 4.5 ms and the keyring daemon's CPU besides. The holder
// is a process of the user's that reads the key and the state's anchor
// once and hands them to the hook over a Unix socket in the state
// directory (holder_linux.go): a connection and one round trip.
//
// What reaches it is what reaches the Secret Service: a process of the
// same user outside every sandbox. The state directory is the user's
// alone (0700); the holder answers only a peer of its own uid, and the
// hook takes an answer only from a holder of its own uid. Claude Code's
// sandbox and loopguard's jail refuse every Unix socket (their seccomp
// filters) and cannot read the state directory, as they cannot reach the
// session bus. The holder never outlives what it holds: it exits when any
// item or collection of the Secret Service changes (a key rotated, an
// anchor stored, a collection locked: the service's signals), when the
// session bus goes, when its socket is removed or replaced, after
// HolderIdle without a request and after HolderLife in any case, and
// when loopguard's CLI changes the key or the anchor (StopHolder).

// HolderSubcommand is the launcher's (loopguard-exec's) subcommand that
// runs the holder: `key-hold --state DIR`.
const HolderSubcommand = "key-hold"

// HolderIdle and HolderLife bound the holder's life: it exits after
// HolderIdle without a request, and after HolderLife whatever happens.
const (
	HolderIdle = 3 * time.Minute
	HolderLife = 10 * time.Minute
)

// holderWait bounds the hook's exchange with the holder: a holder that
// does not answer within it (stopped, hung) is passed over for the
// keyring.
const holderWait = 250 * time.Millisecond

// maxSocketPath is the longest path a Unix socket's address holds
// (sun_path, with its NUL).
const maxSocketPath = 107

// holderSocket is the holder's socket of the state directory dir, "" when
// its path is too long for a socket address (then no holder runs).
func holderSocket(dir string) string {
	p := filepath.Join(dir, "key.sock")
	if !filepath.IsAbs(p) || len(p) > maxSocketPath {
		return ""
	}
	return p
}

// holderLock is the file the one holder of dir keeps locked while it runs.
func holderLock(dir string) string { return filepath.Join(dir, "key.lock") }

// The exchange: the client writes one request byte; the holder answers a
// key request with holdMagic, the key's length and the key, the anchor's
// length and the anchor (each length two bytes, big-endian), and a stop
// request with stopMagic, then exits.
const (
	reqKey    = 'k'
	reqStop   = 'q'
	holdMagic = "LGK1"
	stopMagic = "LGQ1"
)

// encodeHeld is the answer to a key request.
func encodeHeld(key []byte, anchor string) []byte {
	b := make([]byte, 0, len(holdMagic)+4+len(key)+len(anchor))
	b = append(b, holdMagic...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(key)))
	b = append(b, key...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(anchor)))
	return append(b, anchor...)
}

// decodeHeld parses an answer to a key request, with the checks a read
// from the keyring makes: a key of KeySize bytes, an anchor of printable
// ASCII of at most maxAnchorLen bytes.
func decodeHeld(b []byte) ([]byte, string, error) {
	bad := errors.New("the key's holder answered something else than a key")
	if len(b) < len(holdMagic)+2 || string(b[:len(holdMagic)]) != holdMagic {
		return nil, "", bad
	}
	b = b[len(holdMagic):]
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n != KeySize || len(b) < n+2 {
		return nil, "", bad
	}
	key := append([]byte(nil), b[:n]...)
	b = b[n:]
	m := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if m != len(b) {
		clear(key)
		return nil, "", bad
	}
	anchor, err := checkAnchor(string(b))
	if err != nil {
		clear(key)
		return nil, "", err
	}
	return key, anchor, nil
}
