package main

import (
	"fmt"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/agents/claude"
)

// hookAgent picks the adapter for `loopguard hook [agent]`. A named agent's
// payload must be that agent's; an unnamed registration (Claude Code's,
// which Cursor and Copilot CLI also run) recognises the payload's agent and
// answers in that agent's format, and Claude Code's when the payload cannot
// be read. An unknown name denies in the form every agent blocks on.
func hookAgent(name string) agents.Options {
	if name == "" {
		return agents.Options{Detect: all.Detect, Fallback: claude.Adapter{}}
	}
	a, err := all.Lookup(name)
	if err != nil {
		return agents.Options{Detect: func(map[string]any) (agents.Adapter, error) { return nil, err }}
	}
	return agents.Options{Fallback: a, Detect: func(m map[string]any) (agents.Adapter, error) {
		if d, err := all.Detect(m); err == nil && d.Name() != claude.Name && d.Name() != a.Name() {
			return a, fmt.Errorf("registered for %s but the payload is %s's", a.Name(), d.Name())
		}
		return a, nil
	}}
}
