package keyring

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	gokeyring "github.com/zalando/go-keyring"
)

// helperEnv names the operations a re-executed test binary runs instead of
// the tests. A child process gets a fresh godbus shared connection and
// go-keyring provider, so each scenario sees only the bus it is given.
const helperEnv = "LOOPGUARD_KEYRING_HELPER"

// holdFor is the holder with an idle time of its own (Linux).
var holdFor func(dir string, idle time.Duration) error

// holderEnv makes a re-executed test binary the key's holder of the
// state directory it names (HoldMain), holderIdleEnv with that idle time.
const (
	holderEnv     = "LOOPGUARD_KEYRING_HOLDER"
	holderIdleEnv = "LOOPGUARD_KEYRING_HOLDER_IDLE"
)

func TestMain(m *testing.M) {
	if ops := os.Getenv(helperEnv); ops != "" {
		os.Exit(helperMain(strings.Split(ops, ",")))
	}
	if sock := os.Getenv(fakeHolderEnv); sock != "" {
		os.Exit(fakeHolder(sock))
	}
	if dir := os.Getenv(holderEnv); dir != "" {
		if idle, err := time.ParseDuration(os.Getenv(holderIdleEnv)); err == nil && holdFor != nil {
			if err := holdFor(dir, idle); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		os.Exit(HoldMain([]string{"--state", dir}))
	}
	os.Exit(m.Run())
}

// The anchor the helper's anchor operations store and read, for the
// state directory stateEnv names, else testAnchorDir.
const (
	testAnchorDir = "/home/test/.local/state/loopguard"
	testAnchor    = `{"v":1,"id":"test"}`
	stateEnv      = "LOOPGUARD_KEYRING_STATE"
)

// anchorDir is the state directory of the helper's anchor operations.
func anchorDir() string {
	if d := os.Getenv(stateEnv); d != "" {
		return d
	}
	return testAnchorDir
}

// helperResult is what the child reports for one operation.
type helperResult struct {
	Op      string  `json:"op"`
	Kind    string  `json:"kind"` // "", "nokey", "unavailable", "timeout", "corrupt" or "other"
	Err     string  `json:"err"`
	Hint    string  `json:"hint"`
	Ms      float64 `json:"ms"`
	Created bool    `json:"created"`
	Quick   bool    `json:"quick"` // "quick": the short way applied
	KeyLen  int     `json:"keylen"`
	Fp      string  `json:"fp"`    // fingerprint of the loaded key, for comparisons
	KeyFp   string  `json:"keyfp"` // the key's, where Fp is the anchor's
}

// fingerprint is a short hash of a test key, so that tests compare keys
// without printing them.
func fingerprint(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

func kindName(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNoKey):
		return "nokey"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ErrTimeout):
		return "timeout"
	case errors.Is(err, ErrCorrupt):
		return "corrupt"
	}
	return "other"
}

