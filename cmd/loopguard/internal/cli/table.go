package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Table starts a listing's table on out: columns two spaces apart, under
// the header's names. The caller writes a tab-separated line per row and
// flushes it.
func Table(out io.Writer, header ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	return tw
}

// ShortAge renders a duration like "3m" or "2h".
func ShortAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func Short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
