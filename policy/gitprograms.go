package policy

import (
	"strings"

	"github.com/loopguard/loopguard/internal/gitconfig"
)

// A setting of git's configuration whose value is a program git runs (a
// filter's clean command, core.fsmonitor, a diff driver's textconv, a !
// alias) can name a script of the working tree: the forty-second attack
// run's project-write call rewrote tools/fsmon.sh, which the user's
// core.fsmonitor named, and the user's next git status ran it; a
// filter.strip.clean = ./tools/clean.sh the same through git add. Such a
// script is executable configuration, as the hooks directory is.

// programKeys are the settings whose value is a command git runs, by
// their name's last part (a driver's, a helper's, a tool's, whatever the
// subsection), and programNames by their whole name (lower case, as
// gitconfig gives section and key).
var programKeys = map[string]bool{
	"clean": true, "smudge": true, "process": true, // filter.<driver>
	"textconv": true, "command": true, // diff.<driver>
	"driver":  true,               // merge.<driver>
	"helper":  true,               // credential[.<url>]
	"program": true,               // gpg[.<format>]
	"cmd":     true, "path": true, // difftool, mergetool, browser, man .<tool>
	"defaultkeycommand": true,                                                                                      // gpg.ssh
	"sshcommand":        true, "askpass": true, "editor": true, "pager": true, "fsmonitor": true, "gitproxy": true, // core
	"sendmailcmd": true, "smtpserver": true, // sendemail
	"packobjectshook": true,                     // uploadpack
	"receivepack":     true, "uploadpack": true, // remote.<name>
	"external":             true,                // diff
	"difffilter":           true,                // interactive
	"alternaterefscommand": true,                // core
	"tocmd":                true, "cccmd": true, // sendemail
	"httpd": true, // instaweb
}

// programSections are the sections whose every key runs its value: a
// pager per command (pager.log = ./tools/pg).
var programSections = map[string]bool{"pager": true}

// programsIn gives the files of the working tree top that the setting e
// runs, or names in a command it runs (commandPaths, from top: git runs
// these from the top of the working tree; python3 clean.py runs
// top/clean.py, python3 -m tools.fsmon tools/). An alias runs a program
// when its value begins with !, as a submodule's update does; a remote's
// URL when it is ext::.
func programsIn(e gitconfig.Entry, top string) []string {
	if top == "" || e.Bare {
		return nil
	}
	section, rest, _ := strings.Cut(e.Name, ".")
	key := rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		key = rest[i+1:]
	}
	v := e.Value
	switch {
	case section == "alias" || section == "submodule" && key == "update":
		var ok bool
		if v, ok = strings.CutPrefix(v, "!"); !ok {
			// git's own command, whose options may name a program
			// (difftool --extcmd=./dt.sh: the forty-fourth attack run).
			v = "git " + v
		}
	case section == "remote" && (key == "url" || key == "pushurl"):
		var ok bool
		if v, ok = strings.CutPrefix(v, "ext::"); !ok {
			return nil
		}
	case section == "include" || section == "includeif" || key == "hookspath":
		return nil // HooksPaths' own
	case !programKeys[key] && !programSections[section]:
		return nil
	}
	return commandPaths(v, top, top, nil)
}

// commandWords splits a command at blanks and shell operators, with
// single and double quotes removed and a backslash taking the next
// character: enough to find the paths a setting's command names (what it
// makes of an expansion is not a path, and is skipped by the caller).
func commandWords(s string) []string {
	var words []string
	var w strings.Builder
	in := false
	flush := func() {
		if in {
			words = append(words, w.String())
		}
		w.Reset()
		in = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			in = true
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case strings.IndexByte(" \t\n;&|()<>", c) >= 0:
			flush()
		default:
			w.WriteByte(c)
			in = true
		}
	}
	flush()
	return words
}
