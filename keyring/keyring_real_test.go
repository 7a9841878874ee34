//go:build linux

package keyring

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"

	"github.com/loopguard/loopguard/internal/keyringtest"
)

// The real-keyring tests run gnome-keyring-daemon on private D-Bus buses of
// their own, one per test, with HOME in a temporary directory, and drive this
// package from child processes (go-keyring's bus connection is process-wide).
// They run inside scripts/with-keyring (keyringtest.Require); under `make
// test` (LOOPGUARD_REQUIRE_REAL_KEYRING=1) a missing session is a failure,
// not a skip.

func needCmd(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Fatalf("%s not found (make deps installs it): %v", n, err)
		}
	}
}

// privateBus starts a private bus (keyringtest.PrivateBus) for the test
// and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	addr, stop, err := keyringtest.PrivateBus(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// keyringEnv is the environment of a child process on bus addr with home.
func keyringEnv(addr, home string) []string {
	return []string{
		busEnv + "=" + addr, "HOME=" + home,
		"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR=" + filepath.Join(home, "run"),
	}
}

var envDrop = []string{busEnv, "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "GNOME_KEYRING_CONTROL"}

func withEnv(env []string) []string {
	var base []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range envDrop {
			if name == d {
				keep = false
			}
		}
		if keep {
			base = append(base, kv)
		}
	}
	return append(base, env...)
}

// realKeyring is a gnome-keyring-daemon on a private bus.
type realKeyring struct {
	addr, home string
	env        []string
	logPath    string     // the daemon's output
	exited     chan error // the daemon's exit, once it ended
}

