package scope

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// ErrDangerous is matched (errors.Is) by every error Dangerous returns.
var ErrDangerous = errors.New("scope would let the agent escape the guard")

// DangerousError explains why a rule may not be granted.
type DangerousError struct {
	Rule string // canonical form
	Why  string
}

func (e *DangerousError) Error() string {
	return fmt.Sprintf("refusing to grant %s: %s; approve such calls one at a time with `loopguard approve <id>`", e.Rule, e.Why)
}

// Is makes errors.Is(err, ErrDangerous) true.
func (e *DangerousError) Is(target error) bool { return target == ErrDangerous }

func dangerous(r Rule, format string, args ...any) error {
	return &DangerousError{Rule: r.String(), Why: fmt.Sprintf(format, args...)}
}

// protected path names: a rule mentioning them is refused.
var protectedWords = []string{".claude", "loopguard", "keyrings", "keychains"}

// Dangerous reports whether r may be granted as a standing scope: nil if it
// may, else a *DangerousError (errors.Is ErrDangerous) explaining why and
// pointing to exact approvals. home is the user's home directory (absolute),
// used to recognise absolute patterns that reach into it.
//
// Refused:
//   - bare rules for tools that take arguments (Bash, Edit, Write, Read,
//     WebFetch...): they would cover every call;
//   - Bash scopes over the programs package policy classes as shells,
//     interpreters (and tools with an execute-a-command language: awk,
//     sed, vim...), runners and command runners that run
//     another command (env, sudo, xargs, find, timeout, ssh, docker...),
//     loopguard itself, the claude CLI and the keyring and service tools
//     (secret-tool, gnome-keyring-daemon, security, dbus-send, busctl, gdbus,
//     systemctl...), whether named or pinned under another name;
//   - Bash scopes with a wildcard right after git, make, tar, npm, go... whose
//     global options can run other programs (git -c core.pager=...);
//   - Bash scopes whose words name an option or subcommand that runs code
//     (policy's option table: git config, make --eval, go -toolexec, rg
//     --pre...), end in an option whose file the wildcard would name (sort
//     -o *), or have a wildcard word that can only be such an option
//     (--output=*). A trailing * is otherwise narrowed when matching: it
//     never covers such options (see matchOptions);
//   - Bash scopes whose words or redirections mention .claude, loopguard or
//     the keyrings;
//   - Bash scopes with a wildcard over commands that write the files they
//     name (cp, mv, rm, ln, tee, dd, chmod...), and Bash scopes redirecting
//     to a file named settings.json or settings.local.json;
//   - Edit and Write scopes that can reach the project's .claude/ (its
//     settings hold the hooks), .git/ (config and hooks run commands),
//     .vscode/ or .idea/ (the directories Claude Code protects in
//     bypassPermissions mode), ~/.claude/, the guard's state, config and
//     binary, or the keyrings; Read scopes that can reach the guard's state
//     or the keyrings.
//
// An absolute pattern with ** (Edit(//tmp/x/**)) may reach some other
// directory's .claude/; Dangerous cannot know the project dir, so the hook's
// protected-resource check, which runs before any scope, covers that case.
func Dangerous(r Rule, home string) error {
	switch r.kind {
	case kindBare:
		if argumentFree[r.tool] {
			return nil
		}
		return dangerous(r, "a bare %s rule would cover every %s call; write a scoped rule such as %s", r.tool, r.tool, bareExample(r.tool))
	case kindBash:
		return dangerousBash(r)
	case kindFile:
		return dangerousFile(r, home)
	case kindWebFetch, kindMCP, kindJail:
		return nil
	}
	return dangerous(r, "invalid rule")
}

func bareExample(tool string) string {
	switch tool {
	case toolBash:
		return "Bash(go test ./...)"
	case toolWebFetch:
		return "WebFetch(domain:pkg.go.dev)"
	case toolMultiEdit, toolNotebookEdit:
		return "Edit(src/**)"
	}
	return tool + "(src/**)"
}

