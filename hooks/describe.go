package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Env is the part of the world a decision depends on besides the call.
type Env struct {
	Path       string   // PATH the agent's commands will see
	Home       string   // the user's home directory
	ProjectDir string   // CLAUDE_PROJECT_DIR ("" means the call's cwd)
	Trusted    []string // trusted executable dirs (nil: policy.DefaultTrusted)
	Self       string   // this binary, symlinks resolved
	StateDir   string   // loopguard's state directory
	ConfigDir  string   // loopguard's config directory
	// Launcher is the binary whose `exec` confines a program to a
	// grant's capability (package confine); "" when the kernel cannot
	// (no Landlock, or an older ABI than confine.MinABI): scoped Bash
	// calls then run canonical but unconfined.
	Launcher string
	// Confiner is the launcher alone (loopguard-confine, which starts
	// faster): what the forms that run where the call runs name (the
	// jail, a scoped grant's capability), "" to name Launcher there too.
	// The escalation forms name Launcher, which the host's sandbox
	// exclusions name.
	Confiner string
	// LeaveSandbox says the host runs the launcher's escalation forms
	// outside its sandbox, and each only on the hook's ticket for exactly
	// its text: a --ticket registration for Claude Code, whose user
	// settings init gave confine.Exclusions beside the wrapper (doctor
	// checks them). Without it an exact approval that needs more than the
	// network runs as written (netjail.go).
	LeaveSandbox bool
	// ClaudeConfigDir and CodexHome are $CLAUDE_CONFIG_DIR and $CODEX_HOME
	// as the agent set them: where Claude Code and Codex keep their
	// configuration ("" for the default below Home), protected as such.
	ClaudeConfigDir, CodexHome string
	// Secrets are further files no call may read or write (the Vault
	// backend's token file).
	Secrets []string
	// XDGConfigHome and GitConfigGlobal are $XDG_CONFIG_HOME and
	// $GIT_CONFIG_GLOBAL as the agent's host has them: where the user's
	// git configuration (its core.hooksPath) and the tools' secrets are.
	XDGConfigHome, GitConfigGlobal string
}

// described is a call turned into its descriptor and digests.
type described struct {
	desc       token.Descriptor
	canonical  []byte
	digest     string
	callDigest string
	shell      *shellparse.Result // Bash only
	target     string             // file tools: the path they change
	warns      []string
	warned     bool
	// notes say where the call lands when that is not what it names.
	notes []string
	// execConfig says why the call touches executable configuration ("":
	// it does not); set by the protected-resource check.
	execConfig string
	// pkgPin is a package.json the call was judged not to change the
	// hook-run entries of, on loopguard's model of the client's edit; set
	// by the protected-resource check and checked after the call (post).
	pkgPin *state.PackagePin
	// approved is the pending id of the approved call this one plausibly
	// retries (approved_call_changed, target_state_drift), for review.
	approved string
	// shown are the input fields that only describe the call, left out
	// of the descriptor (policy.ShownOnly).
	shown map[string]string
	// miss says which word of the call the nearest scoped grant does not
	// cover (cover.miss), for the no_grant message.
	miss string
	// leaves says why the jail grant does not hold the call ("": there is
	// no jail grant, or a narrower grant covers it): jail.go.
	leaves string
	// reached are the places outside reachedFor, the call's project,
	// that the call reaches (reachedPlaces): the approval's check and the
	// approved call's hold ask for them on one call.
	reached    []string
	reachedFor string
	// dangerous is the call's DANGER lines, once dangerRead (danger.go).
	dangerous  []string
	dangerRead bool
	// grants are the call's scoped grants, once grantsRead (grantsOf):
	// the jail, a chain and the scope look at the same grants.
	grants        []state.GrantFile
	grantsProject string
	grantsFail    *Decision
	grantsRead    bool
}

// danger is the call's danger lines (present.DangerOf) from the values
// already decoded and parsed: the descriptor's input and the analysis's
// sketch of a Bash command.
func (d *described) danger(projectDir string) []string {
	in, _ := d.desc.Input.(map[string]any)
	return present.DangerOf(d.desc.Tool, in, d.sketch(), projectDir)
}

// sketch is the analysis's sketch of a Bash command (nil for another tool,
// or a command the analysis did not parse).
func (d *described) sketch() *shellparse.Sketch {
	if d.shell == nil {
		return nil
	}
	return d.shell.Sketch
}

// splitShown returns the input without the fields that only describe the
// call (a string a reworded retry may change freely), and those fields.
func splitShown(tool string, in map[string]any) (map[string]any, map[string]string) {
	var shown map[string]string
	for k, v := range in {
		if s, ok := v.(string); ok && policy.ShownOnly(tool, k) {
			if shown == nil {
				shown = map[string]string{}
			}
			shown[k] = s
		}
	}
	if shown == nil {
		return in, nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		if _, ok := shown[k]; !ok {
			out[k] = v
		}
	}
	return out, shown
}

// warnings scans every string of the call once, from the decoded value,
// and adds what the human must know about where the call lands.
func (d *described) warnings() []string {
	if !d.warned {
		d.warns, d.warned = present.WarningsOf(d.desc.Value()), true
	}
	out := slices.Clone(d.warns)
	if d.execConfig != "" {
		out = append(out, "EXECUTABLE CONFIGURATION: "+d.execConfig+". It makes an agent, your shell, git or another tool run code later; approve only if you wrote this yourself")
	}
	return append(out, d.notes...)
}

// confiner is the binary that a launch staying where the call runs names:
// Env.Confiner, else Env.Launcher.
func (e *Engine) confiner() string {
	if e.Env.Confiner != "" {
		return e.Env.Confiner
	}
	return e.Env.Launcher
}

