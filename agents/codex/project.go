package codex

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// Codex names no project to its hooks: the payload's cwd follows the
// command's workdir, which the model chooses, and no variable says where
// the session runs. Its session record does: the first line of the
// transcript Codex writes (transcript_path, under $CODEX_HOME/sessions) is
// {"type":"session_meta","payload":{"id": the session, "cwd": where the
// session runs, ...}} (seen on 0.171.0). sessionProject reads that cwd for
// session, "" when the record is not where Codex keeps it, not this
// session's, or not readable. The sessions directory is guard-critical
// (policy): the agent cannot write a record of its own there.

// maxMetaLine bounds the session record's first line (it carries Codex's
// base instructions, tens of kilobytes).
const maxMetaLine = 1 << 20

func sessionProject(transcript, session string) string {
	if transcript == "" || session == "" || !filepath.IsAbs(transcript) {
		return ""
	}
	home := policy.CodexHomeEnv()
	if home == "" {
		return ""
	}
	sessions := filepath.Join(filepath.Clean(home), "sessions") + string(filepath.Separator)
	if !strings.HasPrefix(filepath.Clean(transcript), sessions) {
		return ""
	}
	f, err := os.OpenFile(transcript, os.O_RDONLY|fsx.NoFollow, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	var line []byte
	buf := make([]byte, 64<<10)
	for len(line) < maxMetaLine {
		n, err := f.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			line = append(line, buf[:i]...)
			break
		}
		line = append(line, buf[:n]...)
		if err != nil {
			break
		}
	}
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			ID        string `json:"id"`
			SessionID string `json:"session_id"`
			Cwd       string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &meta) != nil || meta.Type != "session_meta" {
		return ""
	}
	if meta.Payload.ID != session && meta.Payload.SessionID != session {
		return ""
	}
	if !filepath.IsAbs(meta.Payload.Cwd) {
		return ""
	}
	return filepath.Clean(meta.Payload.Cwd)
}
