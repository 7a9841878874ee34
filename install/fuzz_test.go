package install

import (
	"bytes"
	"testing"
)

var fuzzSeeds = []string{
	other,
	`{}`,
	`{"hooks":{}}`,
	`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/x/loopguard","args":["hook"]},{"type":"command","command":"y"}]}]}}`,
	`{"a":[1,2,{"b":"\u00e9\n"}],"hooks":{"Stop":[{"hooks":[]}]}}`,
	"{\n\t\"a\": 1e10\n}\n",
	`{"sandbox":{"enabled":false,"filesystem":{"denyWrite":["//opt/state/loopguard",1]}},"env":{"GOCACHE":"x"}}`,
	`{"sandbox":{},"env":{}}`,
}

// For any settings file Merge accepts: a second Merge changes nothing,
// loopguard is registered for every event, and Unmerge gives back the same
// settings apart from whitespace and emptied hook containers.
func FuzzMergeRoundTrip(f *testing.F) {
	if len(fuzzSeeds) == 0 {
		f.Fatal("no seeds")
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data, opts)
		roundTrip(t, data, sandboxOpts)
	})
}

func roundTrip(t *testing.T, data []byte, opts Options) {
	out, _, err := Merge(data, opts)
	if err != nil {
		return
	}
	again, changed, err := Merge(out, opts)
	if err != nil || changed || !bytes.Equal(again, out) {
		t.Fatalf("second merge: changed %v err %v\n%s", changed, err, out)
	}
	regs, err := Hooks(out, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range regs {
		if r.Ours {
			seen[r.Event]++
		}
	}
	for _, ev := range Events {
		if seen[ev] != 1 {
			t.Fatalf("%s registered %d times\n%s", ev, seen[ev], out)
		}
	}
	if opts.Sandbox != nil {
		s, err := ReadSandbox(out)
		if err != nil || !s.Bools["enabled"] || !s.Bools["failIfUnavailable"] || s.Bools["allowUnsandboxedCommands"] {
			t.Fatalf("sandbox not merged (%v):\n%s", err, out)
		}
	}
	back, _, err := Unmerge(out, "")
	if err != nil {
		t.Fatal(err)
	}
	if back, _, err = UnmergeSandbox(back, data, opts.Sandbox); err != nil {
		t.Fatal(err)
	}
	if !sameSettings(back, data, "") {
		t.Fatalf("unmerge lost settings:\n%s\n---\n%s", data, back)
	}
}
