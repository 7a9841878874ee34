// Package corpus is the format of a corpus of shell commands that coding
// agents really sent (testdata/agentcmds): one JSON object a line, each a
// distinct command with where it was found. It reads and writes that
// format, finds commands in the session logs agents and their users write
// (extract.go), and tells a command's shape: compound, cd, pipes
// (shape.go). bench/cmd/agentcorpus builds a corpus from its sources;
// bench/cmd/decisions measures how many of its commands loopguard holds.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/loopguard/loopguard/fsx"
)

// Entry is one command of a corpus.
type Entry struct {
	// Cmd is the command exactly as the agent sent it: the Bash tool's
	// command string, or a shell tool's script (see extract.go).
	Cmd string `json:"cmd"`
	// Agent is the agent that sent it: claude-code, codex, opencode,
	// cursor, gemini-cli, ...
	Agent string `json:"agent"`
	// Source is the repository the log was committed to
	// ("github.com/owner/name"), Path the log's path in it and Commit the
	// first commit (oldest first) where the command appears.
	Source string `json:"source"`
	Path   string `json:"path"`
	Commit string `json:"commit"`
	// License is the SPDX identifier of the repository's licence, or
	// "none" when it states none.
	License string `json:"license"`
	// Format is how the log is written (a Format* constant).
	Format string `json:"format,omitempty"`
	// Cwd is the agent's working directory when it sent the command, as
	// the log says ("" when it does not).
	Cwd string `json:"cwd,omitempty"`
	// Shell is the shell that ran the command when it is not bash-like
	// ("powershell"); "" means bash or a POSIX shell.
	Shell string `json:"shell,omitempty"`
	// Shape lists what the command is made of (shape.go): compound, pipe,
	// and, or, list, cd, redirect, subst, ... Recorded when the corpus is
	// built; Measure recomputes it.
	Shape []string `json:"shape,omitempty"`
}

// MaxLine bounds one line of a corpus file (a command and its provenance).
const MaxLine = 1 << 20

// ErrEmpty is returned by Read for a corpus without any command.
var ErrEmpty = errors.New("corpus has no command")

// Read reads a corpus: JSON lines of Entry, blank lines skipped. Only cmd
// is required (a corpus someone else built may carry less provenance);
// unknown fields are ignored. A line that is not an object with a
// non-empty, valid UTF-8 cmd is an error naming the line.
func Read(r io.Reader) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), MaxLine)
	var out []Entry
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if e.Cmd == "" {
			return nil, fmt.Errorf("line %d: no cmd", n)
		}
		if !utf8.ValidString(e.Cmd) {
			return nil, fmt.Errorf("line %d: cmd is not valid UTF-8", n)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ErrEmpty
	}
	return out, nil
}

// Write writes entries as JSON lines, without HTML escaping (a command's
// bytes stay readable: > & <).
func Write(w io.Writer, entries []Entry) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range entries {
		if err := enc.Encode(&entries[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadFile reads the corpus in the file at path (Read); its errors name
// the file.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// WriteFile writes entries (Write) to the file at path, atomically,
// making its directory when missing.
func WriteFile(path string, entries []Entry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Write(&b, entries); err != nil {
		return err
	}
	return fsx.WriteFile(path, b.Bytes(), 0o644, false)
}

// Dedup keeps the first entry of each distinct command (exact bytes).
func Dedup(entries []Entry) []Entry {
	seen := make(map[string]bool, len(entries))
	out := entries[:0:0]
	for _, e := range entries {
		if seen[e.Cmd] {
			continue
		}
		seen[e.Cmd] = true
		out = append(out, e)
	}
	return out
}
