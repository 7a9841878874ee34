package doctor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
)

// checkConfinement proves the launcher confines here: a read-only launch
// of cat reads a file in a throwaway project and is refused one beside it.
// Without Landlock, scoped Bash grants run unconfined: doctor says so.
func checkConfinement(ctx context.Context, self string) checkResult {
	r := checkResult{name: "confinement"}
	abi := confine.ABI()
	if abi < confine.MinABI {
		r.status = statusWarn
		r.detail = fmt.Sprintf("this kernel's Landlock ABI is %d (confinement needs %d): Bash calls scoped grants cover run as analysed, NOT confined by the kernel", abi, confine.MinABI)
		r.fix = "use a Linux kernel with Landlock (6.7 or later, lsm= including landlock), or approve calls exactly instead of granting scopes"
		return r
	}
	// The launcher the hook runs where the call runs: loopguard-confine
	// beside this binary when it is there, else loopguard-exec, else this
	// binary. Each beside it must be of this build.
	launcher := self
	if self != "" {
		for _, l := range slices.Backward(policy.Launchers(self)) {
			fi, err := os.Stat(l)
			if err != nil || fi.IsDir() {
				continue
			}
			if err := cli.SameBuild(self, l); err != nil {
				r.status = statusFail
				r.detail = "the launcher " + l + " is not of this build: the hook would confine with another version's rules (" + err.Error() + ")"
				r.fix = "install the four binaries together: make install (or go install ./cmd/...)"
				return r
			}
			if launcher == self {
				launcher = l
			}
		}
	}
	self = launcher
	cat, err := exec.LookPath("cat")
	if err != nil || self == "" {
		r.status, r.detail = statusSkip, fmt.Sprintf("Landlock ABI %d; the launcher was not tried (no cat, or no binary to try)", abi)
		return r
	}
	cat, _ = filepath.EvalSymlinks(cat)
	dir, err := os.MkdirTemp("", "loopguard-doctor-")
	if err != nil {
		r.status, r.detail = statusWarn, "cannot try the launcher: "+err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	proj, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	for _, f := range []string{filepath.Join(proj, "in"), filepath.Join(outside, "secret")} {
		_ = os.MkdirAll(filepath.Dir(f), 0o700)
		_ = os.WriteFile(f, []byte("confined-read-marker\n"), 0o600)
	}
	launch := func(exe string, argv ...string) (string, error) {
		s := confine.Spec{Cap: policy.Capability{}, Project: proj, Cwd: proj, Exe: exe, Argv: argv}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, self, s.Args()...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	try := func(file string) (string, error) { return launch(cat, "cat", file) }
	if out, err := try(filepath.Join(proj, "in")); err != nil || !strings.Contains(out, "confined-read-marker") {
		r.status = statusFail
		r.detail = "the launcher " + self + " did not run a read-only cat of a project file: " + oneLine(strings.TrimSpace(out))
		r.fix = "run `" + self + " exec --cap read-only --project DIR --cwd DIR -- /bin/cat cat FILE` to see why"
		return r
	}
	if out, err := try(filepath.Join(outside, "secret")); err == nil || strings.Contains(out, "confined-read-marker") {
		r.status = statusFail
		r.detail = "the kernel did not refuse a read outside the project under the read-only capability (launcher " + self + ")"
		r.fix = "check that Landlock is enabled (lsm= on the kernel command line)"
		return r
	}
	// The launcher's broker: touch in a read-only launch's own TMPDIR sets
	// the file's times through the first stage (confine/brokermode_linux.go).
	// Where a seccomp filter above this process holds a listener (a
	// container's), the launch has none, and every such change is refused.
	if out, err := touchInJail(launch); err != nil {
		r.status = statusWarn
		r.detail = "the launcher runs here without its broker: a read-only launch could not set the times of a file in its own TMPDIR (" + oneLine(strings.TrimSpace(out)) + ")"
		if strings.Contains(out, "Operation not permitted") {
			r.detail = "the launcher runs here without its broker (a seccomp filter above this process, a container's, holds the one listener a process may have): " +
				"in the jail every change of a file's mode or times is refused, and project-write makes no new file in the project and writes none there (touch, chmod +x, go build -o app ., an edit)"
		}
		r.fix = "run the agent where no seccomp notifier sits above it, or approve such calls exactly (they then run without the jail)"
		return r
	}
	r.status = statusOK
	r.detail = fmt.Sprintf("Landlock ABI %d: Bash calls scoped grants cover run rewritten and confined to their capability by %s (a read-only launch read the project and was refused a file outside it, and touched a file in its own TMPDIR)", abi, self)
	return r
}

// touchInJail runs touch, then touch -d, on a file of a read-only launch's
// own TMPDIR through launch; a machine without sh or touch passes.
func touchInJail(launch func(exe string, argv ...string) (string, error)) (string, error) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return "", nil
	}
	if _, err := exec.LookPath("touch"); err != nil {
		return "", nil
	}
	sh, _ = filepath.EvalSymlinks(sh)
	return launch(sh, "sh", "-c", `touch "$TMPDIR/doctor" && touch -d @5 "$TMPDIR/doctor"`)
}
