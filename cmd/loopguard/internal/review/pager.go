package review

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"golang.org/x/term"
)

// Page writes text to out. On a terminal too short for it, the text goes
// through $PAGER (else less, else a built-in pager) so its first lines (the
// header: the call, where it lands, its danger lines, the digest) are what
// the human sees first instead of scrolling away; anywhere else (a pipe, a
// file, inside an agent) it is written whole. Every line of text is already
// escaped, so a pager shows nothing raw. On a terminal, a line wider than
// it is folded first (cli.Fold), so neither the terminal nor the pager
// wraps one into a row that could pass for a line of its own.
func Page(out io.Writer, text string) error {
	f, ok := out.(*os.File)
	rows := 0
	if ok && term.IsTerminal(fdOf(f)) {
		_, rows, _ = term.GetSize(fdOf(f))
		text = cli.FoldTo(f, text)
	}
	if rows <= 0 || strings.Count(text, "\n") < rows || cli.RefuseInAgent() != nil {
		_, err := io.WriteString(out, text)
		return err
	}
	pager := strings.TrimSpace(os.Getenv("PAGER"))
	if pager == "" {
		if p, err := exec.LookPath("less"); err == nil {
			pager = p
		}
	}
	if pager != "" {
		cmd := exec.Command("/bin/sh", "-c", pager)
		if !strings.Contains(pager, " ") && strings.HasSuffix(pager, "less") {
			cmd = exec.Command(pager)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(text), f, os.Stderr
		cmd.Env = os.Environ()
		if os.Getenv("LESS") == "" {
			// Quit when it fits, keep the text on screen after quitting.
			cmd.Env = append(cmd.Env, "LESS=FX")
		}
		if err := cmd.Run(); err == nil {
			return nil
		}
		// A pager that fails shows the text below, whole.
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		_, err := io.WriteString(out, text)
		return err
	}
	defer tty.Close()
	c := &console{tty: tty, fd: fdOf(tty)}
	defer c.cooked()
	_, err = pageOn(c, out, strings.SplitAfter(text, "\n"), rows, 0, "")
	return err
}

// pageOn is the built-in pager: lines, a screen of rows at a time, with a
// prompt between screens (Space or Enter: more; q: stop). tail is how
// many rows are printed after its last screen before the next key is read
// (the prompt under a call): that screen leaves room for them, so none of
// its lines scrolls away unread. It returns how many lines it showed.
// again says how to see the text again, if it can be.
func pageOn(c *console, out io.Writer, lines []string, rows, tail int, again string) (int, error) {
	shown := 0
	width := c.width()
	for shown < len(lines) {
		// A screen's worth, the lines counted as the terminal wraps them.
		end, used := shown, 0
		for end < len(lines) && (end == shown || used+rowsOf(lines[end], width) <= max(rows-1, 1)) {
			used += rowsOf(lines[end], width)
			end++
		}
		if end == len(lines) && end-shown > 1 && used+tail > rows {
			// The last screen and what follows it would not fit: its
			// last line waits for one more screen.
			end--
		}
		for _, l := range lines[shown:end] {
			if _, err := io.WriteString(out, l); err != nil {
				return shown, err
			}
		}
		shown = end
		if shown == len(lines) {
			break
		}
		more := c.more(out, fmt.Sprintf("-- more: %d of %d lines shown; Space for more, q to stop --", shown, len(lines)))
		fmt.Fprint(out, "\n")
		if !more {
			fmt.Fprintf(out, "(%d more lines not shown%s)\n", len(lines)-shown, again)
			return shown, nil
		}
	}
	return shown, nil
}

// more writes prompt at the foot of a screen and waits for a key: Space or
// Enter goes on (true), any other key stops.
func (c *console) more(out io.Writer, prompt string) bool {
	fmt.Fprint(out, prompt)
	k, err := c.key(context.Background(), false)
	return err == nil && (k == ' ' || k == '\r' || k == '\n')
}
