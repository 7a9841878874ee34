// Package agents runs loopguard's hook for every coding agent it speaks.
//
// The decision engine (hooks.Engine) knows no agent. Each agent has an
// adapter package (agents/claude, agents/codex, agents/gemini,
// agents/copilot, agents/cursor) that decodes the agent's payload into the
// engine's Call, mapping its tool names onto the same tool classes and rule
// grammar (Bash, Edit, Write, Read, WebFetch, mcp__server__tool), and
// encodes the engine's Decision in the agent's exact output contract. Run
// holds one hook call to a deadline and turns every failure into the
// agent's own deny, because Codex and Gemini CLI (and Copilot CLI on a
// timeout) let a call through when a hook fails.
//
// The package never prints but through the writers it is given, and never
// exits.
package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/token"
)

// Exit codes of a hook run. There is no 1: Claude Code lets a call through
// on exit 1 (and Codex and Gemini CLI on any failure).
const (
	ExitOK   = 0
	ExitDeny = 2
)

// DefaultDeadline is how long a hook run may take before it denies on its
// own, well under the timeout `loopguard init` registers.
const DefaultDeadline = 5 * time.Second

// MaxPayload bounds a hook payload. A Write carries a whole file, so it is
// generous; anything larger is denied as malformed.
const MaxPayload = token.MaxJSONSize

// Adapter is one agent's hook contract.
type Adapter interface {
	// Name is the agent's name as `loopguard hook <name>` spells it.
	Name() string
	// Decode turns one payload, decoded once by Run (Object), into the
	// engine's call; it must not change m. event is the event
	// the hook was registered for, in the agent's own spelling ("" when the
	// registration does not say); it matters for agents whose payload does
	// not name its event (Copilot's camelCase form). It returns the event as
	// the agent spells it, for Encode.
	Decode(m map[string]any, event string) (call *hooks.Call, agentEvent string, err error)
	// Encode writes d as the answer to agentEvent ("" when the payload could
	// not be read: then it must be a deny) and returns the exit code. It
	// never writes an answer the agent would take as "no decision" for a
	// deny.
	Encode(agentEvent string, d hooks.Decision, stdout, stderr io.Writer) int
}

// Options configure one hook run.
type Options struct {
	// Adapter decodes and encodes. When nil, Detect picks one from the
	// decoded payload (it must not change it), and Fallback encodes when it
	// cannot.
	Adapter  Adapter
	Detect   func(m map[string]any) (Adapter, error)
	Fallback Adapter
	// Event is the event the hook was registered for, in the agent's
	// spelling ("" when not given).
	Event    string
	Deadline time.Duration
	// BeforeRead, when set, runs before the payload is read, inside the
	// deadline and the panic recovery (hookmain reads the configuration
	// there, and under the Vault backend may hand stdin, unread, to another
	// binary). Its failures reach the decision through NewEngine.
	BeforeRead func()
	// NewEngine builds the engine; it runs inside the deadline.
	NewEngine func() (*hooks.Engine, error)
	// Record records an answer the engine could not: the run's deadline
	// (the engine may be stuck on what the audit log needs), an engine that
	// could not be built. call is nil when the payload was not decoded,
	// pending is the pending record the engine made ("" when none). It runs
	// after the answer is decided and gets RecordTime.
	Record func(call *hooks.Call, event, pending string, d hooks.Decision)
	// Before, when set, sees the decoded call before the engine does: it
	// may change the call (a PostToolUse's Bash command loses the
	// ticket's marker line) and answer it itself (a non-nil decision,
	// which it records). After, when set, may change the engine's
	// decision (an allowed Bash call gets its ticket, package ticket).
	Before func(ctx context.Context, eng *hooks.Engine, call *hooks.Call) *hooks.Decision
	After  func(ctx context.Context, eng *hooks.Engine, call *hooks.Call, d hooks.Decision) hooks.Decision
}

// RecordTime bounds Options.Record: the answer waits for it no longer.
const RecordTime = time.Second

