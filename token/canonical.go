package token

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits on what the canonical decoder accepts. A hook payload carries whole
// file contents for Write, so the size bound is generous; the depth bound is
// not, nor is the count of values: 32 MB of `{},` are eleven million maps,
// 1.6 GB of memory in the hook (the seventy-first attack run), where a
// tool's input of many small values (an MCP tool's rows, a MultiEdit's
// edits) has thousands.
const (
	MaxJSONSize   = 32 << 20
	MaxJSONDepth  = 64
	MaxJSONValues = 1 << 18
)

// MalformedError reports JSON that the canonical decoder rejects, with the
// byte offset of the problem.
type MalformedError struct {
	Offset int
	Msg    string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("malformed json at byte %d: %s", e.Offset, e.Msg)
}

// ErrMalformedJSON matches every *MalformedError with errors.Is.
var ErrMalformedJSON = errors.New("malformed json")

func (e *MalformedError) Is(target error) bool { return target == ErrMalformedJSON }

// Decode parses data strictly into plain Go values: map[string]any, []any,
// string, json.Number (the literal exactly as written), bool and nil. It
// rejects duplicate keys, invalid UTF-8, lone surrogate escapes, nesting deeper
// than MaxJSONDepth, more than MaxJSONValues values, inputs over MaxJSONSize
// and trailing data.
func Decode(data []byte) (any, error) {
	if len(data) > MaxJSONSize {
		return nil, &MalformedError{Offset: MaxJSONSize, Msg: fmt.Sprintf("input over %d bytes", MaxJSONSize)}
	}
	d := decoder{data: data}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.fail("trailing data after the value")
	}
	return v, nil
}

type decoder struct {
	data   []byte
	pos    int
	values int // values begun, for MaxJSONValues
}

func (d *decoder) fail(format string, args ...any) error {
	return &MalformedError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if depth > MaxJSONDepth {
		return nil, d.fail("nesting deeper than %d", MaxJSONDepth)
	}
	if d.values++; d.values > MaxJSONValues {
		return nil, d.fail("more than %d values", MaxJSONValues)
	}
	if d.pos >= len(d.data) {
		return nil, d.fail("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	case d.literal("null"):
		return nil, nil
	default:
		return nil, d.fail("unexpected character %q", c)
	}
}

func (d *decoder) literal(word string) bool {
	if bytes.HasPrefix(d.data[d.pos:], []byte(word)) {
		d.pos += len(word)
		return true
	}
	return false
}

// open steps over an object's or array's opening byte and reports
// whether close follows at once (stepped over too): it is empty.
func (d *decoder) open(close byte) bool {
	d.pos++
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == close {
		d.pos++
		return true
	}
	return false
}

// next reads what follows a member of an object or array (in names which):
// a ',' (another member follows) or close (the end, done).
func (d *decoder) next(close byte, in string) (done bool, err error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return false, d.fail("unexpected end of input in %s", in)
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		return false, nil
	case close:
		d.pos++
		return true, nil
	}
	return false, d.fail("expected ',' or '%c' in %s", close, in)
}

func (d *decoder) object(depth int) (any, error) {
	obj := map[string]any{}
	if d.open('}') {
		return obj, nil
	}
	for {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.fail("expected a string key")
		}
		keyPos := d.pos
		key, err := d.string()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			return nil, &MalformedError{Offset: keyPos, Msg: fmt.Sprintf("duplicate key %q", key)}
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.fail("expected ':' after key")
		}
		d.pos++
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		obj[key] = v
		if done, err := d.next('}', "object"); err != nil {
			return nil, err
		} else if done {
			return obj, nil
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	arr := []any{}
	if d.open(']') {
		return arr, nil
	}
	for {
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		if done, err := d.next(']', "array"); err != nil {
			return nil, err
		} else if done {
			return arr, nil
		}
	}
}

