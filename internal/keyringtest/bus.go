package keyringtest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// config is the bus's configuration: a session bus on one socket that
// anyone on it may own names on and talk to.
const config = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// PrivateBus starts a private D-Bus session bus: a dbus-daemon with no
// service directories, so nothing is activated on it (a test starts
// gnome-keyring-daemon itself, or nothing), its socket and configuration
// in dir. It returns its address and stop, which kills it and waits. It
// fails when dbus-daemon is missing or prints no address within 5 s.
func PrivateBus(dir string) (addr string, stop func(), err error) {
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		return "", nil, fmt.Errorf("dbus-daemon not found (make deps installs it): %w", err)
	}
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, config, filepath.Join(dir, "bus")), 0o600); err != nil {
		return "", nil, err
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr = <-line:
	case <-time.After(5 * time.Second):
	}
	if addr == "" {
		stop()
		return "", nil, errors.New("dbus-daemon printed no address in 5s")
	}
	return addr, stop, nil
}
