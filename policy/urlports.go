package policy

import (
	"net/url"
	"strconv"
	"strings"
)

// URLPorts are the TCP ports the URLs among argv's arguments name, by
// their port or their scheme (http 80, https 443, ssh 22, git 9418, ws 80,
// wss 443); none when no word is such a URL (a network grant then connects
// to DefaultPort alone). review's n and the network escalation of an exact
// approval (hooks) both read them here.
func URLPorts(argv []string) []int {
	schemes := map[string]int{"http": 80, "https": 443, "ssh": 22, "git+ssh": 22, "git": 9418, "ws": 80, "wss": 443}
	var ports []int
	if len(argv) == 0 {
		return nil
	}
	for _, a := range argv[1:] {
		if !strings.Contains(a, "://") {
			continue
		}
		u, err := url.Parse(a)
		if err != nil || u.Host == "" {
			continue
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err == nil && n > 0 && n < 65536 {
				ports = append(ports, n)
			}
			continue
		}
		if n, ok := schemes[strings.ToLower(u.Scheme)]; ok {
			ports = append(ports, n)
		}
	}
	return ports
}
