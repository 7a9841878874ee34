package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/review"
	"github.com/loopguard/loopguard/config"
	webconsole "github.com/loopguard/loopguard/console"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// DefaultListen is where loopguard serve listens unless told otherwise:
// loopback only.
const DefaultListen = "127.0.0.1:8377"

type serveOptions struct {
	listen, origin  string
	tlsCert, tlsKey string
	ttl, grantTTL   time.Duration
	backend         string
	out, errOut     io.Writer
}

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "An approval console in your browser: every decision signed with your passkey",
		Long: `Serve the approval console: the calls your agents wait on, each shown as
loopguard review shows it (header, danger lines, where it lands, the diff,
warnings, every byte escaped), live, with review's decisions: approve once,
approve and grant the narrowest rule, deny with a note for the model.

Every decision is signed with a passkey (WebAuthn, with your PIN,
fingerprint or face) over the exact call shown: its pending id, its digest,
the decision and the rule or note. The signature goes into the audit log,
where 'loopguard audit verify' checks it with the passkey's public key.
Register a passkey first with 'loopguard passkey add', in your terminal.

It listens on loopback (127.0.0.1:8377, reached as http://localhost:8377).
To reach it from another device use an SSH tunnel or Tailscale (README,
The console); --listen on another address needs TLS (--tls-cert and
--tls-key, the key file inside loopguard's config directory) and refuses to
start without it. With notify.ntfy in the config, each newly held call is
pushed to your ntfy topic with no content: only that a call waits, and the
console's address.

Under the Vault backend (--backend vault) it shows the calls waiting across
the team and decides through Vault as your Vault identity, as
'loopguard team approve' does.`,
		Example: "  loopguard serve\n  ssh -L 8377:localhost:8377 devbox   # then open http://localhost:8377 here\n" +
			"  loopguard serve --listen 100.101.102.103:8377 --tls-cert ~/.config/loopguard/tls/box.crt --tls-key ~/.config/loopguard/tls/box.key\n" +
			"  loopguard serve --backend vault",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			o.out, o.errOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return serveRun(ctx, o)
		},
	}
	cmd.Flags().StringVar(&o.listen, "listen", DefaultListen, "the address to listen on (off loopback it needs --tls-cert and --tls-key)")
	cmd.Flags().StringVar(&o.origin, "origin", "", "the address the browser uses (default: http://localhost:PORT, or https://NAME:PORT with NAME from the certificate)")
	cmd.Flags().StringVar(&o.tlsCert, "tls-cert", "", "the TLS certificate (PEM)")
	cmd.Flags().StringVar(&o.tlsKey, "tls-key", "", "the TLS private key (PEM), inside loopguard's config directory")
	cmd.Flags().DurationVar(&o.ttl, "ttl", 10*time.Minute, "how long an approval stays valid")
	cmd.Flags().DurationVar(&o.grantTTL, "grant-ttl", time.Hour, "how long a grant from 'approve and grant' stays valid")
	cmd.Flags().StringVar(&o.backend, "backend", "", "vault: the calls waiting across the team, decided through Vault")
	return cmd
}

