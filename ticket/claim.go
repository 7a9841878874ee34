package ticket

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Want is what the wrapper is about to run, to be matched against a
// ticket.
type Want struct {
	Nonce   string
	Command string // the text the shell evaluates, as the host wrote it
	Session string // the host's session id for this shell
	Cwd     string // the wrapper's working directory
}

// Claimed is a ticket the wrapper may run on. Hold, when not nil, is the
// open ticket file under an exclusive lock: where the wrapper cannot mark
// the ticket used (the host's sandbox mounts the directory read-only), the
// lock, inherited by the command, keeps it from a second run while the
// command lives, and the hook's PostToolUse spends it after.
type Claimed struct {
	Ticket *Ticket
	Hold   *os.File
}

// Claim checks want against its ticket and takes the ticket for one run.
// key returns the ticket key; it is called only where the ticket directory
// is writable to the wrapper (outside a sandbox that makes it read-only),
// where a ticket file alone proves nothing. Every refusal is an *Error.
func (s *Store) Claim(want Want, key func() ([]byte, error)) (*Claimed, error) {
	if !validNonce(want.Nonce) {
		return nil, refuse(ReasonNoDecision, "the command carries no ticket from the hook")
	}
	t, f, err := s.load(want.Nonce)
	if errors.Is(err, fs.ErrNotExist) {
		if s.Used(want.Nonce) {
			return nil, refuse(ReasonTicketUsed, "its ticket ran a command already")
		}
		return nil, refuse(ReasonNoDecision, "no hook issued a ticket for this command")
	}
	if err != nil {
		return nil, refuse(ReasonTicketInvalid, "%v", err)
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	if s.Used(want.Nonce) {
		return nil, refuse(ReasonTicketUsed, "its ticket ran a command already")
	}
	if err := lockNB(f); err != nil {
		return nil, refuse(ReasonTicketUsed, "its ticket is running a command now")
	}
	if t.Session == "" || t.Session != want.Session {
		return nil, refuse(ReasonTicketInvalid, "the ticket was issued to another session")
	}
	if s.now().After(time.Unix(t.Expiry, 0)) {
		return nil, refuse(ReasonTicketExpired, "the ticket expired %s ago", s.now().Sub(time.Unix(t.Expiry, 0)).Round(time.Second))
	}
	if want.Command != t.Command && want.Command != hostNul(t.Command) {
		return nil, refuse(ReasonTicketInvalid, "the command is not the one the hook decided")
	}
	if !sameDir(want.Cwd, t.Cwd) {
		return nil, refuse(ReasonTicketInvalid, "the command runs in %s, the ticket is for %s", want.Cwd, t.Cwd)
	}
	canWrite := writable
	if s.Writable != nil {
		canWrite = s.Writable
	}
	if canWrite(s.Dir) {
		k, err := key()
		if err != nil {
			return nil, refuse(ReasonTicketInvalid, "the ticket cannot be verified: %v", err)
		}
		if !t.verifyMAC(k) {
			return nil, refuse(ReasonTicketInvalid, "the ticket's MAC does not verify (forged, or another key's)")
		}
		// Single use: exactly one wrapper renames it.
		if err := os.Rename(s.path(want.Nonce), s.usedPath(want.Nonce)); err != nil {
			return nil, refuse(ReasonTicketUsed, "its ticket ran a command already")
		}
		return &Claimed{Ticket: t}, nil
	}
	keep = true
	return &Claimed{Ticket: t, Hold: f}, nil
}

func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// hostNul is cmd as Claude Code hands it to its shell when it has no <, $
// or backtick: a redirection to NUL (Windows' null device) is made one to
// /dev/null. The host does this to every command; the ticket stands for
// either spelling.
func hostNul(cmd string) string {
	for i := 0; i < len(cmd); i++ {
		if c := cmd[i]; c == '<' || c == '$' || c == '`' {
			return cmd
		}
	}
	var out []byte
	i := 0
	for i < len(cmd) {
		// (\d?&?>+[ \t]*)[Nn][Uu][Ll](?=\s|$|[|&;)\n])
		j := i
		if j < len(cmd) && cmd[j] >= '0' && cmd[j] <= '9' {
			j++
		}
		if j < len(cmd) && cmd[j] == '&' {
			j++
		}
		k := j
		for k < len(cmd) && cmd[k] == '>' {
			k++
		}
		if k > j {
			for k < len(cmd) && (cmd[k] == ' ' || cmd[k] == '\t') {
				k++
			}
			if k+3 <= len(cmd) && (cmd[k]|0x20) == 'n' && (cmd[k+1]|0x20) == 'u' && (cmd[k+2]|0x20) == 'l' {
				e := k + 3
				if e == len(cmd) || isSpace(cmd[e]) || cmd[e] == '|' || cmd[e] == '&' || cmd[e] == ';' || cmd[e] == ')' {
					out = append(out, cmd[i:k]...)
					out = append(out, "/dev/null"...)
					i = e
					continue
				}
			}
		}
		out = append(out, cmd[i])
		i++
	}
	return string(out)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
