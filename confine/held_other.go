//go:build !unix

package confine

import (
	"errors"
	"os"
)

// inheritHigh: no descriptor is kept across exec here (nothing runs
// jailed but on Linux).
func inheritHigh(files []*os.File) error {
	if len(files) == 0 {
		return nil
	}
	return errors.New("holding a project across exec needs Unix")
}

// holdPlaces holds nothing here.
func holdPlaces(stateDir string, s Spec, what string) ([]*os.File, error) { return nil, nil }
