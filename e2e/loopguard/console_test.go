package loopguard

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/e2e/browser"
	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/e2e/ntfystub"
)

// serve starts `loopguard serve` on a free loopback port and returns the
// console's origin; it is stopped when the test ends.
func (e *env) serve(ctx context.Context, args ...string) string {
	t := e.t
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := e.g.Command(ctx, e.g.Home, append([]string{"serve", "--listen", addr}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	re := regexp.MustCompile(`the console is at (http://localhost:\d+)`)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("loopguard serve ended: %s", stderr.Bytes())
			}
			if m := re.FindStringSubmatch(l); m != nil {
				go func() {
					for range lines {
					}
				}()
				return m[1]
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("loopguard serve did not start: %s", stderr.Bytes())
		}
	}
}

// passkeyAdd runs passkey add on a terminal of its own, types the code it
// asks for, and returns what it showed.
func (g *Guard) passkeyAdd(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := g.Command(ctx, g.Home, append([]string{"passkey", "add"}, args...)...)
	tm, err := startOnPTY(cmd)
	if err != nil {
		return "", err
	}
	defer tm.close()
	scr, err := tm.waitUntil(ctx, "the code to type", func(s string) bool { return typeCode.MatchString(s) })
	if err != nil {
		return scr, err
	}
	if err := tm.write(typeCode.FindStringSubmatch(scr)[1] + "\r"); err != nil {
		return scr, err
	}
	werr := cmd.Wait()
	return tm.drain(), werr
}

var typeCode = regexp.MustCompile(`Type ([a-z2-9]{6}) to print it`)

var enrollLink = regexp.MustCompile(`http://localhost:\d+/enroll#[A-Za-z0-9_-]{43}`)

