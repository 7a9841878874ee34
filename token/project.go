package token

import (
	"path/filepath"
	"strings"
)

// projectPrefix marks a session binding that stands for every session of
// one project.
const projectPrefix = "project:"

// ProjectSession is the session binding of a scoped grant valid in every
// session of the project rooted at dir (Claude Code's CLAUDE_PROJECT_DIR):
// it survives a restart of the client, which starts a new session. No
// session id Claude Code sends has this form (they are UUIDs, or
// agent-prefixed ids such as codex:...).
func ProjectSession(dir string) string {
	return projectPrefix + filepath.Clean(dir)
}

// ProjectOf returns the project dir of a ProjectSession binding.
func ProjectOf(session string) (string, bool) {
	return strings.CutPrefix(session, projectPrefix)
}