// Run reads one payload from stdin, decides it and writes the answer. It
// never panics, and every failure, as well as its own deadline, is the
// agent's deny.
func Run(ctx context.Context, opts Options, stdin io.Reader, stdout, stderr io.Writer) int {
	deadline := opts.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()

	type result struct {
		ad    Adapter
		event string
		dec   hooks.Decision
	}
	prog := &hooks.Progress{}
	done := make(chan result, 1)
	go func() {
		r := result{ad: opts.Adapter, event: opts.Event}
		defer func() {
			if p := recover(); p != nil {
				r.dec = hooks.Decision{Behavior: hooks.Deny, Reason: hooks.ReasonInternal,
					Message: fmt.Sprintf("loopguard: internal_error: %v. The call is blocked; the user should report this with `loopguard doctor` output.", p)}
				recordUnanswered(prog, opts, prog.Call(), r.event, r.dec)
			}
			done <- r
		}()
		if opts.BeforeRead != nil {
			opts.BeforeRead()
		}
		data, err := io.ReadAll(io.LimitReader(stdin, MaxPayload+1))
		var msg string
		switch {
		case err != nil:
			msg = "failed to read the payload: " + err.Error()
		case len(data) > MaxPayload:
			msg = fmt.Sprintf("payload larger than %d bytes", MaxPayload)
		case len(strings.TrimSpace(string(data))) == 0:
			msg = "empty payload"
		}
		// The payload is decoded once, here; detection and the adapter
		// read the same object.
		var m map[string]any
		if msg == "" {
			if m, err = Object(data); err != nil {
				msg = err.Error()
			}
		}
		if msg == "" && r.ad == nil {
			if opts.Detect == nil {
				msg = "no adapter"
			} else if r.ad, err = opts.Detect(m); err != nil {
				msg = err.Error()
			}
		}
		var call *hooks.Call
		if msg == "" {
			call, r.event, err = r.ad.Decode(m, opts.Event)
			if err != nil {
				msg = err.Error()
			}
		}
		if msg != "" {
			r.dec = hooks.Malformed(msg)
			if eng, err := opts.NewEngine(); err == nil {
				if !prog.Answered() {
					eng.RecordUndecodable(r.event, r.dec)
				}
			} else {
				recordUnanswered(prog, opts, nil, r.event, r.dec)
			}
			return
		}
		prog.SetCall(call)
		eng, err := opts.NewEngine()
		if err != nil {
			r.dec = hooks.SetupFailure(err)
			recordUnanswered(prog, opts, call, r.event, r.dec)
			return
		}
		eng.Progress = prog
		if opts.Before != nil {
			if d := opts.Before(ctx, eng, call); d != nil {
				r.dec = *d
				return
			}
		}
		r.dec = eng.Decide(ctx, call)
		if opts.After != nil {
			r.dec = opts.After(ctx, eng, call, r.dec)
		}
	}()

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		r = result{ad: opts.Adapter, event: opts.Event, dec: hooks.Decision{Behavior: hooks.Deny, Reason: hooks.ReasonDeadline,
			Message: fmt.Sprintf("loopguard: deadline: no decision within %s, so the call is blocked. The user should run `loopguard doctor` (a slow keyring or disk?).", deadline)}}
		call, pending := prog.Answer(r.dec)
		event := opts.Event
		if call != nil {
			event = call.Event
		}
		record(opts, call, event, pending, r.dec)
	}
	if r.ad == nil {
		r.ad = opts.Fallback
	}
	if r.ad == nil {
		return Universal(r.dec, stdout, stderr)
	}
	return r.ad.Encode(r.event, r.dec, stdout, stderr)
}

// record runs opts.Record for d, at most RecordTime.
func record(opts Options, call *hooks.Call, event, pending string, d hooks.Decision) {
	if opts.Record == nil {
		return
	}
	recordAfter(opts, call, event, pending, d)
}

// recordUnanswered records d unless the run already answered without it
// (its deadline): then nobody received d.
func recordUnanswered(prog *hooks.Progress, opts Options, call *hooks.Call, event string, d hooks.Decision) {
	if !prog.Answered() {
		record(opts, call, event, "", d)
	}
}