// startKeyring starts gnome-keyring-daemon on a new private bus with a new
// HOME. With unlock, the daemon reads a password on stdin and creates and
// unlocks the "login" keyring with it; without, it starts as D-Bus activation
// would start it (no login keyring in a fresh HOME).
func startKeyring(t *testing.T, unlock bool) *realKeyring {
	t.Helper()
	needCmd(t, "gnome-keyring-daemon")
	rk := &realKeyring{addr: privateBus(t), home: t.TempDir()}
	rk.env = keyringEnv(rk.addr, rk.home)
	if err := os.MkdirAll(filepath.Join(rk.home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	args := []string{"--foreground", "--components=secrets"}
	if unlock {
		args = append(args, "--unlock")
	} else {
		args = append(args, "--start")
	}
	cmd := exec.Command("gnome-keyring-daemon", args...)
	cmd.Env = withEnv(rk.env)
	cmd.Stdin = strings.NewReader("throwaway-test-password")
	rk.logPath, rk.exited = filepath.Join(rk.home, "daemon.log"), make(chan error, 1)
	logFile, err := os.Create(rk.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the daemon has its own copy
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { rk.exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-rk.exited })
	conn := rk.conn(t)
	for {
		var owned bool
		if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, ssName).Store(&owned); err != nil {
			t.Fatal(err)
		}
		if owned {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("gnome-keyring-daemon does not own %s after 5s", ssName)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("gnome-keyring-daemon %v ready in %v", args, time.Since(start).Round(time.Millisecond))
	return rk
}

// conn connects the test process to the private bus.
func (rk *realKeyring) conn(t *testing.T) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(rk.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func (rk *realKeyring) run(t *testing.T, ops ...string) []helperResult {
	t.Helper()
	return runHelper(t, envDrop, rk.env, ops...)
}

// secretTool runs secret-tool on the private bus.
func (rk *realKeyring) secretTool(t *testing.T, stdin string, args ...string) (stdout, stderr string) {
	t.Helper()
	needCmd(t, "secret-tool")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "secret-tool", args...)
	cmd.Env = withEnv(rk.env)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil && args[0] != "search" && args[0] != "lookup" {
		t.Fatalf("secret-tool %s: %v: %s", args[0], err, e.String())
	}
	return o.String(), e.String()
}

// items returns the secrets of the items `secret-tool search --all service
// loopguard` lists (never logged: they are keys).
func (rk *realKeyring) items(t *testing.T) []string {
	t.Helper()
	out, errOut := rk.secretTool(t, "", "search", "--all", "service", Service)
	var secrets []string
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "[/") {
			n++
		}
		if s, ok := strings.CutPrefix(line, "secret = "); ok {
			secrets = append(secrets, s)
		}
	}
	if n != len(secrets) {
		t.Fatalf("secret-tool listed %d items but %d secrets", n, len(secrets))
	}
	if want := strings.Count(errOut, "attribute.username = "+Account); n > 0 && want != n {
		t.Fatalf("%d items, %d with username=%s", n, want, Account)
	}
	return secrets
}

func wantResults(t *testing.T, res []helperResult, kinds ...string) {
	t.Helper()
	for i, r := range res {
		if r.Kind != kinds[i] {
			t.Errorf("%s (#%d): kind %q (%s), want %q", r.Op, i, r.Kind, r.Err, kinds[i])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

func TestRealLifecycle(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)

	res := rk.run(t, "load", "probe", "create", "load")
	wantResults(t, res, "nokey", "", "", "")
	if !res[2].Created || res[3].KeyLen != KeySize {
		t.Fatalf("create %+v, load %+v", res[2], res[3])
	}
	for _, r := range res {
		t.Logf("%s: %.1f ms", r.Op, r.Ms)
	}
	first := rk.items(t)
	if len(first) != 1 {
		t.Fatalf("after create: %d items, want 1", len(first))
	}
	if b, err := base64.StdEncoding.Strict().DecodeString(first[0]); err != nil || len(b) != KeySize {
		t.Fatalf("stored item is not std base64 of %d bytes", KeySize)
	} else if fingerprint(b) != res[3].Fp {
		t.Fatal("the stored item is not the key Load returned")
	}

	// A second create (a second `loopguard init`) keeps the key.
	res = rk.run(t, "create", "load")
	wantResults(t, res, "", "")
	if res[0].Created {
		t.Fatal("second Create reported a new key")
	}
	if again := rk.items(t); len(again) != 1 || again[0] != first[0] {
		t.Fatalf("after second create: %d items, or the key changed", len(again))
	}

	res = rk.run(t, "rotate", "load")
	wantResults(t, res, "", "")
	rotated := rk.items(t)
	if len(rotated) != 1 || rotated[0] == first[0] {
		t.Fatalf("after rotate: %d items, or the key did not change", len(rotated))
	}
	if b, _ := base64.StdEncoding.DecodeString(rotated[0]); fingerprint(b) != res[1].Fp {
		t.Fatal("Load after rotate does not return the stored key")
	}

	res = rk.run(t, "delete", "load", "delete", "rotate")
	wantResults(t, res, "", "nokey", "nokey", "nokey")
	if n := len(rk.items(t)); n != 0 {
		t.Fatalf("after delete: %d items", n)
	}
}

// TestRealQuickGet: the hook's short way reads the item go-keyring reads,
// also when another item matches the same search (a foreign tool's, with
// one more attribute), and gives way, reading nothing, when there is no key.
func TestRealQuickGet(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)
	res := rk.run(t, "quick", "load")
	wantResults(t, res, "", "nokey")
	if res[0].Quick {
		t.Fatal("the short way applied with no key stored")
	}
	wantResults(t, rk.run(t, "create"), "")
	res = rk.run(t, "quick", "long", "load")
	wantResults(t, res, "", "", "")
	if !res[0].Quick {
		t.Fatal("the short way did not apply to an unlocked login collection holding the key")
	}
	if res[0].Fp != res[1].Fp {
		t.Fatal("the short way read another item than go-keyring")
	}
	if stored := rk.items(t); len(stored) != 1 || fingerprint([]byte(stored[0])) != res[0].Fp {
		t.Fatal("the short way did not read the stored key")
	}
	other := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, KeySize))
	rk.secretTool(t, other, "store", "--label=another tool's", "service", Service, "username", Account, "extra", "1")
	res = rk.run(t, "quick", "long")
	wantResults(t, res, "", "")
	if !res[0].Quick || res[0].Fp != res[1].Fp {
		t.Fatalf("with two matching items the short way (applied: %v) and go-keyring read different items", res[0].Quick)
	}
}

