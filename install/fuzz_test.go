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
		back, _, err := Unmerge(out, "")
		if err != nil {
			t.Fatal(err)
		}
		if !sameSettings(back, data, "") {
			t.Fatalf("unmerge lost settings:\n%s\n---\n%s", data, back)
		}
	})
}
