//go:build linux && !amd64

package confine

// legacyMetadataCalls: arm64 (asm-generic) has only the *at forms of
// chmod, chown and utimes, all in metadataCalls.
var legacyMetadataCalls []uint32