// TestRealLoadWithAnchor: the hook's one read brings the key and the
// state directory's anchor over the short way (one connection), and reads
// them as go-keyring stored them; with no anchor stored the short way
// still applies and reads "" (the control).
func TestRealLoadWithAnchor(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)
	wantResults(t, rk.run(t, "create"), "")
	res := rk.run(t, "quick-anchor", "load-anchor")
	wantResults(t, res, "", "")
	if !res[0].Quick || res[0].Fp != "" || res[1].KeyLen != KeySize || res[1].Fp != "" {
		t.Fatalf("no anchor: %+v", res)
	}
	res = rk.run(t, "store-anchor", "quick-anchor", "load-anchor", "load")
	wantResults(t, res, "", "", "", "")
	want := fingerprint([]byte(testAnchor))
	if !res[1].Quick || res[1].Fp != want || res[2].Fp != want || res[2].KeyLen != KeySize {
		t.Fatalf("with the anchor: %+v", res)
	}
	for _, r := range res {
		t.Logf("%s: %.1f ms", r.Op, r.Ms)
	}
}

func TestRealConcurrentCreate(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)
	const n = 4
	results := make(chan helperResult, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := runHelperE(envDrop, rk.env, "create")
			if err != nil {
				results <- helperResult{Op: "create", Kind: "other", Err: err.Error()}
				return
			}
			results <- res[0]
		}()
	}
	wg.Wait()
	close(results)
	created := 0
	for r := range results {
		if r.Kind != "" {
			t.Errorf("concurrent create: %s", r.Err)
		}
		if r.Created {
			created++
		}
	}
	if created == 0 {
		t.Error("no process reported creating the key")
	}
	items := rk.items(t)
	if len(items) != 1 {
		t.Fatalf("%d items after %d concurrent creates, want 1", len(items), n)
	}
	res := rk.run(t, "load")
	wantResults(t, res, "")
	if b, _ := base64.StdEncoding.DecodeString(items[0]); fingerprint(b) != res[0].Fp {
		t.Fatal("Load does not return the one stored key")
	}
	t.Logf("%d concurrent creates: %d reported created, 1 item", n, created)
}

func TestRealCorruptItemIsKept(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)
	bad := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, KeySize-1))
	rk.secretTool(t, bad, "store", "--label=not loopguard's", "service", Service, "username", Account)

	res := rk.run(t, "load", "create")
	wantResults(t, res, "corrupt", "corrupt")
	for _, r := range res {
		if strings.Contains(r.Err, bad[:12]) || strings.Contains(r.Hint, bad[:12]) {
			t.Fatalf("%s: error shows the stored value", r.Op)
		}
	}
	if got := rk.items(t); len(got) != 1 || got[0] != bad {
		t.Fatal("Create replaced the corrupt item")
	}
	res = rk.run(t, "rotate", "load")
	wantResults(t, res, "", "")
	if got := rk.items(t); len(got) != 1 || got[0] == bad {
		t.Fatal("Rotate did not replace the corrupt item")
	}
}

func TestRealLockedCollection(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)
	wantResults(t, rk.run(t, "create"), "")

	// Lock the login collection (a desktop screen lock can do this). Nothing
	// can show the unlock prompt on this bus: gnome-keyring completes it as
	// dismissed, go-keyring reports "failed to unlock".
	conn := rk.conn(t)
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	err := conn.Object(ssName, ssPath).Call(ssService+".Lock", 0, []dbus.ObjectPath{ssLoginPath}).Store(&locked, &prompt)
	if err != nil || len(locked) != 1 {
		t.Fatalf("lock: %v %v", locked, err)
	}
	if q := rk.run(t, "quick"); q[0].Quick || q[0].Fp != "" {
		t.Fatal("the short way read a locked collection's item")
	}
	res := rk.run(t, "probe", "load", "create", "rotate", "delete")
	wantResults(t, res, "unavailable", "unavailable", "unavailable", "unavailable", "unavailable")
	for _, r := range res {
		if !strings.Contains(r.Hint, "locked or does not exist") {
			t.Errorf("%s: hint %q does not say the keyring is locked", r.Op, r.Hint)
		}
		t.Logf("locked, %s: %.1f ms: %s", r.Op, r.Ms, r.Err)
	}
	if !strings.Contains(res[0].Err, "is locked") {
		t.Errorf("probe: %q", res[0].Err)
	}
}

