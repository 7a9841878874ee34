package copilot

import "testing"

// Trusted reads config.json as Copilot CLI 1.0.102 does (its own
// folderTrustIsTrusted was the oracle for each row: a listed folder or one
// above it, with or without a trailing slash, and the older key count).
func TestTrusted(t *testing.T) {
	const header = "// User settings belong in settings.json.\n// This file is managed automatically.\n"
	rows := []struct {
		config, dir string
		want        bool
	}{
		{header + `{"trustedFolders": ["/src/p"]}`, "/src/p", true},
		{header + `{"trustedFolders": ["/src"]}`, "/src/p", true},
		{`{"trustedFolders": ["/src/p/"]}`, "/src/p", true},
		{`{"trusted_folders": ["/src/p"]}`, "/src/p", true},
		{`{"trustedFolders": ["/"]}`, "/src/p", true},
		// Attacks on the match, each a near miss.
		{`{"trustedFolders": ["/src/pro"]}`, "/src/project", false},
		{`{"trustedFolders": ["/src/p/sub"]}`, "/src/p", false},
		{`{"trustedFolders": ["src/p", ""]}`, "/src/p", false},
		{`{"trustedFolders": []}`, "/src/p", false},
		{`{}`, "/src/p", false},
	}
	for _, r := range rows {
		got, err := Trusted([]byte(r.config), r.dir)
		if err != nil || got != r.want {
			t.Errorf("Trusted(%s, %s) = %v, %v; want %v", r.config, r.dir, got, err, r.want)
		}
	}
	if _, err := Trusted([]byte(`{"trustedFolders": [`), "/src/p"); err == nil {
		t.Error("a broken config.json read as trusting nothing, without an error")
	}
}
