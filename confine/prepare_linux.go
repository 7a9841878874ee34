//go:build linux

package confine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/internal/testknobs"
)

// The small launcher (cmd/loopguard-launch) is this package's launcher
// without the Go runtime, whose start alone costs more than the launch
// budget: it decides nothing. For a read-only capability the hook, which
// is running anyway, computes the plan here (Prepare) and writes it as a
// plan file named by the SHA-256 of its bytes; the rewritten command names
// the file before loopguard-exec's own command line, and the small
// launcher applies the file only if its bytes hash to its name, only for
// that command line, and only in the environment the plan was computed
// in. In any other environment (another TMPDIR, HOME, GOPATH...), or when
// it cannot open the file, it runs that command line, which computes the
// plan itself: the environment changes how fast a call starts, never how
// it is confined.
//
// A plan file is a list of records, each KEY=VALUE and a NUL byte:
//
//	loopguard-plan=1         the format
//	uid=N                    the user the plan is for
//	exe=PATH                 the program the plan is for
//	farg=WORD                the launcher's arguments up to --, in order
//	env=NAME=VALUE           a variable the plan read (unset reads as "")
//	abi=N fs=N net=N scoped=N  the ruleset: the ABI and the rights handled
//	rule=ACCESS PATH         a path-beneath rule (opened following links)
//	rulenofollow=ACCESS PATH  the same, a directory opened without following a link last (Plan.NoFollow)
//	private=ACCESS PATH      a private directory's rule (openPrivate)
//	owner=UID                whose the private directories must be
//	seccomp=HEX              the filter's BPF program (8 bytes an instruction)
//	keep=NAME keepprefix=P   the variables the program keeps (keepall=1: all)
//	set=NAME=VALUE           a variable the program gets set
//	cwd=PATH                 where it runs
//	open=FD FLAGS PATH dup=FD FROM close=FD   the redirections, in order
//
// Numbers are decimal. The launcher applies the records in the order
// apply and run do here.

// PlanFormat is the plan file's format.
const PlanFormat = "1"

// ErrNotPrepared: this spec is not one the small launcher runs (a
// capability that writes: its plan walks the project, and is computed
// when it runs).
var ErrNotPrepared = errors.New("only a read-only capability's plan is computed ahead")

// Prepare computes s's plan in the environment getenv reads, as the binary
// self of user uid would launch it, writes it into dir as a plan file (if
// no file of the same bytes is there) and returns the file's path. The
// small launcher runs it as `loopguard-launch PLANFILE LAUNCHER
// s.Args()...`.
func Prepare(s Spec, dir, self string, getenv func(string) string, uid int) (string, error) {
	if s.Cap.Write || s.Cap.Git || testknobs.On(testknobs.NoRuleset) {
		// The test knob that turns the ruleset off is loopguard-exec's:
		// the small launcher has no knobs, so a test build that turns
		// the kernel layer off launches through loopguard-exec alone.
		return "", ErrNotPrepared
	}
	read := map[string]string{}
	recording := func(k string) string {
		v := getenv(k)
		read[k] = v
		return v
	}
	e := envFrom(recording, self, uid)
	plan, err := NewPlan(s, e)
	if err != nil {
		return "", err
	}
	rs, err := newRuleset(plan, ABI())
	if err != nil {
		return "", err
	}
	prog, err := filter(filterOpts{network: plan.Network})
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	rec := func(k, v string) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
		b.WriteByte(0)
	}
	num := func(n uint64) string { return strconv.FormatUint(n, 10) }
	rec("loopguard-plan", PlanFormat)
	rec("uid", strconv.Itoa(uid))
	rec("exe", s.Exe)
	args := s.Args()
	for _, a := range args[:slices.Index(args, "--")] {
		rec("farg", a)
	}
	for _, k := range slices.Sorted(maps.Keys(read)) {
		rec("env", k+"="+read[k])
	}
	rec("abi", strconv.Itoa(rs.abi))
	rec("fs", num(rs.fs))
	rec("net", num(rs.net))
	rec("scoped", num(rs.scoped))
	rec("owner", strconv.Itoa(rs.owner))
	for _, r := range rs.rules {
		k := "rule"
		switch {
		case r.private:
			k = "private"
		case r.nofollow:
			k = "rulenofollow"
		}
		rec(k, num(r.access)+" "+r.path)
	}
	var code []byte
	for _, in := range prog {
		code = append(code, byte(in.Code), byte(in.Code>>8), in.Jt, in.Jf,
			byte(in.K), byte(in.K>>8), byte(in.K>>16), byte(in.K>>24))
	}
	rec("seccomp", hex.EncodeToString(code))
	if !plan.KeepEnvOnly {
		rec("keepall", "1")
	} else {
		for _, k := range slices.Sorted(maps.Keys(readOnlyEnv)) {
			rec("keep", k)
		}
		if plan.Network {
			for _, k := range slices.Sorted(maps.Keys(proxyEnv)) {
				rec("keep", k)
			}
		}
		for _, p := range keptPrefixes {
			rec("keepprefix", p)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(plan.Env)) {
		rec("set", k+"="+plan.Env[k])
	}
	rec("cwd", s.Cwd)
	for _, r := range s.Redirects {
		switch r.Op {
		case "close":
			rec("close", strconv.Itoa(r.Fd))
		case "dup":
			rec("dup", strconv.Itoa(r.Fd)+" "+strconv.Itoa(r.Dup))
		default:
			rec("open", strconv.Itoa(r.Fd)+" "+strconv.Itoa(r.openFlags())+" "+r.Path)
		}
	}
	sum := sha256.Sum256(b.Bytes())
	path := filepath.Join(dir, hex.EncodeToString(sum[:]))
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b.Bytes()) {
		return path, nil // written by an earlier call
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("failed to create %s: %w", dir, err)
	}
	if err := fsx.WriteFile(path, b.Bytes(), 0o600, true); err != nil {
		return "", err
	}
	prunePlans(dir, time.Now().Add(-planAge))
	return path, nil
}

// planAge is how long a plan file is kept after it was written. A plan
// removed while a call that names it starts is not there: the small
// launcher then runs loopguard-exec's command line, which computes it.
const planAge = 7 * 24 * time.Hour

// prunePlans removes the plan files written before cutoff (each new plan
// is a new call's, so the folder holds about a week of distinct calls).
func prunePlans(dir string, cutoff time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, ent := range ents {
		if fi, err := ent.Info(); err == nil && fi.Mode().IsRegular() && len(ent.Name()) == 2*sha256.Size && fi.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(dir, ent.Name()))
		}
	}
}
