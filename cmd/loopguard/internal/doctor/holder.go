package doctor

import (
	"bytes"
	"context"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hookmain"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/state"
)

// checkKeyHolder is the key's holder of the state directory (package
// keyring): off in the configuration, running (and holding the keyring's
// key: master, the key doctor read), failed to start lately (the hook then
// reads the keyring on every call that needs the key), or none now.
func checkKeyHolder(ctx context.Context, self string, master []byte) checkResult {
	r := checkResult{name: "key holder"}
	cfg, err := cli.LoadConfig()
	if err == nil && !cfg.KeyHolderOn() {
		r.status, r.detail = statusSkip, "off in the configuration (key_holder false): the hook reads the keyring on every call that needs the key"
		return r
	}
	if hookmain.KeyHolder(self, cfg) == "" {
		r.status, r.detail = statusSkip, "no loopguard-exec beside "+self+" to run it: the hook reads the keyring on every call that needs the key"
		return r
	}
	dir, err := state.DefaultDir()
	if err != nil {
		r.status, r.detail = statusSkip, "no state directory"
		return r
	}
	if key, _, ok := keyring.LoadHeld(ctx, dir); ok {
		same := master != nil && bytes.Equal(key, master)
		clear(key)
		if master != nil && !same {
			r.status = statusFail
			r.detail = "the holder on " + dir + "/key.sock holds another key than the keyring's: the hook would verify with it"
			r.fix = "remove " + dir + "/key.sock (the holder then ends) and run loopguard doctor again"
			return r
		}
		r.status, r.detail = statusOK, "running: the hook takes the key from it (it ends at any change in the keyring, 3 minutes idle, 10 at most)"
		return r
	}
	if why, at, ok := keyring.HolderFailure(dir); ok {
		r.status = statusWarn
		r.detail = "the last one could not start (" + at.Format(time.TimeOnly) + "): " + why + "; until an hour after, the hook reads the keyring on every call that needs the key (about 5 ms each)"
		r.fix = "fix the reason above; or turn the holder off: \"key_holder\": false in the configuration"
		return r
	}
	r.status, r.detail = statusOK, "none runs now: the hook starts one at its next read of the key"
	return r
}
