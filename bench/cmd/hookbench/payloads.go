//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// payload is a recorded Claude Code payload, moved into the benchmark's
// directories.
type payload struct {
	m       map[string]any
	project string // the rewritten cwd, created on disk
}

// loadPayload reads testdata/payloads/NAME.json and rewrites every string that
// names the recording machine's folder for this case (the parent of its cwd)
// to root, creating root/project and root/home. Nothing else changes: the
// fields, their values and the event are as recorded.
func loadPayload(repo, name, root string) (*payload, error) {
	data, err := os.ReadFile(filepath.Join(repo, "testdata", "payloads", name+".json"))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cwd, _ := m["cwd"].(string)
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("%s: no absolute cwd", name)
	}
	recorded := filepath.Dir(cwd)
	var fix func(v any) any
	fix = func(v any) any {
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(x, recorded+"/") || x == recorded {
				return root + strings.TrimPrefix(x, recorded)
			}
			return x
		case map[string]any:
			for k, e := range x {
				x[k] = fix(e)
			}
		case []any:
			for i, e := range x {
				x[i] = fix(e)
			}
		}
		return v
	}
	fix(m)
	p := &payload{m: m, project: m["cwd"].(string)}
	for _, d := range []string{p.project, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *payload) input() map[string]any {
	in, _ := p.m["tool_input"].(map[string]any)
	return in
}

func (p *payload) session() string { s, _ := p.m["session_id"].(string); return s }

// encode renders the payload as Claude Code sends it: compact JSON, no HTML
// escaping.
func (p *payload) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p.m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// megabyte is 1 MiB of plausible file content: numbered lines of text.
func megabyte() string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "line %06d: the quick brown fox jumps over the lazy dog, again and again\n", i)
	}
	return b.String()[:1<<20]
}
