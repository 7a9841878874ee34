package qwen

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/shellparse"
)

// Qwen Code's shell tool rewrites a command after its hooks ran, before it
// runs it (0.24.4, ShellToolInvocation: addCoAuthorToGitCommit and
// addAttributionToPR, on unless general.gitCoAuthor turns them off, and
// unless its sandbox runs the command): it inserts "\n\nCo-authored-by:
// NAME <EMAIL>" before the closing quote of the last -m/--message "..."
// (or '...') its regular expressions find in a git commit, and a "Generated
// with Qwen Code" line into the last --body/-b of a gh pr create, escaped
// for the quote its expression saw. Where that quote is one bash reads as
// a quote, the insertion stays inside it: only the message changes. Where
// it is not (the ninety-second attack run approved `git commit '-m "fix:
// print' "src/main.go"`, in which the expression's "..." starts inside
// bash's single quotes), the insertion lands unquoted: its line break
// starts a command, and `<EMAIL>"src/main.go"` emptied src/main.go.

// coauthorFlag is what comes before a quote the expressions may take for
// a message's, once blanks and = signs are taken off its end: -...m,
// --message, --body or -b (a superset of Qwen Code's prefixes:
// (?:-[a-zA-Z]*m|--message)\s*=?\s* and (?:--body|-b)[\s=]+).
var coauthorFlag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:-[a-zA-Z]*m|--message|--body|-b)$`)
})

// The quoted messages as Qwen Code's expressions read them from their
// opening quote (JavaScript's . stops at a line terminator). Compiled when
// first used: the hook's start-up is kept small.
var (
	jsDouble = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^"(?:[^"\\]|\\[^\n\r\x{2028}\x{2029}])*"`)
	})
	jsSingle = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^'(?:[^']|'\\'')*'`) })
)

// coauthorSafe refuses a run_shell_command command whose text Qwen Code's
// rewrite could change outside a quote bash reads: every quote that one
// of its expressions could take for a message's must open a quoted string
// of bash's (single or double, not $” or $"") that closes where the
// expression's does. A message holding "$(" Qwen Code leaves alone. A
// command bash cannot parse, with such a quote in it, is refused too. An
// ordinary git commit -m "message" passes: Qwen Code then adds its
// trailer to the message, which is all that differs from what was shown.
func coauthorSafe(cmd string) error {
	quotes := coauthorQuotes(cmd)
	if len(quotes) == 0 {
		return nil
	}
	opens, closes, err := shellparse.Quotes(cmd)
	for _, q := range quotes {
		why := ""
		var end int
		if cmd[q] == '"' {
			m := jsDouble().FindString(cmd[q:])
			if m == "" || strings.Contains(m, "$(") {
				continue
			}
			end = q + len(m) - 1
		} else {
			m := jsSingle().FindString(cmd[q:])
			if m == "" {
				continue
			}
			end = q + len(m) - 1
		}
		switch {
		case err != nil:
			why = "bash cannot parse it (" + err.Error() + ")"
		case opens[q] != cmd[q]:
			why = "the quote at byte " + strconv.Itoa(q) + " does not open a quoted string as bash reads the command"
		case closes[end] != cmd[q]:
			why = "the quoted string at byte " + strconv.Itoa(q) + " does not end where Qwen Code's expression ends it"
		}
		if why != "" {
			return agents.Errorf("run_shell_command: Qwen Code adds a Co-authored-by trailer to a git commit's -m message (and an attribution line to a gh pr create's --body) after this hook, inside the quote its expression finds; in this command %s, so its insertion would run as commands of their own, not what loopguard was shown. Write the message as one plain quoted word (git commit -m \"message\"), or turn the rewrite off in Qwen Code's settings (general.gitCoAuthor: {\"commit\": false, \"pr\": false}; loopguard init writes it)", why)
		}
	}
	return nil
}

// coauthorQuotes are the offsets of the quotes in cmd that follow one of
// the expressions' flags.
func coauthorQuotes(cmd string) []int {
	var out []int
	for i := 0; i < len(cmd); i++ {
		if cmd[i] != '"' && cmd[i] != '\'' {
			continue
		}
		before := strings.TrimRightFunc(cmd[:i], func(r rune) bool { return jsSpace(r) || r == '=' })
		if coauthorFlag().MatchString(before) {
			out = append(out, i)
		}
	}
	return out
}

// CoAuthor says whether Qwen Code's co-author rewrite of a git commit
// (commit) and its attribution in a gh pr create (pr) are on, for its
// settings files' contents in the order it merges them (system defaults,
// user, workspace, system: each later one over the earlier; nil or
// unreadable ones are skipped). general.gitCoAuthor is a boolean (both),
// or an object of commit and pr, each read as Qwen Code's
// normalizeGitCoAuthor does (0.24.4): absent is on, a string is on only as
// true, yes, on or 1, a number only as 1.
func CoAuthor(settings ...[]byte) (commit, pr bool) {
	var c, p any
	for _, data := range settings {
		var m struct {
			General struct {
				GitCoAuthor json.RawMessage `json:"gitCoAuthor"`
			} `json:"general"`
		}
		if data == nil || json.Unmarshal(data, &m) != nil || m.General.GitCoAuthor == nil {
			continue
		}
		var v any
		if json.Unmarshal(m.General.GitCoAuthor, &v) != nil {
			continue
		}
		if o, ok := v.(map[string]any); ok {
			if x, ok := o["commit"]; ok {
				c = x
			}
			if x, ok := o["pr"]; ok {
				p = x
			}
			continue
		}
		c, p = v, v
	}
	return coAuthorOn(c), coAuthorOn(p)
}

func coAuthorOn(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "1":
			return true
		}
	case float64:
		return x == 1
	}
	return false
}
