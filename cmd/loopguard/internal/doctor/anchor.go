package doctor

import (
	"errors"
	"fmt"
	"os"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// checkStateKept is the state directory's checks: checkState's line, then
// whether it is the directory the keyring's anchor names (the hook denies
// every call as state_lost where it is not). master nil (no key here, or
// the Vault backend) skips the anchor.
func checkStateKept(master []byte) (*state.Store, []checkResult) {
	st, r := checkState()
	if cfg, err := cli.LoadConfig(); err == nil && cfg.Backend == config.BackendVault {
		return st, []checkResult{r, {status: statusSkip, name: "state anchor",
			detail: "not kept under the Vault backend (no key on this machine to MAC it); a restored state directory cannot run an approval again, since single use is claimed in Vault"}}
	}
	if master == nil {
		return st, []checkResult{r, {status: statusSkip, name: "state anchor", detail: "needs the key"}}
	}
	dir, err := state.DefaultDir()
	if err != nil {
		return st, []checkResult{r}
	}
	rec, err := cli.LoadAnchor(dir)
	if err != nil {
		return st, []checkResult{r, {status: statusFail, name: "state anchor", detail: "the keyring's anchor cannot be read: " + err.Error(), fix: hintOf(err)}}
	}
	_, seal, err := token.DeriveKeys(master)
	if err != nil {
		return st, []checkResult{r, {status: statusFail, name: "state anchor", detail: err.Error()}}
	}
	defer clear(seal)
	var lost *audit.LostError
	var info audit.AnchorInfo
	switch {
	case st == nil && rec != "":
		if _, err := os.Lstat(dir); err == nil {
			return st, []checkResult{r} // there, but refused: checkState said why
		}
		lost = &audit.LostError{Dir: dir, Why: "it is gone: it was removed"}
		r.fix = lost.Hint()
	case st == nil:
		return st, []checkResult{r, {status: statusSkip, name: "state anchor", detail: "needs the state dir"}}
	case rec == "":
		return st, []checkResult{r, {status: statusWarn, name: "state anchor",
			detail: "none in the keyring: a removed, replaced or restored state directory would go unnoticed (set up before anchors, or init could not write it)",
			fix:    "run: loopguard init (it anchors the state directory; nothing else changes)"}}
	default:
		if info, err = cli.AuditLog(st).CheckAnchor(seal, rec); err != nil && !errors.As(err, &lost) {
			return st, []checkResult{r, {status: statusFail, name: "state anchor", detail: err.Error()}}
		}
	}
	if lost != nil {
		return st, []checkResult{r, {status: statusFail, name: "state anchor",
			detail: "STATE LOST: " + lost.Error() + ". The hook denies every call (state_lost)", fix: lost.Hint()}}
	}
	what := "the start of its audit chain"
	if info.Seq > 0 {
		what = fmt.Sprintf("entry %d of its audit log, still in place", info.Seq)
	}
	return st, []checkResult{r, {status: statusOK, name: "state anchor",
		detail: fmt.Sprintf("the keyring's anchor names this directory (identity %s…) and %s", info.ID[:8], what)}}
}
