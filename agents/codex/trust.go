package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Codex runs a user or project hook only once the user trusts it: it asks
// at start ("Hooks need review": Trust all and continue) or in /hooks, and
// records a hash of each trusted handler in its config.toml, under
// [hooks.state."<hooks.json path>:<event>:<group>:<handler>"] as
// trusted_hash = "sha256:<hex>". The hash is SHA-256 over the compact JSON,
// keys sorted, of the handler's identity: {"event_name": the event in
// snake case, "hooks": [the handler, with Codex's defaults ("async":
// false, "timeout": 600) filled in], "matcher": the group's matcher, when
// it has one}. A handler whose hash differs from the recorded one (changed
// since it was trusted) is not run. Checked on 0.171.0 against the hashes
// it wrote.

// Untrusted lists loopguard's handlers in the hooks file at path (its
// bytes hooks) that Codex will not run, given the config.toml bytes
// config: never trusted, or changed since. ours tells loopguard's handlers
// apart.
func Untrusted(path string, hooks, config []byte, ours func(handler map[string]any) bool) ([]string, error) {
	var f struct {
		Hooks map[string][]struct {
			Matcher *string          `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(hooks, &f); err != nil {
		return nil, err
	}
	trusted := trustedHashes(string(config))
	var out []string
	for _, event := range handlers.Events {
		snake := snakeCase(event)
		for g, group := range f.Hooks[event] {
			for h, handler := range group.Hooks {
				if !ours(handler) {
					continue
				}
				key := fmt.Sprintf("%s:%s:%d:%d", path, snake, g, h)
				want, err := TrustHash(snake, group.Matcher, handler)
				if err != nil {
					return nil, err
				}
				switch got, ok := trusted[key]; {
				case !ok:
					out = append(out, event+" (never trusted)")
				case got != want:
					out = append(out, event+" (changed since it was trusted)")
				}
			}
		}
	}
	return out, nil
}

// TrustHash is the hash Codex records when it trusts handler of a group
// with matcher, for the event in snake case ("pre_tool_use").
func TrustHash(event string, matcher *string, handler map[string]any) (string, error) {
	h := make(map[string]any, len(handler)+2)
	for k, v := range handler {
		h[k] = v
	}
	if _, ok := h["async"]; !ok {
		h["async"] = false
	}
	if _, ok := h["timeout"]; !ok {
		h["timeout"] = 600
	}
	identity := map[string]any{"event_name": event, "hooks": []any{h}}
	if matcher != nil {
		identity["matcher"] = *matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as serde_json writes it
	if err := enc.Encode(identity); err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// trustedHashes reads config.toml's [hooks.state."KEY"] tables' trusted_hash
// values (a line reading, not a TOML parser: the tables Codex writes).
func trustedHashes(config string) map[string]string {
	out := map[string]string{}
	key := ""
	for _, line := range strings.Split(config, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, `[hooks.state."`) && strings.HasSuffix(l, `"]`):
			key = strings.TrimSuffix(strings.TrimPrefix(l, `[hooks.state."`), `"]`)
		case strings.HasPrefix(l, "["):
			key = ""
		case key != "" && strings.HasPrefix(l, "trusted_hash"):
			_, v, ok := strings.Cut(l, "=")
			if ok {
				out[key] = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	}
	return out
}

func snakeCase(event string) string {
	var b strings.Builder
	for i, r := range event {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