// The console against the real client: a passkey registered through the
// terminal (passkey add on a pty; refused inside an agent and without a
// terminal), then four calls held by the real Claude Code and decided
// from the page, each signed by the passkey: an Edit approved once (the
// screenshots are taken of it), a Bash call approved once that then runs
// exactly once, a call approved and granted whose identical next call runs
// under the grant, a call denied with a note the model is shown, and an
// approved probe that finds the console closed to it inside Claude Code's
// sandbox. Each held call is pushed to an ntfy topic with none of its
// content; audit verify checks every signature with the public keys alone.
func TestConsoleRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.g.Run(e.ctx, e.Dir, "init", "--project", "--no-jail"); err != nil { // wait mode: calls are held
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 4*time.Minute)
	defer cancel()
	// The human's ntfy topic (its documented publish API, on loopback).
	ntfy := &ntfystub.Server{}
	ns := httptest.NewServer(ntfy)
	defer ns.Close()
	cfgPath := filepath.Join(e.g.Home, ".config", "loopguard", "config.json")
	cfg := map[string]any{}
	if b, err := os.ReadFile(cfgPath); err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("config: %v", err)
	}
	cfg["notify"] = map[string]any{"desktop": false, "ntfy": map[string]any{"url": ns.URL + "/lg-e2e"}}
	if b, err := json.Marshal(cfg); err != nil || os.WriteFile(cfgPath, b, 0o600) != nil {
		t.Fatal(err)
	}
	origin := e.serve(ctx)

	// Registration from inside an agent, or with no terminal: refused.
	agentCmd := e.g.Command(ctx, e.g.Home, "passkey", "add")
	agentCmd.Env = append(agentCmd.Env, "CLAUDECODE=1")
	if out, err := agentCmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "inside") || enrollLink.Match(out) {
		t.Errorf("passkey add inside an agent: %v\n%s", err, out)
	}
	noTTY := e.g.Command(ctx, e.g.Home, "passkey", "add")
	noTTY.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as the agent's commands run: no controlling terminal
	if out, err := noTTY.CombinedOutput(); err == nil || !strings.Contains(string(out), "no controlling terminal") || enrollLink.Match(out) {
		t.Errorf("passkey add without a terminal: %v\n%s", err, out)
	}
	// Control: the human's terminal gets the link, once the code it shows
	// is typed.
	screen, err := e.g.passkeyAdd(ctx, "--name", "e2e phone")
	link := enrollLink.FindString(screen)
	if err != nil || link == "" || !strings.HasPrefix(link, origin+"/enroll#") {
		t.Fatalf("passkey add on a terminal: %v\n%s", err, screen)
	}

	b := browser.Start(t)
	b.AddAuthenticator()
	if err := b.Open(link, "button.primary", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.Click("button.primary"); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.querySelector("[data-enrolled]")`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.Open(origin+"/", `[data-action="signin"]`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.Click(`[data-action="signin"]`); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.querySelector("[data-empty]")`, 20*time.Second); err != nil {
		t.Fatal(err)
	}

	f := e.path("main.go")
	if err := os.WriteFile(f, []byte("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// decide waits for the call in focus to be the one whose text holds
	// want, its buttons armed, then clicks action (with a note for a deny)
	// and waits for the page to say it was decided.
	decide := func(want, action, note string, shots bool) error {
		sel := `[...document.querySelectorAll("article.call[data-armed]")].find(c => c.innerText.includes(` + fmt.Sprintf("%q", want) + `))`
		if err := b.WaitJS(sel, 90*time.Second); err != nil {
			return err
		}
		var id string
		if err := b.Eval(sel+".dataset.id", &id); err != nil {
			return err
		}
		if shots {
			if err := screenshots(t, b); err != nil {
				return err
			}
		}
		card := fmt.Sprintf(`[data-id=%q] `, id)
		decision := action
		if action == "deny" {
			if err := b.Click(card + `[data-action="deny"]`); err != nil {
				return err
			}
			if err := b.Type(card+`textarea`, note); err != nil {
				return err
			}
			action = "deny-confirm"
		}
		if err := b.Click(card + fmt.Sprintf(`[data-action=%q]`, action)); err != nil {
			return err
		}
		return b.WaitJS(fmt.Sprintf(`document.querySelector("main").dataset.decided === %q || document.querySelector('[data-id=%q][data-error]')`, id+" "+decision, id), 30*time.Second)
	}
	human := make(chan error, 1)
	go func() {
		human <- func() error {
			if err := decide("Edit "+f, "approve", "", true); err != nil {
				return fmt.Errorf("the Edit: %w", err)
			}
			if err := decide("echo held >> runs.txt", "approve", "", false); err != nil {
				return fmt.Errorf("the held echo: %w", err)
			}
			if err := decide("ls -a", "grant", "", false); err != nil {
				return fmt.Errorf("ls -a: %w", err)
			}
			if err := decide("echo denied >> runs.txt", "deny", "use make test instead", false); err != nil {
				return fmt.Errorf("the denied echo: %w", err)
			}
			return decide("curl -sS -m 5", "approve", "", false)
		}()
	}()
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(claudetest.Call("toolu_cr0", "Read", map[string]any{"file_path": f})),
		claudetest.Tools(claudetest.Call("toolu_ce1", "Edit", map[string]any{"file_path": f, "old_string": "println(\"hello\")", "new_string": "println(\"hello, console\")", "replace_all": false})),
		claudetest.Tools(bash("toolu_cb2", "echo held >> runs.txt")),
		claudetest.Tools(bash("toolu_cb3", "ls -a")),
		claudetest.Tools(bash("toolu_cb4", "ls -a")), // covered by the grant
		claudetest.Tools(bash("toolu_cb5", "echo denied >> runs.txt")),
		// Approved code inside Claude Code's sandbox tries the console.
		claudetest.Tools(bash("toolu_cb6", "curl -sS -m 5 "+origin+"/api/state > probe.txt 2>&1; echo \"exit $?\" >> probe.txt")),
		claudetest.Text("done"),
	}}, nil)
	if err := <-human; err != nil {
		var page string
		_ = b.Eval(`document.body.innerText`, &page)
		t.Fatalf("the human at the console: %v\npage:\n%s", err, page)
	}
	wantRan(t, api, "toolu_ce1")
	wantRan(t, api, "toolu_cb2")
	wantRan(t, api, "toolu_cb3")
	wantRan(t, api, "toolu_cb4")
	if got := e.read("main.go"); !strings.Contains(got, `println("hello, console")`) {
		t.Errorf("main.go = %q; want the approved edit", got)
	}
	if got := e.read("runs.txt"); got != "held\n" {
		t.Errorf("runs.txt = %q; want the approved call to have run exactly once, the denied one never", got)
	}
	if r := result(t, api, "toolu_cb5"); !r.IsError || !strings.Contains(r.Content, "use make test instead") {
		t.Errorf("the denied call's result %+v; want the note shown to the model", r)
	}
	if n := len(api.Requests()); n != 8 {
		t.Errorf("the model was asked %d times; want 8 (no retries)", n)
	}
	// The sandbox closes loopback to Bash: the approved probe ran and did
	// not reach the console. Control: from outside the sandbox it answers.
	wantRan(t, api, "toolu_cb6")
	if probe := e.read("probe.txt"); !strings.Contains(probe, "exit ") || strings.Contains(probe, "exit 0") || strings.Contains(probe, "signed_in") {
		t.Errorf("the sandboxed probe reached the console:\n%s", probe)
	} else {
		t.Logf("the sandboxed probe: %s", strings.TrimSpace(probe))
	}
	if resp, err := http.Get(origin + "/api/state"); err != nil || resp.StatusCode != 200 {
		t.Errorf("control: the console from outside the sandbox: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	entries, err := e.g.Audit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, en := range entries {
		if en.Event == "PreToolUse" && en.Decision == "allow" {
			reasons[en.Tool+" "+en.Digest] = en.Reason
		}
	}
	last, err := e.g.LastDecision(e.ctx, "PreToolUse")
	if err != nil {
		t.Fatal(err)
	}
	_ = last
	scoped := 0
	for _, r := range reasons {
		if r == "scoped_grant" {
			scoped++
		}
	}
	if scoped == 0 {
		t.Errorf("no call ran under the grant: %v", reasons)
	}
	// Each held call was pushed, with none of its content.
	pushes := ntfy.Messages()
	if len(pushes) == 0 {
		t.Error("no push reached the ntfy topic")
	}
	for _, m := range pushes {
		if m.Topic != "lg-e2e" || m.Click != origin {
			t.Errorf("push %+v; want topic lg-e2e, the console's link", m)
		}
		for _, secret := range []string{"main.go", "println", "echo", "runs.txt", "echo held", "ls -a", "denied", e.Dir, "Edit", "Bash"} {
			if strings.Contains(m.Text(), secret) {
				t.Errorf("a push holds %q:\n%s", secret, m.Text())
			}
		}
	}
	t.Logf("%d push(es), e.g. %q", len(pushes), pushes)
	// Every signed decision verifies with the passkey's public key alone:
	// here, and from the exported public keys with no master key.
	out, err := e.g.Run(e.ctx, e.g.Home, "audit", "verify")
	if err != nil || !strings.Contains(out, "signed:    6 decision(s) signed with a passkey verify") {
		t.Errorf("audit verify: %v\n%s", err, out)
	}
	keys, err := e.g.Run(e.ctx, e.g.Home, "passkey", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	kf := filepath.Join(t.TempDir(), "passkeys.json")
	if err := os.WriteFile(kf, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = e.g.Run(e.ctx, e.g.Home, "audit", "verify", "--signatures", "--passkeys", kf)
	if err != nil || !strings.Contains(out, "signed:    6 decision(s)") {
		t.Errorf("audit verify --signatures --passkeys: %v\n%s", err, out)
	}
	// Control: with another passkey's key in the file, none verifies.
	other := regexp.MustCompile(`"public_key": "[^"]+"`).ReplaceAllString(keys, `"public_key": "`+otherKey(t)+`"`)
	if err := os.WriteFile(kf, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := e.g.Run(e.ctx, e.g.Home, "audit", "verify", "--signatures", "--passkeys", kf); err == nil || !strings.Contains(out, "PROBLEM") {
		t.Errorf("audit verify with a wrong public key passed: %v\n%s", err, out)
	}
}

// otherKey is a fresh P-256 public key as a COSE key, base64url: a passkey
// that signed nothing.
func otherKey(t *testing.T) string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := k.PublicKey.Bytes() // 0x04 || X || Y
	// CBOR {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: X, -3: Y}
	b := append([]byte{0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20}, pub[1:33]...)
	b = append(append(b, 0x22, 0x58, 0x20), pub[33:]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// screenshots takes the console at phone and desktop size, checks they
// are images of that size, and writes them to $LOOPGUARD_SCREENSHOTS (make
// screenshots: docs/console) when it is set.
func screenshots(t *testing.T, b *browser.Browser) error {
	for _, s := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"phone.png", 390, 844, true}, {"desktop.png", 1280, 860, false}} {
		shot := b.Screenshot(s.width, s.height, 2, s.mobile)
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if w := img.Bounds().Dx(); w != int(2*s.width) {
			return fmt.Errorf("%s is %d pixels wide; want %d", s.name, w, 2*s.width)
		}
		if dir := os.Getenv("LOOPGUARD_SCREENSHOTS"); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, s.name), shot, 0o644); err != nil {
				return err
			}
		}
	}
	_ = b.Screenshot(1280, 900, 1, false)
	return nil
}
