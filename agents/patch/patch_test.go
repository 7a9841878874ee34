package patch

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // op:path[>moveto]; nil means malformed
	}{
		{"add", "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n", []string{"add:a.txt"}},
		{"update with hunks", "*** Begin Patch\n*** Update File: src/m.go\n@@ func f\n-a\n+b\n*** End of File\n*** End Patch", []string{"update:src/m.go"}},
		{"delete", "\n*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n\n", []string{"delete:old.txt"}},
		{"move", "*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch\n", []string{"update:a>b"}},
		{"two files", "*** Begin Patch\n*** Add File: a\n+1\n*** Delete File: b\n*** End Patch\n", []string{"add:a", "delete:b"}},
		{"content that looks like a header", "*** Begin Patch\n*** Add File: a\n+*** Add File: b\n*** End Patch\n", []string{"add:a"}},
		{"no begin", "*** Add File: a\n+1\n*** End Patch\n", nil},
		{"no end", "*** Begin Patch\n*** Add File: a\n+1\n", nil},
		{"after end", "*** Begin Patch\n*** Add File: a\n+1\n*** End Patch\n*** Add File: b\n", nil},
		{"unknown header", "*** Begin Patch\n*** Rename File: a\n*** End Patch\n", nil},
		{"indented header", "*** Begin Patch\n*** Add File: a\n+1\n  *** Add File: b\n*** End Patch\n", nil},
		{"padded path", "*** Begin Patch\n*** Add File: a \n+1\n*** End Patch\n", nil},
		{"empty path", "*** Begin Patch\n*** Add File: \n+1\n*** End Patch\n", nil},
		{"no files", "*** Begin Patch\n*** End Patch\n", nil},
		{"text before files", "*** Begin Patch\n+1\n*** Add File: a\n*** End Patch\n", nil},
		{"move outside update", "*** Begin Patch\n*** Add File: a\n*** Move to: b\n*** End Patch\n", nil},
		{"nested begin", "*** Begin Patch\n*** Add File: a\n*** Begin Patch\n*** End Patch\n", nil},
	} {
		files, err := Parse(tc.body)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: parsed as %+v, want malformed", tc.name, files)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []string
		for _, f := range files {
			s := f.Op + ":" + f.Path
			if f.MoveTo != "" {
				s += ">" + f.MoveTo
			}
			got = append(got, s)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a\n+1\n*** End Patch\n")
	f.Add("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch\n")
	f.Fuzz(func(t *testing.T, body string) {
		files, err := Parse(body)
		if err != nil {
			return
		}
		if len(files) == 0 {
			t.Fatal("no files and no error")
		}
		for _, p := range files {
			if p.Path == "" {
				t.Fatal("empty path accepted")
			}
		}
	})
}
