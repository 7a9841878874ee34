package present

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/token"
)

// Render shows a call for review from its canonical descriptor bytes: every
// field and every byte, with anything that is not printable ASCII escaped
// visibly (\t, \x1b, \u{200b}), multi-line strings as numbered blocks. It is
// never a summary.
//
// A long string (a large Write) is shown by its head and tail with its
// size and SHA-256, and a line saying how much is not shown; RenderFull
// shows all of it.
func Render(canonical []byte) string { return RenderLimit(canonical, -1) }

// RenderFull is Render with every line of every string.
func RenderFull(canonical []byte) string { return render(canonical, -1, false) }

// Bounds of a string shown whole by Render; longer ones show their head
// and tail.
const (
	maxShownLines = 200
	maxShownBytes = 32 << 10
	headLines     = 120
	tailLines     = 20
)

// RenderLimit renders at most about limit bytes (no limit when negative) and
// says where it stopped.
func RenderLimit(canonical []byte, limit int) string { return render(canonical, limit, true) }

func render(canonical []byte, limit int, fold bool) string {
	v, err := token.Decode(canonical)
	if err != nil {
		return "(descriptor does not decode: " + EscapeText(err.Error()) + ")\n"
	}
	b := &renderer{limit: limit, fold: fold}
	m, ok := v.(map[string]any)
	if !ok {
		renderValue(b, v, 0)
		return b.String()
	}
	// Fixed order for the known fields, then the rest, sorted: the same
	// call always renders the same.
	order := []string{"tool", "cwd", "input", "executables", "target", "v"}
	var rest []string
	for k := range m {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	order = append(order, rest...)
	for _, k := range order {
		val, ok := m[k]
		if !ok {
			continue
		}
		fmt.Fprintf(b, "%s:", EscapeText(k))
		renderValue(b, val, 1)
	}
	return b.String()
}

// renderer is a builder that stops taking text past its limit.
type renderer struct {
	strings.Builder
	limit int
	cut   bool
	fold  bool // long strings show head and tail
}

func (r *renderer) full() bool {
	if r.limit >= 0 && r.Len() > r.limit {
		if !r.cut {
			r.cut = true
			r.Builder.WriteString("\n... (rendering cut here; the full call is in `loopguard show`)\n")
		}
		return true
	}
	return false
}

func (r *renderer) Write(p []byte) (int, error) {
	if r.full() {
		return len(p), nil
	}
	return r.Builder.Write(p)
}

func (r *renderer) WriteString(s string) (int, error) {
	if r.full() {
		return len(s), nil
	}
	return r.Builder.WriteString(s)
}

func renderValue(b *renderer, v any, depth int) {
	if b.full() {
		return
	}
	indent := strings.Repeat("  ", depth)
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteString("\n")
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "%s%s:", indent, EscapeText(k))
			renderValue(b, v[k], depth+1)
		}
	case []any:
		if len(v) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteString("\n")
		for i, e := range v {
			fmt.Fprintf(b, "%s[%d]:", indent, i)
			renderValue(b, e, depth+1)
		}
	case string:
		if !strings.Contains(v, "\n") {
			if b.fold && len(v) > maxShownBytes {
				sum := sha256.Sum256([]byte(v))
				fmt.Fprintf(b, " %s ... (LONG TEXT: %d bytes, sha256 %s; the first 4096 shown. See all of it with: loopguard show --full ID)\n",
					QuoteText(v[:4096]), len(v), hex.EncodeToString(sum[:]))
				return
			}
			fmt.Fprintf(b, " %s\n", QuoteText(v))
			return
		}
		lines := strings.Split(v, "\n")
		final := "no final newline"
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
			final = "ends with a newline"
		}
		fmt.Fprintf(b, " (%d lines, %d bytes, %s)\n", len(lines), len(v), final)
		folded := b.fold && (len(lines) > maxShownLines || len(v) > maxShownBytes)
		if folded {
			sum := sha256.Sum256([]byte(v))
			fmt.Fprintf(b, "%s     | LONG TEXT: %d lines, %d bytes, sha256 %s; showing lines 1-%d and the last %d. See all of it with: loopguard show --full ID\n",
				indent, len(lines), len(v), hex.EncodeToString(sum[:]), min(headLines, len(lines)), min(tailLines, len(lines)))
		}
		for i, l := range lines {
			if b.full() {
				return
			}
			if folded && i >= headLines && i < len(lines)-tailLines {
				if i == headLines {
					fmt.Fprintf(b, "%s     | ... %d lines not shown ...\n", indent, len(lines)-headLines-tailLines)
				}
				continue
			}
			if folded && len(l) > 512 {
				l = l[:512]
				fmt.Fprintf(b, "%s%4d | %s ... (line of %d bytes cut)\n", indent, i+1, EscapeText(l), len(lines[i]))
				continue
			}
			fmt.Fprintf(b, "%s%4d | %s\n", indent, i+1, EscapeText(l))
		}
	case json.Number:
		fmt.Fprintf(b, " %s\n", string(v))
	case bool:
		fmt.Fprintf(b, " %t\n", v)
	case nil:
		b.WriteString(" null\n")
	default:
		fmt.Fprintf(b, " (%T)\n", v)
	}
}

// Warnings lists the suspicious characters in every string of a descriptor,
// each with the field it is in.
func Warnings(canonical []byte) []string {
	v, err := token.Decode(canonical)
	if err != nil {
		return []string{"descriptor does not decode"}
	}
	return WarningsOf(v)
}

// WarningsOf is Warnings on a decoded descriptor.
func WarningsOf(v any) []string {
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				for _, w := range shellparse.ScanChars(k) {
					out = append(out, path+" (key): "+w)
				}
				walk(path+"."+EscapeText(k), v[k])
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case map[string]string:
			m := make(map[string]any, len(v))
			for k, s := range v {
				m[k] = s
			}
			walk(path, m)
		case string:
			for _, w := range shellparse.ScanChars(v) {
				out = append(out, path+": "+w)
			}
		}
	}
	walk("call", v)
	return out
}