func TestRealNoLoginCollection(t *testing.T) {
	keyringtest.Require(t)
	// gnome-keyring as D-Bus activation starts it in a fresh HOME: there is
	// no "login" collection and no default alias. go-keyring neither creates
	// one nor prompts; it fails at once.
	rk := startKeyring(t, false)
	if q := rk.run(t, "quick"); q[0].Quick {
		t.Fatal("the short way applied with no login collection")
	}
	res := rk.run(t, "probe", "load", "create")
	wantResults(t, res, "unavailable", "unavailable", "unavailable")
	for _, r := range res {
		if !strings.Contains(r.Hint, "--unlock") {
			t.Errorf("%s: hint %q lacks the headless remedy", r.Op, r.Hint)
		}
		t.Logf("no collection, %s: %.1f ms: %s", r.Op, r.Ms, r.Err)
	}
	if !strings.Contains(res[0].Err, `no "login" and no default collection`) {
		t.Errorf("probe: %q", res[0].Err)
	}
	if n := len(rk.items(t)); n != 0 {
		t.Fatalf("%d items stored without a collection", n)
	}

	// The hint's headless remedy works: --replace --unlock creates the login
	// keyring, and then Create succeeds.
	cmd := exec.Command("gnome-keyring-daemon", "--replace", "--unlock", "--components=secrets")
	cmd.Env = withEnv(rk.env)
	cmd.Stdin = strings.NewReader("another-throwaway-password")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gnome-keyring-daemon --replace --unlock: %v: %s", err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res = rk.run(t, "probe")
		if res[0].Kind == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantResults(t, res, "")
	res = rk.run(t, "create", "load")
	wantResults(t, res, "", "")
	if n := len(rk.items(t)); n != 1 {
		t.Fatalf("%d items after the remedy", n)
	}
}

func TestRealNoSecretService(t *testing.T) {
	keyringtest.Require(t)
	// A session bus on which nothing owns, or can be activated as,
	// org.freedesktop.secrets.
	addr := privateBus(t)
	res := runHelper(t, envDrop, keyringEnv(addr, t.TempDir()), "probe", "load", "create", "delete")
	wantResults(t, res, "unavailable", "unavailable", "unavailable", "unavailable")
	for _, r := range res {
		if !strings.Contains(r.Hint, "gnome-keyring") {
			t.Errorf("%s: hint %q does not name a Secret Service", r.Op, r.Hint)
		}
		if r.Ms > float64(DefaultTimeout/time.Millisecond) {
			t.Errorf("%s took %.1f ms", r.Op, r.Ms)
		}
		t.Logf("no secret service, %s: %.1f ms: %s", r.Op, r.Ms, r.Err)
	}
}

// hangingService is a Secret Service whose unlock prompt is never answered,
// as on a desktop where the prompt waits for a person: go-keyring blocks
// until the Completed signal that never comes.
type hangingService struct{}

func (hangingService) Unlock(objects []dbus.ObjectPath) ([]dbus.ObjectPath, dbus.ObjectPath, *dbus.Error) {
	return []dbus.ObjectPath{}, "/org/freedesktop/secrets/prompt/p1", nil
}

type hangingPrompt struct{}

func (hangingPrompt) Prompt(windowID string) *dbus.Error { return nil }