func helperMain(ops []string) int {
	enc := json.NewEncoder(os.Stdout)
	for _, op := range ops {
		r := helperResult{Op: op}
		start := time.Now()
		var err error
		ctx := context.Background()
		switch op {
		case "load":
			var k []byte
			k, err = Load(ctx)
			r.KeyLen = len(k)
			if k != nil {
				r.Fp = fingerprint(k)
			}
		case "create":
			r.Created, err = Create(ctx)
		case "rotate":
			err = Rotate(ctx)
		case "delete":
			err = Delete(ctx)
		case "probe":
			err = Probe(ctx)
		case "raw-get":
			// go-keyring alone, without this package's bus check, bounded
			// so that the child cannot hang.
			done := make(chan error, 1)
			go func() { _, e := gokeyring.Get(Service, Account); done <- e }()
			select {
			case err = <-done:
			case <-time.After(3 * time.Second):
				err = errors.New("raw go-keyring call still blocked after 3s")
			}
		case "quick":
			// The hook's short way alone: the fingerprint of what it read,
			// and whether it applied (else Load goes the long way).
			var v string
			v, r.Quick, err = quickGet(ctx)
			if r.Quick {
				r.Fp = fingerprint([]byte(v))
			}
		case "store-anchor":
			err = StoreAnchor(ctx, AnchorAccount(anchorDir()), testAnchor+os.Getenv("LOOPGUARD_KEYRING_ANCHOR_SUFFIX"))
		case "load-anchor":
			// The hook's read: the key and the anchor; Fp is the anchor's.
			var k []byte
			var a string
			k, a, err = LoadWithAnchor(ctx, AnchorAccount(anchorDir()))
			r.KeyLen = len(k)
			if a != "" {
				r.Fp = fingerprint([]byte(a))
			}
			if k != nil {
				r.KeyFp = fingerprint(k)
			}
		case "held":
			// The key's holder's answer: Quick says one answered.
			var k []byte
			var a string
			k, a, r.Quick = LoadHeld(ctx, anchorDir())
			r.KeyLen = len(k)
			if a != "" {
				r.Fp = fingerprint([]byte(a))
			}
			if k != nil {
				r.KeyFp = fingerprint(k)
			}
		case "stop-holder":
			err = StopHolder(ctx, anchorDir())
		case "quick-anchor":
			// The short way for both items alone: whether it applied, and
			// the anchor's fingerprint ("" when none was found).
			var vals []string
			vals, r.Quick, err = quickGetMany(ctx, Account, AnchorAccount(anchorDir()))
			if r.Quick && vals[1] != "" {
				r.Fp = fingerprint([]byte(vals[1]))
			}
		case "long":
			// The long way alone: the bus check, then go-keyring.
			var v string
			if err = checkPlatform(ctx); err == nil {
				v, err = goKeyring{}.Get(Service, Account)
				r.Fp = fingerprint([]byte(v))
			}
		case "usemock":
			UseMock()
		default:
			err = fmt.Errorf("unknown helper op %q", op)
		}
		r.Ms = float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			r.Kind, r.Err = kindName(err), err.Error()
			var ke *Error
			if errors.As(err, &ke) {
				r.Hint = ke.Hint()
			}
		}
		if enc.Encode(r) != nil {
			return 3
		}
	}
	return 0
}

// runHelper re-executes the test binary with env (added to the current
// environment minus the variables named in drop) and returns one result per
// op.
func runHelper(t *testing.T, drop []string, env []string, ops ...string) []helperResult {
	t.Helper()
	res, err := runHelperE(drop, env, ops...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runHelperE is runHelper for goroutines other than the test's.
func runHelperE(drop []string, env []string, ops ...string) ([]helperResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var base []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := name != helperEnv
		for _, d := range drop {
			if name == d {
				keep = false
			}
		}
		if keep {
			base = append(base, kv)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	// GORACE: the race runtime otherwise sleeps 1s at exit.
	cmd.Env = append(append(base, env...), helperEnv+"="+strings.Join(ops, ","), "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helper %v: %w\nstderr:\n%s", ops, err, stderr.String())
	}
	var res []helperResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r helperResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("helper output %q: %w", sc.Text(), err)
		}
		res = append(res, r)
	}
	if len(res) != len(ops) {
		return nil, fmt.Errorf("helper ran %d of %d ops; output:\n%s\nstderr:\n%s", len(res), len(ops), out, stderr.String())
	}
	return res, nil
}

func TestUseMock(t *testing.T) {
	// In a child process: UseMock replaces the real keyring (and its bus
	// check, so no bus is needed) for the process.
	res := runHelper(t, []string{busEnv}, nil, "usemock", "load", "create", "create", "load", "rotate", "delete", "load")
	want := []struct {
		kind    string
		created bool
	}{{"", false}, {"nokey", false}, {"", true}, {"", false}, {"", false}, {"", false}, {"", false}, {"nokey", false}}
	for i, r := range res {
		if r.Kind != want[i].kind || r.Created != want[i].created {
			t.Errorf("%s: kind %q created %v (%s), want %q %v", r.Op, r.Kind, r.Created, r.Err, want[i].kind, want[i].created)
		}
	}
	if res[4].KeyLen != KeySize {
		t.Errorf("mock key is %d bytes", res[4].KeyLen)
	}
}

// fakeHolderEnv makes a re-executed test binary a server on the socket it
// names that answers a key request as the holder does (fakeHolder).
const fakeHolderEnv = "LOOPGUARD_KEYRING_FAKE_HOLDER"

func fakeHolder(sock string) int {
	l, err := net.Listen("unix", sock)
	if err != nil {
		return 1
	}
	_ = os.Chmod(sock, 0o777)
	for {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		var req [1]byte
		_, _ = c.Read(req[:])
		_, _ = c.Write(encodeHeld(bytes.Repeat([]byte{5}, KeySize), "x"))
		c.Close()
	}
}
