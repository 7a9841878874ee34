package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/loopguard/loopguard/audit"
	webconsole "github.com/loopguard/loopguard/console"
	"github.com/loopguard/loopguard/present"
)

// KindSignature is a decision whose passkey signature does not verify, or
// whose entry records something else than what was signed.
const KindSignature = "passkey_signature"

// verifySignatures checks the passkey signature of every signed decision
// in the log with the passkey's public key; it returns how many verified
// and a problem for each that did not.
func verifySignatures(o *auditVerifyOptions) (int, []audit.Problem, error) {
	var keys map[string][]byte
	var problems []audit.Problem
	ok := 0
	err := o.Log.Read(func(_ []byte, e audit.Entry) error {
		if _, signed := webconsole.ProofOf(e); !signed || e.Signed == "" {
			return nil
		}
		if keys == nil {
			var err error
			if keys, err = o.Passkeys(); err != nil {
				return err
			}
		}
		pub, known := keys[e.Passkey]
		if !known {
			problems = append(problems, audit.Problem{Seq: e.Seq, Kind: KindSignature,
				Msg: fmt.Sprintf("seq %d: signed by passkey %.12s, whose public key is not known here", e.Seq, e.Passkey)})
			return nil
		}
		if _, err := webconsole.VerifyEntry(e, pub); err != nil {
			problems = append(problems, audit.Problem{Seq: e.Seq, Kind: KindSignature, Msg: fmt.Sprintf("seq %d: %v", e.Seq, err)})
			return nil
		}
		ok++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil && !errors.Is(err, audit.ErrCorrupt) {
		return 0, nil, fmt.Errorf("failed to read the audit log: %w", err)
	}
	return ok, problems, nil
}

func printSignatures(w io.Writer, ok int, problems []audit.Problem) {
	if ok == 0 && len(problems) == 0 {
		return
	}
	fmt.Fprintf(w, "signed:    %d decision(s) signed with a passkey verify with its public key\n", ok)
	for _, p := range problems {
		fmt.Fprintf(w, "PROBLEM:   %s\n", present.EscapeText(p.Msg))
	}
}

// passkeyKeys returns the passkeys' public keys by credential id: from
// file (passkey list --json), or from this machine's console store.
func passkeyKeys(file string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var rows []passkeyJSON
		if err := json.Unmarshal(b, &rows); err != nil {
			return nil, fmt.Errorf("%s: not the output of loopguard passkey list --json: %w", file, err)
		}
		for _, r := range rows {
			pub, err := base64.RawURLEncoding.DecodeString(r.PublicKey)
			if err != nil {
				return nil, fmt.Errorf("%s: passkey %s: %w", file, r.ID, err)
			}
			out[r.ID] = pub
		}
		return out, nil
	}
	_, cs, err := consoleStore()
	if err != nil {
		return nil, err
	}
	keys, err := cs.Passkeys()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		out[k.ID] = k.Credential.PublicKey
	}
	return out, nil
}
