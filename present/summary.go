package present

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Summary is a one-line description of a pending call for lists; never a
// substitute for the full rendering.
func Summary(p *state.Pending) string { return SummaryOf(p.Tool, p.Descriptor) }

// SummaryOf is the one-line summary of a call from its canonical bytes:
// the tool and its command, path or URL, escaped, at most 80 bytes.
func SummaryOf(tool string, canonical []byte) string {
	var in map[string]any
	if v, err := token.Decode(canonical); err == nil {
		if m, ok := v.(map[string]any); ok {
			in, _ = m["input"].(map[string]any)
		}
	}
	return SummaryOfInput(tool, in)
}

// SummaryOfInput is SummaryOf from the call's decoded input: the tool and its
// command, path or URL; for a tool with none of them (an MCP tool, a web
// search) its scalar arguments, sorted, as name=value, so the audit log
// says what ran (mcp__bank__transfer amount=2000 to=attacker-sink). At most
// 80 bytes, cut on a character boundary, then escaped.
func SummaryOfInput(tool string, in map[string]any) string {
	s := tool
	named := false
	// A file first: a Codex patch is Edit or Write with the patch text
	// as command (agents/patch), and is about its file.
	for _, k := range []string{"file_path", "notebook_path", "command", "url"} {
		if x, ok := in[k].(string); ok {
			s += " " + x
			named = true
			break
		}
	}
	if !named {
		keys := make([]string, 0, len(in))
		for k := range in {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(s) > summaryMax {
				break
			}
			s += " " + k + "=" + summaryValue(in[k])
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > summaryMax {
		n := summaryMax - 3
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	return EscapeText(s)
}

// summaryMax is the longest summary, in bytes before escaping.
const summaryMax = 80

// summaryValue is one argument of a summary: a scalar as it is (a string
// quoted when it holds a space, a quote or '='), a list or object elided.
func summaryValue(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" || strings.ContainsAny(x, " \t\n\"=") {
			return strconv.Quote(x)
		}
		return x
	case map[string]any:
		return "{...}"
	case []any:
		return "[...]"
	case nil:
		return "null"
	default:
		return fmt.Sprint(x)
	}
}