// serveListen checks where the console would listen and how: it refuses to
// expose it beyond loopback without TLS. It returns the listener and the
// origin the browser must use.
func serveListen(o serveOptions) (net.Listener, string, *tls.Config, error) {
	host, port, err := net.SplitHostPort(o.listen)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--listen %q: %w", o.listen, err)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return nil, "", nil, errors.New("--tls-cert and --tls-key go together")
	}
	var tc *tls.Config
	var certNames []string
	if o.tlsCert != "" {
		if err := guardedKeyFile(o.tlsKey); err != nil {
			return nil, "", nil, err
		}
		pair, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return nil, "", nil, fmt.Errorf("failed to load the TLS certificate and key: %w", err)
		}
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil {
			certNames = leaf.DNSNames
		}
		tc = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	}
	if !loopback && tc == nil {
		return nil, "", nil, cli.WithHint(fmt.Errorf("refusing to serve on %s without TLS: the console would be reachable from the network in clear", o.listen),
			"keep the default loopback address and reach it through an SSH tunnel or Tailscale (README, The console), or give --tls-cert and --tls-key")
	}
	origin := o.origin
	switch {
	case origin != "":
	case tc == nil:
		origin = "http://localhost:" + port
	case len(certNames) > 0:
		origin = "https://" + net.JoinHostPort(certNames[0], port)
	default:
		return nil, "", nil, errors.New("the certificate names no host: give --origin https://NAME:PORT")
	}
	if tc == nil && !strings.HasPrefix(origin, "http://localhost:") {
		return nil, "", nil, fmt.Errorf("--origin %q: without TLS the console is reached as http://localhost:%s only", origin, port)
	}
	if tc != nil && !strings.HasPrefix(origin, "https://") {
		return nil, "", nil, fmt.Errorf("--origin %q: with TLS the console is reached over https", origin)
	}
	ln, err := net.Listen("tcp", o.listen)
	if errors.Is(err, syscall.EADDRINUSE) {
		next := "PORT"
		if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65535 {
			next = strconv.Itoa(n + 1)
		}
		also := ""
		if o.origin != "" {
			also = " (and --origin with that port)"
		}
		return nil, "", nil, cli.WithHint(fmt.Errorf("%s is taken: another program, or another loopguard serve, listens there", o.listen),
			"if it is a loopguard serve, the console is up already: open "+origin+"\n"+
				"else serve on a free port: loopguard serve --listen "+net.JoinHostPort(host, next)+also)
	}
	if err != nil {
		return nil, "", nil, err
	}
	return ln, origin, tc, nil
}

// guardedKeyFile refuses a TLS key that the hook does not protect: with it,
// an agent could pose as the webconsole.
func guardedKeyFile(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	res, err := fsx.ResolvePath(abs)
	if err != nil {
		return fmt.Errorf("--tls-key %s: %w", p, err)
	}
	// Judged where it lands: a link in the config directory to a file
	// the agent can write is no protection.
	if pr := servePlaces().Classify(res); pr.Tier == policy.GuardCritical && pr.Secret {
		return nil
	}
	dir, _ := config.DefaultPath()
	return cli.WithHint(fmt.Errorf("--tls-key %s is not in a place the hook keeps from the agent", p),
		"move the key (and the certificate) into "+filepath.Join(filepath.Dir(dir), "tls")+": no tool call may read or write there")
}

// servePlaces is the protected set as the hook sees it from this user.
func servePlaces() policy.Places {
	home, _ := os.UserHomeDir()
	stDir, _ := state.DefaultDir()
	cfgPath, _ := config.DefaultPath()
	self, _ := cli.SelfPath()
	return policy.Places{Home: home, StateDir: stDir, ConfigDir: filepath.Dir(cfgPath), Self: self}.Prepare()
}

