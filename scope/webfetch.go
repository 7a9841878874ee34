package scope

import (
	"net/url"
	"strings"
)

const (
	maxDomainLen = 253
	maxURLLen    = 8192
)

// parseWebFetchSpec parses "domain:host". The host is an ASCII DNS name
// (IDNs in their xn-- form) or an IPv4 address, matched exactly: no
// wildcards, no port, no trailing dot.
func parseWebFetchSpec(spec string) (string, *specError) {
	const pfx = "domain:"
	if !strings.HasPrefix(spec, pfx) {
		return "", serr(0, "WebFetch rules are written WebFetch(domain:host)")
	}
	d := strings.ToLower(spec[len(pfx):])
	off := len(pfx)
	if msg, i := checkHost(d); msg != "" {
		return "", serr(off+i, "%s", msg)
	}
	return d, nil
}

// checkHost validates a lower-case host name and returns a message and
// offset on failure.
func checkHost(d string) (string, int) {
	if d == "" {
		return "empty domain", 0
	}
	if len(d) > maxDomainLen {
		return "domain too long", 0
	}
	if i := strings.IndexByte(d, '*'); i >= 0 {
		return "wildcards are not supported in domains; name each host", i
	}
	off := 0
	for _, label := range strings.Split(d, ".") {
		if label == "" {
			return "empty label in domain (no leading, trailing or double dots)", off
		}
		if len(label) > 63 {
			return "domain label longer than 63 characters", off
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "domain label starts or ends with '-'", off
		}
		for j := 0; j < len(label); j++ {
			c := label[j]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "domain may hold only letters, digits, '-' and '.'", off + j
			}
		}
		off += len(label) + 1
	}
	return "", 0
}

// matchWebFetch parses the call's URL and requires its host to be exactly
// the rule's domain.
func matchWebFetch(r Rule, c Call) error {
	if c.Tool != toolWebFetch {
		return mismatch(ReasonToolMismatch, "rule %s does not cover tool %q", r, c.Tool)
	}
	raw, ok := c.Input["url"].(string)
	if !ok || raw == "" {
		return mismatch(ReasonMalformedInput, "WebFetch: missing or non-string url")
	}
	if len(raw) > maxURLLen {
		return mismatch(ReasonBadURL, "url longer than %d bytes", maxURLLen)
	}
	for i := 0; i < len(raw); i++ {
		// Parsers disagree on backslashes, whitespace, controls and raw
		// non-ASCII (WHATWG strips tabs, turns \ into /): refuse them all.
		if c := raw[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return mismatch(ReasonBadURL, "url holds a character (%q) that URL parsers disagree on", c)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return mismatch(ReasonBadURL, "unparseable url: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return mismatch(ReasonBadURL, "scheme %q: only http and https", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return mismatch(ReasonBadURL, "url has no host")
	}
	if u.User != nil {
		return mismatch(ReasonBadURL, "url carries user info")
	}
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80" || u.Scheme == "https" && p == "443") {
		return mismatch(ReasonDomainMismatch, "port %s: only the scheme's default port is covered", p)
	}
	if strings.HasSuffix(u.Host, ":") {
		return mismatch(ReasonBadURL, "empty port")
	}
	host := strings.ToLower(u.Hostname())
	if msg, _ := checkHost(host); msg != "" {
		return mismatch(ReasonDomainMismatch, "host %q is not a plain DNS name: %s", host, msg)
	}
	if host != r.domain {
		return mismatch(ReasonDomainMismatch, "host %q is not %s", host, r.domain)
	}
	return nil
}
