// Package ticket is loopguard's two-phase enforcement: no decision, no
// run. The hook, having allowed a Bash call, issues a single-use ticket
// for the exact command it allowed and writes a nonce into the command it
// hands back (the agent's updatedInput); the wrapper that stands in front
// of the agent's shell (Claude Code's CLAUDE_CODE_SHELL_PREFIX, gate.go)
// runs a command only on a ticket that matches it. A hook that hung,
// crashed, exited without an answer or was never loaded issued no ticket,
// so nothing runs, and the wrapper says why (ReasonNoDecision).
//
// A ticket binds, under an HMAC keyed from the master key
// (token.LabelTicket): the session, the nonce, the exact command text (the
// capability, project and cwd of a jailed or confined call are written in
// it, and are bound again as fields), the cwd the host runs it in, and an
// expiry of seconds. Tickets live in one directory of the user's state
// (Dir): Claude Code's sandbox mounts it read-only, so inside the sandbox
// a ticket there can only have been written from outside it (by the hook);
// where the wrapper can write there, it verifies the MAC with the key.
//
// The package never prints and never exits; Main (gate.go) is the
// wrapper's process and returns its exit code.
package ticket

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/loopguard/loopguard/fsx"
)

// Reason codes of two-phase enforcement (docs/reasons.md).
const (
	// ReasonNoDecision: the wrapper found no ticket for the command: no
	// hook decided it (it hung, crashed, answered nothing or was not
	// loaded), or the command is not the one the hook decided.
	ReasonNoDecision = "no_decision"
	// ReasonTicketInvalid: a ticket is there but does not hold: forged
	// (its MAC fails), of another session, for another command or cwd.
	ReasonTicketInvalid = "ticket_invalid"
	// ReasonTicketExpired: the ticket's seconds ran out before the
	// command started.
	ReasonTicketExpired = "ticket_expired"
	// ReasonTicketUsed: the ticket ran a command already (or is running
	// one now): a ticket is single use.
	ReasonTicketUsed = "ticket_used"
	// ReasonNoWrapper: the hook cannot prove that the wrapper stands in
	// front of this session's shell (the prefix was unset or replaced,
	// or the hook was not run through it), so it refuses every Bash call.
	ReasonNoWrapper = "no_wrapper"
	// ReasonRanWithoutDecision: PostToolUse saw a Bash call that ran with
	// no ticket on record.
	ReasonRanWithoutDecision = "ran_without_decision"
	// ReasonSandboxExcluded: a project settings file lists
	// sandbox.excludedCommands, which Claude Code runs outside its
	// sandbox whatever the user's settings say, so the hook refuses every
	// Bash call.
	ReasonSandboxExcluded = "sandbox_excluded"
)

// Reasons lists the reason codes of this package.
func Reasons() []string {
	return []string{ReasonNoDecision, ReasonTicketInvalid, ReasonTicketExpired, ReasonTicketUsed, ReasonNoWrapper, ReasonRanWithoutDecision, ReasonSandboxExcluded}
}

// Lifetime is how long a ticket lets its command start. The host runs
// the command right after the hook answers, but not always soon on a busy
// machine: with two-phase enforcement on by default, TestJailSession saw
// a jailed git diff start 33 s after its ticket (load average about 20,
// inside Claude Code's sandbox), refused as expired at 30 s.
const Lifetime = 2 * time.Minute

// MaxCommand bounds a ticket's command (Claude Code's Bash input is far
// smaller in practice).
const MaxCommand = 1 << 20

// maxFile bounds a ticket file.
const maxFile = 2*MaxCommand + 4096

// markerPrefix starts the first line of every command the hook issued a
// ticket for: a bash comment, so it changes nothing the command does.
const markerPrefix = "#loopguard-ticket:"

// nonceLen is the length of a nonce in hex.
const nonceLen = 32

// Ticket is one issued ticket.
type Ticket struct {
	V       int    `json:"v"`
	Session string `json:"session"`
	Nonce   string `json:"nonce"`
	// Command is the exact text the host's shell must evaluate: the
	// marker line, then the command the hook allowed.
	Command string `json:"command"`
	// Capability, Project and Cwd are what the command runs with and
	// where ("" capability: unconfined but for the host's sandbox).
	Capability string `json:"capability,omitempty"`
	Project    string `json:"project,omitempty"`
	Cwd        string `json:"cwd"`
	Expiry     int64  `json:"expiry"` // Unix seconds
	MAC        string `json:"mac"`
}

// Error is a refusal with its reason code.
type Error struct {
	Reason string
	Why    string
}

func (e *Error) Error() string { return e.Reason + ": " + e.Why }

func refuse(reason, format string, a ...any) *Error {
	return &Error{Reason: reason, Why: fmt.Sprintf(format, a...)}
}

