//go:build unix

package team

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

func TestTeamPendingEmptyAndListed(t *testing.T) {
	_, c := clitest.AliceCustody(t)
	var out bytes.Buffer
	if err := teamPendingRun(context.Background(), &teamPendingOptions{out: &out, team: c, now: time.Now}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "\n") != 1 {
		t.Errorf("empty queue: %q", out.String())
	}
}

// team enroll: an administrator with the enroll policy writes machine
// build-1's token to a new file, mode 0600, whose token has an identity of
// its own and passes doctor; the file is never overwritten; an approver
// (no enroll policy) is refused with the hint, and leaves no file behind.
func TestTeamEnroll(t *testing.T) {
	s := vaulttest.Start(t)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "build-1.token")
	var out bytes.Buffer
	if err := teamEnrollRun(ctx, &teamEnrollOptions{out: &out, client: s.Enroller(t, "admin"), name: "build-1", path: path, ttl: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Enrolled build-1: Vault identity ") {
		t.Errorf("output: %q", out.String())
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi, err)
	}
	tok, err := cli.ReadToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := teamEnrollRun(ctx, &teamEnrollOptions{out: &out, client: s.Enroller(t, "admin2"), name: "build-1", path: path, ttl: time.Hour}); err == nil {
		t.Error("an existing token file was overwritten")
	}
	if got, _ := cli.ReadToken(path); got != tok {
		t.Error("the token file changed")
	}
	other := filepath.Join(dir, "build-2.token")
	err = teamEnrollRun(ctx, &teamEnrollOptions{out: &out, client: s.AddApprover(t, "alice"), name: "build-2", path: other, ttl: time.Hour})
	var buf bytes.Buffer
	cli.PrintError(&buf, err)
	if err == nil || !strings.Contains(buf.String(), "loopguard-enroll") {
		t.Errorf("approver enrolls: %s", buf.String())
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a refused enrollment left %s: %v", other, err)
	}
}
