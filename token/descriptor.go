package token

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// DescriptorVersion is written into every descriptor, so a change of its
// shape can never make an old digest match a new call.
const DescriptorVersion = "loopguard.descriptor.v1"

// Absent is the target state of a file that does not exist.
const Absent = "absent"

// Target is the file a mutating tool would change, and its state now.
type Target struct {
	Path   string // absolute path as the tool names it
	SHA256 string // hex SHA-256 of the current content, or Absent
	// Resolved is where Path lands with every symlink resolved, set only
	// when it differs from Path: an approval given for one landing place
	// does not cover the same path once a link points elsewhere.
	Resolved string
}

// Descriptor is the canonical statement of what a tool call will do.
type Descriptor struct {
	Tool string
	// Input is the complete tool_input as decoded by Decode.
	Input any
	Cwd   string
	// Executables maps each command word of a Bash command to the absolute
	// path it resolves to ("" when it does not resolve). Nil for other tools.
	Executables map[string]string
	// Target is set for file-mutating tools.
	Target *Target
}

func (d *Descriptor) value(withTarget bool) map[string]any {
	m := map[string]any{
		"v":     DescriptorVersion,
		"tool":  d.Tool,
		"input": d.Input,
		"cwd":   d.Cwd,
	}
	if d.Executables != nil {
		m["executables"] = d.Executables
	}
	if withTarget && d.Target != nil {
		t := map[string]any{"path": d.Target.Path, "sha256": d.Target.SHA256}
		if d.Target.Resolved != "" && d.Target.Resolved != d.Target.Path {
			t["resolved"] = d.Target.Resolved
		}
		m["target"] = t
	}
	return m
}

// Value is the descriptor as the plain value its canonical bytes encode.
func (d *Descriptor) Value() map[string]any { return d.value(true) }

// Canonical returns the descriptor's canonical JSON bytes.
func (d *Descriptor) Canonical() ([]byte, error) {
	return Encode(d.value(true))
}

// Digest returns the hex SHA-256 of the canonical bytes.
func (d *Descriptor) Digest() (string, error) {
	b, err := d.Canonical()
	if err != nil {
		return "", err
	}
	return DigestOf(b), nil
}

// CallDigest is the digest of the descriptor without its target state. Two
// calls with equal CallDigest but different Digest differ only in the state of
// the file they would change: that tells target_state_drift apart from a
// changed call.
func (d *Descriptor) CallDigest() (string, error) {
	b, err := Encode(d.value(false))
	if err != nil {
		return "", err
	}
	return DigestOf(b), nil
}

// Encodings returns both encodings a decision needs, encoding the call once:
// canonical (Canonical's bytes) and call (the bytes CallDigest hashes, the
// descriptor without its target state). They differ only by the "target"
// member, which sorts just before "tool" and "v", the last two members, so
// canonical is call with that member spliced in before its fixed tail. When
// there is no target the two are the same slice.
func (d *Descriptor) Encodings() (canonical, call []byte, err error) {
	call, err = Encode(d.value(false))
	if err != nil || d.Target == nil {
		return call, call, err
	}
	target, err := Encode(d.value(true)["target"])
	if err != nil {
		return nil, nil, err
	}
	tool, err := Encode(d.Tool)
	if err != nil {
		return nil, nil, err
	}
	version, err := Encode(DescriptorVersion)
	if err != nil {
		return nil, nil, err
	}
	tail := slices.Concat([]byte(`,"tool":`), tool, []byte(`,"v":`), version, []byte("}"))
	if !bytes.HasSuffix(call, tail) { // cannot happen; never guess
		canonical, err = d.Canonical()
		return canonical, call, err
	}
	canonical = slices.Concat(call[:len(call)-len(tail)], []byte(`,"target":`), target, tail)
	return canonical, call, nil
}

// DigestOf returns the hex SHA-256 of b.
func DigestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// IsDigest reports whether s is written as DigestOf writes a digest: 64
// lower-case hex digits.
func IsDigest(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
