package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Exit codes of the hook. There is no 1: Claude Code lets a call through on
// exit 1.
const (
	ExitOK   = 0
	ExitDeny = 2
)

// MaxReasonLen keeps every string we send under Claude Code's 10,000
// character cap on hook output strings.
const MaxReasonLen = 9000

// DefaultDeadline is how long the hook may take before it denies on its own,
// well under the timeout `loopguard init` registers.
const DefaultDeadline = 5 * time.Second

// ClaudeOptions configures one hook run.
type ClaudeOptions struct {
	// Event, when set (from the registered args), is the event the hook was
	// registered for; a payload naming another event is malformed. It also
	// decides the output format when the payload cannot be read at all.
	Event    string
	Deadline time.Duration
	// NewEngine builds the engine; it runs inside the deadline.
	NewEngine func() (*Engine, error)
}

// RunClaude reads one Claude Code hook payload from stdin and writes the
// decision in Claude Code's format. It never returns anything but ExitOK or
// ExitDeny, and never panics: every failure, and its own deadline, is a deny.
func RunClaude(ctx context.Context, opts ClaudeOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	deadline := opts.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()

	type result struct {
		event string
		dec   Decision
	}
	done := make(chan result, 1)
	go func() {
		ev := opts.Event
		defer func() {
			if r := recover(); r != nil {
				done <- result{ev, Decision{Behavior: Deny, Reason: ReasonInternal,
					Message: fmt.Sprintf("loopguard: internal_error: %v. The call is blocked; the user should report this with `loopguard doctor` output.", r)}}
			}
		}()
		call, dec := decodeStdin(stdin, opts.Event)
		if call == nil {
			// Every decision is audited, an undecodable payload's too.
			if eng, err := opts.NewEngine(); err == nil {
				eng.RecordUndecodable(ev, dec)
			}
			done <- result{ev, dec}
			return
		}
		ev = call.Event
		eng, err := opts.NewEngine()
		if err != nil {
			done <- result{ev, failure(err)}
			return
		}
		done <- result{ev, eng.Decide(ctx, call)}
	}()

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		r = result{opts.Event, Decision{Behavior: Deny, Reason: ReasonDeadline,
			Message: fmt.Sprintf("loopguard: deadline: no decision within %s, so the call is blocked. The user should run `loopguard doctor` (a slow keyring or disk?).", deadline)}}
	}
	return writeClaude(r.event, r.dec, stdout, stderr)
}

// failure maps an engine set-up error to a deny.
func failure(err error) Decision {
	var ke interface{ Hint() string }
	reason := ReasonInternal
	if errors.As(err, &ke) && strings.Contains(err.Error(), "keyring") {
		reason = ReasonKeyring
	}
	return Decision{Behavior: Deny, Reason: reason, Message: fmt.Sprintf("loopguard: %s: %v. The call is blocked; the user should run `loopguard doctor`.", reason, err)}
}

func decodeStdin(stdin io.Reader, event string) (*Call, Decision) {
	data, err := io.ReadAll(io.LimitReader(stdin, MaxPayload+1))
	if err != nil {
		return nil, malformed("failed to read the payload: " + err.Error())
	}
	if len(data) > MaxPayload {
		return nil, malformed(fmt.Sprintf("payload larger than %d bytes", MaxPayload))
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, malformed("empty payload")
	}
	call, err := DecodeClaude(data)
	if err != nil {
		return nil, malformed(err.Error())
	}
	if event != "" && call.Event != event {
		return nil, malformed(fmt.Sprintf("registered for %s but the payload says %s", event, call.Event))
	}
	return call, Decision{}
}

func malformed(msg string) Decision {
	return Decision{Behavior: Deny, Reason: ReasonMalformed, Message: "loopguard: malformed_input: " + msg}
}

// clip makes s safe to send and bounds it. The engine escapes every
// agent-chosen string it puts in a message (EscapeText, as the CLI does);
// clip is the net under it: any control, invisible or non-ASCII character
// left (ESC, BEL, bidi...) is escaped the same way, line by line. It leaves
// backslashes alone, so text escaped once is not escaped twice.
func clip(s string) string {
	s = escapeLines(s)
	if len(s) <= MaxReasonLen {
		return s
	}
	return s[:MaxReasonLen] + "\n(cut at " + fmt.Sprint(MaxReasonLen) + " bytes; the full call is in `loopguard show`)"
}

// escapeLines escapes what EscapeText escapes in each line of s, but the
// backslash, keeping the line breaks.
func escapeLines(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, part := range strings.SplitAfter(l, `\`) {
			b.WriteString(strings.ReplaceAll(EscapeText(part), `\\`, `\`))
		}
	}
	return b.String()
}

func writeClaude(event string, d Decision, stdout, stderr io.Writer) int {
	msg := clip(d.Message)
	var out map[string]any
	code := ExitOK
	switch event {
	case PermissionRequest:
		switch d.Behavior {
		case Allow:
			dec := map[string]any{"behavior": "allow"}
			if d.UpdatedInput != nil {
				dec["updatedInput"] = d.UpdatedInput
			}
			out = hso(event, map[string]any{"decision": dec})
		case Deny:
			out = hso(event, map[string]any{"decision": map[string]any{"behavior": "deny", "message": msg}})
		default:
			// Ask and abstain: no decision, so Claude Code shows its dialog.
			return ExitOK
		}
	case PostToolUse:
		if d.Behavior != Alarm {
			return ExitOK
		}
		out = map[string]any{"systemMessage": clip(d.SystemMessage)}
	case PreToolUse, "":
		if d.Behavior == Abstain && event == PreToolUse {
			return ExitOK
		}
		beh := d.Behavior
		if beh != Allow && beh != Ask {
			beh = Deny
		}
		out = hso(PreToolUse, map[string]any{"permissionDecision": beh, "permissionDecisionReason": msg})
		if beh == Allow && d.UpdatedInput != nil {
			out["hookSpecificOutput"].(map[string]any)["updatedInput"] = d.UpdatedInput
			if d.Context != "" {
				out["hookSpecificOutput"].(map[string]any)["additionalContext"] = d.Context
			}
		}
		if beh == Deny {
			code = ExitDeny
		}
	default:
		if d.Behavior != Deny {
			return ExitOK
		}
		out = hso(PreToolUse, map[string]any{"permissionDecision": "deny", "permissionDecisionReason": msg})
		code = ExitDeny
	}
	b, err := json.Marshal(out)
	if err != nil {
		b = []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"loopguard: internal_error"}}`)
		code = ExitDeny
	}
	_, _ = stdout.Write(append(b, '\n'))
	if code == ExitDeny {
		_, _ = io.WriteString(stderr, msg+"\n")
	}
	return code
}

func hso(event string, fields map[string]any) map[string]any {
	fields["hookEventName"] = event
	return map[string]any{"hookSpecificOutput": fields}
}
