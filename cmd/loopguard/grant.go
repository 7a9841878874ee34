package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

type grantOptions struct {
	tty   io.Writer // where the grant is shown and confirmed
	store *state.Store
	now   func() time.Time
	// confirm has the human confirm the grant named by digest.
	confirm func(digest string) error

	rules []string
	// preset names a standing set of rules (scope.Preset) minted as one.
	preset string
	// skipped are the preset's rules that do not pin here (the program is
	// not installed, or not in a trusted directory), set by prepareGrants.
	skipped    []string
	ttl        time.Duration
	session    string
	anySession bool
	agent      string
	// widen is what --write, --git and --network add to each Bash rule's
	// capability.
	widen policy.Capability
	// ports are the TCP ports --port names for --network (443 if none).
	ports []int
}

func newGrantCmd() *cobra.Command {
	o := &grantOptions{}
	cmd := &cobra.Command{
		Use:   "grant RULE... | --preset readonly",
		Short: "Grant a narrow standing permission, in Claude Code's rule grammar",
		Long: `Mint a signed, expiring scoped grant for each RULE, bound to this project
(every Claude Code session started in it, so a restart keeps it; --session
narrows it to one session) and one agent. RULE is written as in Claude Code's
permission settings:

  Bash(go test ./...)          exactly this command (pinned to the go it resolves to now)
  Bash(git log *)              git log with any further arguments
  Edit(src/**)                 edit files under the project's src/
  WebFetch(domain:pkg.go.dev)  fetch from exactly this host
  mcp__github__get_*           the github MCP server's get_ tools

Rules that would let the agent escape the guard (shells, interpreters,
wrappers, loopguard itself, the keyring tools, the hook settings) are refused;
approve such calls one at a time with 'loopguard approve'.

--preset readonly mints a standing set of read-only everyday commands (ls,
cat, head, grep, git status/log/diff/show, go vet, go list...; see
'loopguard grant --preset readonly' before you confirm) for 7 days unless
--ttl says otherwise. Their wildcards never cover an option that writes or
runs code, a git call is covered only in the project's own repository, and
protected files (loopguard's, the hook settings, the keyrings) stay denied
whatever grants exist. 'loopguard revoke --preset readonly' removes them.

grant shows what each grant covers on your terminal and asks you to confirm
by typing the first characters of its digest. It refuses inside an agent
(CLAUDECODE set) or without a terminal.`,
		Example: `  loopguard grant 'Bash(go test ./...)'
  loopguard grant 'Edit(src/**)' 'Bash(git diff *)' --ttl 4h
  loopguard grant 'WebFetch(domain:pkg.go.dev)' --agent any --any-session
  loopguard grant --preset readonly`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) > 0) == (o.preset != "") {
				return errors.New("name rules, or --preset NAME (one of them)")
			}
			if o.preset != "" {
				if _, err := scope.Preset(o.preset, ""); err != nil {
					return err
				}
				if !cmd.Flags().Changed("ttl") {
					o.ttl = cli.MaxGrantTTL
				}
			}
			o.rules = args
			tty, st, err := cli.OpenTTYStore()
			if err != nil {
				return err
			}
			defer tty.Close()
			o.tty, o.store, o.now = tty, st, time.Now
			o.confirm = func(digest string) error {
				return cli.ConfirmPrefix(tty, digest, approve.PrefixLen, "grant")
			}
			return grantRun(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.ttl, "ttl", time.Hour, "how long the grants stay valid (at most 7 days; a preset's default is 7 days)")
	cmd.Flags().StringVar(&o.preset, "preset", "", "mint a named standing set of rules: "+strings.Join(scope.PresetNames(), ", "))
	cmd.Flags().StringVar(&o.session, "session", "", "bind to this session id only, or 'last': the latest session seen in this project (default: every session of this project)")
	cmd.Flags().BoolVar(&o.anySession, "any-session", false, "valid in every session (explicit wildcard)")
	cmd.Flags().StringVar(&o.agent, "agent", "main", "main, any, an agent_id, or type:NAME for subagents of that type")
	cmd.Flags().BoolVar(&o.widen.Write, "write", false, "let the programs of these Bash rules write the project (its executable configuration never), beyond their default capability")
	cmd.Flags().BoolVar(&o.widen.Git, "git", false, "let them write the project and its .git too")
	cmd.Flags().BoolVar(&o.widen.Network, "network", false, "let them connect over TCP to port 443 (or the --port ports) and use UDP; no listener, Unix sockets stay closed; it also reaches services on this machine and the local network on those ports")
	cmd.Flags().IntSliceVar(&o.ports, "port", nil, "with --network: the TCP ports they connect to instead of 443 (repeat, or 22,443)")
	cmd.MarkFlagsMutuallyExclusive("session", "any-session")
	return cmd
}

