package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The settings file is handled as an ordered tree whose scalars keep their
// exact source text, so that re-encoding it changes only whitespace: key
// order, number spellings and string escapes stay as the user wrote them.

// node is one JSON value.
type node struct {
	kind  byte     // '{', '[' or 's' (a scalar: string, number, true, false, null)
	raw   []byte   // a scalar's exact source text
	keys  []string // an object's keys, decoded
	rawKs [][]byte // an object's keys, as written
	vals  []*node  // an object's values, in key order
	elems []*node  // an array's elements
}

// Limits on what is read.
const (
	// MaxFileSize bounds a settings file.
	MaxFileSize = 4 << 20
	maxDepth    = 256
)

// SyntaxError reports a settings file that is not valid JSON, or not the
// shape Claude Code reads, and where.
type SyntaxError struct {
	Path      string // the file, when known
	Line, Col int    // 1-based; 0 when not applicable
	Msg       string
}

func (e *SyntaxError) Error() string {
	where := e.Path
	if where == "" {
		where = "settings"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", where, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// Hint tells a person what to do.
func (e *SyntaxError) Hint() string {
	return "fix the file by hand (Claude Code ignores a settings file it cannot parse), then run the command again; nothing was changed"
}

// ErrInvalid is wrapped by every SyntaxError (errors.Is).
var ErrInvalid = errors.New("invalid settings file")

// Is reports whether target is ErrInvalid.
func (e *SyntaxError) Is(target error) bool { return target == ErrInvalid }

// lineCol turns a byte offset into a 1-based line and column (in runes).
func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, utf8.RuneCount(data[start:off]) + 1
}

// parse reads data into a tree. It first validates with encoding/json (for a
// precise syntax error position), then rejects duplicate keys, which
// JSON.parse would resolve silently.
func parse(data []byte) (*node, error) {
	if len(data) > MaxFileSize {
		return nil, &SyntaxError{Msg: fmt.Sprintf("file is %d bytes, more than the %d accepted", len(data), MaxFileSize)}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		l, c := lineCol(data, off)
		return nil, &SyntaxError{Line: l, Col: c, Msg: "invalid UTF-8"}
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset)
			if off > 0 && !strings.Contains(se.Error(), "unexpected end") {
				off-- // Offset is just after the offending byte
			}
			l, c := lineCol(data, off)
			return nil, &SyntaxError{Line: l, Col: c, Msg: se.Error()}
		}
		return nil, &SyntaxError{Msg: err.Error()}
	}
	p := parser{data: data}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.off != len(data) {
		return nil, p.fail("unexpected data after the top-level value")
	}
	return n, nil
}

type parser struct {
	data []byte
	off  int
}

func (p *parser) fail(format string, args ...any) error {
	l, c := lineCol(p.data, p.off)
	return &SyntaxError{Line: l, Col: c, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case ' ', '\t', '\n', '\r':
			p.off++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.fail("nested more than %d levels deep", maxDepth)
	}
	if p.off >= len(p.data) {
		return nil, p.fail("unexpected end of input")
	}
	switch p.data[p.off] {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		start := p.off
		if err := p.skipString(); err != nil {
			return nil, err
		}
		return &node{kind: 's', raw: p.data[start:p.off]}, nil
	}
	start := p.off
	for p.off < len(p.data) {
		c := p.data[p.off]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		p.off++
	}
	if p.off == start {
		return nil, p.fail("expected a value")
	}
	return &node{kind: 's', raw: p.data[start:p.off]}, nil
}

func (p *parser) skipString() error {
	p.off++ // opening quote
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case '\\':
			p.off += 2
		case '"':
			p.off++
			return nil
		default:
			p.off++
		}
	}
	return p.fail("unterminated string")
}

// open steps over an object's or array's opening byte and reports
// whether close follows at once (stepped over too): it is empty.
func (p *parser) open(close byte) bool {
	p.off++
	p.space()
	if p.off < len(p.data) && p.data[p.off] == close {
		p.off++
		return true
	}
	return false
}

// next reads what follows a member of an object or array: a ',' (another
// member follows) or close (the end, done).
func (p *parser) next(close byte) (done bool, err error) {
	p.space()
	if p.off >= len(p.data) {
		return false, p.fail("unexpected end of input")
	}
	switch p.data[p.off] {
	case ',':
		p.off++
		return false, nil
	case close:
		p.off++
		return true, nil
	}
	return false, p.fail("expected ',' or '%c'", close)
}