func dangerousBash(r Rule) error {
	bs, err := r.bashSpecOf()
	if err != nil {
		return dangerous(r, "invalid Bash rule: %v", err)
	}
	names := []string{bs.words[0].lits[0]}
	if r.exe != "" && r.exe != pinnedBuiltin {
		names = append(names, r.exe)
	}
	hasWild := bs.trailing
	for _, w := range bs.words[1:] {
		if !w.literal() {
			hasWild = true
		}
	}
	for _, n := range names {
		p, ok := policy.Lookup(n)
		if !ok {
			continue
		}
		switch p.Class {
		case policy.Shell:
			return dangerous(r, "%s is a shell: a scope over it runs any command", n)
		case policy.Interpreter:
			return dangerous(r, "%s is an interpreter that can run any code", n)
		case policy.Runner, policy.CommandRunner:
			return dangerous(r, "%s runs other commands", n)
		case policy.Guard:
			return dangerous(r, "%s can change or read the guard, its keys or its hooks", n)
		case policy.FileWriter:
			if hasWild {
				return dangerous(r, "with a wildcard, %s can overwrite the hook settings or the guard; name the files", n)
			}
		}
	}
	if hasWild && policy.SubcommandFirst(names[0]) && (len(bs.words) == 1 || !bs.words[1].literal()) {
		return dangerous(r, "a wildcard right after %s can pass global options that run other programs (for git: -c core.pager=..., -c alias.x=!...); name the subcommand, as in %s log *", names[0], names[0])
	}
	if err := dangerousOptions(r, bs, names); err != nil {
		return err
	}
	var texts []string
	for _, w := range bs.words {
		texts = append(texts, w.lits...)
	}
	for _, rd := range bs.redirs {
		texts = append(texts, rd.target)
		switch filepath.Base(rd.target) {
		case "settings.json", "settings.local.json":
			return dangerous(r, "redirecting to %s could overwrite a hook settings file, depending on the cwd", rd.target)
		}
	}
	for _, t := range texts {
		lt := strings.ToLower(t)
		for _, p := range protectedWords {
			if strings.Contains(lt, p) {
				return dangerous(r, "it mentions %q: the hook settings, the guard and the keyrings are changed by the human only", p)
			}
		}
	}
	return nil
}

// dangerousOptions refuses a Bash rule whose own words name an option that
// runs code (policy's option table), whose literal words end in an option
// that writes a file named by the wildcard (sort -o *), or whose partial
// wildcard word can only be such an option (--output=*). The trailing *
// itself is narrowed at match time: it never covers such an option.
func dangerousOptions(r Rule, bs bashSpec, names []string) error {
	var prefix []string // the literal words up to the first wildcard
	for _, w := range bs.words {
		if !w.literal() {
			break
		}
		prefix = append(prefix, w.lits[0])
	}
	wildAfter := len(prefix) < len(bs.words) || bs.trailing
	for _, n := range names {
		argv := append([]string{n}, prefix[1:]...)
		for _, f := range policy.CheckArgv(argv) {
			switch {
			case f.Class == policy.Code:
				return dangerous(r, "%q: %s", f.Word, f.Why)
			case f.Class == policy.Writes && wildAfter && f.Index == len(prefix)-1 && (strings.HasPrefix(f.Word, "-") || f.Index == 1):
				// An option (or tar's old-style cluster) whose file the
				// wildcard would name.
				return dangerous(r, "%q: %s, and the wildcard after it names the file", f.Word, f.Why)
			}
		}
		// A partial wildcard word (--output=*): what it can stand for.
		if len(prefix) < len(bs.words) {
			w := bs.words[len(prefix)]
			if !w.star() && strings.HasPrefix(w.lits[0], "-") {
				probe := strings.Join(w.lits, "x")
				for _, f := range policy.CheckArgv(append(argv, probe)) {
					if f.Index == len(argv) && (f.Class == policy.Code || f.Class == policy.Writes) {
						return dangerous(r, "its wildcard word %s can only be an option that %s: %s", renderWord(w, false, false), f.Class, f.Why)
					}
				}
			}
		}
	}
	return nil
}