func serveRun(ctx context.Context, o *serveOptions) error {
	if err := cli.RefuseInAgent(); err != nil {
		return err
	}
	if err := cli.CheckApprovalTTL(o.ttl); err != nil {
		return err
	}
	if err := cli.CheckGrantTTL("--grant-ttl", o.grantTTL); err != nil {
		return err
	}
	cfg, err := cli.LoadConfig()
	if err != nil {
		return err
	}
	st, cs, err := consoleStore()
	if err != nil {
		return err
	}
	if pr := servePlaces().Classify(cs.Dir); pr.Tier != policy.GuardCritical || !pr.Secret {
		return fmt.Errorf("the console's directory %s is not protected from the agent: refusing to keep passkeys there", cs.Dir)
	}
	ge, _ := cli.CurrentGrantEnv()
	var b webconsole.Backend
	switch o.backend {
	case "":
		b = &localConsole{st: st, ttl: o.ttl, grantTTL: o.grantTTL, offer: offer{ge}}
	case "vault":
		m, err := approve.LoadTeam(ctx)
		if err != nil {
			return err
		}
		b = &teamConsole{st: st, m: m, ttl: o.ttl, grantTTL: o.grantTTL, offer: offer{ge}}
	default:
		return fmt.Errorf("--backend %q: want vault (the calls waiting across the team), or leave it out (this machine's calls)", o.backend)
	}
	ln, origin, tc, err := serveListen(*o)
	if err != nil {
		return err
	}
	defer ln.Close()
	push, err := pushFor(cfg, origin)
	if err != nil {
		return err
	}
	elsewhere := func(id string) string { return "loopguard approve " + id }
	if o.backend == "vault" {
		elsewhere = func(id string) string { return "loopguard team approve " + id }
	}
	srv, err := webconsole.New(webconsole.Options{Origin: origin, Backend: b, Store: cs, Push: push, Elsewhere: elsewhere,
		OnError: func(err error) { fmt.Fprintf(o.errOut, "loopguard: warning: %v\n", err) },
		OnRegistered: func(k *webconsole.Passkey) {
			if err := cli.Record(st, nil, audit.Entry{Decision: "passkey-add", Principal: cli.Principal(), Passkey: k.ID,
				Detail: "registered the passkey " + present.EscapeText(k.Name) + " for " + present.EscapeText(k.RPID)}); err != nil {
				fmt.Fprintf(o.errOut, "loopguard: warning: %v\n", err)
			}
			fmt.Fprintf(o.out, "A passkey was registered: %s (%s).\n", present.EscapeText(k.Name), cli.Short(k.ID, 12))
		}})
	if err != nil {
		return err
	}
	if err := cs.PutServer(webconsole.ServerInfo{Origin: origin, PID: os.Getpid(), Started: time.Now().UTC()}); err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, TLSConfig: tc, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	keys, _ := cs.Passkeys()
	active := 0
	for _, k := range keys {
		if k.Active() {
			active++
		}
	}
	fmt.Fprintf(o.out, "loopguard serve: the console is at %s (listening on %s)\n", origin, ln.Addr())
	if active == 0 {
		fmt.Fprintln(o.out, "No passkey is registered yet: run 'loopguard passkey add' in another terminal and open the link it prints.")
	}
	if push != nil {
		fmt.Fprintf(o.out, "Held calls are pushed, without their content, to %s.\n", present.EscapeText(push.URL))
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go srv.Watch(wctx)
	errc := make(chan error, 1)
	go func() {
		if tc != nil {
			errc <- hs.ServeTLS(ln, "", "")
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer scancel()
	_ = hs.Shutdown(sctx)
	fmt.Fprintln(o.out, "loopguard serve: stopped.")
	return nil
}

// pushFor is the content-free push of the config's ntfy topic, if any.
func pushFor(cfg config.Config, origin string) (*webconsole.Push, error) {
	n := cfg.NotifyNtfy()
	if n == nil {
		return nil, nil
	}
	p := &webconsole.Push{URL: n.URL, Click: origin}
	if n.TokenFile != "" {
		tok, err := cli.ReadToken(n.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("notify ntfy token_file: %w", err)
		}
		p.Token = tok
	}
	return p, nil
}

// localConsole is this machine's calls, decided with the keyring's key.
type localConsole struct {
	st            *state.Store
	ttl, grantTTL time.Duration
	offer
}

// offer is what both consoles offer to grant: review's rule for the call,
// pinned here (review.OfferedRule).
type offer struct{ ge cli.GrantEnv }

func (o offer) Rule(c webconsole.Call) (string, error) {
	r, err := review.OfferedRule(c.Pending, o.ge)
	if err != nil {
		return "", err
	}
	return r.String(), nil
}

func (b *localConsole) Queue(context.Context) ([]webconsole.Call, error) {
	now := time.Now()
	calls, errs := cli.Queue(b.st, cli.QueueFilter{}, nil, now)
	out := make([]webconsole.Call, 0, len(calls))
	for _, p := range calls {
		out = append(out, webconsole.Call{Pending: p, Status: cli.StatusOf(b.st, p, now), Held: cli.Held(p, now)})
	}
	return out, errors.Join(errs...)
}

func (b *localConsole) Get(_ context.Context, id string) (webconsole.Call, error) {
	p, err := b.st.GetPending(id)
	if err != nil {
		return webconsole.Call{}, err
	}
	if p.Status != state.StatusOpen {
		return webconsole.Call{}, webconsole.ErrNotOpen
	}
	// What jailed calls and file tools changed, as of now: the page
	// redraws the call, and disarms its buttons, when it changes.
	hooks.RefreshPlanted(b.st, p)
	now := time.Now()
	return webconsole.Call{Pending: p, Status: cli.StatusOf(b.st, p, now), Held: cli.Held(p, now)}, nil
}

// Render is review's rendering, whole: no string or diff folded (the page
// shows it in a scrolling box, and refuses to approve a call whose
// rendering is over webconsole.MaxShown).
func (b *localConsole) Render(c webconsole.Call) ([]webconsole.Line, []webconsole.Line) {
	head, body := cli.RenderParts(b.st, c.Pending, true)
	return steady(review.LineKinds(head, true)), review.LineKinds(body, false)
}

// heldFor is the countdown review's title line carries ("held, 1m52s left").
var heldFor = regexp.MustCompile(`^(pending \S+ \(held), [0-9hms.]+ left\)`)

// steady drops the countdown from the title line: the page redraws the
// call, and disarms its buttons, whenever its rendering changes, and the
// seconds left change every second (the page counts them in its status
// line, from held_until).
func steady(head []webconsole.Line) []webconsole.Line {
	for i, l := range head {
		head[i].Text = heldFor.ReplaceAllString(l.Text, "$1)")
	}
	return head
}

func (b *localConsole) Decide(ctx context.Context, c webconsole.Call, d webconsole.Decision, proof webconsole.Proof) (string, error) {
	m, err := approve.Load(ctx)
	if err != nil {
		return "", err
	}
	m.Stamp = proof.Stamp
	p, now := c.Pending, time.Now()
	switch d.Kind {
	case webconsole.Approve:
		next := approve.Next(p, now)
		g, err := approve.Exact(b.st, m, p, b.ttl, now)
		if err != nil {
			return "", err
		}
		return approvedMessage(p.ID, m.Principal, g, next), nil
	case webconsole.Grant:
		return approveGrantSigned(ctx, b.st, m, c, d, b.ge, b.grantTTL, now, func() (string, error) {
			next := approve.Next(p, now)
			_, err := approve.Exact(b.st, m, p, b.ttl, now)
			return next, err
		})
	case webconsole.Deny:
		if err := approve.Deny(b.st, m, p, d.Note, now); err != nil {
			return "", err
		}
		return fmt.Sprintf("Denied %s as %s. The agent is told a human refused it.", p.ID, m.Principal), nil
	}
	return "", fmt.Errorf("unknown decision %q", d.Kind)
}

// approvedMessage is the console's answer to an approval of call id.
func approvedMessage(id, principal string, g *token.Grant, next string) string {
	return fmt.Sprintf("Approved %s as %s: grant %s, single use, valid until %s. %s", id, principal, g.ID(), present.FormatTime(g.Expiry), next)
}

// approveGrantSigned approves call c once (exact) and grants the rule the
// human signed, which must still be the narrowest rule for the call.
func approveGrantSigned(_ context.Context, st *state.Store, m *approve.Minter, c webconsole.Call, d webconsole.Decision, ge cli.GrantEnv, grantTTL time.Duration,
	now time.Time, exact func() (string, error)) (string, error) {
	p := c.Pending
	rule, err := review.OfferedRule(p, ge)
	if err != nil {
		return "", err
	}
	if rule.String() != d.Rule {
		return "", errors.New("the rule offered changed since it was signed: decide again")
	}
	next, err := exact()
	if err != nil {
		return "", err
	}
	session, where := review.GrantBinding(p)
	g, err := approve.Grant(st, m, rule, session, p.Agent, now.Add(grantTTL).Truncate(time.Second), now, state.GrantRecord{Created: now.UTC()})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Approved %s and granted %s to %s as %s, until %s. %s", p.ID, present.EscapeText(g.Scope), where, m.Principal,
		present.FormatTime(g.Expiry), next), nil
}

// teamConsole is the calls waiting across the team (Vault backend),
// decided through Vault with the approver's identity.
type teamConsole struct {
	st            *state.Store
	m             *approve.Minter
	ttl, grantTTL time.Duration
	offer
}

func (b *teamConsole) call(tp *vault.TeamPending, now time.Time) webconsole.Call {
	p := tp.Pending
	// That a hook waits is the machine's word (its record): said as such.
	held := tp.Says.HeldUntil
	c := webconsole.Call{Pending: p, Host: approve.MachineName(tp), Held: now.Before(held), Status: "open"}
	if c.Held {
		c.Status = "held on " + present.EscapeText(c.Host) + " (its machine says), " + held.Sub(now).Round(time.Second).String() + " left"
	}
	return c
}

func (b *teamConsole) Queue(ctx context.Context) ([]webconsole.Call, error) {
	now := time.Now()
	list, _, err := approve.TeamQueue(ctx, b.m.Team, cli.QueueFilter{}, nil, now)
	var out []webconsole.Call
	for _, tp := range list {
		out = append(out, b.call(tp, now))
	}
	return out, err
}

// get reads and verifies the record of the team's pending call id.
func (b *teamConsole) get(ctx context.Context, id string) (*vault.TeamPending, error) {
	key, err := approve.ResolveTeam(ctx, b.m.Team, id)
	if err != nil {
		return nil, err
	}
	return approve.TeamGet(ctx, b.m.Team, key)
}

func (b *teamConsole) Get(ctx context.Context, id string) (webconsole.Call, error) {
	tp, err := b.get(ctx, id)
	if err != nil {
		return webconsole.Call{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	tok, by, err := b.m.Team.Answer(cctx, tp.Key)
	if err != nil {
		return webconsole.Call{}, err
	}
	if tok != "" || by != "" {
		return webconsole.Call{}, webconsole.ErrNotOpen
	}
	return b.call(tp, time.Now()), nil
}

// Render is team approve's rendering, read again from Vault and verified:
// the machine as Vault knows it and the call, then what the machine says
// (plain lines, never marked up as loopguard's warnings are), then the
// call in full.
func (b *teamConsole) Render(c webconsole.Call) ([]webconsole.Line, []webconsole.Line) {
	ctx, cancel := context.WithTimeout(context.Background(), cli.VaultTimeout)
	defer cancel()
	tp, err := b.get(ctx, c.Pending.ID)
	if err != nil || tp.Pending.Digest != c.Pending.Digest {
		// The call as it was verified, without what the machine says.
		tp = &vault.TeamPending{MachineName: c.Host, Pending: c.Pending}
	}
	head, says, _ := approve.TeamParts(tp)
	_, body := cli.RenderParts(nil, tp.Pending, true) // whole, as on this machine
	lines := steady(review.LineKinds(head, true))
	if says != "" {
		for _, l := range strings.Split(strings.TrimSuffix(says, "\n"), "\n") {
			lines = append(lines, webconsole.Line{Text: l})
		}
	}
	return lines, review.LineKinds(body, false)
}

func (b *teamConsole) Decide(ctx context.Context, c webconsole.Call, d webconsole.Decision, proof webconsole.Proof) (string, error) {
	m := *b.m
	m.Stamp = proof.Stamp
	p, now := c.Pending, time.Now()
	key, err := approve.ResolveTeam(ctx, b.m.Team, p.ID)
	if err != nil {
		return "", err
	}
	// What was shown (c.Pending) is what is approved: approve.TeamExact checks
	// that the record at key still holds it.
	tp := &vault.TeamPending{Key: key, MachineName: c.Host, Pending: p}
	// The local log is this machine's diary (Vault's audit device is the
	// record): it keeps the signed decision.
	diary := func(decision, grant string) error {
		return cli.Record(b.st, nil, proof.Stamp(audit.Entry{Session: p.Session, Agent: p.Agent, AgentType: p.AgentType, Tool: p.Tool,
			Digest: p.Digest, Decision: decision, Pending: p.ID, Grant: grant, Principal: m.Principal, Detail: "machine " + present.EscapeText(c.Host)}))
	}
	switch d.Kind {
	case webconsole.Approve:
		g, next, err := approve.TeamExact(ctx, &m, tp, b.ttl, now)
		if err != nil {
			return "", err
		}
		if err := diary("approve", g.ID()); err != nil {
			return "", err
		}
		return approvedMessage(p.ID, m.Principal, g, next), nil
	case webconsole.Grant:
		return approveGrantSigned(ctx, b.st, &m, c, d, b.ge, b.grantTTL, now, func() (string, error) {
			g, next, err := approve.TeamExact(ctx, &m, tp, b.ttl, now)
			if err != nil {
				return "", err
			}
			return next, diary("approve", g.ID())
		})
	case webconsole.Deny:
		if err := approve.TeamDeny(ctx, &m, key, now); err != nil {
			return "", err
		}
		if err := diary("deny-pending", ""); err != nil {
			return "", err
		}
		msg := fmt.Sprintf("Denied %s as %s. The agent on %s is told a human refused it.", p.ID, m.Principal, present.EscapeText(c.Host))
		if d.Note != "" {
			msg += " (A note does not travel through Vault: the agent is not shown it.)"
		}
		return msg, nil
	}
	return "", fmt.Errorf("unknown decision %q", d.Kind)
}
