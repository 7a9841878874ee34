package team

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/present"
)

// team: the calls waiting across machines that share a Vault, for an
// approver on their own machine (backend vault, logged in to Vault with the
// approver policy). `review --backend vault` is the console over the same
// calls; team is the surface for scripts and for one call at a time.
func NewCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "team",
		Short: "Review and approve calls waiting on other machines (Vault backend)",
		Long: `With "backend": "vault", every agent machine's hook publishes the calls it
holds to Vault. On your own machine, logged in to Vault as an approver
(vault login), list them, review one exactly as loopguard show renders it,
and approve or deny it; the waiting hook on the agent's machine runs the call
once. The grant is minted by Vault's Transit key under your Vault identity.
'loopguard review --backend vault' is the live console over the same calls.`,
		Example: "  loopguard team pending\n  loopguard team approve k3v9     # any unique prefix of an id\n  loopguard team deny k3v9x2abqw7dn4ygh5mse6ct",
	}
	cmd.AddCommand(newTeamPendingCmd(), newTeamApproveCmd(), newTeamDenyCmd(), newTeamEnrollCmd())
	return cmd
}

// teamPendingOptions is what team pending needs: a writer, the team's
// custody in Vault and the clock.
type teamPendingOptions struct {
	out  io.Writer
	team *vault.Custody
	now  func() time.Time
}

func newTeamPendingCmd() *cobra.Command {
	o := &teamPendingOptions{now: time.Now}
	return &cobra.Command{
		Use:     "pending",
		Short:   "List the calls waiting across the team",
		Example: "  loopguard team pending",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := approve.LoadTeam(cmd.Context())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), cli.VaultTimeout)
			defer cancel()
			o.out, o.team = cmd.OutOrStdout(), m.Team
			return teamPendingRun(ctx, o)
		},
	}
}

func teamPendingRun(ctx context.Context, o *teamPendingOptions) error {
	out, now := o.out, o.now()
	list, err := o.team.TeamList(ctx)
	if err != nil {
		return err
	}
	return teamTable(out, list, now)
}

// teamTable lists the team's records: the verified ones as a table, then
// each unreadable one by its key.
func teamTable(out io.Writer, list []vault.TeamPending, now time.Time) error {
	esc := present.EscapeText
	tw := cli.Table(out, "ID", "AGE", "MACHINE", "PROJECT", "SESSION", "AGENT", "STATE", "CALL")
	var bad []vault.TeamPending
	for _, tp := range list {
		if tp.Err != nil {
			bad = append(bad, tp)
			continue
		}
		p := tp.Pending
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", esc(p.ID), cli.ShortAge(now.Sub(tp.Written)), esc(cli.Short(approve.MachineName(&tp), 20)),
			esc(cli.Short(p.ProjectDir, 30)), esc(cli.Short(p.Session, 8)), esc(cli.Short(p.Agent, 16)), approve.TeamState(&tp), present.Summary(p))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, tp := range bad {
		fmt.Fprintln(out, approve.UnreadableLine(&tp))
	}
	return nil
}

// teamCall is the approver's side and the published call arg names.
func teamCall(ctx context.Context, arg string) (*approve.Minter, string, error) {
	m, err := approve.LoadTeam(ctx)
	if err != nil {
		return nil, "", err
	}
	id, err := approve.ResolveTeam(ctx, m.Team, arg)
	return m, id, err
}

// teamApproveOptions is what team approve needs: its flag, the human's
// terminal, the approver's minter and the verified call.
type teamApproveOptions struct {
	tty    *os.File
	minter *approve.Minter
	call   *vault.TeamPending
	ttl    time.Duration // --ttl
}

func newTeamApproveCmd() *cobra.Command {
	o := &teamApproveOptions{}
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve exactly one call waiting on another machine, once",
		Long: `Show the call as the agent's machine published it, rendered from its
canonical bytes, and, once you type the first characters of its digest, have
Vault mint a single-use grant for that exact call under your Vault identity.
The hook waiting on the agent's machine runs it once. ID may be any unique
prefix of a pending id. Talks to /dev/tty only.`,
		Example: "  loopguard team approve k3v9x2abqw7dn4ygh5mse6ct --ttl 2m",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckApprovalTTL(o.ttl); err != nil {
				return err
			}
			tty, err := cli.OpenTTY()
			if err != nil {
				return err
			}
			defer tty.Close()
			ctx := cmd.Context()
			m, key, err := teamCall(ctx, args[0])
			if err != nil {
				return err
			}
			tp, err := approve.TeamGet(ctx, m.Team, key)
			if err != nil {
				return err
			}
			if !tp.Open() {
				return approve.ErrDecided(tp, tp.Decision)
			}
			o.tty, o.minter, o.call = tty, m, tp
			return teamApproveRun(ctx, o)
		},
	}
	cmd.Flags().DurationVar(&o.ttl, "ttl", 10*time.Minute, "how long the approval stays valid (at most 24h)")
	return cmd
}

// teamDenyOptions is what team deny needs: a writer, the approver's
// minter, the call's key in Vault and the clock.
type teamDenyOptions struct {
	out    io.Writer
	minter *approve.Minter
	key    string
	now    func() time.Time
}

