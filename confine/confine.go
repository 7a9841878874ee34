// Package confine runs one program under the capability of the grant that
// allowed it, enforced by the kernel: Landlock for the file system and TCP,
// a seccomp filter for the sockets Landlock does not cover (Unix sockets,
// UDP, Multipath TCP) and io_uring. The hook rewrites an allowed scoped
// Bash call into `loopguard-hook exec ... -- PROGRAM ARGV0 ARGS...`; the
// launcher restricts itself, performs the call's redirections under the
// restriction, and execs the program, which cannot undo it.
//
// The launcher grants nothing: it only takes rights away, so its command
// line needs no authentication. It fails closed: when the kernel cannot
// enforce the capability it was asked for, it runs nothing (exit 126).
//
// Package confine never prints but through the writer Main is given.
package confine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// Subcommand is the launcher's name on the hook binary's command line.
const Subcommand = "exec"

// stage2Flag is the second stage's command line after the subcommand.
const stage2Flag = "--stage2"

// IsStage2 reports whether args (the command line after the binary's
// path) start the second stage: a test binary that is its own launcher
// dispatches on it.
func IsStage2(args []string) bool {
	return len(args) >= 2 && args[0] == Subcommand && args[1] == stage2Flag
}

// MinABI is the oldest Landlock ABI the launcher confines with: version 4
// is the first that restricts TCP. Below it, scoped Bash grants are not
// confined (the hook falls back to the analysis alone; doctor says so).
const MinABI = 4

// Redirect is one redirection the launcher performs after restricting
// itself, so that the file it opens is opened under the capability.
type Redirect struct {
	Fd     int    // the descriptor redirected
	Op     string // "<", ">", ">>", "<>", "dup" (Fd becomes a copy of Dup), "close"
	Path   string // absolute, for the file operators
	Dup    int    // for "dup"
	Append bool
}

// Spec is one launch.
type Spec struct {
	Cap     policy.Capability
	Project string // absolute: what the capability reads and writes
	Cwd     string // absolute: the program runs there
	Exe     string // absolute: what is executed
	Argv    []string
	// Redirects, in order.
	Redirects []Redirect
	// Unconfined is the launch of UnconfinedCommand (network.go): Cap is
	// ignored, and the program runs with no restriction at all.
	Unconfined bool
	// AsWritten, with Unconfined, is the launch of AsWrittenCommand
	// (network.go): the same run, under the --cap word no
	// sandbox.excludedCommands entry matches, so that it stays in the
	// sandbox the host runs it in.
	AsWritten bool
	// Holds, with Unconfined, are the places outside the project the
	// approved call reaches (the hook's related places: a link's target,
	// local code its build files name): held with the project while it
	// runs (runUnconfined).
	Holds []string
}

// Args is the launcher's command line for s, after the binary's path:
// "exec", the options, "--", the program, argv.
func (s Spec) Args() []string {
	cp := s.Cap.String()
	if s.Unconfined {
		cp = CapUnconfined
		if s.AsWritten {
			cp = CapAsWritten
		}
	}
	out := []string{Subcommand, "--cap", cp, "--project", s.Project, "--cwd", s.Cwd}
	if s.Unconfined {
		for _, h := range s.Holds {
			out = append(out, "--hold", h)
		}
	}
	for _, r := range s.Redirects {
		out = append(out, "--redirect", r.String())
	}
	out = append(out, "--", s.Exe)
	return append(out, s.Argv...)
}

// String spells a redirection as the launcher reads it: 1>/path, 2>>/path,
// 0</path, 0<>/path, 2>&1, 3>&-.
func (r Redirect) String() string {
	n := strconv.Itoa(r.Fd)
	switch r.Op {
	case "dup":
		return n + ">&" + strconv.Itoa(r.Dup)
	case "close":
		return n + ">&-"
	case ">":
		if r.Append {
			return n + ">>" + r.Path
		}
	}
	return n + r.Op + r.Path
}

// ParseRedirect reads what Redirect.String writes.
func ParseRedirect(s string) (Redirect, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 4 {
		return Redirect{}, fmt.Errorf("redirection %q: no descriptor", s)
	}
	fd, _ := strconv.Atoi(s[:i])
	r := Redirect{Fd: fd}
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, ">&"):
		t := rest[2:]
		if t == "-" {
			r.Op = "close"
			return r, nil
		}
		d, err := strconv.Atoi(t)
		if err != nil || d < 0 || d > 9999 {
			return Redirect{}, fmt.Errorf("redirection %q: bad descriptor", s)
		}
		r.Op, r.Dup = "dup", d
		return r, nil
	case strings.HasPrefix(rest, ">>"):
		r.Op, r.Append, r.Path = ">", true, rest[2:]
	case strings.HasPrefix(rest, "<>"):
		r.Op, r.Path = "<>", rest[2:]
	case strings.HasPrefix(rest, ">"):
		r.Op, r.Path = ">", rest[1:]
	case strings.HasPrefix(rest, "<"):
		r.Op, r.Path = "<", rest[1:]
	default:
		return Redirect{}, fmt.Errorf("redirection %q: unknown operator", s)
	}
	if !filepath.IsAbs(r.Path) {
		return Redirect{}, fmt.Errorf("redirection %q: the path is not absolute", s)
	}
	return r, nil
}

// Parse reads the launcher's command line (after "exec").
func Parse(args []string) (Spec, error) {
	var s Spec
	seen := map[string]bool{}
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		if len(args) == 0 {
			return s, fmt.Errorf("%s needs a value", a)
		}
		v := args[0]
		args = args[1:]
		if a != "--redirect" && a != "--hold" {
			if seen[a] {
				return s, fmt.Errorf("%s given twice", a)
			}
			seen[a] = true
		}
		switch a {
		case "--cap":
			if v == CapUnconfined || v == CapAsWritten {
				s.Unconfined, s.AsWritten = true, v == CapAsWritten
				continue
			}
			c, err := policy.ParseCapability(v)
			if err != nil {
				return s, err
			}
			s.Cap = c
		case "--project":
			s.Project = v
		case "--cwd":
			s.Cwd = v
		case "--hold":
			if !filepath.IsAbs(v) || filepath.Clean(v) != v {
				return s, fmt.Errorf("--hold %q: not a clean absolute path", v)
			}
			s.Holds = append(s.Holds, v)
		case "--redirect":
			r, err := ParseRedirect(v)
			if err != nil {
				return s, err
			}
			s.Redirects = append(s.Redirects, r)
		default:
			return s, fmt.Errorf("unknown option %q", a)
		}
	}
	if !seen["--cap"] || !seen["--project"] || !seen["--cwd"] {
		return s, errors.New("--cap, --project and --cwd are required")
	}
	if len(args) < 2 {
		return s, errors.New("want -- PROGRAM ARGV0 [ARGS...]")
	}
	s.Exe, s.Argv = args[0], args[1:]
	if len(s.Holds) > 0 && !s.Unconfined {
		return s, errors.New("--hold is the unconfined forms' only")
	}
	for _, p := range []string{s.Project, s.Cwd, s.Exe} {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return s, fmt.Errorf("%q is not a clean absolute path", p)
		}
	}
	return s, nil
}
