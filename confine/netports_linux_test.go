//go:build linux

package confine

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
)

// TestJailNetworkPorts: +network lets a program connect over TCP to the
// ports its rule names (443 unless it names others), and to no other
// port; it listens on none; it opens no other IP protocol that Landlock's
// port rules would not hold (SCTP, Multipath TCP). Tried by the kernel as
// an unprivileged user, with and without namespaces of the launch's own,
// against two listeners of this machine's loopback: each refusal has its
// control, the same probe to the port granted. A +network granted before
// ports were named keeps what it meant then: any port, and listening.
func TestJailNetworkPorts(t *testing.T) {
	granted, grantedHits := tcpListener(t)
	other, otherHits := tcpListener(t)
	gp, _ := strconv.Atoi(mustPort(t, granted))
	toGranted, err := policy.NetworkPorts(gp)
	if err != nil {
		t.Fatal(err)
	}
	toGranted.Write = true
	def := policy.Capability{Write: true, Network: true} // +network:443
	legacy := policy.Capability{Write: true, Network: true, AnyPort: true}
	bothModes(t, func(t *testing.T, j *jail) {
		for _, c := range []struct {
			name  string
			cap   policy.Capability
			probe []string
			ok    bool
			hits  *atomic.Int32
		}{
			{"connects to the port granted (control)", toGranted, []string{"tcp", granted}, true, grantedHits},
			{"does not connect to another port", toGranted, []string{"tcp", other}, false, otherHits},
			{"+network:443 does not connect to the port granted elsewhere", def, []string{"tcp", granted}, false, grantedHits},
			{"does not listen", toGranted, []string{"listen"}, false, nil},
			{"opens a UDP socket (DNS; Landlock cannot filter UDP)", toGranted, []string{"udp"}, true, nil},
			{"opens no Multipath TCP socket", toGranted, []string{"mptcp"}, false, nil},
			{"opens no SCTP socket", toGranted, []string{"sctp"}, false, nil},
			{"opens no SCTP socket by SOCK_SEQPACKET", toGranted, []string{"sctp-seqpacket"}, false, nil},
			{"opens no Unix socket", toGranted, []string{"unix"}, false, nil},
			{"granted before ports were named: another port (control)", legacy, []string{"tcp", other}, true, otherHits},
			{"granted before ports were named: listens (control)", legacy, []string{"listen"}, true, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				var before int32
				if c.hits != nil {
					before = c.hits.Load()
				}
				out, code := j.launch(t, c.cap, c.probe...)
				checkProbe(t, append([]string{c.cap.String()}, c.probe...), out, code, c.ok)
				if c.hits == nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
				if n := c.hits.Load() - before; c.ok != (n > 0) {
					t.Errorf("%s %v: the listener accepted %d connections", c.cap, c.probe, n)
				}
			})
		}
	})
}

// tcpListener listens on a port of this machine's loopback and counts
// the connections it accepts.
func tcpListener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return l.Addr().String(), &n
}

func mustPort(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
