package shellparse

// ScanChars reports invisible, bidi, control, space-like and confusable
// characters in s, as "line:col: U+XXXX kind". The renderer uses it for every
// string of a call, not only Bash commands.
func ScanChars(s string) []string { return scanChars(s) }
