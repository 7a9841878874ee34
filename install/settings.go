// Package install registers loopguard as a Claude Code hook in a settings
// file, removes exactly that registration again, and reads the hooks a
// settings file registers (for `loopguard doctor`).
//
// A settings file is edited as an ordered tree whose scalars keep their
// source text: everything that is not loopguard's stays as it was (key order,
// numbers, escapes); only whitespace is normalised to the file's own indent
// unit. Merge and Unmerge are pure; Apply and Remove do the file work:
// symlinks and read-only files are refused, writes are atomic, and the
// original bytes are kept in a backup record so that Remove restores them
// exactly when nothing else changed in between.
package install

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// The events loopguard registers for.
const (
	PreToolUse        = "PreToolUse"
	PermissionRequest = "PermissionRequest"
	PostToolUse       = "PostToolUse"
	// PostToolUseFailure is PostToolUse for a call that failed (a Bash
	// exit code other than 0): Claude Code sends such a call there, not
	// to PostToolUse, with the failure's text as "error".
	PostToolUseFailure = "PostToolUseFailure"
	// SessionEnd is the session's end (the user's /exit, /clear...):
	// Claude Code stops the session's background calls first, and the hook
	// then sweeps for a launch it killed (hookmain's sessionEnd).
	SessionEnd = hooks.SessionEnd
)

// Events are registered in this order.
var Events = []string{PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure, SessionEnd}

// Later are the events of Events an older init did not register: a
// registration without them still runs loopguard on every call
// (CoversEvents), so init adds no second one beside a plugin or managed
// settings that lack them; doctor says to bring it up to date (LaterWhy).
var Later = []string{PostToolUseFailure, SessionEnd}

// LaterWhy is what a registration without the event of Later misses, for
// doctor.
var LaterWhy = map[string]string{
	PostToolUseFailure: "Claude Code sends a call whose command failed there, so loopguard does not check that what ran is what was approved, nor tell the agent what the jail refused",
	SessionEnd:         "Claude Code stops the session's background calls when the session ends, and loopguard does not sweep for one killed before its own sweep: what it left in the project stays there until the next call",
}

// EventList is Events as a sentence's list ("A, B and C").
func EventList() string {
	return strings.Join(Events[:len(Events)-1], ", ") + " and " + Events[len(Events)-1]
}

// After reports whether event comes after what it concerns has run (a
// call's PostToolUse, PostToolUseFailure; the session's SessionEnd): it
// holds nothing, so it is registered without a wait, and its matcher
// guards no tool.
func After(event string) bool {
	return event == PostToolUse || event == PostToolUseFailure || event == SessionEnd
}

// DefaultMatcher reaches every tool, unknown future ones included ("*" is
// Claude Code's match-all); loopguard itself decides which tools run
// without an approval (policy.ClassOf).
const DefaultMatcher = "*"

// OnFailureBlock makes Claude Code block the call when the hook cannot start,
// times out or exits with an unexpected code (Claude Code 2.1.295 and later).
const OnFailureBlock = "block"

// HeldStatus is the spinner text Claude Code shows in the agent's own
// window while the hook runs (the handler's statusMessage): for a call the
// hook holds, all the while it waits, so the human is told what to do
// where they are looking. It reads true for a call decided at once too.
const HeldStatus = "loopguard: if held, approve it in `loopguard review`"

// maxWait bounds --wait: Claude Code's default hook timeout is 10 minutes.
const maxWait = time.Hour

// Options say what to register.
type Options struct {
	Binary   string        // absolute path of the loopguard binary
	Mode     string        // enforce, ask or audit ("" means enforce)
	Wait     time.Duration // hold calls until a human decides, at most this long (0: no wait)
	Deadline time.Duration // the hook's own deadline (agents.DefaultDeadline)
	Matcher  string        // tool matcher ("" means DefaultMatcher)
	Sandbox  *Sandbox      // Claude Code's OS sandbox for Bash (nil: left as it is; see sandbox.go)
	// NoHooks registers no hook: another layer already runs loopguard
	// (its plugin, or managed settings), and a second registration would
	// run the hook twice for every call. loopguard's handlers in the file
	// are removed; the sandbox is still merged.
	NoHooks bool
	// Managed writes Claude Code's managed settings (managed.go): the
	// hooks, and the switches that keep every other layer from taking
	// them off.
	Managed bool
	// Ticket is two-phase enforcement (package ticket): loopguard's
	// wrapper (Wrapper) written as the env's CLAUDE_CODE_SHELL_PREFIX,
	// and the hooks registered in shell form with --ticket, so that
	// Claude Code runs them through it.
	Ticket bool
}

