//go:build linux

package confine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/internal/seccomptest"
	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

// probeName is the launched program's argv[0] when the test binary is the
// probe: by its name, not a variable, since a read-only launch keeps only
// the environment it lists.
const probeName = "lg-confine-probe"

// The test binary is both the launcher (LG_CONFINE_LAUNCH=1: Main) and
// the program it launches (argv[0] probeName: one action, whose result
// it prints), so the rules are tried by the kernel, not by a model of it.
func TestMain(m *testing.M) {
	switch {
	case IsStage2(os.Args[1:]): // the launcher's second stage
		noBroker = os.Getenv("LG_CONFINE_NO_BROKER") == "1"
		os.Exit(Main(os.Args[2:], os.Stderr))
	case os.Getenv("LG_CONFINE_LAUNCH") == "1":
		os.Unsetenv("LG_CONFINE_LAUNCH") // the program it runs is the probe
		noNamespaces = os.Getenv("LG_CONFINE_NO_NS") == "1"
		noBroker = os.Getenv("LG_CONFINE_NO_BROKER") == "1"
		if os.Getenv("LG_CONFINE_NO_CLONE3") == "1" {
			seccomptest.RefuseClone3() // as Claude Code's sandbox does
		}
		if os.Getenv("LG_CONFINE_LISTENER_ABOVE") == "1" {
			seccomptest.ListenerAbove() // as a container runtime's filter may
		}
		os.Exit(Main(os.Args[1:], os.Stderr))
	case os.Args[0] == probeName:
		os.Exit(probe(os.Args[1:]))
	case os.Getenv("LG_CONFINE_THREADS") != "":
		threadsUntilEOF() // tasks_linux_test.go
	}
	os.Exit(m.Run())
}

// probe performs one action and prints "ok" or the error.
func probe(args []string) int {
	var err error
	switch args[0] {
	case "read":
		_, err = os.ReadFile(args[1])
	case "list":
		_, err = os.ReadDir(args[1])
	case "write":
		err = os.WriteFile(args[1], []byte("probe\n"), 0o644)
	case "append":
		var f *os.File
		if f, err = os.OpenFile(args[1], os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString("more\n")
			f.Close()
		}
	case "link": // hard-link args[1] as args[2]
		err = os.Link(args[1], args[2])
	case "mkdir":
		err = os.Mkdir(args[1], 0o755)
	case "rename":
		err = os.Rename(args[1], args[2])
	case "replace-with-link": // args[1] becomes a link to args[2]
		if err = os.RemoveAll(args[1]); err == nil {
			err = os.Symlink(args[2], args[1])
		}
	case "remove":
		err = os.Remove(args[1])
	case "tcp":
		var c net.Conn
		if c, err = net.Dial("tcp", args[1]); err == nil {
			c.Close()
		}
	case "listen":
		var l net.Listener
		if l, err = net.Listen("tcp4", "127.0.0.1:0"); err == nil {
			l.Close()
		}
	case "unix":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err == nil {
			syscall.Close(fd)
		}
	case "udp":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0); err == nil {
			syscall.Close(fd)
		}
	case "mptcp":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 262); err == nil {
			syscall.Close(fd)
		}
	case "sctp":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_SCTP); err == nil {
			syscall.Close(fd)
		}
	case "sctp-seqpacket":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET6, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0); err == nil {
			syscall.Close(fd)
		}
	case "readfd": // print what descriptor 3, left open by the launcher's parent, reads
		var b []byte
		if b, err = io.ReadAll(os.NewFile(3, "fd3")); err == nil {
			fmt.Printf("read %q\n", b)
		}
	case "signal": // send SIGCONT (harmless) to the process args[1]
		var pid int
		if pid, err = strconv.Atoi(args[1]); err == nil {
			err = syscall.Kill(pid, syscall.SIGCONT)
		}
	case "keyread": // read the user keyring's key named args[1]
		var id int
		if id, err = unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", args[1], 0); err == nil {
			buf := make([]byte, 256)
			var n int
			if n, err = unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0); err == nil {
				fmt.Printf("read %q\n", buf[:min(n, len(buf))])
			}
		}
	case "devtty": // write to the controlling terminal
		var f *os.File
		if f, err = os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			_, err = f.WriteString("\x1b]52;c;ZWNobyBwd25lZA==\x07")
			f.Close()
		}
	case "tiocsti": // type a character into the terminal on stdin
		c := byte('x')
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCSTI, uintptr(unsafe.Pointer(&c))); e != 0 {
			err = e
		}
	case "tiocsetd": // set the line discipline of the terminal on stdin (N_TTY, its own)
		d := 0
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, unix.TIOCSETD, uintptr(unsafe.Pointer(&d))); e != 0 {
			err = e
		}
	case "tiocswinsz": // set the size of the terminal on stdin
		ws := unix.Winsize{Row: 24, Col: 80}
		err = unix.IoctlSetWinsize(0, unix.TIOCSWINSZ, &ws)
	case "stdout":
		_, err = fmt.Println("to stdout")
	case "env":
		fmt.Printf("%s=%s\n", args[1], os.Getenv(args[1]))
	case "pwd":
		var wd string
		wd, err = os.Getwd()
		fmt.Println(wd)
	case "seccomp": // a call the seccomp filter decides on (seccomp_linux_test.go)
		err = seccompProbe(args[1:])
	default:
		var known bool
		if known, err = jailProbe(args); !known {
			err = errors.New("unknown probe")
		}
	}
	if err != nil {
		fmt.Println("error:", err)
		return 3
	}
	fmt.Println("ok")
	return 0
}

// world is a home, a project and a temp dir, outside each other.
type world struct {
	home, project, tmp, outside string
	env                         []string
}