func recordAfter(opts Options, call *hooks.Call, event, pending string, d hooks.Decision) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		opts.Record(call, event, pending, d)
	}()
	select {
	case <-done:
	case <-time.After(RecordTime):
	}
}

// Universal writes a deny that every agent loopguard knows blocks on: the
// reason as plain text on stdout and stderr, and exit 2. It is for a hook
// that does not know which agent runs it. Anything but a deny is written as
// nothing at all (exit 0).
func Universal(d hooks.Decision, stdout, stderr io.Writer) int {
	if d.Behavior != hooks.Deny {
		return ExitOK
	}
	msg := Reason(d)
	_, _ = io.WriteString(stdout, msg+"\n")
	_, _ = io.WriteString(stderr, msg+"\n")
	return ExitDeny
}

// Output is how a host reads an answer written as JSON on stdout.
type Output struct {
	// Deny is the host's deny, written in place of an answer that cannot
	// be marshalled (it never should).
	Deny string
	// ExitDeny: the host also takes exit 2, with the reason on stderr, as
	// a deny (Claude Code, Copilot, Cursor); the answer written in place
	// of one that cannot be marshalled exits so. The other hosts read the
	// JSON alone, exit 0.
	ExitDeny bool
}

// HookSpecificDeny is a deny in Claude Code's hookSpecificOutput shape, which
// Claude Code, Codex and Qwen Code read.
const HookSpecificDeny = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"loopguard: internal_error"}}`

// HookSpecific is Claude Code's hookSpecificOutput as Codex and Qwen Code
// read it: only the fields Codex accepts (its parser is strict), each
// written only when set but the event's name.
type HookSpecific struct {
	HookEventName            string         `json:"hookEventName"`
	Decision                 *Behavior      `json:"decision,omitempty"`
	PermissionDecision       string         `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string         `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             map[string]any `json:"updatedInput,omitempty"`
	AdditionalContext        string         `json:"additionalContext,omitempty"`
}

// Behavior is a PermissionRequest answer: Claude Code's decision (inside
// HookSpecific for Codex), and Copilot's whole answer.
type Behavior struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// HookSpecificOutput is h as the whole answer.
func HookSpecificOutput(h HookSpecific) any {
	return struct {
		HookSpecificOutput HookSpecific `json:"hookSpecificOutput"`
	}{h}
}

// PreToolUseDeny is the PreToolUse deny, with reason, in Claude Code's
// hookSpecificOutput shape (HookSpecificDeny's, with another reason).
func PreToolUseDeny(reason string) any {
	return HookSpecificOutput(HookSpecific{HookEventName: hooks.PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason})
}

// Write writes out as one line of JSON on stdout and returns the exit code:
// ExitDeny, with reason on stderr, when exit2 (a deny the host reads so too),
// else ExitOK.
func (o Output) Write(out any, exit2 bool, reason string, stdout, stderr io.Writer) int {
	b, err := json.Marshal(out)
	if err != nil {
		b, exit2 = []byte(o.Deny), o.ExitDeny
	}
	_, _ = stdout.Write(append(b, '\n'))
	if !exit2 {
		return ExitOK
	}
	_, _ = io.WriteString(stderr, reason+"\n")
	return ExitDeny
}

// Reason is what the agent may see of d (ForAgent: never an ask's
// rendering), clipped, and never empty (an empty reason makes Codex treat
// a deny as a failed hook, which lets the call through).
func Reason(d hooks.Decision) string {
	msg := strings.TrimSpace(present.Clip(d.ForAgent()))
	if msg == "" {
		msg = "loopguard: " + d.Reason
		if d.Reason == "" {
			msg = "loopguard: blocked"
		}
	}
	return msg
}

// MalformedError is a payload an adapter refuses (the engine's own, which
// it also answers for a tool input it cannot read).
type MalformedError = hooks.MalformedError

// Errorf is a MalformedError.
func Errorf(format string, args ...any) error {
	return &MalformedError{Msg: fmt.Sprintf(format, args...)}
}

// Object decodes payload strictly (token.Decode: duplicate keys, invalid
// UTF-8 and lone surrogates are malformed) and requires a JSON object.
func Object(payload []byte) (map[string]any, error) {
	v, err := token.Decode(payload)
	if err != nil {
		return nil, Errorf("%s", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf("payload is not a JSON object")
	}
	return m, nil
}

// String reads the string field key of m. A present field that is not a
// string, or longer than token.MaxFieldLen, is malformed; so is a missing or
// empty one when required.
func String(m map[string]any, key string, required bool) (string, error) {
	return stringField(m, key, required, false)
}

// stringField is String; with nullMalformed a null is a field that is not
// a string, not a missing one (StrictStrings).
func stringField(m map[string]any, key string, required, nullMalformed bool) (string, error) {
	raw, present := m[key]
	if !present || raw == nil && !nullMalformed {
		if required {
			return "", Errorf("missing %s", key)
		}
		return "", nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", Errorf("%s is not a string", key)
	}
	if required && s == "" {
		return "", Errorf("empty %s", key)
	}
	if len(s) > token.MaxFieldLen {
		return "", Errorf("%s longer than %d bytes", key, token.MaxFieldLen)
	}
	return s, nil
}

// EventField reads the event a payload names in its field key, which must
// be the event the hook was registered for when the registration names one
// (registered, "" when it does not): a payload for another event is
// malformed.
func EventField(m map[string]any, key, registered string) (string, error) {
	ev, err := String(m, key, true)
	if err != nil {
		return "", err
	}
	return ev, SameEvent(registered, ev)
}

// SameEvent is nil when the payload's event is the registered one (or the
// registration names none), else the malformed payload's error.
func SameEvent(registered, said string) error {
	if registered != "" && said != registered {
		return Errorf("registered for %s but the payload says %s", registered, said)
	}
	return nil
}

// Field is one string field of a payload, read into Dst by Strings.
type Field struct {
	Key      string
	Dst      *string
	Required bool
}

// ClaudeFields are the string fields of a payload in Claude Code's shape
// (Claude Code's own and Codex's), read into c: the event, the session id
// (into session), the tool and the cwd, and the optional agent id and
// type, call id and permission mode.
func ClaudeFields(c *hooks.Call, session *string) []Field {
	return []Field{
		{Key: "hook_event_name", Dst: &c.Event, Required: true},
		{Key: "session_id", Dst: session, Required: true},
		{Key: "tool_name", Dst: &c.ToolName, Required: true},
		{Key: "cwd", Dst: &c.Cwd, Required: true},
		{Key: "agent_id", Dst: &c.AgentID},
		{Key: "agent_type", Dst: &c.AgentType},
		{Key: "tool_use_id", Dst: &c.ToolUseID},
		{Key: "permission_mode", Dst: &c.PermissionMode},
	}
}

// Strings reads each field with String, stopping at the first that is
// malformed.
func Strings(m map[string]any, fields ...Field) error { return readStrings(m, false, fields) }

// StrictStrings is Strings for a host that never sends null (Claude Code):
// a null field is malformed, not missing.
func StrictStrings(m map[string]any, fields ...Field) error { return readStrings(m, true, fields) }

func readStrings(m map[string]any, nullMalformed bool, fields []Field) error {
	for _, f := range fields {
		s, err := stringField(m, f.Key, f.Required, nullMalformed)
		if err != nil {
			return err
		}
		*f.Dst = s
	}
	return nil
}

// InputObject reads a tool input: an object, or (when text is true, for
// hosts that send it so) a JSON text holding one, decoded strictly.
func InputObject(raw any, what string, text bool) (map[string]any, error) {
	switch v := raw.(type) {
	case map[string]any:
		return v, nil
	case string:
		if text {
			m, err := Object([]byte(v))
			if err != nil {
				return nil, Errorf("%s: %v", what, err)
			}
			return m, nil
		}
	}
	return nil, Errorf("%s missing or not an object", what)
}

// Session binds a host's session id to the host: grants minted for one
// agent's session never verify in another agent's session of the same id.
func Session(agent, id string) string { return agent + ":" + id }

// Finish checks what every adapter's call must satisfy: an event, a session,
// a tool, an absolute cwd, an input, and no agent or session id that a grant
// reserves ("main", "*", "type:...").
func Finish(c *hooks.Call) (*hooks.Call, error) {
	switch {
	case c.Event == "":
		return nil, Errorf("missing event")
	case c.SessionID == "":
		return nil, Errorf("missing session id")
	case c.ToolName == "":
		return nil, Errorf("missing tool name")
	case len(c.ToolName) > token.MaxFieldLen:
		return nil, Errorf("tool name longer than %d bytes", token.MaxFieldLen)
	case c.ToolInput == nil:
		return nil, Errorf("missing tool input")
	case !filepath.IsAbs(c.Cwd):
		return nil, Errorf("cwd %q is not an absolute path", c.Cwd)
	}
	if c.AgentID == token.MainAgent || c.AgentID == token.Any || strings.HasPrefix(c.AgentID, "type:") ||
		c.SessionID == token.Any || strings.HasSuffix(c.SessionID, ":"+token.Any) {
		return nil, Errorf("reserved agent or session id")
	}
	c.Cwd = filepath.Clean(c.Cwd)
	return c, nil
}

// BeforeAfter starts the call of a host with one event before a call, which
// runs the input an allow gives back (Rewrite), and one after it: the event
// the payload names in key, the registered one when the registration names
// one (see EventField), is the engine's PreToolUse or PostToolUse; any
// other is malformed, named as host's.
func BeforeAfter(m map[string]any, key, registered, before, after, host string) (*hooks.Call, string, error) {
	ev, err := EventField(m, key, registered)
	if err != nil {
		return nil, registered, err
	}
	switch ev {
	case before:
		return &hooks.Call{Event: hooks.PreToolUse, Rewrite: true}, ev, nil
	case after:
		return &hooks.Call{Event: hooks.PostToolUse}, ev, nil
	}
	return nil, ev, Errorf("unknown %s event %q", host, ev)
}

// Keys name where a host's payload holds what every call has: the session
// (bound to Agent: Session), the working directory, the tool and its input.
type Keys struct {
	Agent                     string
	Session, Cwd, Tool, Input string
}

// ClaudeKeys are the keys of a payload in Claude Code's shape (session_id,
// cwd, tool_name, tool_input), which Gemini CLI and Qwen Code keep.
func ClaudeKeys(agent string) Keys {
	return Keys{Agent: agent, Session: "session_id", Cwd: "cwd", Tool: "tool_name", Input: "tool_input"}
}

// Read reads into c the session, the cwd and the tool, each a required
// string, then the host's other fields (more), with Strings.
func (k Keys) Read(c *hooks.Call, m map[string]any, more ...Field) error {
	var sess string
	if err := Strings(m, append([]Field{{Key: k.Session, Dst: &sess, Required: true},
		{Key: k.Cwd, Dst: &c.Cwd, Required: true}, {Key: k.Tool, Dst: &c.ToolName, Required: true}}, more...)...); err != nil {
		return err
	}
	c.SessionID = Session(k.Agent, sess)
	return nil
}

// Call ends a decoder: it reads the call's fields (Read), then its input
// (Mapped).
func (k Keys) Call(c *hooks.Call, m map[string]any, mapTool func(*hooks.Call) error, more ...Field) (*hooks.Call, error) {
	if err := k.Read(c, m, more...); err != nil {
		return nil, err
	}
	return k.Mapped(c, m, mapTool)
}

// Mapped reads the call's input (an object), whose tool mapTool maps onto
// the engine's, and checks the call (Finish).
func (k Keys) Mapped(c *hooks.Call, m map[string]any, mapTool func(*hooks.Call) error) (*hooks.Call, error) {
	in, err := InputObject(m[k.Input], k.Input, false)
	if err != nil {
		return nil, err
	}
	c.ToolInput = in
	if err := mapTool(c); err != nil {
		return nil, err
	}
	return Finish(c)
}

// Abs makes a path the agent gave absolute against cwd (the host resolves
// relative paths against its working directory). "" stays "".
func Abs(cwd, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cwd, p)
}

// Shell makes c, a host's shell tool, the engine's Bash, run in the
// directory its input names in field (relative to the cwd): the command
// runs there, so it is analysed there. An absent, null or empty field
// leaves the cwd; one that is not a string is malformed.
func Shell(c *hooks.Call, field string) error {
	if dir, ok := c.ToolInput[field]; ok && dir != nil {
		s, ok := dir.(string)
		if !ok {
			return Errorf("%s %s is not a string", c.ToolName, field)
		}
		if s != "" {
			c.Cwd = filepath.Clean(Abs(c.Cwd, s))
		}
	}
	c.ToolName = "Bash"
	return nil
}

// FileTool makes c the engine's tool on the file its input names in from,
// whose absolute path the input gains as key (WithPath). A call that names
// no file there is malformed.
func FileTool(c *hooks.Call, from, key, tool string) error {
	in, ok := WithPath(c.ToolInput, from, key, c.Cwd)
	if !ok {
		return Errorf("%s %s is not a string", c.ToolName, from)
	}
	c.ToolName, c.ToolInput = tool, in
	return nil
}

// ReadOnly makes c, a host's tool that only reads (or lists, searches, or
// keeps the session's own notes in memory), the engine's read-only tool
// named tool, whose read-only fast path abstains unless it reads what the
// guard stands on (the paths its policy row reads). values are what the host's input
// says for each field the engine reads the paths from ("path",
// "file_path", "pattern", "glob": a nil or absent value is none), as the
// host names them (relative, or with a leading ~, which the engine
// resolves as the host does); they are copied into the input in place of
// anything the host's own input held under those names, so that the
// engine judges what the host reads. One that is not a string is
// malformed; so is a tool the engine does not take as read-only.
func ReadOnly(c *hooks.Call, tool string, values map[string]any) error {
	if policy.ClassOf(tool) != policy.ReadOnly {
		return Errorf("%s is not a read-only tool", tool)
	}
	in := make(map[string]any, len(c.ToolInput)+len(values))
	for k, v := range c.ToolInput {
		in[k] = v
	}
	fields := policy.ToolOf(tool).ReadPaths
	for k := range values {
		if !slices.ContainsFunc(fields, func(f policy.PathField) bool { return f.Name == k }) {
			return Errorf("%s reads no path from %s", tool, k)
		}
	}
	for _, f := range fields {
		switch v := values[f.Name].(type) {
		case nil:
			delete(in, f.Name)
		case string:
			in[f.Name] = v
		default:
			return Errorf("%s: the path it reads (%s) is not a string", c.ToolName, f.Name)
		}
	}
	c.ToolName, c.ToolInput = tool, in
	return nil
}

// SamePath refuses an input that names its file in more than one of
// fields (the one the host's tool reads, and fields another host's tool
// would read): the hook judges one, the client may open another, so
// where two are present they must be strings naming the same path
// (relative ones taken against cwd). The ninety-second attack run had
// Copilot read ~/.ssh/id_rsa from path while the hook judged the
// project's file named in file_path. Absent or null fields are none; an
// input with one path, or none, passes.
func SamePath(tool string, in map[string]any, cwd string, fields ...string) error {
	var first, firstPath string
	for _, f := range fields {
		v, ok := in[f]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return Errorf("%s %s is not a string", tool, f)
		}
		p := filepath.Clean(Abs(cwd, s))
		if first == "" {
			first, firstPath = f, p
			continue
		}
		if p != firstPath || s == "" {
			return Errorf("%s names its file twice, %s %q and %s %q: the client reads only one of them, so what it opens may not be what loopguard judged; send the tool's own field alone", tool, first, in[first], f, s)
		}
	}
	return nil
}

// WithPath returns a copy of in with key set to the absolute form of the
// path held in from (relative paths are taken against cwd). The original
// fields stay, so the digest still covers the complete input. It reports
// false when from is missing or not a string.
func WithPath(in map[string]any, from, key, cwd string) (map[string]any, bool) {
	p, ok := in[from].(string)
	if !ok || p == "" {
		return in, false
	}
	return With(in, key, Abs(cwd, p)), true
}

// With returns a copy of in with key set to v: the original fields stay,
// so the digest still covers the complete input.
func With(in map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	out[key] = v
	return out
}