// Wrapper is the wrapper a Ticket registration sets as the prefix: the
// launcher beside the hook's binary ("" without Ticket).
func (o Options) Wrapper() string {
	if !o.Ticket {
		return ""
	}
	return policy.Launcher(o.Binary)
}

// PrefixEnv is the variable through which Claude Code runs every Bash
// command, shell-form hook and stdio MCP server (Options.Wrapper).
const PrefixEnv = "CLAUDE_CODE_SHELL_PREFIX"

func (o Options) check() error {
	if !filepath.IsAbs(o.Binary) {
		return fmt.Errorf("binary path %q is not absolute", o.Binary)
	}
	if o.Mode != "" {
		if _, err := register.ParseArgs([]string{"--mode", o.Mode}); err != nil {
			return fmt.Errorf("unknown mode %q (want enforce, ask or audit)", o.Mode)
		}
	}
	if o.Wait < 0 || o.Wait > maxWait {
		return fmt.Errorf("wait %s is out of range (0 to %s)", o.Wait, maxWait)
	}
	if o.Deadline <= 0 || o.Deadline > time.Minute {
		return fmt.Errorf("deadline %s is out of range (above 0, at most 1m)", o.Deadline)
	}
	if len(o.Matcher) > 1024 || strings.ContainsAny(o.Matcher, "\x00\n\r") {
		return errors.New("matcher is too long or holds control characters")
	}
	if o.Ticket {
		return o.checkTicket()
	}
	return nil
}

// checkTicket refuses a Ticket registration the wrapper cannot stand
// behind: another mode than enforce, no registration of init's own, a
// wrapper missing or whose path Claude Code would split.
func (o Options) checkTicket() error {
	w := o.Wrapper()
	switch fi, err := os.Stat(w); {
	case o.Mode != "" && o.Mode != hooks.ModeEnforce:
		return errors.New("two-phase enforcement (--ticket) works only with mode enforce")
	case o.NoHooks:
		return errors.New("two-phase enforcement (--ticket) needs init's own registration, and another layer runs loopguard")
	case err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("two-phase enforcement (--ticket) needs the wrapper %s beside %s: install every binary (make install)", w, o.Binary)
	case strings.ContainsAny(w, " \t\n\r\x00'\"\\"):
		return fmt.Errorf("the wrapper's path %q holds a space or quote, which Claude Code's prefix cannot carry", w)
	}
	return nil
}

// Handler is one hook handler as Claude Code reads it. Field order is the
// order loopguard writes.
type Handler struct {
	Type      string   `json:"type"`
	Command   string   `json:"command"`
	Args      []string `json:"args,omitempty"`
	Timeout   int      `json:"timeout,omitempty"`
	OnFailure string   `json:"onFailure,omitempty"`
	// StatusMessage is the spinner text while the hook runs (HeldStatus
	// for a registration that holds calls).
	StatusMessage string `json:"statusMessage,omitempty"`
}

type group struct {
	Matcher string    `json:"matcher"`
	Hooks   []Handler `json:"hooks"`
}

// HandlerFor is the handler loopguard registers for event.
// The hook's command line is register.Command's, in exec form.
func HandlerFor(o Options, event string) Handler {
	c := register.Command{Binary: o.Binary, Event: event, Mode: o.Mode, Ticket: o.Ticket}
	status := ""
	if o.Wait > 0 && !After(event) {
		c.Wait, status = o.Wait, HeldStatus
	}
	if c.Ticket && !After(event) {
		// Shell form: Claude Code runs it through the prefix, which
		// answers it in its own process (hookmain.InWrapper,
		// ticket.InFrontSelf), or runs it as a child that finds the
		// wrapper as its parent (ticket.InFront). After
		// the call (PostToolUse, PostToolUseFailure) the hook only
		// spends the ticket and looks for a call that ran without one:
		// exec form, with no shell and no wrapper before it (Claude Code
		// wraps shell-form hooks only), two process starts fewer a call.
		return Handler{Type: "command", Command: c.String(),
			Timeout: register.TimeoutFor(o.Deadline, c.Wait), OnFailure: OnFailureBlock, StatusMessage: status}
	}
	return Handler{Type: "command", Command: o.Binary, Args: c.Args(),
		Timeout: register.TimeoutFor(o.Deadline, c.Wait), OnFailure: OnFailureBlock, StatusMessage: status}
}

func (o Options) matcher() string {
	if o.Matcher == "" {
		return DefaultMatcher
	}
	return o.Matcher
}