func newWorld(t *testing.T) world {
	t.Helper()
	if ABI() < MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (confinement needs %d)", ABI(), MinABI)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := world{home: filepath.Join(root, "home"), project: filepath.Join(root, "proj"), tmp: filepath.Join(root, "tmp"), outside: filepath.Join(root, "outside")}
	testfs.Tree(t, root, []byte("original\n"), 0o600,
		"home/.ssh/id_rsa", "home/.gitconfig", "home/.config/git/config", "home/.config/git/credentials", "home/.npmrc", "home/.npm/_cacache/index-v5/x", "home/.npm/_npx/abc/node_modules/p/index.js", "home/.local/state/loopguard/grants/g1", "home/notes.txt",
		"proj/README.md", "proj/src/main.go", "proj/.git/config", "proj/.git/hooks/pre-commit", "proj/.git/HEAD",
		"proj/.claude/settings.json", "proj/src/.mcp.json", "proj/docs/guide.md", "proj/deep/.envrc",
		"outside/secret",
	)
	// Git's configuration as a user's umask leaves it (a file only its
	// owner reads is never granted: TestConfinementFiles's 0600 row).
	for _, f := range []string{"home/.gitconfig", "home/.config/git/config"} {
		if err := os.Chmod(filepath.Join(root, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(w.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	// A link in the project to a key outside it.
	if err := os.Symlink(filepath.Join(w.home, ".ssh/id_rsa"), filepath.Join(w.project, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	// GORACE: a binary built with -race (this one: the launcher and the
	// probe) otherwise sleeps a second as it exits. The search path ends
	// in the home itself, ~/.local and ~/.ssh, which no launch reads for
	// it (pathRules).
	w.env = []string{"HOME=" + w.home, "TMPDIR=" + w.tmp, "PATH=/usr/bin:/bin:" + w.home + ":" + filepath.Join(w.home, ".local") + ":" + filepath.Join(w.home, ".ssh"), "XDG_STATE_HOME=" + filepath.Join(w.home, ".local/state"), "GORACE=atexit_sleep_ms=0",
		"GOCACHE=" + filepath.Join(w.home, ".cache/go-build"), "GOMODCACHE=" + filepath.Join(w.home, "go/pkg/mod")}
	return w
}

// ownEnv is the value of the world's variable name, as the launcher is
// given it.
func (w world) ownEnv(name string) string {
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// launch runs the probe through the launcher with capability c.
func (w world) launch(t *testing.T, c policy.Capability, redirects []Redirect, probeArgs ...string) (string, int) {
	t.Helper()
	return w.launchAs(t, testBinary(t), c, redirects, probeArgs...)
}

// launchAs is launch with the probe installed at exe (a copy of the test
// binary), as a program the user installed there would run.
func (w world) launchAs(t *testing.T, exe string, c policy.Capability, redirects []Redirect, probeArgs ...string) (string, int) {
	t.Helper()
	self := testBinary(t)
	if exe != self {
		if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(exe); err != nil {
			data, err := os.ReadFile(self)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(exe, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return w.run(t, nil, w.launcher(t, exe, c, redirects, probeArgs...)...)
}

// testBinary is this test binary: the launcher, and the probe it runs.
func testBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// launcher is the argv that runs the test binary as the launcher of the
// probe at exe under capability c (for run).
func (w world) launcher(t *testing.T, exe string, c policy.Capability, redirects []Redirect, probeArgs ...string) []string {
	t.Helper()
	s := Spec{Cap: c, Project: w.project, Cwd: w.project, Exe: exe, Argv: append([]string{probeName}, probeArgs...), Redirects: redirects}
	return append([]string{launcherName}, s.Args()[1:]...)
}

// launcherName is the test binary's argv[0] when it is the launcher.
const launcherName = "lg-confine-launcher"

// run runs the test binary with argv, its argv[0] saying what it is (the
// probe or the launcher), in the world's environment; setup, when not
// nil, gives the process what the test needs (a terminal, a descriptor,
// a session). It returns the output, trimmed, and the exit status.
func (w world) run(t *testing.T, setup func(*exec.Cmd), argv ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testBinary(t))
	cmd.Args = argv
	cmd.Env = w.env
	switch argv[0] {
	case launcherName:
		cmd.Env = append([]string{"LG_CONFINE_LAUNCH=1"}, w.env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if setup != nil {
		setup(cmd)
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), cmd.ProcessState.ExitCode()
}

// getenv is the variable name as the probe sees it under capability c.
func (w world) getenv(t *testing.T, c policy.Capability, name string) string {
	t.Helper()
	out, code := w.launch(t, c, nil, "env", name)
	line, _, _ := strings.Cut(out, "\n")
	v, ok := strings.CutPrefix(line, name+"=")
	if code != 0 || !ok {
		t.Fatalf("%s: env %s: exit %d, %q", c, name, code, out)
	}
	return v
}

var (
	readOnly     = policy.Capability{}
	projectWrite = policy.Capability{Write: true}
	gitWrite     = policy.Capability{Write: true, Git: true}
	withNetwork  = policy.Capability{Write: true, Network: true}
)

// TestConfinementFiles: what each capability lets a program read and
// write, tried by the kernel. Every refusal has an allowed control.
func TestConfinementFiles(t *testing.T) {
	w := newWorld(t)
	j := func(base, rel string) string { return filepath.Join(base, rel) }
	for _, c := range []struct {
		name  string
		cap   policy.Capability
		probe []string
		ok    bool
	}{
		{"read-only reads the project (control)", readOnly, []string{"read", j(w.project, "README.md")}, true},
		{"read-only lists the project (control)", readOnly, []string{"list", j(w.project, "src")}, true},
		{"read-only reads ~/.gitconfig (git needs it)", readOnly, []string{"read", j(w.home, ".gitconfig")}, true},
		{"read-only does not read ~/.npmrc (npm login writes the registry token there)", readOnly, []string{"read", j(w.home, ".npmrc")}, false},
		{"project-write does not read ~/.npmrc", projectWrite, []string{"read", j(w.home, ".npmrc")}, false},
		{"+network reads ~/.npmrc (control: the registry connection needs it)", withNetwork, []string{"read", j(w.home, ".npmrc")}, true},
		{"read-only reads ~/.config/git/config (control)", readOnly, []string{"read", j(w.home, ".config/git/config")}, true},
		{"read-only does not read an owner-only file git would read (~/.config/git/credentials, 0600)", readOnly, []string{"read", j(w.home, ".config/git/credentials")}, false},
		{"read-only does not read ~/.config/git/credentials (git's store helper keeps tokens there)", readOnly, []string{"read", j(w.home, ".config/git/credentials")}, false},
		{"read-only does not read ~/.ssh", readOnly, []string{"read", j(w.home, ".ssh/id_rsa")}, false},
		{"read-only does not read a key through a link in the project", readOnly, []string{"read", j(w.project, "notes.txt")}, false},
		{"read-only does not read the guard's state", readOnly, []string{"read", j(w.home, ".local/state/loopguard/grants/g1")}, false},
		{"read-only does not list the home", readOnly, []string{"list", w.home}, false},
		{"read-only does not read ~/notes.txt, the home on the search path", readOnly, []string{"read", j(w.home, "notes.txt")}, false},
		{"project-write does not read ~/notes.txt, the home on the search path", projectWrite, []string{"read", j(w.home, "notes.txt")}, false},
		{"read-only does not read the guard's state, ~/.local on the search path", readOnly, []string{"read", j(w.home, ".local/state/loopguard/grants/g1")}, false},
		{"read-only does not read ~/.ssh through /proc/self/root", readOnly, []string{"read", "/proc/self/root" + j(w.home, ".ssh/id_rsa")}, false},
		{"project-write does not write ~/.bashrc through /proc/self/root", projectWrite, []string{"write", "/proc/self/root" + j(w.home, ".bashrc")}, false},
		{"read-only reads the project through /proc/self/cwd (control)", readOnly, []string{"read", "/proc/self/cwd/README.md"}, true},
		{"read-only does not read outside", readOnly, []string{"read", j(w.outside, "secret")}, false},
		{"read-only writes nothing in the project", readOnly, []string{"write", j(w.project, "README.md")}, false},
		{"read-only creates nothing in the project", readOnly, []string{"write", j(w.project, "new.txt")}, false},
		{"read-only writes /dev/null (control)", readOnly, []string{"write", "/dev/null"}, true},
		{"project-write writes a source file (control)", projectWrite, []string{"write", j(w.project, "src/main.go")}, true},
		{"project-write creates in a clean directory (control)", projectWrite, []string{"write", j(w.project, "docs/new.md")}, true},
		{"project-write writes an existing top-level file (control)", projectWrite, []string{"append", j(w.project, "README.md")}, true},
		{"project-write does not write .git/config", projectWrite, []string{"append", j(w.project, ".git/config")}, false},
		{"project-write does not create a git hook", projectWrite, []string{"write", j(w.project, ".git/hooks/post-checkout")}, false},
		{"project-write does not write .claude/settings.json", projectWrite, []string{"append", j(w.project, ".claude/settings.json")}, false},
		{"project-write does not write a nested .mcp.json", projectWrite, []string{"append", j(w.project, "src/.mcp.json")}, false},
		{"project-write does not write a nested .envrc", projectWrite, []string{"append", j(w.project, "deep/.envrc")}, false},
		{"project-write does not rename .git away", projectWrite, []string{"rename", j(w.project, ".git"), j(w.project, "src/g")}, false},
		{"project-write does not hard-link ~/.gitconfig into the project (then write it there)", projectWrite, []string{"link", j(w.home, ".gitconfig"), j(w.project, "docs/gc")}, false},
		{"project-write does not hard-link .git/config below the project", projectWrite, []string{"link", j(w.project, ".git/config"), j(w.project, "docs/gitconfig")}, false},
		{"project-write makes no hard link, even in a clean directory (TestJailNoHardLinks)", projectWrite, []string{"link", j(w.project, "docs/guide.md"), j(w.project, "docs/guide2.md")}, false},
		{"project-write renames in a clean directory (control)", projectWrite, []string{"rename", j(w.project, "docs/guide.md"), j(w.project, "docs/guide2.md")}, true},
		{"project-write does not write ~/.bashrc", projectWrite, []string{"write", j(w.home, ".bashrc")}, false},
		{"project-write does not write through a link to a key", projectWrite, []string{"write", j(w.project, "notes.txt")}, false},
		{"project-write does not write the shared temp (its TMPDIR is its own)", projectWrite, []string{"write", j(w.tmp, "t")}, false},
		{"project-write does not write the user's npm cache (a package document there names what npm install fetches)", projectWrite, []string{"write", j(w.home, ".npm/_cacache/index-v5/y")}, false},
		{"project-write does not write npx's installed packages (the user's next npx runs them)", projectWrite, []string{"append", j(w.home, ".npm/_npx/abc/node_modules/p/index.js")}, false},
		{"project-write does not create in ~/.npm", projectWrite, []string{"mkdir", j(w.home, ".npm/_npx/def")}, false},
		{"project-write+git writes .git (control)", gitWrite, []string{"write", j(w.project, ".git/index")}, true},
		{"project-write+git still does not write .claude", gitWrite, []string{"append", j(w.project, ".claude/settings.json")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := w.launch(t, c.cap, nil, c.probe...)
			checkProbe(t, c.probe, out, code, c.ok)
		})
	}
	// A new executable configuration file at the top, or beside a nested
	// one, never stays in the project: refused where the top is not
	// granted, swept after the call where it is (TestJailTopLevel).
	for _, p := range []string{j(w.project, ".mcp.json"), j(w.project, "src/.claude")} {
		out, _ := w.launch(t, projectWrite, nil, "write", p)
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is in the project after the call: %q", p, out)
		}
	}
}

// TestConfinementNetwork: nothing reached without the network capability,
// never a Unix socket, never Multipath TCP's way around Landlock. A
// project-write launch with namespaces of its own is in a network
// namespace of its own: its sockets, listeners and Multipath TCP reach its
// own loopback alone, so the machine's listener is not reached (refused
// there, as no one listens on that port of the launch's loopback); with
// the filter alone it gets no IPv4 or IPv6 socket at all.
func TestConfinementNetwork(t *testing.T) {
	w := newWorld(t)
	ownNet := namespacesAllowed()
	var accepted atomic.Int32
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	addr := l.Addr().String()
	toAddr, err := policy.NetworkPorts(l.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	toAddr.Write = true
	anyPort := policy.Capability{Write: true, Network: true, AnyPort: true}
	for _, c := range []struct {
		name  string
		cap   policy.Capability
		probe []string
		ok    bool
	}{
		{"read-only connects nowhere", readOnly, []string{"tcp", addr}, false},
		{"project-write connects nowhere", projectWrite, []string{"tcp", addr}, false},
		{"project-write listens on its own loopback alone", projectWrite, []string{"listen"}, ownNet},
		{"no UDP socket beyond its own loopback without network", projectWrite, []string{"udp"}, ownNet},
		{"no Multipath TCP socket beyond its own loopback without network", projectWrite, []string{"mptcp"}, ownNet},
		{"no Unix socket (the keyring's D-Bus)", readOnly, []string{"unix"}, false},
		{"+network to its port connects (control)", toAddr, []string{"tcp", addr}, true},
		{"+network:443 does not connect to another port", withNetwork, []string{"tcp", addr}, false},
		{"+network to its port does not listen", toAddr, []string{"listen"}, false},
		{"+network granted before ports were named listens (what it meant then)", anyPort, []string{"listen"}, true},
		{"+network granted before ports were named connects to any port", anyPort, []string{"tcp", addr}, true},
		{"+network still opens no Unix socket", withNetwork, []string{"unix"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := accepted.Load()
			out, code := w.launch(t, c.cap, nil, c.probe...)
			if c.probe[0] == "tcp" && !c.ok && ownNet && c.cap.Write && !c.cap.Network {
				// In its own network namespace: not refused, not there.
				if code != 3 || !strings.Contains(out, "connection refused") {
					t.Errorf("%v: exit %d, %q; want the machine's listener not there", c.probe, code, out)
				}
			} else {
				checkProbe(t, c.probe, out, code, c.ok)
			}
			time.Sleep(10 * time.Millisecond)
			if n := accepted.Load() - before; !c.ok && n != 0 {
				t.Errorf("%v: the machine's listener accepted %d connections", c.probe, n)
			}
		})
	}
}

// TestConfinementRedirects: the launcher opens a redirection's file under
// the capability: a read-only program cannot redirect into the project,
// nor read a secret through <.
func TestConfinementRedirects(t *testing.T) {
	w := newWorld(t)
	out := filepath.Join(w.project, "docs", "out.txt")
	if got, code := w.launch(t, readOnly, []Redirect{{Fd: 1, Op: ">", Path: out}}, "stdout"); code != ExitFailed {
		t.Errorf("read-only >docs/out.txt: exit %d %q", code, got)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the file was created")
	}
	if got, code := w.launch(t, readOnly, []Redirect{{Fd: 0, Op: "<", Path: filepath.Join(w.home, ".ssh/id_rsa")}}, "stdout"); code != ExitFailed {
		t.Errorf("read-only <~/.ssh/id_rsa: exit %d %q", code, got)
	}
	// Controls: project-write writes it; /dev/null and 2>&1 work anywhere.
	if got, code := w.launch(t, projectWrite, []Redirect{{Fd: 1, Op: ">", Path: out}, {Fd: 2, Op: "dup", Dup: 1}}, "stdout"); code != 0 || got != "" {
		t.Errorf("project-write >docs/out.txt: exit %d %q", code, got)
	}
	if data, _ := os.ReadFile(out); string(data) != "to stdout\nok\n" {
		t.Errorf("out.txt holds %q", data)
	}
	if got, code := w.launch(t, readOnly, []Redirect{{Fd: 1, Op: ">", Path: "/dev/null"}}, "stdout"); code != 0 || got != "" {
		t.Errorf("read-only >/dev/null: exit %d %q", code, got)
	}
}

// TestConfinementEnvironment: the program runs in the cwd given, and its
// TMPDIR is a directory of its launch's own in the scratch directory.
func TestConfinementEnvironment(t *testing.T) {
	w := newWorld(t)
	if got, _ := w.launch(t, readOnly, nil, "pwd"); !strings.HasPrefix(got, w.project+"\n") {
		t.Errorf("pwd: %q", got)
	}
	tmp := w.getenv(t, readOnly, "TMPDIR")
	scratch := filepath.Dir(filepath.Dir(filepath.Dir(tmp)))
	if filepath.Dir(scratch) != w.tmp || !strings.HasPrefix(filepath.Base(scratch), "loopguard-scratch-") ||
		filepath.Base(filepath.Dir(filepath.Dir(tmp))) != launchesDir ||
		!strings.HasPrefix(filepath.Base(filepath.Dir(tmp)), "run-") || filepath.Base(tmp) != "tmp" {
		t.Fatalf("TMPDIR %q", tmp)
	}
	if again := w.getenv(t, projectWrite, "TMPDIR"); again == tmp || filepath.Dir(filepath.Dir(filepath.Dir(again))) != scratch {
		t.Errorf("a second launch's TMPDIR %q (the first's %q)", again, tmp)
	}
	if _, err := os.Stat(filepath.Dir(tmp)); err == nil {
		t.Errorf("the launch's directory %s is left", filepath.Dir(tmp))
	}
	if out, code := w.launch(t, readOnly, nil, "jail-write-tmpdir"); code != 0 {
		t.Errorf("read-only cannot write its TMPDIR: %q", out)
	}
	for _, c := range []policy.Capability{readOnly, projectWrite} {
		if got := w.getenv(t, c, "PYTHONPYCACHEPREFIX"); filepath.Dir(got) != scratch || !strings.HasPrefix(filepath.Base(got), "pycache-") {
			t.Errorf("%s: PYTHONPYCACHEPREFIX %q", c, got)
		}
	}
	// Each capability has its own build cache; read-only cannot write
	// project-write's (whose test binaries project-write runs).
	ro, rw := w.getenv(t, readOnly, "GOCACHE"), w.getenv(t, projectWrite, "GOCACHE")
	if ro != filepath.Join(scratch, CacheDir("go-build", false, w.project)) || rw != filepath.Join(scratch, CacheDir("go-build", true, w.project)) {
		t.Fatalf("GOCACHE %q and %q", ro, rw)
	}
	out, code := w.launch(t, readOnly, nil, "write", filepath.Join(rw, "poison"))
	checkProbe(t, []string{"write", rw}, out, code, false)
	out, code = w.launch(t, readOnly, nil, "write", filepath.Join(ro, "entry"))
	checkProbe(t, []string{"write", ro}, out, code, true)
	out, code = w.launch(t, projectWrite, nil, "write", filepath.Join(rw, "entry"))
	checkProbe(t, []string{"write", rw}, out, code, true)
	// And each project its own: one project's code cannot plant what
	// another's runs (a shared go-build-rw let project A's code rewrite
	// the entry for fmt that project B's go run then ran).
	other := w
	other.project = filepath.Join(filepath.Dir(w.project), "proj2")
	testfs.Tree(t, other.project, []byte("original\n"), 0o644, "README.md")
	if os.Getuid() == 0 {
		for _, p := range []string{other.project, filepath.Join(other.project, "README.md")} {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, cache := range privateCaches {
		env := cache.env
		for _, c := range []policy.Capability{readOnly, projectWrite} {
			mine, theirs := w.getenv(t, c, env), other.getenv(t, c, env)
			if mine == theirs || filepath.Dir(theirs) != scratch {
				t.Errorf("%s %s: %q in one project, %q in another", c, env, mine, theirs)
			}
			out, code := other.launch(t, projectWrite, nil, "write", filepath.Join(mine, "poison"))
			checkProbe(t, []string{"write from another project", mine}, out, code, false)
		}
	}
	// npm's cache: private per capability, as Go's (the user's own ~/.npm
	// is not writable: TestConfinementFiles).
	nro, nrw := w.getenv(t, readOnly, "npm_config_cache"), w.getenv(t, projectWrite, "npm_config_cache")
	if nro != filepath.Join(scratch, CacheDir("npm", false, w.project)) || nrw != filepath.Join(scratch, CacheDir("npm", true, w.project)) {
		t.Fatalf("npm_config_cache %q and %q", nro, nrw)
	}
	out, code = w.launch(t, projectWrite, nil, "mkdir", filepath.Join(nrw, "_npx"))
	checkProbe(t, []string{"mkdir", nrw}, out, code, true)
	out, code = w.launch(t, readOnly, nil, "write", filepath.Join(nrw, "_npx", "poison"))
	checkProbe(t, []string{"write", nrw}, out, code, false)
}

// TestConfinementUserToolchains: a program the user installed under a
// hidden directory of the home (cargo's ~/.cargo/bin, pip's and uv's
// ~/.local/bin) runs and reads the project, but that directory's other
// files stay closed: ~/.cargo/credentials.toml holds the registry token
// `cargo login` wrote, ~/.local/share what applications keep. A toolchain
// whose root lies elsewhere (~/sdk/go1.26, /usr/local/go) still reads
// its root (control).
func TestConfinementUserToolchains(t *testing.T) {
	w := newWorld(t)
	testfs.Tree(t, w.home, []byte("token\n"), 0o600, ".cargo/credentials.toml", ".local/share/app/history", "sdk/go1/src/fmt/print.go")
	j := func(rel string) string { return filepath.Join(w.home, rel) }
	for _, c := range []struct {
		exe   string
		probe []string
		ok    bool
	}{
		{j(".cargo/bin/tool"), []string{"read", filepath.Join(w.project, "README.md")}, true},
		{j(".cargo/bin/tool"), []string{"read", j(".cargo/credentials.toml")}, false},
		{j(".local/bin/tool"), []string{"read", filepath.Join(w.project, "README.md")}, true},
		{j(".local/bin/tool"), []string{"read", j(".local/share/app/history")}, false},
		{j("sdk/go1/bin/tool"), []string{"read", j("sdk/go1/src/fmt/print.go")}, true},
	} {
		out, code := w.launchAs(t, c.exe, readOnly, nil, c.probe...)
		checkProbe(t, append([]string{c.exe}, c.probe...), out, code, c.ok)
	}
}

// TestScratchLinkedAway: the scratch directory lies in the temp directory.
// No confined program may write there any more (TestJailLeavesNoLinkInSharedTemp),
// but another program of the user's could replace the private
// directories a later launch grants (its GOCACHE, npm's cache) with
// links; the later launch must not follow them (to ~/.ssh here), and must
// still run once the directory is its own again (control).
func TestScratchLinkedAway(t *testing.T) {
	w := newWorld(t)
	ssh := filepath.Join(w.home, ".ssh")
	key := filepath.Join(ssh, "authorized_keys")
	for _, c := range []struct {
		cap  policy.Capability
		name string
	}{{readOnly, "GOCACHE"}, {readOnly, "npm_config_cache"}, {projectWrite, "GOCACHE"}, {projectWrite, "npm_config_cache"}} {
		dir := w.getenv(t, c.cap, c.name)
		if out, code := w.launch(t, projectWrite, nil, "replace-with-link", dir, ssh); code == 0 {
			t.Fatalf("project-write replaced %s: %q", dir, out)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(ssh, dir); err != nil {
			t.Fatal(err)
		}
		out, code := w.launch(t, c.cap, nil, "write", key)
		if code == 0 {
			t.Errorf("%s: after %s was linked to ~/.ssh, the launch wrote %s: %q", c.cap, c.name, key, out)
		}
		if _, err := os.Stat(key); err == nil {
			t.Fatalf("%s written", key)
		}
		// The launch refused (or the kernel did); once the link is gone,
		// launches run again.
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		if got := w.getenv(t, c.cap, c.name); got != dir {
			t.Errorf("%s after the link was removed: %q", c.name, got)
		}
		// A tool's own mode on it (Go makes its cache 0755) is no link.
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := w.getenv(t, c.cap, c.name); got != dir {
			t.Errorf("%s at mode 0755: %q", c.name, got)
		}
	}
}

// TestConfinementEnvironmentTokens: a read-only program keeps only the
// variables the read-only tools read; a token in the agent's environment
// is gone (code that slipped past the analysis cannot print it), the
// locale and the paths stay (control), a proxy stays only with +network.
// project-write keeps the environment whole (a project's tests read their
// settings from it).
func TestConfinementEnvironmentTokens(t *testing.T) {
	w := newWorld(t)
	w.env = append(w.env, "GITHUB_TOKEN=ghp_secret", "AWS_SECRET_ACCESS_KEY=aws_secret", "LANG=C.UTF-8", "LC_ALL=C", "HTTPS_PROXY=http://u:p@proxy.invalid:3128", "NODE_ENV=test")
	readOnlyNet := policy.Capability{Network: true}
	for _, c := range []struct {
		cap  policy.Capability
		name string
		want string
	}{
		{readOnly, "GITHUB_TOKEN", ""},
		{readOnly, "AWS_SECRET_ACCESS_KEY", ""},
		{readOnly, "HTTPS_PROXY", ""},
		{readOnly, "LANG", "C.UTF-8"},
		{readOnly, "LC_ALL", "C"},
		{readOnly, "HOME", w.home},
		{readOnly, "PATH", w.ownEnv("PATH")},
		{readOnlyNet, "GITHUB_TOKEN", ""},
		{readOnlyNet, "HTTPS_PROXY", "http://u:p@proxy.invalid:3128"},
		{projectWrite, "GITHUB_TOKEN", "ghp_secret"},
		// The jail grant's capability writes the project and keeps
		// read-only's environment (issue 36).
		{policy.JailCapability, "GITHUB_TOKEN", ""},
		{policy.JailCapability, "AWS_SECRET_ACCESS_KEY", ""},
		{policy.JailCapability, "HTTPS_PROXY", ""},
		{policy.JailCapability, "LANG", "C.UTF-8"},
		{policy.JailCapability, "PATH", w.ownEnv("PATH")},
		// A project's tests read it: the usability run's NODE_ENV.
		{policy.JailCapability, "NODE_ENV", "test"},
		{readOnly, "NODE_ENV", "test"},
	} {
		if got := w.getenv(t, c.cap, c.name); got != c.want {
			t.Errorf("%s: $%s is %q, want %q", c.cap, c.name, got, c.want)
		}
	}
}

// TestLauncherFailsClosed: a launcher that cannot confine runs nothing.
func TestLauncherFailsClosed(t *testing.T) {
	w := newWorld(t)
	marker := filepath.Join(w.tmp, "ran")
	self := testBinary(t)
	for _, args := range [][]string{
		{"--cap", "read-only", "--project", w.home, "--cwd", w.home, "--", self, probeName, "write", marker}, // the project is the home
		{"--cap", "bogus", "--project", w.project, "--cwd", w.project, "--", self, probeName, "write", marker},
		{"--cap", "read-only", "--project", w.project, "--cwd", w.project, "--", filepath.Join(w.tmp, "missing"), "x"},
	} {
		out, code := w.run(t, nil, append([]string{launcherName}, args...)...)
		if code != ExitFailed || !strings.Contains(out, "loopguard: the program was not run") {
			t.Errorf("%q: exit %d %q", args, code, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q: the program ran", args)
		}
	}
}

// checkProbe: an allowed probe printed ok; a refused one ran (the launcher
// did its part) and the kernel refused it, not something else.
func checkProbe(t *testing.T, probe []string, out string, code int, ok bool) {
	t.Helper()
	switch {
	case ok && (code != 0 || !strings.HasSuffix(out, "ok")):
		t.Errorf("%v: exit %d, %q; want it allowed", probe, code, out)
	case !ok && (code != 3 || !(strings.Contains(out, "permission denied") || strings.Contains(out, "operation not permitted") ||
		// A launch in its own mount namespace: everything outside the
		// write set is mounted read-only.
		strings.Contains(out, "read-only file system") ||
		// A protected entry mounted over itself cannot be moved.
		strings.Contains(out, "device or resource busy") ||
		// Landlock refuses a link or rename that would move a file
		// between hierarchies of different rights with EXDEV (the world
		// is one file system: no real cross-device link here).
		(probe[0] == "link" || probe[0] == "rename") && strings.Contains(out, "invalid cross-device link") ||
		// The filter refuses extended attributes as a file system
		// without them does.
		slices.Contains(probe, "jail-setxattr") && strings.Contains(out, "operation not supported") ||
		// And file ioctls as a file system without them does.
		slices.Contains(probe, "jail-ioctl") && strings.Contains(out, "inappropriate ioctl for device"))):
		t.Errorf("%v: exit %d, %q; want the probe refused by the kernel", probe, code, out)
	}
}

// TestConfinementRealNpm: the real npm under project-write runs the
// project's test script, which cannot read the registry token `npm login`
// left in ~/.npmrc (a test the agent wrote printing it); with the network
// capability the same script reads it (control: the rule, not a broken
// world, refuses).
func TestConfinementRealNpm(t *testing.T) {
	w := newWorld(t)
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("LOOPGUARD_REQUIRE_TABLED") == "1" {
			t.Fatal("node is not installed (scripts/deps installs it)")
		}
		t.Skip("node is not installed")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	node, _ = filepath.EvalSymlinks(node)
	cli, err := filepath.EvalSymlinks(npm)
	if err != nil {
		t.Fatal(err)
	}
	const token = "npm_TESTTOKEN0123456789"
	if err := os.WriteFile(filepath.Join(w.home, ".npmrc"), []byte("//registry.invalid/:_authToken="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg := `{"name":"p","version":"1.0.0","scripts":{"test":"cat \"$HOME/.npmrc\" || echo token unreadable; echo tests ran"}}`
	if err := os.WriteFile(filepath.Join(w.project, "package.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	quiet := func(cmd *exec.Cmd) { cmd.Env = append(cmd.Env, "npm_config_update_notifier=false") }
	for _, c := range []struct {
		cap       policy.Capability
		wantToken bool
	}{{projectWrite, false}, {withNetwork, true}} {
		s := Spec{Cap: c.cap, Project: w.project, Cwd: w.project, Exe: node, Argv: []string{"node", cli, "test"}}
		out, code := w.run(t, quiet, append([]string{launcherName}, s.Args()[1:]...)...)
		if code != 0 {
			t.Fatalf("%s: npm test: exit %d\n%s", c.cap, code, out)
		}
		if !strings.Contains(out, "tests ran") {
			t.Fatalf("%s: the test script did not run:\n%s", c.cap, out)
		}
		if got := strings.Contains(out, token); got != c.wantToken {
			t.Errorf("%s: token printed %v, want %v:\n%s", c.cap, got, c.wantToken, out)
		}
	}
}

// TestOpenPrivate: the launcher grants a private directory only by a
// descriptor of a directory of this user's, opened without following a
// link: what a confined program could have put at the path by the time
// the ruleset is built (a link to ~/.ssh) is refused, not followed; the
// directory's own mode is the tool's (Go's cache makes it 0755).
func TestOpenPrivate(t *testing.T) {
	root := t.TempDir()
	ok := filepath.Join(root, "ok")
	open := filepath.Join(root, "open")
	link := filepath.Join(root, "link")
	for _, d := range []string{ok, open} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		uid  int
		good bool
	}{{ok, os.Getuid(), true}, {open, os.Getuid(), true}, {link, os.Getuid(), false}, {ok, os.Getuid() + 1, false}} {
		fd, err := openPrivate(c.dir, c.uid)
		if err == nil {
			syscall.Close(fd)
		}
		if (err == nil) != c.good {
			t.Errorf("%s (uid %d): %v, want accepted %v", c.dir, c.uid, err, c.good)
		}
	}
}

// TestConfinementControllingTerminal: a confined program cannot open the
// controlling terminal of the agent's session (/dev/tty: often the user's
// own, where it could read what the user types, or write an escape the
// terminal acts on, as OSC 52 setting the clipboard the user pastes
// from). Control: the same probe, not launched, writes there; the
// launched program still writes its standard output (the agent's).
func TestConfinementControllingTerminal(t *testing.T) {
	w := newWorld(t)
	ptmx, pts := openPTY(t)
	defer ptmx.Close()
	defer pts.Close()
	go io.Copy(io.Discard, ptmx) // drain what reaches the terminal
	self := testBinary(t)
	// In a new session whose controlling terminal is the pseudo-terminal.
	session := func(cmd *exec.Cmd) {
		cmd.Stdin = pts
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	if out, code := w.run(t, session, probeName, "devtty"); code != 0 || !strings.HasSuffix(out, "ok") {
		t.Fatalf("unconfined, the probe does not write its controlling terminal (control): %d %q", code, out)
	}
	for _, c := range []policy.Capability{readOnly, projectWrite, withNetwork} {
		out, code := w.run(t, session, w.launcher(t, self, c, nil, "devtty")...)
		checkProbe(t, []string{c.String(), "devtty"}, out, code, false)
		if out, code := w.run(t, session, w.launcher(t, self, c, nil, "stdout")...); code != 0 || !strings.Contains(out, "to stdout") {
			t.Errorf("%s: standard output (control): %d %q", c, code, out)
		}
	}
}

// openPTY opens a pseudo-terminal: its master and its slave.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ptmx, pts
}

// TestConfinementTerminalInjection: a confined program whose standard
// input is a terminal (the user's, when an agent passes its own) cannot
// type into it, nor change its line discipline or size: what it typed the shell reading that terminal would run
// unconfined (TIOCSTI). Landlock's ioctl right does not reach a terminal
// the program inherits; the filter does. Control: the same probe, not
// launched, types (the test runs as a user the kernel lets do it).
func TestConfinementTerminalInjection(t *testing.T) {
	w := newWorld(t)
	ptmx, pts := openPTY(t)
	defer ptmx.Close()
	defer pts.Close()
	self := testBinary(t)
	onTerminal := func(cmd *exec.Cmd) { cmd.Stdin = pts }
	// And what would change it past the call (the fifty-sixth attack
	// run): its line discipline, its size (which signals its foreground
	// process group). Controls: each, not launched, runs.
	for _, probe := range []string{"tiocsetd", "tiocswinsz"} {
		if out, code := w.run(t, onTerminal, probeName, probe); code != 0 || !strings.HasSuffix(out, "ok") {
			t.Errorf("%s, not launched (control): %d %s", probe, code, out)
		}
	}
	if out, code := w.run(t, onTerminal, probeName, "tiocsti"); code != 0 || !strings.HasSuffix(out, "ok") {
		t.Skipf("the kernel does not let this user type into a terminal it does not control (control): %d %s", code, out)
	}
	for _, c := range []policy.Capability{readOnly, projectWrite, withNetwork} {
		for _, probe := range []string{"tiocsti", "tiocsetd", "tiocswinsz"} {
			out, code := w.run(t, onTerminal, w.launcher(t, self, c, nil, probe)...)
			checkProbe(t, []string{c.String(), probe}, out, code, false)
		}
	}
}

// TestConfinementInheritedDescriptors: a file the agent's process opened
// before the launch (the user's key here) and left open is not the
// program's to read: only its standard three and the command's own
// redirections reach it. Control: a redirection the command names (3<
// README.md) is read.
func TestConfinementInheritedDescriptors(t *testing.T) {
	w := newWorld(t)
	keyPath := filepath.Join(w.home, ".ssh/id_rsa")
	if err := os.WriteFile(keyPath, []byte("KEY-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := os.Open(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	self := testBinary(t)
	for _, c := range []struct {
		redirects []Redirect
		ok        bool
	}{
		{nil, false},
		{[]Redirect{{Fd: 3, Op: "<", Path: filepath.Join(w.project, "README.md")}}, true},
	} {
		got, _ := w.run(t, func(cmd *exec.Cmd) { cmd.ExtraFiles = []*os.File{key} }, w.launcher(t, self, readOnly, c.redirects, "readfd")...)
		if strings.Contains(got, "KEY-SECRET") {
			t.Errorf("redirects %v: the inherited descriptor read the key: %q", c.redirects, got)
		}
		if c.ok && !strings.Contains(got, `read "original\n"`) {
			t.Errorf("redirects %v: the named redirection was not read (control): %q", c.redirects, got)
		}
	}
}

// TestConfinementKernelKeyring: a key in the user's kernel keyring (where
// Kerberos and other tools keep credentials) is not a confined program's
// to read. Control: the same probe, not launched, reads it.
func TestConfinementKernelKeyring(t *testing.T) {
	w := newWorld(t)
	desc := fmt.Sprintf("loopguard-test-%d", os.Getpid())
	id, err := unix.AddKey("user", desc, []byte("KEYRING-SECRET"), unix.KEY_SPEC_USER_KEYRING)
	if err != nil {
		t.Skipf("no kernel keyring: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	if out, code := w.run(t, nil, probeName, "keyread", desc); code != 0 || !strings.Contains(out, "KEYRING-SECRET") {
		t.Skipf("this process cannot read its own user keyring (control): %d %s", code, out)
	}
	for _, c := range []policy.Capability{readOnly, projectWrite, withNetwork} {
		out, code := w.launch(t, c, nil, "keyread", desc)
		if strings.Contains(out, "KEYRING-SECRET") {
			t.Errorf("%s: the probe read the key: %q", c, out)
		}
		checkProbe(t, []string{c.String(), "keyread"}, out, code, false)
	}
}

// TestConfinementSignals: a confined program cannot signal a process
// outside its domain (the agent's shell, the agent, the user's other
// processes: Landlock's signal scope, ABI 6; a launch with a PID
// namespace of its own does not even name it). Control: the same probe,
// not launched, signals this test process.
func TestConfinementSignals(t *testing.T) {
	if ABI() < 6 {
		t.Skipf("Landlock ABI %d has no signal scope (6)", ABI())
	}
	w := newWorld(t)
	pid := strconv.Itoa(os.Getpid())
	if out, code := w.run(t, nil, probeName, "signal", pid); code != 0 || !strings.HasSuffix(out, "ok") {
		t.Fatalf("unconfined signal (control): %d %s", code, out)
	}
	for _, c := range []policy.Capability{readOnly, projectWrite, withNetwork} {
		out, code := w.launch(t, c, nil, "signal", pid)
		if c.Write && namespacesAllowed() {
			// A PID namespace of its own: this process has no pid there.
			if code != 3 || !strings.Contains(out, "no such process") {
				t.Errorf("%s signal: exit %d, %q; want no such process", c, code, out)
			}
			continue
		}
		checkProbe(t, []string{c.String(), "signal"}, out, code, false)
	}
}