// NewNonce is a fresh random nonce.
func NewNonce() (string, error) {
	var b [nonceLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Mark is cmd with the nonce's marker line before it: the command the
// host runs, and the ticket's Command.
func Mark(nonce, cmd string) string { return markerPrefix + nonce + "\n" + cmd }

// Unmark splits a marked command into its nonce and the command after the
// marker; ok is false when cmd carries no well-formed marker.
func Unmark(cmd string) (nonce, rest string, ok bool) {
	if !strings.HasPrefix(cmd, markerPrefix) {
		return "", cmd, false
	}
	line, rest, found := strings.Cut(cmd[len(markerPrefix):], "\n")
	if !found || !validNonce(line) {
		return "", cmd, false
	}
	return line, rest, true
}

func validNonce(s string) bool {
	if len(s) != nonceLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// mac is the ticket's MAC under key: HMAC-SHA256 over a labelled,
// versioned encoding of every field but the MAC, each length-prefixed.
func (t *Ticket) mac(key []byte) string {
	h := hmac.New(sha256.New, key)
	var b bytes.Buffer
	b.WriteString("loopguard ticket v1\x00")
	for _, f := range []string{t.Session, t.Nonce, t.Command, t.Capability, t.Project, t.Cwd, fmt.Sprint(t.Expiry)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		b.Write(n[:])
		b.WriteString(f)
	}
	h.Write(b.Bytes())
	return hex.EncodeToString(h.Sum(nil))
}

// Seal sets the ticket's MAC.
func (t *Ticket) Seal(key []byte) { t.MAC = t.mac(key) }

// verifyMAC reports whether the ticket's MAC holds under key.
func (t *Ticket) verifyMAC(key []byte) bool {
	got, err := hex.DecodeString(t.MAC)
	want, _ := hex.DecodeString(t.mac(key))
	return err == nil && hmac.Equal(got, want)
}

// Dir is the directory tickets live in, below the state directory of the
// user's home as the password database has it: the wrapper reads no
// setting from its environment (a repository's settings can set HOME or
// XDG_STATE_HOME for the agent's shell), so the hook writes where the
// wrapper looks.
func Dir() (string, error) {
	home, err := passwdHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "loopguard", "tickets"), nil
}

// DirUsable reports whether the hook can make and write Dir (under the
// home the password database names, which for a service account such as
// nobody may not exist): Dir, or its nearest existing parent, is a
// writable directory. init turns two-phase enforcement on by default only
// where it is: without it every Bash call would be refused.
func DirUsable() bool {
	dir, err := Dir()
	if err != nil {
		return false
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			return fi.IsDir() && writable(d)
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// Store is a ticket directory.
type Store struct {
	Dir string
	Now func() time.Time
	// Writable, when set, says whether the wrapper can write Dir (a test
	// stands for the host's read-only sandbox with it).
	Writable func(dir string) bool
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) path(nonce string) string     { return filepath.Join(s.Dir, nonce) }
func (s *Store) usedPath(nonce string) string { return filepath.Join(s.Dir, nonce+".used") }

// Issue writes t, sealed under key, and sweeps tickets long expired. The
// directory is made (0700) when missing.
func (s *Store) Issue(t *Ticket, key []byte) error {
	if !validNonce(t.Nonce) || len(t.Command) > MaxCommand {
		return errors.New("failed to issue a ticket: bad nonce or command too long")
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("failed to make the ticket directory: %w", err)
	}
	if fi, err := os.Lstat(s.Dir); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the ticket directory %s is not a private directory", s.Dir)
	}
	t.V = 1
	t.Seal(key)
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	s.sweep()
	return fsx.WriteFile(s.path(t.Nonce), data, 0o600, false)
}

// sweep removes tickets and used records whose expiry passed a while ago
// (best effort, bounded).
func (s *Store) sweep() {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	cut := s.now().Add(-10 * Lifetime)
	for i, e := range ents {
		if i > 4096 {
			return
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cut) {
			_ = os.Remove(filepath.Join(s.Dir, e.Name()))
		}
	}
}

// load reads the ticket for nonce, strictly.
func (s *Store) load(nonce string) (*Ticket, *os.File, error) {
	f, err := os.OpenFile(s.path(nonce), os.O_RDONLY|fsx.NoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxFile {
		f.Close()
		return nil, nil, errors.New("not a regular ticket file")
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		f.Close()
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Ticket
	if err := dec.Decode(&t); err != nil || t.V != 1 || t.Nonce != nonce {
		f.Close()
		return nil, nil, errors.New("a ticket file that does not read as one")
	}
	return &t, f, nil
}

// Used reports whether the ticket for nonce was used (or taken back).
func (s *Store) Used(nonce string) bool {
	_, err := os.Lstat(s.usedPath(nonce))
	return err == nil
}

// WaitClaimed waits, at most d, until the wrapper has claimed the ticket
// for nonce: it marked it used (where it could write the directory) or
// holds its lock (where the host's sandbox mounts the directory
// read-only), and reports whether it did. It returns false at once when
// there is no ticket for nonce. A background call needs it: the host
// reports such a call done (and runs PostToolUse, which spends the
// ticket) when it has started it, which may be before the wrapper, behind
// the host's sandbox, has claimed its ticket: spent first, the command
// never ran (ticket_used).
func (s *Store) WaitClaimed(nonce string, d time.Duration) bool {
	if !validNonce(nonce) {
		return false
	}
	deadline := time.Now().Add(d)
	for {
		if s.Used(nonce) || flockHeld(s.path(nonce)) {
			return true
		}
		if _, err := os.Lstat(s.path(nonce)); err != nil {
			return s.Used(nonce) // claimed between the two looks, or none
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Spend marks the ticket for nonce used, from outside the host's sandbox
// (the hook's PostToolUse): ok is false when there was no ticket for it.
func (s *Store) Spend(nonce string) (ok bool) {
	if !validNonce(nonce) {
		return false
	}
	if err := os.Rename(s.path(nonce), s.usedPath(nonce)); err == nil {
		return true
	}
	// The wrapper spent it already where it could write (Claim).
	return s.Used(nonce)
}
