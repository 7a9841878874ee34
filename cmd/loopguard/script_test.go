package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/loopguard/loopguard/agents/codex"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/hookmain"
	"github.com/loopguard/loopguard/internal/scripttest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"loopguard": func() {
			code := Main(os.Args[1:])
			drainTTY()
			os.Exit(int(code))
		},
		// As make build installs it beside loopguard: init registers it,
		// and under the Vault backend it runs loopguard.
		"loopguard-hook": func() { os.Exit(hookmain.Main(os.Args[1:])) },
	})
}

// scriptParams runs the scripts in dir with the shared script harness
// (a private HOME and state dir per script, the keyring condition) and the
// CLI's own commands.
func scriptParams(t *testing.T, dir string) testscript.Params {
	p := scripttest.Params(t, map[string]scripttest.Cmd{
		"private-keyring": cmdPrivateKeyring,
		"typegrant":       cmdTypeGrant,
		"prefix":          cmdPrefix,
		"codextrust":      cmdCodexTrust,
	})
	p.Dir = dir
	return p
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, filepath.Join("testdata", "script")))
}

// typegrant FILE [--session=S | --any-session] [--agent=A] [--ttl=D] [--network [--port=N]...] RULE...:
// write what a human types to confirm that grant (run with the script's
// HOME, PATH and $WORK as the project) to FILE.
func cmdTypeGrant(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: typegrant FILE [flags] RULE...")
	}
	o := &grantOptions{ttl: time.Hour, agent: "main"}
	for _, a := range args[1:] {
		var err error
		switch {
		case strings.HasPrefix(a, "--session="):
			o.session = strings.TrimPrefix(a, "--session=")
		case a == "--any-session":
			o.anySession = true
		case strings.HasPrefix(a, "--preset="):
			o.preset, o.ttl = strings.TrimPrefix(a, "--preset="), cli.MaxGrantTTL
		case strings.HasPrefix(a, "--agent="):
			o.agent = strings.TrimPrefix(a, "--agent=")
		case strings.HasPrefix(a, "--ttl="):
			o.ttl, err = time.ParseDuration(strings.TrimPrefix(a, "--ttl="))
		case a == "--network":
			o.widen.Network = true
		case a == "--write":
			o.widen.Write = true
		case a == "--git":
			o.widen.Git = true
		case strings.HasPrefix(a, "--port="):
			var p int
			p, err = strconv.Atoi(strings.TrimPrefix(a, "--port="))
			o.ports = append(o.ports, p)
		default:
			o.rules = append(o.rules, a)
		}
		ts.Check(err)
	}
	proj := ts.Getenv("CLAUDE_PROJECT_DIR")
	if proj == "" {
		proj = ts.Getenv("WORK")
	}
	// The trusted dirs as the script's loopguard reads them.
	cfg, _, err := config.Load(filepath.Join(ts.Getenv("HOME"), ".config", "loopguard", "config.json"))
	ts.Check(err)
	rules, session, agent, err := prepareGrants(scripttest.Store(ts), o, cli.GrantEnv{Home: ts.Getenv("HOME"), Project: proj, Path: ts.Getenv("PATH"), Trusted: cfg.Trusted()})
	ts.Check(err)
	d := grantDigest(rules, session, agent, o.ttl)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(d[:approve.PrefixLen]+"\n"), 0o600))
}

// prefix NAME N VAR: set VAR to the first N characters of $NAME.
func cmdPrefix(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: prefix NAME N VAR")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	v := ts.Getenv(args[0])
	if len(v) < n {
		ts.Fatalf("$%s is shorter than %d", args[0], n)
	}
	ts.Setenv(args[2], v[:n])
}

// cmdCodexTrust plays the user trusting every hook of a Codex hooks.json
// ("Trust all and continue"): codextrust HOOKS CONFIG appends to CONFIG the
// [hooks.state] entries Codex writes for HOOKS as it is now (the hash is
// pinned to real Codex's in agents/codex).
func cmdCodexTrust(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: codextrust HOOKS CONFIG")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	var f struct {
		Hooks map[string][]struct {
			Matcher *string          `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	ts.Check(json.Unmarshal(data, &f))
	var b strings.Builder
	for ev, groups := range f.Hooks {
		snake := strings.ToLower(regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(ev, "${1}_${2}"))
		for g, group := range groups {
			for h, handler := range group.Hooks {
				hash, err := codex.TrustHash(snake, group.Matcher, handler)
				ts.Check(err)
				fmt.Fprintf(&b, "\n[hooks.state.%q]\ntrusted_hash = %q\n", fmt.Sprintf("%s:%s:%d:%d", path, snake, g, h), hash)
			}
		}
	}
	cfg := ts.MkAbs(args[1])
	old, _ := os.ReadFile(cfg)
	ts.Check(os.WriteFile(cfg, append(old, b.String()...), 0o600))
}
