package present

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/token"
)

// A large Write is shown by head and tail with its size and digest, never
// dumped whole; RenderFull shows every line.
func TestRenderFoldsLongText(t *testing.T) {
	var content strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&content, "line %d\n", i)
	}
	c := content.String()
	d := token.Descriptor{Tool: "Write", Input: map[string]any{"file_path": "/p/big.txt", "content": c}, Cwd: "/p"}
	canon, err := d.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	out := Render(canon)
	sum := sha256.Sum256([]byte(c))
	for _, want := range []string{"5000 lines", fmt.Sprint(len(c)) + " bytes", hex.EncodeToString(sum[:]), "line 0", "line 4999", "lines not shown", "loopguard show --full"} {
		if !strings.Contains(out, want) {
			t.Errorf("folded rendering lacks %q", want)
		}
	}
	if strings.Contains(out, "line 2500\\n") || strings.Contains(out, "| line 2500") || len(out) > 20000 {
		t.Errorf("the middle of the text is shown (%d bytes)", len(out))
	}
	full := RenderFull(canon)
	if !strings.Contains(full, "| line 2500") || strings.Contains(full, "lines not shown") {
		t.Error("RenderFull does not show every line")
	}
	// Control: a short text is shown whole.
	d.Input = map[string]any{"file_path": "/p/a.txt", "content": "a\nb\n"}
	canon, _ = d.Canonical()
	if out := Render(canon); strings.Contains(out, "LONG TEXT") || !strings.Contains(out, "2 | b") {
		t.Errorf("short text folded:\n%s", out)
	}
}

// Clip escapes line by line: the reason keeps its line breaks, and text
// escaped once is not escaped twice.
func TestClipKeepsLines(t *testing.T) {
	// The escaping is line by line: the reason keeps its line breaks.
	if got := Clip("a\x1bb\nc\x07 \\x1b"); got != `a\x1bb`+"\n"+`c\x07 \x1b` {
		t.Errorf("clip = %q", got)
	}
}

// TestCallDiff: a changed argument shows as a removed and an added line,
// with a control character escaped; the same call shows nothing.
func TestCallDiff(t *testing.T) {
	approved := []byte(`{"amount":20,"to":"vendor"}`)
	changed := []byte(`{"amount":2000,"to":"attacker\u001b[2K"}`)
	if d := CallDiff(approved, approved); d != "" {
		t.Errorf("control: the same call shows %q", d)
	}
	d := CallDiff(approved, changed)
	for _, want := range []string{". What differs:", "-", "+", "2000", "attacker"} {
		if !strings.Contains(d, want) {
			t.Errorf("missing %q in:\n%s", want, d)
		}
	}
	if strings.ContainsRune(d, 0x1b) {
		t.Errorf("an escape byte reached the diff:\n%q", d)
	}
}

// TestRenderOrderFixed: fields besides the known ones render sorted, so
// the same call always renders the same (a diff of two renderings of one
// call is empty). It failed half the time with two such fields before.
func TestRenderOrderFixed(t *testing.T) {
	canon := []byte(`{"a":1,"b":2,"c":3,"d":4,"e":5,"input":{"x":1},"tool":"T"}`)
	want := RenderFull(canon)
	if i, j := strings.Index(want, "tool:"), strings.Index(want, "input:"); i < 0 || j < i {
		t.Fatalf("the known fields do not come first:\n%s", want)
	}
	if !strings.Contains(want, "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n") {
		t.Errorf("the other fields are not sorted:\n%s", want)
	}
	for range 50 {
		if got := RenderFull(canon); got != want {
			t.Fatalf("two renderings of one call differ:\n%s\n---\n%s", want, got)
		}
	}
}