// prepareGrants parses, checks and pins the rules, and settles the session
// and agent they bind to. It does not touch the key.
func prepareGrants(st *state.Store, o *grantOptions, ge cli.GrantEnv) ([]scope.Rule, string, string, error) {
	if err := cli.CheckGrantTTL("--ttl", o.ttl); err != nil {
		return nil, "", "", err
	}
	home, proj := ge.Home, ge.Project
	env := shellparse.Env{Cwd: proj, Path: ge.Path, ProjectDir: proj, Home: home, Trusted: ge.Trusted}
	var rules []scope.Rule
	if o.preset != "" {
		preset, err := scope.Preset(o.preset, home)
		if err != nil {
			return nil, "", "", err
		}
		for _, r := range preset {
			pinned, err := r.Pin(env)
			if errors.Is(err, scope.ErrNotPinnable) {
				o.skipped = append(o.skipped, r.String())
				continue
			}
			if err != nil {
				return nil, "", "", err
			}
			rules = append(rules, pinned)
		}
		if len(rules) == 0 {
			return nil, "", "", fmt.Errorf("no rule of the preset %s resolves to a trusted executable here", o.preset)
		}
	}
	for _, text := range o.rules {
		r, err := scope.Parse(text)
		if err != nil {
			return nil, "", "", err
		}
		if err := scope.Dangerous(r, home); err != nil {
			return nil, "", "", cli.WithHint(err, "approve such calls one at a time: loopguard pending, then loopguard approve ID")
		}
		if every, _ := scope.DangerOfRule(r, cli.RuleDanger(proj)); every != "" {
			return nil, "", "", cli.WithHint(fmt.Errorf("refusing to grant %s: every call it covers carries a DANGER line (%s), and no grant covers a DANGER call", r.String(), every),
				"approve such calls one at a time: loopguard pending, then loopguard approve ID")
		}
		if r, err = r.Pin(env); err != nil {
			return nil, "", "", cli.WithHint(fmt.Errorf("cannot pin %s: %w", text, err), "the command must resolve through PATH to a trusted directory; check it with: loopguard check '<command>'")
		}
		rules = append(rules, r)
	}
	if len(o.ports) > 0 {
		if !o.widen.Network {
			return nil, "", "", errors.New("--port names the ports of --network: add --network")
		}
		n, err := policy.NetworkPorts(o.ports...)
		if err != nil {
			return nil, "", "", fmt.Errorf("--port: %w", err)
		}
		o.widen.Ports = n.Ports
	}
	if o.widen != (policy.Capability{}) {
		if o.preset != "" {
			return nil, "", "", errors.New("--write, --git and --network do not widen a preset: grant the rule that needs more on its own")
		}
		bash := 0
		for i, r := range rules {
			if r.IsJail() {
				return nil, "", "", errors.New("--write, --git and --network do not widen the jail: what needs more than the jail leaves it through a question, or a rule of its own")
			}
			if r.Tool() == "Bash" {
				rules[i], bash = r.Widened(o.widen), bash+1
			}
		}
		if bash == 0 {
			return nil, "", "", errors.New("--write, --git and --network widen Bash rules only")
		}
	}
	for _, r := range rules {
		if err := approve.CheckNetworkRule(r); err != nil {
			return nil, "", "", err
		}
	}
	session := o.session
	switch {
	case o.anySession:
		session = token.Any
	case session == "":
		// Every session of this project: a restart keeps the grant.
		abs, err := filepath.Abs(proj)
		if err != nil || proj == "" {
			return nil, "", "", cli.WithHint(errors.New("cannot tell which project this is"), "run grant in the project's directory, or pass --session ID")
		}
		session = token.ProjectSession(abs)
	case session == "last":
		seen, err := st.LastSession(proj)
		if err != nil {
			return nil, "", "", cli.WithHint(fmt.Errorf("no Claude Code session seen in %s yet", proj),
				"start the agent in this project first (its first guarded call records the session), or pass --session ID or --any-session")
		}
		session = seen.Session
	}
	agent := o.agent
	switch {
	case agent == "" || agent == "main":
		agent = token.MainAgent
	case agent == "any":
		agent = token.Any
	case strings.HasPrefix(agent, "type:") && len(agent) > len("type:"):
	case strings.ContainsAny(agent, "*\x00"):
		return nil, "", "", fmt.Errorf("invalid --agent %q", agent)
	}
	return rules, session, agent, nil
}

