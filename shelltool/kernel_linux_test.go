package shelltool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/ticket"

	"github.com/loopguard/loopguard/internal/testfs"
)

// The test binary is also the wrapper (SHELLTOOL_WRAPPER=1: Call.Run with
// the launcher in this process, as loopguard-exec runs it) and the
// launcher's second stage, which the launcher starts as /proc/self/exe.
func TestMain(m *testing.M) {
	switch {
	case confine.IsStage2(os.Args[1:]):
		os.Exit(confine.Main(os.Args[2:], os.Stderr))
	case os.Getenv("SHELLTOOL_WRAPPER") == "1":
		os.Exit(wrapperMain())
	}
	os.Exit(m.Run())
}

// wrapperMain is the wrapper of a kernel test: the ticket store, the
// host and the key from the test (a real one reads the keyring and
// finds the host as its parent).
func wrapperMain() int {
	in, _ := readAll(os.Stdin)
	cwd, _ := os.Getwd()
	c := &Call{Store: &ticket.Store{Dir: os.Getenv("SHELLTOOL_STORE")}, Key: func() ([]byte, error) { return testKey, nil },
		Host: os.Getenv("SHELLTOOL_HOST"), Cwd: cwd, Stderr: os.Stderr}
	for _, k := range []string{"SHELLTOOL_WRAPPER", "SHELLTOOL_STORE", "SHELLTOOL_HOST"} {
		os.Unsetenv(k)
	}
	return c.Run(in)
}

func readAll(f *os.File) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.Bytes(), err
}

const nobody = 65534

// TestWrapperConfinesByTheKernel (issue 37, item 2, as Qwen Code runs the
// call command): a ticket's capability is enforced by the kernel, not by
// a prediction. The command reads a project file, writes one, reads a
// file in the home and writes the home, none of which its words show the
// analysis (it is a script the project holds, run through make). Under
// read-only (a capability narrower than the command needs) the project
// write is refused; under project-write it lands; under either the home
// is neither read nor written. Control: the same ticket with no
// capability (an exact approval) does all four, so the probe can tell.
// Run as uid 65534 when the tests run as root, which ignores file modes.
func TestWrapperConfinesByTheKernel(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (confinement needs %d)", confine.ABI(), confine.MinABI)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	const host = "host:100:5000"
	for _, c := range []struct {
		capability                                string
		projectWrite, homeRead, homeWrite, status bool
	}{
		{"read-only", false, false, false, false},
		{"project-write", true, false, false, false},
		{"jail", true, false, false, false},
		{"", true, true, true, true},
	} {
		t.Run("cap="+c.capability, func(t *testing.T) {
			root, err := os.MkdirTemp("", "lg-shelltool-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			if root, err = filepath.EvalSymlinks(root); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(root, 0o755)
			home, project, tmp, store := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "tmp"), filepath.Join(root, "tickets")
			bin := filepath.Join(root, "bin", "shelltool.test")
			for _, d := range []string{home, project, tmp, filepath.Dir(bin)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(self)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				bin:                                 string(b),
				filepath.Join(home, "secret.txt"):   "the secret\n",
				filepath.Join(project, "README.md"): "read me\n",
				filepath.Join(project, "Makefile"): "probe:\n" +
					"\t-cat README.md\n" +
					"\t-cat " + filepath.Join(home, "secret.txt") + "\n" +
					"\t-echo in > inside.txt\n" +
					"\t-echo out > " + filepath.Join(home, "outside.txt") + "\n",
			}
			for p, body := range files {
				if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			f := &fixture{now: time.Now(), cwd: project, store: &ticket.Store{Dir: store}}
			proj := project
			if c.capability == "" {
				proj = ""
			}
			f.issueDerived(t, host, "make probe", c.capability, proj, testKey)
			if os.Getuid() == 0 {
				testfs.Chown(t, root, nobody, nobody)
			}
			cmd := exec.Command(bin, "-test.run=^$")
			cmd.Dir = project
			cmd.Env = []string{"SHELLTOOL_WRAPPER=1", "SHELLTOOL_STORE=" + store, "SHELLTOOL_HOST=" + host,
				"HOME=" + home, "TMPDIR=" + tmp, "PATH=/usr/bin:/bin"}
			if os.Getuid() == 0 {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			}
			in, _ := json.Marshal(map[string]any{"command": "make probe"})
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.CombinedOutput()
			t.Logf("cap %q: %v\n%s", c.capability, err, out)
			if !strings.Contains(string(out), "read me") {
				t.Errorf("the project file was not read: the call did not run")
			}
			if got := strings.Contains(string(out), "the secret"); got != c.homeRead {
				t.Errorf("the home's secret read: %v, want %v", got, c.homeRead)
			}
			if _, err := os.Stat(filepath.Join(project, "inside.txt")); (err == nil) != c.projectWrite {
				t.Errorf("the project write landed: %v, want %v", err == nil, c.projectWrite)
			}
			if _, err := os.Stat(filepath.Join(home, "outside.txt")); (err == nil) != c.homeWrite {
				t.Errorf("the home write landed: %v, want %v", err == nil, c.homeWrite)
			}
			if strings.Contains(string(out), "loopguard: ") && strings.Contains(string(out), "this command did not run") {
				t.Errorf("the wrapper refused the call")
			}
		})
	}
}

// TestWrapperLaunchCost (LG_MEASURE_SHELLTOOL=ROUNDS) measures what the
// launch adds to a call of the shell tool under Qwen Code: the wrapper
// claiming a ticket and running `true`, with no capability (bash -c
// directly) and under the jail, interleaved, as CPU time (user and
// system) of the wrapper and everything it ran, and wall time.
func TestWrapperLaunchCost(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("LG_MEASURE_SHELLTOOL"))
	if rounds <= 0 {
		t.Skip("set LG_MEASURE_SHELLTOOL=ROUNDS to measure")
	}
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", confine.ABI())
	}
	root := t.TempDir()
	project, store := filepath.Join(root, "proj"), filepath.Join(root, "tickets")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const host = "host:100:5000"
	f := &fixture{now: time.Now(), cwd: project, store: &ticket.Store{Dir: store}}
	cpu := map[string][]time.Duration{}
	wall := map[string][]time.Duration{}
	for i := 0; i < rounds; i++ {
		for _, capability := range []string{"", "jail"} {
			cmd := fmt.Sprintf("true %d %s", i, capability)
			proj := project
			if capability == "" {
				proj = ""
			}
			f.issueDerived(t, host, cmd, capability, proj, testKey)
			c := exec.Command(self, "-test.run=^$")
			c.Dir = project
			c.Env = []string{"SHELLTOOL_WRAPPER=1", "SHELLTOOL_STORE=" + store, "SHELLTOOL_HOST=" + host, "HOME=" + root, "PATH=/usr/bin:/bin"}
			in, _ := json.Marshal(map[string]any{"command": cmd})
			c.Stdin = bytes.NewReader(in)
			start := time.Now()
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			wall[capability] = append(wall[capability], time.Since(start))
			cpu[capability] = append(cpu[capability], c.ProcessState.UserTime()+c.ProcessState.SystemTime())
		}
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	t.Logf("%d interleaved pairs, medians: unconfined (bash -c) CPU %v wall %v; the jail (launcher) CPU %v wall %v",
		rounds, med(cpu[""]), med(wall[""]), med(cpu["jail"]), med(wall["jail"]))
}
