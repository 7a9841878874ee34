package scope

import (
	"strings"
	"testing"
)

func TestMatchWebFetch(t *testing.T) {
	r, err := Parse("WebFetch(domain:pkg.go.dev)")
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		url  any
		want string
	}{
		{"https://pkg.go.dev/x", ""},
		{"https://pkg.go.dev", ""},
		{"http://pkg.go.dev/x?q=1#f", ""},
		{"HTTPS://PKG.GO.DEV/x", ""},
		{"https://pkg.go.dev:443/x", ""},
		{"https://pkg.go.dev.evil.example/", ReasonDomainMismatch},
		{"https://evil.example/?pkg.go.dev", ReasonDomainMismatch},
		{"https://evil.example/pkg.go.dev", ReasonDomainMismatch},
		{"https://evil.example#pkg.go.dev", ReasonDomainMismatch},
		{"https://pkg.go.dev@evil.example/", ReasonBadURL},
		{"https://user:pw@pkg.go.dev/", ReasonBadURL},
		{"https://pkg.go.dev;@evil.example/", ReasonBadURL},
		{"https://pkg.go.dev:443@evil.example/", ReasonBadURL},
		{"https://pkg.go.dev%2F@evil.example/", ReasonBadURL},
		{"https://pkg%2Ego%2Edev/", ReasonBadURL},
		{"https://pkg.go.dev#@evil.example/", ""}, // the fragment holds the @: the host is pkg.go.dev
		{"https://evil.example\\@pkg.go.dev/", ReasonBadURL},
		{"https://pkg.go.dev\\.evil.example/", ReasonBadURL},
		{"https://pkg.go.dev\t.evil.example/", ReasonBadURL},
		{"https://pkg.go.dev%2eevil.example/", ReasonBadURL},
		{"https://sub.pkg.go.dev/", ReasonDomainMismatch},
		{"https://go.dev/", ReasonDomainMismatch},
		{"https://xpkg.go.dev/", ReasonDomainMismatch},
		{"https://pkg.go.dev./", ReasonDomainMismatch},
		{"https://pkg.go.dev:8443/", ReasonDomainMismatch},
		{"https://pkg.go.dev:/", ReasonBadURL},
		{"http://pkg.go.dev:443/", ReasonDomainMismatch},
		{"https://pkg.gо.dev/", ReasonBadURL}, // Cyrillic o
		{"ftp://pkg.go.dev/", ReasonBadURL},
		{"file://pkg.go.dev/etc/passwd", ReasonBadURL},
		{"javascript:pkg.go.dev", ReasonBadURL},
		{"https:pkg.go.dev", ReasonBadURL},
		{"https:///pkg.go.dev", ReasonBadURL},
		{"//pkg.go.dev/x", ReasonBadURL},
		{"pkg.go.dev/x", ReasonBadURL},
		{"https://[::1]/", ReasonDomainMismatch},
		{"https://" + strings.Repeat("a", maxURLLen), ReasonBadURL},
		{"", ReasonMalformedInput},
		{42, ReasonMalformedInput},
		{nil, ReasonMalformedInput},
	}
	allowed := 0
	for _, row := range rows {
		in := map[string]any{"url": row.url, "prompt": "summarise"}
		if row.url == nil {
			delete(in, "url")
		}
		err := Match(r, Call{Tool: "WebFetch", Input: in})
		if got := ReasonOf(err); got != row.want || (err == nil) != (row.want == "") {
			t.Errorf("%q: got %v, want %q", row.url, err, row.want)
		}
		if err == nil {
			allowed++
		}
	}
	if allowed == 0 {
		t.Fatal("no allowed row")
	}
	if got := ReasonOf(Match(r, Call{Tool: "Bash", Input: map[string]any{"url": "https://pkg.go.dev/"}})); got != ReasonToolMismatch {
		t.Errorf("Bash call: %q", got)
	}
}

func TestMatchMCPAndBare(t *testing.T) {
	rows := []struct {
		rule, tool, want string
	}{
		{"mcp__github__get_issue", "mcp__github__get_issue", ""},
		{"mcp__github__get_issue", "mcp__github__get_issues", ReasonToolMismatch},
		{"mcp__github__get_issue", "mcp__github__create_issue", ReasonToolMismatch},
		{"mcp__github__get_issue", "mcp__githubx__get_issue", ReasonToolMismatch},
		{"mcp__github__*", "mcp__github__create_issue", ""},
		{"mcp__github__*", "mcp__github2__create_issue", ReasonToolMismatch},
		{"mcp__github__*", "mcp__github__evil__x", ReasonToolMismatch},
		{"mcp__github__*", "mcp__gitlab__create_issue", ReasonToolMismatch},
		{"mcp__github__get_*", "mcp__github__get_issue", ""},
		{"mcp__github__get_*", "mcp__github__create_issue", ReasonToolMismatch},
		{"TodoWrite", "TodoWrite", ""},
		{"TodoWrite", "Bash", ReasonToolMismatch},
		{"Bash", "Bash", ReasonToolMismatch},
		{"Edit", "Edit", ReasonToolMismatch},
		{"WebSearch", "WebSearch", ""},
		{"mcp__github__*", "PowerShell", ReasonToolMismatch},
	}
	for _, row := range rows {
		r, err := Parse(row.rule)
		if err != nil {
			t.Fatal(err)
		}
		err = Match(r, Call{Tool: row.tool, Input: map[string]any{}})
		if got := ReasonOf(err); got != row.want || (err == nil) != (row.want == "") {
			t.Errorf("%s / %s: got %v, want %q", row.rule, row.tool, err, row.want)
		}
	}
}
