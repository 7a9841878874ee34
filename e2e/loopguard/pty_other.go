//go:build !linux

package loopguard

import (
	"context"
	"errors"
	"os/exec"
)

type term struct{}

func startOnPTY(*exec.Cmd) (*term, error) {
	return nil, errors.New("the pseudo-terminal helper supports only Linux")
}

func (*term) screen() string                                  { return "" }
func (*term) waitFor(context.Context, string) (string, error) { return "", errors.New("unsupported") }
func (*term) waitUntil(context.Context, string, func(string) bool) (string, error) {
	return "", errors.New("unsupported")
}
func (*term) write(string) error { return errors.New("unsupported") }
func (*term) drain() string      { return "" }
func (*term) close()             {}

func (*term) resize(int, int) error { return errors.New("unsupported") }