func TestRealPromptNeverAnswered(t *testing.T) {
	keyringtest.Require(t)
	addr := privateBus(t)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Export(hangingService{}, ssPath, ssService); err != nil {
		t.Fatal(err)
	}
	if err := conn.Export(hangingPrompt{}, "/org/freedesktop/secrets/prompt/p1", "org.freedesktop.Secret.Prompt"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(ssName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("request name: %v %v", reply, err)
	}
	res := runHelper(t, envDrop, keyringEnv(addr, t.TempDir()), "load", "create")
	wantResults(t, res, "timeout", "timeout")
	for _, r := range res {
		lo, hi := float64(DefaultTimeout/time.Millisecond)-50, float64(DefaultTimeout/time.Millisecond)+1000
		if r.Ms < lo || r.Ms > hi {
			t.Errorf("%s returned after %.1f ms, want about %v", r.Op, r.Ms, DefaultTimeout)
		}
		t.Logf("unanswered prompt, %s: %.1f ms: %s", r.Op, r.Ms, r.Err)
	}
	// Control: the raw go-keyring call really blocks (the helper gives up
	// after 3s), so the timeout above is this package's doing.
	res = runHelper(t, envDrop, keyringEnv(addr, t.TempDir()), "raw-get")
	if !strings.Contains(res[0].Err, "still blocked") {
		t.Fatalf("raw go-keyring call did not block: %+v", res[0])
	}
}

func TestRealSessionFromScript(t *testing.T) {
	keyringtest.Require(t)
	// scripts/with-keyring's own session: its keyring answers and is
	// unlocked (read-only here: other packages' tests may use it).
	start := time.Now()
	if err := Probe(context.Background()); err != nil {
		t.Fatalf("Probe on the with-keyring session: %v", err)
	}
	t.Logf("probe: %v", time.Since(start).Round(time.Microsecond))
}

// TestRealQuickGetUnderLoad: the hook's short read, 3,690 times from six
// processes at once against one real gnome-keyring, as a busy machine's
// hooks read the key. gnome-keyring answers a caller's first calls
// before it knows the caller now and then (quickGetMany's comment): a
// search then fails, the short way does not apply and the long one reads
// the key; an OpenSession must never meet it. Before quickGetMany waited
// for the searches, one such run left the daemon off the bus. Every read
// must succeed, the daemon must still answer after them, and its log must
// show no session opened without a caller (the searches' own failures
// are logged, not failed).
func TestRealQuickGetUnderLoad(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)
	wantResults(t, rk.run(t, "create", "store-anchor"), "", "")

	ops := strings.TrimSuffix(strings.Repeat("load-anchor,", 41), ",")
	var mu sync.Mutex
	var failed []string
	reads := 0
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for range 15 {
				c := exec.Command(os.Args[0])
				c.Env = append(withEnv(rk.env), helperEnv+"="+ops)
				out, err := c.Output()
				mu.Lock()
				if err != nil {
					failed = append(failed, err.Error())
				}
				for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					var r helperResult
					if json.Unmarshal([]byte(l), &r) != nil || r.Kind != "" || r.KeyLen != KeySize {
						failed = append(failed, l)
					} else {
						reads++
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	select {
	case err := <-rk.exited:
		rk.exited <- err
		t.Fatalf("gnome-keyring-daemon ended during the reads (%v); its log:\n%s", err, rk.daemonLog())
	default:
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d reads failed, the first: %.300s\ndaemon log:\n%s", len(failed), reads+len(failed), failed[0], rk.daemonLog())
	}
	wantResults(t, rk.run(t, "quick"), "")
	for _, bad := range []string{"publish_dispatch", "plain_negotiate", "g_variant"} {
		if strings.Contains(rk.daemonLog(), bad) {
			t.Fatalf("gnome-keyring opened a session for a caller it did not know (%s):\n%s", bad, rk.daemonLog())
		}
	}
	t.Logf("%d reads; gnome-keyring's searches that found no caller: %d", reads, strings.Count(rk.daemonLog(), "assertion 'client' failed"))
}

// daemonLog is what the daemon has written so far.
func (rk *realKeyring) daemonLog() string {
	b, _ := os.ReadFile(rk.logPath)
	return string(b)
}