// grantRun shows the grants on tty, has confirm check the human's
// confirmation of their digest, then mints them.
func grantRun(ctx context.Context, o *grantOptions) error {
	tty, st, now := o.tty, o.store, o.now()
	ge, err := cli.CurrentGrantEnv()
	if err != nil {
		return err
	}
	rules, session, agent, err := prepareGrants(st, o, ge)
	if err != nil {
		return err
	}
	// The key (keyring or Vault) is checked before the human types
	// anything, and names who grants.
	m, err := approve.Load(ctx)
	if err != nil {
		return err
	}
	expiry := now.Add(o.ttl).Truncate(time.Second)
	fmt.Fprintf(tty, "Grant, as %s, for %s (until %s):\n", present.EscapeText(m.Principal), o.ttl, present.FormatTime(expiry))
	if o.preset != "" {
		fmt.Fprintf(tty, "the preset %s: %d rules; protected files stay denied, reading in this project only, git only in its own repository\n", o.preset, len(rules))
	}
	for _, r := range rules {
		fmt.Fprintf(tty, "  %s\n", r.String())
		if exe := r.Executable(); exe != "" {
			fmt.Fprintf(tty, "      runs %s, and only while the command resolves to it\n", exe)
		}
		if note := r.ContentNote(); note != "" {
			fmt.Fprintf(tty, "      %s\n", present.EscapeText(note))
		}
		if note := r.WildcardNote(); note != "" {
			fmt.Fprintf(tty, "      %s\n", note)
		}
		if note := dangerNote(r, ge.Project); note != "" {
			fmt.Fprintf(tty, "      %s\n", note)
		}
		if r.Tool() == "Bash" {
			fmt.Fprintf(tty, "      %s\n", confinementNote(r.Capability()))
		}
	}
	showSession := session
	if session == token.Any {
		showSession = "ANY session"
	} else if dir, ok := token.ProjectOf(session); ok {
		showSession = "every session of the project " + present.EscapeText(dir) + " (--session narrows)"
	}
	showAgent := agent
	switch agent {
	case token.Any:
		showAgent = "ANY agent, subagents included"
	case token.MainAgent:
		showAgent = "the main agent only"
	}
	if len(o.skipped) > 0 {
		fmt.Fprintf(tty, "not granted (not installed here, or not in a trusted directory): %s\n", strings.Join(o.skipped, " "))
	}
	digest := grantDigest(rules, session, agent, o.ttl)
	fmt.Fprintf(tty, "session: %s\nagent:   %s\ndigest:  %s\n", showSession, showAgent, digest)
	if m.Team != nil {
		fmt.Fprintln(tty, "Published in Vault: the hooks on every machine sharing it find these grants; revoke removes them there.")
	}
	if err := o.confirm(digest); err != nil {
		return err
	}
	for _, r := range rules {
		g, err := approve.Grant(st, m, r, session, agent, expiry, now, state.GrantRecord{Created: now.UTC(), Preset: o.preset})
		if err != nil {
			return err
		}
		fmt.Fprintf(tty, "Granted %s: %s\n", g.ID(), g.Scope)
	}
	return nil
}

