package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

// RenderPending is what a human reviews before approving, with every
// line of long texts when full, and, with st, what changed since an
// approval the call drifted
// from.
func RenderPending(st *state.Store, p *state.Pending, full bool) string {
	head, body := RenderParts(st, p, full)
	return head + "\n" + body
}

// maxNoteShown bounds a field that only describes a call (Bash's
// description) in the head of its rendering; a longer one is there whole
// in the body.
const maxNoteShown = 240

// RenderParts splits the rendering of p in two: head, what a human must
// see first and keep in view (the call in one line, where it lands, its
// danger lines and warnings, the digest they confirm), and body (the
// changes as a diff and the call in full, which may be long).
func RenderParts(st *state.Store, p *state.Pending, full bool) (head, body string) {
	// Every string of the record goes through the one escaping function,
	// the id and digest too: a record may come from another machine.
	esc := present.EscapeText
	s := fmt.Sprintf("pending %s (%s), seen %s\n", esc(p.ID), esc(StatusOf(st, p, time.Now())), present.FormatTime(p.Seen))
	s += fmt.Sprintf("session: %s\nagent:   %s", esc(p.Session), esc(p.Agent))
	if p.AgentType != "" {
		s += " (" + esc(p.AgentType) + ")"
	}
	if p.Reason != "" {
		s += fmt.Sprintf("\nreason:  %s", esc(p.Reason))
		if p.Detail != "" {
			s += ": " + esc(p.Detail)
		}
	}
	if p.Approved != "" {
		s += "\n         the approved call it resembles: pending " + esc(p.Approved)
	}
	s += "\ncall:    " + present.Summary(p)
	for _, w := range present.PendingDanger(p) {
		s += "\n!!! DANGER: " + esc(w)
	}
	s += "\ndigest: " + esc(p.Digest) + "\n"
	ws := present.Warnings(p.Descriptor)
	// What the hook saw where the call lands (symlinks, .git/, .claude/,
	// executable configuration): recorded with the call.
	var notes []string
	for _, w := range p.Warnings {
		if !slices.Contains(ws, w) {
			notes = append(notes, w)
		}
	}
	if len(notes) > 0 {
		s += fmt.Sprintf("%d WARNING(S): where this call lands:\n", len(notes))
		for _, w := range notes {
			s += "  " + esc(w) + "\n"
		}
	}
	if len(ws) > 0 {
		s += fmt.Sprintf("%d WARNING(S): characters a reviewer could miss:\n", len(ws))
		for _, w := range ws {
			s += "  " + w + "\n"
		}
	}
	// What only describes the call (Bash's description), after what the
	// human must see first and kept short there: the agent chooses it,
	// and the eighty-fourth attack run's 7 KB description, before the
	// DANGER line and the digest, pushed them below the console's first
	// screen with a forged digest and call of its own.
	var whole strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p.Shown)) {
		v := esc(p.Shown[k])
		if len(v) > maxNoteShown {
			fmt.Fprintf(&whole, "note: %s, whole (shown only, not part of the digest): %s\n\n", esc(k), v)
			v = fmt.Sprintf("%s... (%d bytes in all, after the changes below)", v[:maxNoteShown], len(v))
		}
		s += "note:    " + esc(k) + " (shown only, not part of the digest): " + v + "\n"
	}
	more := "loopguard show --full " + esc(p.ID)
	var b strings.Builder
	var kept []byte
	if st != nil {
		kept, _ = st.Snapshot(p.ID)
	}
	if ch := present.Changes(p.Descriptor, full, all.FilesOf(p.Session), kept); ch != "" {
		b.WriteString(ch + "\n")
	}
	if p.Reason == hooks.ReasonTargetDrift && p.Approved != "" && st != nil {
		if before, err := st.Snapshot(p.Approved); err == nil {
			b.WriteString(present.DriftChanges(p.Descriptor, before, full) + "\n")
		} else {
			fmt.Fprintf(&b, "SINCE APPROVAL: no copy of the file as approved was kept (only files up to %d bytes are), so what changed cannot be shown\n\n", state.MaxSnapshot)
		}
	}
	b.WriteString(whole.String())
	rendered := present.Render(p.Descriptor)
	if full {
		rendered = present.RenderFull(p.Descriptor)
	}
	b.WriteString("The exact call:\n" + rendered)
	return s, strings.ReplaceAll(b.String(), "loopguard show --full ID", more)
}
