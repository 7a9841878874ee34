package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// homeCaps are the capabilities doctor shows the jail of: what a scoped
// Bash call runs with by default (read-only, project-write) and the
// network's widening, which alone reads the registries' configuration.
var homeCaps = []policy.Capability{{}, {Write: true}, {Write: true, Network: true}}

// checkJailHome says, per capability, what a confined call would read and
// write in this home, launched from this directory: the launcher's own
// plan (confine.NewPlan), counted, and the secrets present here that it
// refuses. Only where the kernel confines (the confinement check says
// when it does not).
func checkJailHome(launcher string) []checkResult {
	if confine.ABI() < confine.MinABI {
		return nil
	}
	project, err := os.Getwd()
	if err == nil {
		project, err = filepath.EvalSymlinks(project)
	}
	if err != nil {
		return []checkResult{{status: statusSkip, name: "jail", detail: "no current directory to plan a launch in: " + err.Error()}}
	}
	return jailHome(confine.LaunchEnv(os.Getenv, launcher, os.Getuid()), project)
}

// jailHome is checkJailHome's lines for a launch planned in env, in project.
func jailHome(env confine.Env, project string) []checkResult {
	home := env.Home
	secrets := homeSecretsPresent(env.Places)
	var out []checkResult
	for _, c := range homeCaps {
		r := checkResult{status: statusOK, name: "jail " + c.String()}
		exe, _ := filepath.EvalSymlinks("/bin/sh")
		if exe == "" {
			exe = "/bin/sh"
		}
		plan, err := confine.NewPlan(confine.Spec{Cap: c, Project: project, Cwd: project, Exe: exe, Argv: []string{"sh"}}, env)
		_ = plan.Discard()
		if err != nil {
			r.status, r.detail = statusSkip, "no launch is planned here ("+err.Error()+"): run doctor in a project directory to see what a confined call reads"
			out = append(out, r)
			continue
		}
		reads, writes := plan.Within(home, project)
		var refused, granted []string
		for _, s := range secrets {
			if plan.Reaches(s) {
				granted = append(granted, tilde(home, s))
			} else {
				refused = append(refused, tilde(home, s))
			}
		}
		r.detail = fmt.Sprintf("reads %s in your home besides the project%s, ", plural(len(reads), "path"), kinds(home, reads))
		switch {
		case len(writes) > 0:
			r.detail += fmt.Sprintf("writes the project, a private temp and %s in your home (%s)", plural(len(writes), "path"), strings.Join(tildes(home, writes), ", "))
		case c.Write || c.Git:
			r.detail += "writes nothing there but the project and a private temp"
		default:
			r.detail += "writes nothing but a private temp"
		}
		if len(refused) > 0 {
			r.detail += "; refuses: " + listSome(refused, 12) + " (secret)"
		}
		if len(plan.PrivateHome) > 0 {
			// A configuration file a tool needs, private by its mode: git
			// stops at an include or an excludes file it cannot read.
			var private []string
			for _, p := range plan.PrivateHome {
				mode := ""
				if fi, err := os.Lstat(p); err == nil {
					mode = fmt.Sprintf(" %04o", fi.Mode().Perm())
				}
				private = append(private, tilde(home, p)+mode)
			}
			r.detail += "; leaves unread, other users kept out by their mode: " + listSome(private, 12)
			if r.status == statusOK {
				r.status = statusWarn
				r.fix = "a confined program that needs one of them stops there (git says \"bad config line\" or \"cannot use ... as an exclude file\"): make each that holds no secret readable by other users (chmod o+r FILE, o+rx its directories below your home); loopguard reads no file of your home its mode keeps private"
			}
		}
		if len(plan.Unread) > 0 {
			// A directory of the search path left unread whole: a tool
			// there does not run; the repository the project is a
			// directory of, left unread: git there fails.
			var unread []string
			for _, u := range plan.Unread {
				p := tilde(home, u.Path)
				if u.Path == home {
					p = "~"
				}
				unread = append(unread, p+" ("+u.Why+")")
			}
			r.detail += "; leaves unread: " + listSome(unread, 12)
		}
		if len(granted) > 0 {
			r.detail += "; reads the secret " + strings.Join(granted, ", ")
			if !c.Network {
				// Only the network reads a secret: the registries'
				// configuration, whose token is the connection's.
				r.status = statusWarn
				r.fix = "a confined call without the network must read no secret: report this as a bug in loopguard"
			}
		}
		out = append(out, r)
	}
	return out
}

// homeSecretsPresent are the secrets of the protected set that lie in
// the home and exist here: its fixed paths (Places.Roots) and the home's
// own entries Classify calls secret, sorted.
func homeSecretsPresent(pl policy.Places) []string {
	if pl.Home == "" {
		return nil
	}
	pl = pl.Prepare()
	var out []string
	for _, r := range pl.Roots() {
		if r.Secret && fsx.Within(r.Path, pl.Home) && r.Path != filepath.Clean(pl.Home) {
			if _, err := os.Lstat(r.Path); err == nil {
				out = append(out, r.Path)
			}
		}
	}
	if ents, err := os.ReadDir(pl.Home); err == nil {
		for _, e := range ents {
			if p := filepath.Join(pl.Home, e.Name()); pl.Classify(p).Secret {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	// A secret inside another is named by the outer one.
	return slices.DeleteFunc(out, func(p string) bool {
		return slices.ContainsFunc(out, func(q string) bool { return q != p && fsx.Within(p, q) })
	})
}

// kinds names what reads are, " (git config, Go, ...)", "" for none: each
// toolchain once, in the order first met, anything else by its path.
func kinds(home string, reads []string) string {
	var names []string
	for _, r := range reads {
		n := kindOf(home, r)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (" + listSome(names, 8) + ")"
}

// kindOf is the toolchain a path in the home belongs to, or the path.
func kindOf(home, p string) string {
	rel, err := filepath.Rel(home, p)
	if err != nil {
		return p
	}
	rel = filepath.ToSlash(rel)
	for _, k := range []struct{ name, prefixes string }{
		{"git config", ".gitconfig .gitignore .config/git/"},
		{"Go", "go/ sdk/ .config/go/"},
		{"Rust", ".cargo/ .rustup/"},
		{"Node", ".nvm/ .volta/ .npmrc .config/npm"},
		{"Python", ".pyenv/ .local/lib/python .local/share/uv/ .pip/ .config/pip/"},
		{"terminfo", ".terminfo"},
		{"GitHub CLI", ".config/gh/"},
	} {
		for _, pre := range strings.Fields(k.prefixes) {
			if strings.HasPrefix(rel+"/", pre) || strings.HasPrefix(rel, pre) {
				return k.name
			}
		}
	}
	return "~/" + rel
}

func tilde(home, p string) string {
	if rel, err := filepath.Rel(home, p); err == nil && fsx.Within(p, home) {
		return "~/" + filepath.ToSlash(rel)
	}
	return p
}

func tildes(home string, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = tilde(home, p)
	}
	return out
}

// listSome joins at most n of l, saying how many more there are.
func listSome(l []string, n int) string {
	if len(l) <= n {
		return strings.Join(l, ", ")
	}
	return strings.Join(l[:n], ", ") + fmt.Sprintf(" and %d more", len(l)-n)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