// IsLoopguard reports whether a handler is loopguard's hook: a command
// whose executable is named loopguard or loopguard-hook (or is self, the
// running binary, when self is not ""), run with "hook" as its first
// argument, in exec form or as a shell command (register.Parse and
// ParseShell). Bad arguments after "hook" do not make it anyone else's.
func IsLoopguard(h Handler, self string) bool {
	_, err := h.Hook(self)
	return h.Type == "command" && !errors.Is(err, register.ErrNotHook)
}

// Hook reads the handler's command line back (see register.Parse): in exec
// form when it has arguments, else as a shell command.
func (h Handler) Hook(self string) (register.Command, error) {
	if len(h.Args) > 0 {
		return register.Parse(append([]string{h.Command}, h.Args...), self)
	}
	return register.ParseShell(strings.TrimSpace(h.Command), self)
}

// handlerOf reads a handler node; ok is false when it is not an object.
func handlerOf(n *node) (Handler, bool) {
	if n == nil || n.kind != '{' {
		return Handler{}, false
	}
	var h Handler
	h.Type, _ = n.get("type").str()
	h.Command, _ = n.get("command").str()
	h.Args = strs(n.get("args"))
	if t, ok := n.get("timeout").num(); ok && t >= 0 && t < math.MaxInt32 {
		h.Timeout = int(t)
	}
	h.OnFailure, _ = n.get("onFailure").str()
	h.StatusMessage, _ = n.get("statusMessage").str()
	return h, true
}

// strs reads an array node's strings (nil when it is not an array; an
// element that is not a string reads as "").
func strs(a *node) []string {
	if a == nil || a.kind != '[' {
		return nil
	}
	var out []string
	for _, e := range a.elems {
		s, _ := e.str()
		out = append(out, s)
	}
	return out
}

func isOurs(n *node, self string) bool {
	h, ok := handlerOf(n)
	return ok && IsLoopguard(h, self)
}

// shapeError reports a settings file whose hooks are not the shape Claude
// Code reads; loopguard refuses to guess.
func shapeError(format string, args ...any) error {
	return &SyntaxError{Msg: fmt.Sprintf(format, args...)}
}

// hooksTree checks the shape of root's "hooks" (object of arrays of groups,
// each with a "hooks" array) and returns it, or nil when absent.
func hooksTree(root *node) (*node, error) { return hooksObject(root, true) }

// hooksObject checks the shape of root's "hooks", an object of event
// arrays of objects (groups holding a "hooks" array when nested, the
// handlers themselves when not), and returns it, or nil when absent. The
// one shape check of Claude Code's settings and the other agents' files.
func hooksObject(root *node, nested bool) (*node, error) {
	if root.kind != '{' {
		return nil, shapeError("the top level is not a JSON object")
	}
	hk := root.get("hooks")
	if hk == nil {
		return nil, nil
	}
	if hk.kind != '{' {
		return nil, shapeError(`"hooks" is not an object`)
	}
	for i, ev := range hk.vals {
		if ev.kind != '[' {
			return nil, shapeError(`"hooks.%s" is not an array`, hk.keys[i])
		}
		for j, g := range ev.elems {
			if g.kind != '{' {
				return nil, shapeError(`"hooks.%s[%d]" is not an object`, hk.keys[i], j)
			}
			if !nested {
				continue
			}
			if hs := g.get("hooks"); hs != nil && hs.kind != '[' {
				return nil, shapeError(`"hooks.%s[%d].hooks" is not an array`, hk.keys[i], j)
			}
		}
	}
	return hk, nil
}

// removeOurs deletes loopguard's handlers from the event array ev, drops the
// groups that this empties, and reports whether it removed anything.
func removeOurs(ev *node, self string) bool {
	return removeHandlers(ev, true, func(h *node) bool { return isOurs(h, self) })
}

// removeHandlers deletes the handlers ours picks from the event array ev
// (from each group's "hooks" when nested, dropping a group this empties; a
// group that held none is kept as it is) and reports whether it removed
// any. The one removal walk of Claude Code's settings and the other
// agents' files.
func removeHandlers(ev *node, nested bool, ours func(*node) bool) bool {
	removed := false
	kept := ev.elems[:0:0]
	for _, g := range ev.elems {
		if !nested {
			if ours(g) {
				removed = true
				continue
			}
			kept = append(kept, g)
			continue
		}
		hs := g.get("hooks")
		if hs == nil {
			kept = append(kept, g)
			continue
		}
		var left []*node
		for _, h := range hs.elems {
			if ours(h) {
				removed = true
				continue
			}
			left = append(left, h)
		}
		if len(left) == len(hs.elems) {
			kept = append(kept, g)
			continue
		}
		if len(left) == 0 {
			continue // the group held only loopguard
		}
		hs.elems = left
		kept = append(kept, g)
	}
	ev.elems = kept
	return removed
}