func (d *decoder) string() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes.
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			s := d.data[start:d.pos]
			if !utf8.Valid(s) {
				return "", d.invalidUTF8(start)
			}
			d.pos++
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.fail("control character %#02x in string", c)
		}
		d.pos++
	}
	// The decoded string is never longer than its encoding: size the
	// builder once, from a scan to the closing quote.
	end := d.pos
	for end < len(d.data) && d.data[end] != '"' {
		if d.data[end] == '\\' {
			end++
		}
		end++
	}
	var b strings.Builder
	b.Grow(min(end, len(d.data)) - start)
	b.Write(d.data[start:d.pos])
	for {
		if d.pos >= len(d.data) {
			return "", d.fail("unterminated string")
		}
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			s := b.String()
			if !utf8.ValidString(s) {
				return "", d.invalidUTF8(start)
			}
			return s, nil
		case c < 0x20:
			return "", d.fail("control character %#02x in string", c)
		case c != '\\':
			// Copy the run up to the next quote, escape or control
			// character at once (byte by byte, a 1 MiB Write with a
			// newline every line decoded at about 70 MB/s).
			end := d.pos + 1
			for end < len(d.data) && d.data[end] != '"' && d.data[end] != '\\' && d.data[end] >= 0x20 {
				end++
			}
			b.Write(d.data[d.pos:end])
			d.pos = end
			continue
		}
		// An escape.
		if d.pos+1 >= len(d.data) {
			return "", d.fail("unterminated escape")
		}
		esc := d.data[d.pos+1]
		d.pos += 2
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := d.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || !bytes.HasPrefix(d.data[d.pos:], []byte(`\u`)) {
					return "", d.fail("lone surrogate escape")
				}
				d.pos += 2
				r2, err := d.hex4()
				if err != nil {
					return "", err
				}
				pair := utf16.DecodeRune(r, r2)
				if pair == utf8.RuneError {
					return "", d.fail("lone surrogate escape")
				}
				r = pair
			}
			b.WriteRune(r)
		default:
			return "", d.fail("invalid escape \\%c", esc)
		}
	}
}

func (d *decoder) invalidUTF8(start int) error {
	for i := start; i < len(d.data); {
		r, n := utf8.DecodeRune(d.data[i:])
		if r == utf8.RuneError && n <= 1 {
			return &MalformedError{Offset: i, Msg: "invalid utf-8 in string"}
		}
		i += n
	}
	return d.fail("invalid utf-8 in string")
}

func (d *decoder) hex4() (rune, error) {
	if d.pos+4 > len(d.data) {
		return 0, d.fail("short \\u escape")
	}
	n, err := strconv.ParseUint(string(d.data[d.pos:d.pos+4]), 16, 32)
	if err != nil {
		return 0, d.fail("invalid \\u escape")
	}
	d.pos += 4
	return rune(n), nil
}

func (d *decoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case d.pos < len(d.data) && d.data[d.pos] >= '1' && d.data[d.pos] <= '9':
		d.digits()
	default:
		return nil, d.fail("invalid number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.digits() == 0 {
			return nil, d.fail("invalid number: no digits after '.'")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.digits() == 0 {
			return nil, d.fail("invalid number: no digits in exponent")
		}
	}
	return json.Number(d.data[start:d.pos]), nil
}

func (d *decoder) digits() int {
	n := 0
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
		n++
	}
	return n
}

// Canonical returns the canonical JSON encoding of data: object keys sorted
// by their UTF-8 bytes, no insignificant whitespace, strings as the exact
// UTF-8 given (only '"', '\\' and control characters escaped), number
// literals as written. It rejects what Decode rejects.
func Canonical(data []byte) ([]byte, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return Encode(v)
}

// Encode writes v canonically. v must hold only the types Decode produces
// (plus int64 and map[string]string, for descriptors built in code); any other
// type is an error, never a guess.
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeValue(&b, v, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encodeValue(b *bytes.Buffer, v any, depth int) error {
	if depth > MaxJSONDepth {
		return fmt.Errorf("cannot encode: nesting deeper than %d", MaxJSONDepth)
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		if !validNumber(string(v)) {
			return fmt.Errorf("cannot encode: invalid number literal %q", string(v))
		}
		b.WriteString(string(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case string:
		if !utf8.ValidString(v) {
			return errors.New("cannot encode: invalid utf-8 in string")
		}
		encodeString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if !utf8.ValidString(k) {
				return errors.New("cannot encode: invalid utf-8 in key")
			}
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, k)
			b.WriteByte(':')
			if err := encodeValue(b, v[k], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case map[string]string:
		m := make(map[string]any, len(v))
		for k, s := range v {
			m[k] = s
		}
		return encodeValue(b, m, depth)
	default:
		return fmt.Errorf("cannot encode: unsupported type %T", v)
	}
	return nil
}

func encodeString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

func validNumber(s string) bool {
	d := decoder{data: []byte(s)}
	if len(s) == 0 {
		return false
	}
	if _, err := d.number(); err != nil {
		return false
	}
	return d.pos == len(s)
}