func (p *parser) object(depth int) (*node, error) {
	n := &node{kind: '{'}
	if p.open('}') {
		return n, nil
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.off >= len(p.data) || p.data[p.off] != '"' {
			return nil, p.fail("expected a key")
		}
		keyAt := p.off
		if err := p.skipString(); err != nil {
			return nil, err
		}
		rawK := p.data[keyAt:p.off]
		var k string
		if err := json.Unmarshal(rawK, &k); err != nil {
			return nil, p.fail("bad key: %v", err)
		}
		if seen[k] {
			p.off = keyAt
			return nil, p.fail("duplicate key %q (Claude Code would silently use the last one)", k)
		}
		seen[k] = true
		p.space()
		if p.off >= len(p.data) || p.data[p.off] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.off++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, k)
		n.rawKs = append(n.rawKs, rawK)
		n.vals = append(n.vals, v)
		if done, err := p.next('}'); err != nil {
			return nil, err
		} else if done {
			return n, nil
		}
	}
}

func (p *parser) array(depth int) (*node, error) {
	n := &node{kind: '['}
	if p.open(']') {
		return n, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		if done, err := p.next(']'); err != nil {
			return nil, err
		} else if done {
			return n, nil
		}
	}
}

// get returns the value of key in object n, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces key's value in place, or appends key at the end.
func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	raw, _ := json.Marshal(key)
	n.keys = append(n.keys, key)
	n.rawKs = append(n.rawKs, raw)
	n.vals = append(n.vals, v)
}

// del removes key from object n.
func (n *node) del(key string) {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
			n.rawKs = append(n.rawKs[:i:i], n.rawKs[i+1:]...)
			n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
			return
		}
	}
}

// str returns a string scalar's value.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != 's' || len(n.raw) == 0 || n.raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(n.raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// num returns a number scalar's value.
func (n *node) num() (float64, bool) {
	if n == nil || n.kind != 's' || len(n.raw) == 0 || n.raw[0] == '"' {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(n.raw, &f); err != nil {
		return 0, false
	}
	return f, true
}

// fromValue builds a node from a Go value with encoding/json (for the
// entries loopguard writes; maps are not used, so the order is the struct's).
func fromValue(v any) *node {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil {
		panic(fmt.Sprintf("install: cannot encode %T: %v", v, err)) // only fixed types are passed
	}
	n, err := parse(b)
	if err != nil {
		panic(fmt.Sprintf("install: cannot re-read %T: %v", v, err))
	}
	return n
}

// encode writes n with the given indent unit ("" for compact), in the style
// of JSON.stringify(v, null, indent): empty containers as {} and [].
func encode(n *node, indent string) []byte {
	var b bytes.Buffer
	n.write(&b, indent, 0)
	return b.Bytes()
}

func (n *node) write(b *bytes.Buffer, indent string, level int) {
	nl := func(l int) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(indent, l))
		}
	}
	switch n.kind {
	case 's':
		b.Write(n.raw)
	case '{':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(level + 1)
			b.Write(n.rawKs[i])
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			n.vals[i].write(b, indent, level+1)
		}
		nl(level)
		b.WriteByte('}')
	case '[':
		if len(n.elems) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(level + 1)
			e.write(b, indent, level+1)
		}
		nl(level)
		b.WriteByte(']')
	}
}

// detectIndent returns the indent unit the file uses: the whitespace before
// the first key or element on its own line; "" (compact) when the first
// key or element follows its bracket on the same line (a one-line file
// stays one line); two spaces for an empty or unusual file.
func detectIndent(data []byte) string {
	i := bytes.IndexAny(data, "{[")
	if i < 0 {
		return "  "
	}
	rest := data[i+1:]
	if t := bytes.TrimLeft(rest, " \t\r\n"); len(t) == 0 || t[0] == '}' || t[0] == ']' {
		return "  " // empty: nothing to follow
	}
	nlAt := bytes.IndexByte(rest, '\n')
	if nlAt < 0 || len(bytes.TrimSpace(rest[:nlAt])) != 0 {
		// Content on the bracket's own line: a compact file.
		return ""
	}
	line := rest[nlAt+1:]
	j := 0
	for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
		j++
	}
	if j == 0 || j > 16 || j >= len(line) || line[j] == '\n' || line[j] == '\r' {
		return "  "
	}
	return string(line[:j])
}