// grantDigest names what a grant confirmation covers: the pinned rules, the
// session, the agent and the lifetime.
func grantDigest(rules []scope.Rule, session, agent string, ttl time.Duration) string {
	h := sha256.New()
	fmt.Fprintf(h, "loopguard grant confirmation v1\x00%s\x00%s\x00%d", session, agent, int64(ttl/time.Second))
	for _, r := range rules {
		fmt.Fprintf(h, "\x00%s", r.String())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// grantsOptions is what grants needs: its flag, writer, store, the team's
// grants in Vault (with that backend) and clock.
type grantsOptions struct {
	out   io.Writer
	store *state.Store
	team  []state.GrantFile
	now   func() time.Time
	json  bool // --json
}

func newGrantsCmd() *cobra.Command {
	o := &grantsOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:     "grants",
		Short:   "List live grants",
		Long:    "List every unconsumed grant, exact and scoped, newest first, with how often each was used.",
		Example: "  loopguard grants\n  loopguard grants --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := cli.OpenStore()
			if err != nil {
				return err
			}
			team, err := teamGrants(cmd.Context())
			if err != nil {
				return err
			}
			o.out, o.store, o.team = cmd.OutOrStdout(), st, team
			return grantsRun(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

type grantJSON struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Scope     string    `json:"scope"`
	Tool      string    `json:"tool"`
	Session   string    `json:"session"`
	Agent     string    `json:"agent"`
	Principal string    `json:"principal"`
	Expiry    time.Time `json:"expiry"`
	Expired   bool      `json:"expired"`
	Uses      int       `json:"uses"`
	Pending   string    `json:"pending,omitempty"`
	// Capability is what a Bash rule's program may do once it runs:
	// read-only, project-write, +git, +network.
	Capability string `json:"capability,omitempty"`
	// Preset names the preset the grant was minted with (grant --preset).
	Preset string `json:"preset,omitempty"`
	// Usable says whether the grant can cover a call here and now, and
	// if not, why not.
	Usable string `json:"usable"`
	Error  string `json:"error,omitempty"`
	Path   string `json:"path"`
}

// usable says whether g can cover a call in this project now, and if not,
// why not.
func usable(g *token.Grant, now time.Time) string {
	switch dir, isProject := token.ProjectOf(g.Session); {
	case !now.Before(g.Expiry):
		return "no: expired"
	case g.Exact():
		return "yes: once, for its one call"
	case g.Session == token.Any:
		return "yes: in every session"
	case isProject:
		here, err := filepath.Abs(cli.ProjectDir())
		if err != nil || filepath.Clean(here) != dir {
			return "no: bound to the project " + dir + ", not this one"
		}
		return "yes: in every session of this project"
	}
	return "only in session " + g.Session
}

// grantUses counts the allows of each grant in the audit log.
func grantUses(st *state.Store) map[string]int {
	uses := map[string]int{}
	_ = cli.AuditLog(st).Read(func(_ []byte, e audit.Entry) error {
		if e.Decision == "allow" && e.Grant != "" {
			uses[e.Grant]++
		}
		return nil
	})
	return uses
}

func listGrants(st *state.Store, team []state.GrantFile, now time.Time) ([]grantJSON, error) {
	all, err := st.AllGrants()
	if err != nil {
		return nil, err
	}
	// With the Vault backend the scoped grants live in Vault (Path is
	// "vault:" and their KV path); local scoped grants cover nothing there.
	all = append(team, all...)
	uses := grantUses(st)
	rows := []grantJSON{}
	for _, gf := range all {
		if gf.Err != nil {
			rows = append(rows, grantJSON{ID: "-", Kind: "corrupt", Error: gf.Err.Error(), Path: gf.Path})
			continue
		}
		g := gf.Grant
		kind := "scoped"
		if g.Exact() {
			kind = "exact"
		}
		capability, use := "", usable(g, now)
		if r, err := scope.Parse(g.Scope); err == nil && !g.Exact() && r.Tool() == "Bash" {
			capability = r.Capability().String()
			if d := dangerUsable(r, cli.ProjectDir()); d != "" && now.Before(g.Expiry) {
				use = d
			}
		}
		rows = append(rows, grantJSON{ID: g.ID(), Kind: kind, Scope: g.Scope, Tool: g.Tool, Session: g.Session,
			Agent: g.Agent, Principal: g.Principal, Expiry: g.Expiry, Expired: !now.Before(g.Expiry),
			Uses: uses[g.ID()], Pending: gf.Record.Pending, Preset: gf.Record.Preset, Path: gf.Path, Usable: use,
			Capability: capability})
	}
	return rows, nil
}

func grantsRun(o *grantsOptions) error {
	out, now := o.out, o.now()
	rows, err := listGrants(o.store, o.team, now)
	if err != nil {
		return err
	}
	if o.json {
		return printJSON(out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(out, "No grants.")
		return nil
	}
	tw := cli.Table(out, "ID", "KIND", "SCOPE", "RUNS", "SESSION", "AGENT", "BY", "EXPIRES", "USES", "USABLE HERE")
	for _, r := range foldPresets(rows) {
		if r.Kind == "corrupt" {
			fmt.Fprintf(tw, "-\tCORRUPT\t%s\t\t\t\t\t\t\n", r.Path)
			continue
		}
		sc := r.Scope
		switch r.Kind {
		case "exact":
			sc = r.Tool + " call " + cli.Short(r.Pending, 8)
		case "preset":
			sc = "preset " + r.Preset + ": " + sc
		}
		exp := "in " + cli.ShortAge(r.Expiry.Sub(now))
		if r.Expired {
			exp = "EXPIRED"
		}
		sess := cli.Short(r.Session, 8)
		if dir, ok := token.ProjectOf(r.Session); ok {
			sess = "project " + filepath.Base(dir)
		}
		runs := r.Capability
		switch {
		case runs == "":
			runs = "-"
		case strings.HasSuffix(runs, "+network"):
			// Granted before ports were named: any TCP port, listening
			// (doctor warns). --json keeps the capability's own name.
			runs += "(any-port)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Kind, present.EscapeText(sc), runs, present.EscapeText(sess), cli.Short(r.Agent, 16), r.Principal, exp, r.Uses, present.EscapeText(r.Usable))
	}
	return tw.Flush()
}

// foldPresets shows the grants of one preset minting (same preset,
// session, agent and expiry) as one row with their count and summed uses;
// grants --json lists each, and each id revokes alone.
func foldPresets(rows []grantJSON) []grantJSON {
	var out []grantJSON
	at := map[string]int{}
	count := map[int]int{}
	for _, r := range rows {
		if r.Preset == "" || r.Kind != "scoped" {
			out = append(out, r)
			continue
		}
		key := r.Preset + "\x00" + r.Session + "\x00" + r.Agent + "\x00" + r.Expiry.String()
		i, ok := at[key]
		if !ok {
			r.Kind, r.ID = "preset", "preset:"+r.Preset
			i = len(out)
			at[key] = i
			out = append(out, r)
		} else {
			out[i].Uses += r.Uses
		}
		count[i]++
	}
	for i, n := range count {
		out[i].Scope = fmt.Sprintf("%d rules (loopguard grants --json lists them)", n)
	}
	return out
}

// revokeOptions is what revoke needs: its arguments and flags (one of
// them), writer, store and, with the Vault backend, an approver's minter.
type revokeOptions struct {
	out     io.Writer
	store   *state.Store
	minter  *approve.Minter // nil: no Vault backend
	ids     []string        // grant ids or unique prefixes
	all     bool            // --all
	session string          // --session
	preset  string          // --preset
}

func newRevokeCmd() *cobra.Command {
	o := &revokeOptions{}
	cmd := &cobra.Command{
		Use:   "revoke ID... | --all | --session ID | --preset NAME",
		Short: "Remove grants",
		Long: `Remove grants by id (see 'loopguard grants'), every grant, or every grant
bound to one session, or every grant minted with a preset (grant --preset).
Taking power away needs no terminal.`,
		ValidArgsFunction: completeGrants,
		Example:           "  loopguard revoke 3fa9c2d17e0b\n  loopguard revoke 3fa9      # a unique prefix\n  loopguard revoke --session 066fc3ad-3aa6-4401-854a-df9080ffea32\n  loopguard revoke --preset readonly\n  loopguard revoke --all",
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, set := range []bool{len(args) > 0, o.all, o.session != "", o.preset != ""} {
				if set {
					n++
				}
			}
			if n != 1 {
				return errors.New("name grant ids, or --all, or --session ID, or --preset NAME (one of them)")
			}
			st, err := cli.OpenStore()
			if err != nil {
				return err
			}
			m, err := revoker(cmd.Context())
			if err != nil {
				return err
			}
			o.out, o.store, o.minter, o.ids = cmd.OutOrStdout(), st, m, args
			return revokeRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "remove every grant")
	cmd.Flags().StringVar(&o.session, "session", "", "remove every grant bound to this session")
	cmd.Flags().StringVar(&o.preset, "preset", "", "remove every grant minted with this preset")
	return cmd
}

func revokeRun(ctx context.Context, o *revokeOptions) error {
	out, st, m, all, session, preset := o.out, o.store, o.minter, o.all, o.session, o.preset
	all2, err := st.AllGrants()
	if err != nil {
		return err
	}
	who := cli.Principal()
	if m != nil {
		// The grants in Vault too: revoked there, for every machine.
		team, err := teamGrantsOf(ctx, m.Team)
		if err != nil {
			return err
		}
		all2, who = append(team, all2...), m.Principal
	}
	var known []string
	for _, gf := range all2 {
		if gf.Grant != nil {
			known = append(known, gf.Grant.ID())
		}
	}
	want := map[string]bool{}
	for _, arg := range o.ids {
		// A unique prefix names a grant; every argument is resolved
		// before anything is removed.
		id, err := state.ResolvePrefix(arg, "grant", known)
		if err != nil {
			return cli.WithHint(err, "list grants with: loopguard grants")
		}
		want[id] = true
	}
	removed := 0
	for _, gf := range all2 {
		match := all
		if gf.Grant != nil {
			match = match || want[gf.Grant.ID()] || (session != "" && gf.Grant.Session == session) ||
				(preset != "" && gf.Record.Preset == preset)
			delete(want, gf.Grant.ID())
		}
		if !match {
			continue
		}
		if kv, ok := strings.CutPrefix(gf.Path, vaultPathPrefix); ok && m != nil {
			cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
			err := m.Team.RevokeGrant(cctx, kv)
			cancel()
			if err != nil {
				return err
			}
		} else if err := st.RemoveGrant(gf.Path); err != nil && !errors.Is(err, state.ErrNotFound) {
			return err
		}
		removed++
		e := audit.Entry{Decision: "revoke", Principal: who, Detail: filepath.Base(gf.Path)}
		if gf.Grant != nil {
			e.Grant, e.Session, e.Agent, e.Tool, e.Detail = gf.Grant.ID(), gf.Grant.Session, gf.Grant.Agent, gf.Grant.Tool, gf.Grant.Scope
		}
		if err := cli.Record(st, nil, e); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Revoked %d grant(s).\n", removed)
	if len(want) > 0 {
		var missing []string
		for id := range want {
			missing = append(missing, id)
		}
		return cli.WithHint(fmt.Errorf("no grant with id %s", strings.Join(missing, ", ")), "list grants with: loopguard grants")
	}
	return nil
}

// vaultPathPrefix marks a grant kept in Vault in listings ("vault:" and
// its KV path under the prefix).
const vaultPathPrefix = "vault:"

// teamGrants returns the scoped grants kept in Vault with the Vault
// backend (the token on this machine lists them: an approver's or an
// agent's), nil with the keyring.
func teamGrants(ctx context.Context) ([]state.GrantFile, error) {
	cfg, err := cli.LoadConfig()
	if err != nil || cfg.Backend != config.BackendVault {
		return nil, err
	}
	c, err := approve.VaultCustody(cfg)
	if err != nil {
		return nil, err
	}
	return teamGrantsOf(ctx, c)
}

func teamGrantsOf(ctx context.Context, c *vault.Custody) ([]state.GrantFile, error) {
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	all, err := c.AllGrants(cctx)
	if err != nil {
		return nil, cli.WithHint(err, "listing the grants kept in Vault needs the loopguard-approver or loopguard-agent policy (backend/vault/policies)")
	}
	for i := range all {
		all[i].Path = vaultPathPrefix + all[i].Path
	}
	return all, nil
}

// revoker is who revokes grants kept in Vault: an approver (nil with the
// keyring, whose grants are files on this machine).
func revoker(ctx context.Context) (*approve.Minter, error) {
	cfg, err := cli.LoadConfig()
	if err != nil || cfg.Backend != config.BackendVault {
		return nil, err
	}
	return approve.LoadTeam(ctx)
}

// confinementNote says how a Bash rule's program will run here: confined
// to its capability by the kernel, or, without Landlock, as analysed only.
func confinementNote(c policy.Capability) string {
	if abi := confine.ABI(); abi < confine.MinABI {
		return fmt.Sprintf("runs as analysed, NOT confined: this kernel's Landlock ABI is %d (confinement needs %d); the rule would run %s", abi, confine.MinABI, c)
	}
	note := "runs confined by the kernel: " + c.String() + " (" + capabilityWords(c) + ")"
	if names := unrewrittenAgents(); len(names) > 0 {
		verb := "run"
		if len(names) == 1 {
			verb = "runs"
		}
		note += "; but unconfined under " + strings.Join(names, " and ") + ", which " + verb + " the model's own command text (there a scope covers only a command written plainly, run as written)"
	}
	return note
}

// unrewrittenAgents names the agents whose host runs the model's own
// command text rather than loopguard's rewrite (register data,
// Host.Rewrite ""): a Bash rule's program runs there unconfined, unless
// loopguard's own wrapper stands in front of the host's shell here and
// makes the launch itself (Host.Wrapper: Qwen Code's shell tool, with
// init --ticket).
func unrewrittenAgents() []string {
	var names []string
	env, envErr := cli.SettingsEnv()
	self, selfErr := cli.SelfPath()
	for _, r := range all.Registrations {
		if r.Host.Rewrite != "" {
			continue
		}
		name := r.Hooks.Host
		if name == "" {
			name = strings.ToUpper(r.Agent[:1]) + r.Agent[1:]
		}
		if r.Host.Wrapper != "" {
			if envErr == nil && selfErr == nil && cli.ShellToolInPlace(r, env, self) {
				continue
			}
			name += " (until `loopguard init --agent " + r.Agent + " --ticket` puts loopguard's shell tool in front of it)"
		}
		names = append(names, name)
	}
	return names
}

// capabilityWords says in words what a capability allows.
func capabilityWords(c policy.Capability) string {
	if c.Jail {
		s := "every Bash call no narrower grant covers runs whole in it without a decision: writes the project but not its executable configuration or instruction files, nothing outside it, no network, no token from the environment; what needs more is asked"
		if !c.Write {
			s = "every Bash call no narrower grant covers runs whole in it without a decision, read-only (this kernel cannot scope signals to a jail that writes); what needs more is asked"
		}
		return s
	}
	s := "reads the project, writes nothing"
	switch {
	case c.Git:
		s = "writes the project and its .git, never its other executable configuration"
	case c.Write:
		s = "writes the project but not its executable configuration nor new files at its top"
	}
	return s + ", " + c.NetworkReach()
}