func newTeamDenyCmd() *cobra.Command {
	o := &teamDenyOptions{now: time.Now}
	return &cobra.Command{
		Use:     "deny ID",
		Short:   "Refuse a call waiting on another machine",
		Example: "  loopguard team deny k3v9x2abqw7dn4ygh5mse6ct",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			m, key, err := teamCall(ctx, args[0])
			if err != nil {
				return err
			}
			o.out, o.minter, o.key = cmd.OutOrStdout(), m, key
			return teamDenyRun(ctx, o)
		},
	}
}

// teamDenyRun refuses the call at o.key: team deny.
func teamDenyRun(ctx context.Context, o *teamDenyOptions) error {
	if err := approve.TeamDeny(ctx, o.minter, o.key, o.now()); err != nil {
		return err
	}
	_, id, _ := strings.Cut(o.key, "/")
	fmt.Fprintf(o.out, "Denied %s as %s.\n", present.EscapeText(id), present.EscapeText(o.minter.Principal))
	return nil
}

// teamApproveRun shows the verified call o.call on o.tty, has the human
// confirm it, and approves it: team approve.
func teamApproveRun(ctx context.Context, o *teamApproveOptions) error {
	tty, m, tp, ttl := o.tty, o.minter, o.call, o.ttl
	head, says, body := approve.TeamParts(tp)
	fmt.Fprint(tty, cli.FoldTo(tty, head+says+"\n"+body)) // folded: cli.Fold
	return approve.TeamApprove(ctx, tty, m, tp, ttl, approve.PrefixLen)
}

// maxEnrollTTL is the longest an agent machine's token lives (Vault's
// default max_lease_ttl is 768h).
const maxEnrollTTL = 768 * time.Hour

// teamEnrollOptions is what team enroll needs: its argument and flags, a
// writer and the administrator's Vault client.
type teamEnrollOptions struct {
	out    io.Writer
	client *vault.Client
	name   string        // NAME: the machine
	path   string        // --out: where its token is written
	ttl    time.Duration // --ttl
}

func newTeamEnrollCmd() *cobra.Command {
	o := &teamEnrollOptions{}
	cmd := &cobra.Command{
		Use:   "enroll NAME --out FILE",
		Short: "Make an agent machine's Vault token, with an identity of its own",
		Long: `Make the Vault token of agent machine NAME (an administrator, logged in
to Vault with the loopguard-enroll policy): a token through the token role
loopguard-agent, with the agent policy only and a Vault identity named NAME.
Every path the agent policy lets it write or read is under that identity,
so one machine cannot publish a call as another, read the approvals made
for another, or claim another's grants. The token is written to FILE
(created, mode 0600); put it at the agent machine's token_file, and run
loopguard doctor there. Enrolling a NAME again makes another token of the
same machine (to replace an expired one).`,
		Example: "  loopguard team enroll build-box-1 --out /tmp/build-box-1.token --ttl 720h",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.RefuseInAgent(); err != nil {
				return err
			}
			if o.path == "" {
				return errors.New("--out FILE is required: the new token is written there, never printed")
			}
			if o.ttl <= 0 || o.ttl > maxEnrollTTL {
				return fmt.Errorf("--ttl %s: want more than 0 and at most %s", o.ttl, maxEnrollTTL)
			}
			cfg, err := cli.LoadConfig()
			if err != nil {
				return err
			}
			if cfg.Backend != config.BackendVault {
				return cli.WithHint(errors.New("team enroll needs the Vault backend"), `set "backend": "vault" and a "vault" section in the config (README, Teams)`)
			}
			c, _, err := cli.VaultClient(cfg)
			if err != nil {
				return err
			}
			o.out, o.client, o.name = cmd.OutOrStdout(), c, args[0]
			return teamEnrollRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.path, "out", "", "file to write the new token to (created, mode 0600)")
	cmd.Flags().DurationVar(&o.ttl, "ttl", 720*time.Hour, "how long the token is valid (at most 768h)")
	return cmd
}

// teamEnrollRun enrolls machine o.name with the administrator's client and
// writes its token to o.path, which must not exist.
func teamEnrollRun(ctx context.Context, o *teamEnrollOptions) error {
	w, c, name, path, ttl := o.out, o.client, o.name, o.path, o.ttl
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("failed to create the token file: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	e, err := vault.Enroll(cctx, c, name, ttl)
	if err != nil {
		f.Close()
		os.Remove(path)
		if errors.Is(err, vault.ErrDenied) {
			return cli.WithHint(err, "your Vault token may not enroll machines: administrators need the loopguard-enroll policy (backend/vault/policies/enroll.hcl) and the token role loopguard-agent (README, Teams)")
		}
		return err
	}
	if _, err := f.WriteString(e.Token + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("failed to write the token file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(w, "Enrolled %s: Vault identity %s, token in %s (valid %s).\n", present.EscapeText(e.Name), present.EscapeText(e.EntityID), present.EscapeText(path), ttl)
	fmt.Fprintln(w, "Put the token at the agent machine's token_file (mode 0600) and run loopguard doctor there.")
	return nil
}
