//go:build linux

package confine

import (
	"os"
	"strings"
)

// procField is the value of the line "key:" in the /proc file at path
// (a status, fdinfo or meminfo file), spaces trimmed; false when the
// file cannot be read or has no such line.
func procField(path, key string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}