// emptyNode is "{}" for a missing file.
func parseOrEmpty(data []byte) (*node, error) {
	if len(bytes.TrimSpace(data)) == 0 && data != nil {
		return nil, &SyntaxError{Msg: "the file is empty, which is not valid JSON"}
	}
	if data == nil {
		return &node{kind: '{'}, nil
	}
	return parse(data)
}

// Merge returns data with loopguard registered for every event in Events
// under o. data nil means there is no file yet. A handler of loopguard's
// already present is replaced in place when its group holds nothing else
// and has the same matcher; otherwise loopguard's handlers are removed
// wherever they are and one group per event is appended. changed is false,
// and out is data itself, when the registration is already exactly this.
func Merge(data []byte, o Options) (out []byte, changed bool, err error) {
	if err := o.check(); err != nil {
		return nil, false, err
	}
	root, err := parseOrEmpty(data)
	if err != nil {
		return nil, false, err
	}
	hk, err := hooksTree(root)
	if err != nil {
		return nil, false, err
	}
	if hk == nil && !o.NoHooks {
		hk = &node{kind: '{'}
		root.set("hooks", hk)
	}
	if o.Sandbox != nil {
		if err := mergeSandbox(root, o.Sandbox); err != nil {
			return nil, false, err
		}
	}
	if o.Managed {
		if err := mergeManaged(root); err != nil {
			return nil, false, err
		}
	}
	if o.NoHooks {
		if _, err := unmergeTree(root, o.Binary); err != nil {
			return nil, false, err
		}
	} else {
		mergeHooks(hk, o)
	}
	if o.Ticket {
		if env := root.get(KeyEnv); env != nil && env.kind != '{' {
			return nil, false, shapeError(`"env" is not an object`)
		}
		object(root, KeyEnv).set(PrefixEnv, fromValue(o.Wrapper()))
	} else {
		unmergePrefix(root, o.Binary)
	}
	return encodeLike(root, data)
}

