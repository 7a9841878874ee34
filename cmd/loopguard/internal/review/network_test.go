package review

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/internal/enginetest"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/token"
)

// TestNetworkOffer: a call held because it leaves the jail for the
// network alone is offered n, the exact command with +network:443 (never
// wider than shown), whose line says it also reaches this machine's
// services and the local network, and g is not (its rule would lack the
// network); a program that runs project code is offered no network grant
// and told the form that runs none; a call that needs more than the
// network, or none, gets no n (controls).
func TestNetworkOffer(t *testing.T) {
	w := &offerWorld{World: enginetest.New(t, "curl", "npm", "git", "ls")}
	w.Project = realPath(t, w.Project)
	w.Bin = realPath(t, w.Bin)
	if err := os.MkdirAll(filepath.Join(w.Project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.ge = cli.GrantEnv{Home: w.Home, Path: w.Bin, Trusted: []string{w.Bin}}
	jail, err := scope.Parse(scope.JailRule)
	if err != nil {
		t.Fatal(err)
	}
	w.PutScoped(t, jail, "alice", token.Any, token.Any, time.Now())
	decide := func(t *testing.T, cmd string) hooks.Decision {
		t.Helper()
		e := &hooks.Engine{Store: w.Store, Audit: audit.Open(filepath.Join(w.Store.Dir, "audit")), LoadKey: enginetest.LoadKey(&w.keyErr), Now: time.Now,
			Env: hooks.Env{Path: w.Bin, Home: w.Home, Trusted: []string{w.Bin}, Self: filepath.Join(w.Base, "self", "loopguard"), StateDir: w.Store.Dir,
				ProjectDir: w.Project, Launcher: "/opt/lg/loopguard-exec"}}
		c := &hooks.Call{Event: hooks.PreToolUse, SessionID: "s-net", Cwd: w.Project, ToolName: "Bash", ToolUseID: "toolu_" + cmd,
			PermissionMode: "default", ToolInput: map[string]any{"command": cmd}, Rewrite: true}
		return e.Decide(context.Background(), c)
	}
	for _, c := range []struct {
		cmd, net, line string // net: n's rule ("" for none); line: in netLines
		g              bool
	}{
		{"curl -fsSL https://example.com/x.tgz", "Bash(curl -fsSL https://example.com/x.tgz)@ " + filepath.Join(w.Bin, "curl") + " +network:443",
			"services on this machine and the local network", false},
		// The ports the URLs name, never more.
		{"curl -fsSL http://example.com:8080/x https://example.org/y", "Bash(curl -fsSL http://example.com:8080/x https://example.org/y)@ " + filepath.Join(w.Bin, "curl") + " +network:443,8080",
			"TCP connect to ports 443, 8080 (no listener)", false},
		{"curl -fsSL http://example.com/x", "Bash(curl -fsSL http://example.com/x)@ " + filepath.Join(w.Bin, "curl") + " +network:80",
			"TCP connect to port 80 (no listener)", false},
		{"npm ci --ignore-scripts", "Bash(npm ci --ignore-scripts)@ " + filepath.Join(w.Bin, "npm") + " +network:443",
			"TCP connect to port 443 (no listener)", false},
		{"npm ci", "", "loopguard grant 'Bash(npm ci --ignore-scripts) +network:443', then npm rebuild", false},
		// A package named: no rule takes it; the form is approved once.
		{"npm install lodash", "", "approve the form that runs no project code once: npm install --ignore-scripts lodash, then npm rebuild", false},
		{"npm install --ignore-scripts lodash", "", "No network grant is offered (no narrow rule covers this call", false},
		// Controls: more than the network, or no network at all.
		{"git push origin main", "", "", false},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			d := decide(t, c.cmd)
			if d.Reason != hooks.ReasonLeavesJail || d.Pending == "" {
				t.Fatalf("%s: %s/%s, want held for leaving the jail", c.cmd, d.Behavior, d.Reason)
			}
			p, err := w.Store.GetPending(d.Pending)
			if err != nil {
				t.Fatal(err)
			}
			o := offerFor(w.Store, p, w.ge, time.Now())
			if o.netErr == nil {
				// The pin (a digest where the stub lies) between the
				// command and the program's path.
				head, tail, _ := strings.Cut(c.net, "@ ")
				if got := o.net.String(); !strings.HasPrefix(got, head+"@") || !strings.HasSuffix(got, tail) || o.nKey() == "" {
					t.Errorf("n grants %q, want %q", got, c.net)
				}
			} else if c.net != "" {
				t.Errorf("no n: %v; want %q", o.netErr, c.net)
			}
			if c.net == "" && o.nKey() != "" {
				t.Errorf("n offered: %s", o.nKey())
			}
			if l := o.netLines(400); !strings.Contains(strings.ReplaceAll(l, "\n", " "), c.line) {
				t.Errorf("net lines %q lack %q", l, c.line)
			}
			if (o.gKey() != "") != c.g {
				t.Errorf("g offered %q (err %v), want %t", o.gKey(), o.err, c.g)
			}
		})
	}
}