// ProjectOf is the project the launcher of c's rewritten form confines it
// to (its --project).
func (e *Engine) ProjectOf(c *Call) string { return filepath.Clean(e.projectDir(c)) }

func (e *Engine) projectDir(c *Call) string {
	if p := e.namedProject(c); p != "" {
		return p
	}
	return c.Cwd
}

// namedProject is the project the agent's host names, "" when it names
// none: CLAUDE_PROJECT_DIR (Claude Code, Copilot, Gemini, Qwen Code and
// loopguard's OpenCode plugin set it for the hook), or the one the adapter
// read from the host (Call.ProjectDir). Never the payload's cwd, which
// follows the agent.
func (e *Engine) namedProject(c *Call) string {
	if e.Env.ProjectDir != "" {
		return e.Env.ProjectDir
	}
	return c.ProjectDir
}

// LaunchProject is the project a launch of c is confined to (a scoped
// grant's, the jail's): the one the host names, else the call's cwd.
// loopguard's wrapper makes the launch from it where the host runs the
// model's text (Call.Wrapped).
func (e *Engine) LaunchProject(c *Call) string { return filepath.Clean(e.projectDir(c)) }

func (e *Engine) shellEnv(c *Call) shellparse.Env {
	return shellparse.Env{Cwd: c.Cwd, Path: e.Env.Path, ProjectDir: e.projectDir(c), Trusted: e.Env.Trusted, Home: e.Env.Home}
}

// describe builds the canonical descriptor of c: the tool, its complete
// input, the cwd, the resolved executables of a Bash command and the state of
// the file a mutating tool would change.
func (e *Engine) describe(c *Call) (*described, error) {
	input, shown := splitShown(c.ToolName, c.ToolInput)
	d := &described{desc: token.Descriptor{Tool: c.ToolName, Input: input, Cwd: c.Cwd}, shown: shown}
	if c.ToolName == "Bash" {
		cmd, ok := c.ToolInput["command"].(string)
		if !ok {
			return nil, &MalformedError{Msg: "Bash tool_input.command is not a string"}
		}
		res := shellparse.Analyze(cmd, e.shellEnv(c))
		d.shell = &res
		d.desc.Executables = res.Executables
		if d.desc.Executables == nil {
			d.desc.Executables = map[string]string{}
		}
		d.notes = append(d.notes, e.shellLandings(c, &res)...)
	}
	if field := policy.ToolOf(c.ToolName).Changes; field != "" {
		p, ok := c.ToolInput[field].(string)
		if !ok || !filepath.IsAbs(p) {
			return nil, &MalformedError{Msg: fmt.Sprintf("%s tool_input.%s is not an absolute path", c.ToolName, field)}
		}
		d.target = p
		d.desc.Target = &token.Target{Path: p, SHA256: fileState(p)}
		if res, err := fsx.Resolve(p); err != nil {
			d.notes = append(d.notes, "the target path does not resolve ("+present.EscapeText(err.Error())+")")
		} else {
			d.desc.Target.Resolved = res.Path
			d.notes = append(d.notes, landing(p, res)...)
		}
	}
	canonical, call, err := d.desc.Encodings()
	if err != nil {
		return nil, &MalformedError{Msg: err.Error()}
	}
	d.canonical, d.digest = canonical, token.DigestOf(canonical)
	d.callDigest = d.digest // without a target, the same bytes
	if d.desc.Target != nil {
		d.callDigest = token.DigestOf(call)
	}
	return d, nil
}

// fileState is the hex SHA-256 of the file's content, token.Absent when it
// does not exist, or "unreadable" (a state of its own: an approval given
// while it was unreadable does not cover it once readable).
func fileState(path string) string {
	// Never blocks: a FIFO the agent put there would hold the hook to its
	// deadline (a deny no human could review).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return token.Absent
	}
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "unreadable"
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// landing describes where the path p lands when it is not where it says:
// through symlinks, into a file a dangling link will create, into .git/ or
// .claude/.
func landing(p string, res fsx.Resolution) []string {
	var out []string
	if res.Crossed() {
		via := make([]string, len(res.Links))
		for i, l := range res.Links {
			via[i] = present.EscapeText(l)
		}
		s := "TARGET: " + present.EscapeText(p) + " resolves to " + present.EscapeText(res.Path) + " (through the symlink " + strings.Join(via, ", then ") + ")"
		if res.Dangling {
			s += "; the link points to a file that does not exist yet, so writing creates it"
		}
		out = append(out, s)
	}
	for _, at := range []string{filepath.Clean(p), res.Path} {
		for _, seg := range strings.Split(at, string(filepath.Separator)) {
			switch strings.ToLower(seg) {
			case ".git", ".claude":
				out = append(out, "WARNING: this writes into a "+seg+"/ directory ("+present.EscapeText(at)+")")
				return out
			}
		}
	}
	return out
}

// shellLandings names the words and redirect targets of a simple command
// that cross a symlink, with where they land.
func (e *Engine) shellLandings(c *Call, res *shellparse.Result) []string {
	var out []string
	look := func(w string) {
		if w == "" || strings.HasPrefix(w, "-") || len(out) >= 16 {
			return
		}
		r, err := fsx.Resolve(fsx.Abs(c.Cwd, e.Env.Home, w))
		if err == nil && r.Crossed() {
			out = append(out, landing(w, r)[0])
		}
	}
	for _, w := range res.Argv {
		look(w.Value)
	}
	for _, r := range res.Redirects {
		look(r.Target)
	}
	return out
}