// encodeLike encodes root as the file data was written (its indent, its
// final newline), or as a new file when data is nil; changed is false, and
// out is data itself, when the tree is what data already holds.
func encodeLike(root *node, data []byte) (out []byte, changed bool, err error) {
	if data == nil {
		return append(encode(root, "  "), '\n'), true, nil
	}
	if bytes.Equal(encode(root, ""), compact(data)) {
		return data, false, nil
	}
	out = encode(root, detectIndent(data))
	if bytes.HasSuffix(data, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, true, nil
}

// mergeHooks registers loopguard for every event in hk under o.
func mergeHooks(hk *node, o Options) {
	m := o.matcher()
	for _, event := range Events {
		want := fromValue(group{Matcher: m, Hooks: []Handler{HandlerFor(o, event)}})
		ev := hk.get(event)
		if ev == nil {
			hk.set(event, &node{kind: '[', elems: []*node{want}})
			continue
		}
		// In place: the first group of loopguard's alone, same matcher.
		placed := -1
		for i, g := range ev.elems {
			hs := g.get("hooks")
			if hs != nil && len(hs.elems) == 1 && isOurs(hs.elems[0], o.Binary) {
				if mm, _ := g.get("matcher").str(); mm == m && len(g.keys) == 2 {
					placed = i
					break
				}
			}
		}
		if placed >= 0 {
			// Keep its position; remove loopguard from every other group.
			var kept []*node
			for i, g := range ev.elems {
				if i == placed {
					kept = append(kept, want)
					continue
				}
				one := &node{kind: '[', elems: []*node{g}}
				removeOurs(one, o.Binary)
				kept = append(kept, one.elems...)
			}
			ev.elems = kept
			continue
		}
		removeOurs(ev, o.Binary)
		ev.elems = append(ev.elems, want)
	}
}

// compact re-encodes data without whitespace, for comparing trees.
func compact(data []byte) []byte {
	n, err := parse(data)
	if err != nil {
		return nil
	}
	return encode(n, "")
}

// Unmerge returns data without loopguard's handlers (see IsLoopguard for
// self), dropping the groups,
// event arrays and "hooks" object that this leaves empty. changed is false,
// and out is data, when there was nothing of loopguard's.
func Unmerge(data []byte, self string) (out []byte, changed bool, err error) {
	return removeFrom(data, func(root *node) (bool, error) { return unmergeTree(root, self) })
}

// removeFrom parses data, lets remove take loopguard's entries out of the
// tree and, when it did, encodes the tree in data's own style (encodeLike);
// otherwise it returns data itself, unchanged.
func removeFrom(data []byte, remove func(root *node) (bool, error)) (out []byte, changed bool, err error) {
	root, err := parse(data)
	if err != nil {
		return nil, false, err
	}
	changed, err = remove(root)
	if err != nil || !changed {
		return data, false, err
	}
	return encodeLike(root, data)
}

// unmergePrefix removes the env's CLAUDE_CODE_SHELL_PREFIX when it names
// loopguard's wrapper (a loopguard-exec binary, or the one beside self).
func unmergePrefix(root *node, self string) bool {
	env := root.get(KeyEnv)
	if env == nil || env.kind != '{' {
		return false
	}
	v, ok := env.get(PrefixEnv).str()
	if !ok || !IsWrapper(v, self) {
		return false
	}
	env.del(PrefixEnv)
	if len(env.keys) == 0 {
		root.del(KeyEnv)
	}
	return true
}

// IsWrapper reports whether a CLAUDE_CODE_SHELL_PREFIX value is
// loopguard's wrapper: the launcher beside self, or a binary named
// loopguard-exec.
func IsWrapper(prefix, self string) bool {
	return prefix != "" && (self != "" && prefix == policy.Launcher(self) || filepath.Base(prefix) == policy.ExecBinaryName)
}

func unmergeTree(root *node, self string) (bool, error) {
	changed := unmergePrefix(root, self)
	hk, err := hooksTree(root)
	if err != nil || hk == nil {
		return changed, err
	}
	for _, event := range append([]string{}, hk.keys...) {
		ev := hk.get(event)
		if removeOurs(ev, self) {
			changed = true
			if len(ev.elems) == 0 {
				hk.del(event)
			}
		}
	}
	if changed && len(hk.keys) == 0 {
		root.del("hooks")
	}
	return changed, nil
}

// Registered is one handler found in a settings file.
type Registered struct {
	Event   string
	Matcher string
	Handler Handler
	Ours    bool
}

// Hooks lists every command handler in data, in file order; Ours is set as
// IsLoopguard(handler, self) says.
func Hooks(data []byte, self string) ([]Registered, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	hk, err := hooksTree(root)
	if err != nil || hk == nil {
		return nil, err
	}
	var out []Registered
	for i, event := range hk.keys {
		for _, g := range hk.vals[i].elems {
			m, _ := g.get("matcher").str()
			hs := g.get("hooks")
			if hs == nil {
				continue
			}
			for _, h := range hs.elems {
				if hd, ok := handlerOf(h); ok {
					out = append(out, Registered{Event: event, Matcher: m, Handler: hd, Ours: IsLoopguard(hd, self)})
				}
			}
		}
	}
	return out, nil
}

// sameSettings reports whether a and b hold the same settings once
// loopguard's handlers and every empty hooks container are ignored.
func sameSettings(a, b []byte, self string) bool {
	return sameWithout(a, b, func(n *node) error {
		_, err := unmergeTree(n, self)
		pruneEmpty(n)
		return err
	})
}

// sameWithout reports whether a and b hold the same tree once strip (which
// takes loopguard's registration out) has run on each.
func sameWithout(a, b []byte, strip func(*node) error) bool {
	na, err := parse(a)
	if err != nil {
		return false
	}
	nb, err := parse(b)
	if err != nil {
		return false
	}
	if strip(na) != nil || strip(nb) != nil {
		return false
	}
	return bytes.Equal(encode(na, ""), encode(nb, ""))
}

// pruneEmpty drops empty groups, event arrays and "hooks" from root.
func pruneEmpty(root *node) {
	hk := root.get("hooks")
	if hk == nil || hk.kind != '{' {
		return
	}
	for _, event := range append([]string{}, hk.keys...) {
		ev := hk.get(event)
		if ev.kind != '[' {
			continue
		}
		kept := ev.elems[:0:0]
		for _, g := range ev.elems {
			if hs := g.get("hooks"); hs != nil && hs.kind == '[' && len(hs.elems) == 0 {
				continue
			}
			kept = append(kept, g)
		}
		ev.elems = kept
		if len(ev.elems) == 0 {
			hk.del(event)
		}
	}
	if len(hk.keys) == 0 {
		root.del("hooks")
	}
}

// DisablesHooks reports whether data sets "disableAllHooks": true, which
// turns every hook off, loopguard's included.
func DisablesHooks(data []byte) bool {
	root, err := parse(data)
	if err != nil || root.kind != '{' {
		return false
	}
	v := root.get("disableAllHooks")
	return v != nil && v.kind == 's' && string(v.raw) == "true"
}
