package outbound

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseAllow parses the comma-separated value of LECTERN_OUTBOUND_ALLOW into the
// entries Config.Allow expects. Each entry is a CIDR ("10.0.0.0/8"), a single IP
// ("127.0.0.1", "::1") or a hostname ("minio", "files.internal.example"). Blank
// entries are skipped so a trailing comma is harmless. Entries come back
// normalised (CIDRs masked, IPs as single-address prefixes, hostnames lower-case
// without a trailing dot); an entry that is none of these is an error, because a
// typo here would otherwise silently leave a needed host blocked.
func ParseAllow(s string) ([]string, error) {
	var out []string
	for _, raw := range strings.Split(s, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		e, err := parseAllowEntry(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, e.String())
	}
	return out, nil
}

// allowEntry is one parsed Allow entry: exactly one of prefix or host is set.
type allowEntry struct {
	prefix netip.Prefix
	host   string
}

func (e allowEntry) String() string {
	if e.host != "" {
		return e.host
	}
	return e.prefix.String()
}

func parseAllowEntry(raw string) (allowEntry, error) {
	s := strings.TrimSpace(raw)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return allowEntry{}, fmt.Errorf("outbound: allow entry %q is not a valid CIDR: %w", raw, err)
		}
		return allowEntry{prefix: canonicalPrefix(p)}, nil
	}
	// Bracketed IPv6 is accepted because people copy it out of URLs.
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		if ip.Zone() != "" {
			return allowEntry{}, fmt.Errorf("outbound: allow entry %q: IPv6 zones are not supported", raw)
		}
		ip = ip.Unmap()
		return allowEntry{prefix: netip.PrefixFrom(ip, ip.BitLen())}, nil
	}
	host, ok := normalizeHostname(s)
	if !ok {
		return allowEntry{}, fmt.Errorf("outbound: allow entry %q is not a hostname, IP or CIDR (no scheme or port)", raw)
	}
	return allowEntry{host: host}, nil
}

// canonicalPrefix masks p and turns an IPv4-mapped IPv6 prefix into its IPv4
// form, so that matching is done on unmapped addresses on both sides and
// "::ffff:127.0.0.1/128" and "127.0.0.1/32" mean the same thing.
func canonicalPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked()
}

// normalizeHostname lower-cases h, drops one trailing dot and checks it is a
// plausible DNS name. A name whose last label is all digits (or a 0x hex
// number) is refused: no real top-level domain looks like that, but
// inet_aton-style IP spellings such as "2130706433", "0177.0.0.1" or "127.1"
// do, and some resolvers (glibc's) would turn them into 127.0.0.1.
func normalizeHostname(h string) (string, bool) {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" || len(h) > 253 {
		return "", false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			// Underscores are not valid in DNS host names but are common in
			// container and compose service names, which are exactly what
			// operators allow-list. Bytes >= 0x80 let internationalised
			// names through; net/http converts them to punycode.
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c >= 0x80) {
				return "", false
			}
		}
	}
	if looksNumeric(labels[len(labels)-1]) {
		return "", false
	}
	return h, true
}

// looksNumeric reports whether a label is a decimal, octal or hex number as
// inet_aton would read it.
func looksNumeric(l string) bool {
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		if l == "" {
			return true // "0x" alone is read as 0 by inet_aton
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// policy decides whether an address may be dialled.
type policy struct {
	prefixes []netip.Prefix
	hosts    map[string]bool
}

func newPolicy(allow []string) (*policy, error) {
	p := &policy{hosts: map[string]bool{}}
	for _, raw := range allow {
		e, err := parseAllowEntry(raw)
		if err != nil {
			return nil, err
		}
		if e.host != "" {
			p.hosts[e.host] = true
		} else {
			p.prefixes = append(p.prefixes, e.prefix)
		}
	}
	return p, nil
}

// hostAllowed reports whether the host name itself was allow-listed. An
// allowed name is trusted whatever it resolves to: the operator named it, and
// internal services (a compose "minio", a Kubernetes service) have addresses
// that change and are private by nature.
func (p *policy) hostAllowed(host string) bool {
	h, ok := normalizeHostname(host)
	return ok && p.hosts[h]
}

// check returns nil if ip may be dialled for host, or a *BlockedError.
// hostOK is the result of hostAllowed(host), computed once per dial.
func (p *policy) check(host string, hostOK bool, ip netip.Addr) error {
	if hostOK {
		return nil
	}
	reason, blocked := classify(ip)
	if !blocked {
		return nil
	}
	u := ip.Unmap().WithZone("")
	for _, pr := range p.prefixes {
		if pr.Contains(u) {
			return nil
		}
	}
	return &BlockedError{Host: host, IP: ip, Reason: reason}
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// blockedRanges are checked in order; the first match names the reason. Only
// IPv4 and native IPv6 ranges are listed: IPv6 forms that embed an IPv4
// address are unwrapped by classify first.
var blockedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{mustPrefix("169.254.169.254/32"), "cloud metadata address"},
	{mustPrefix("0.0.0.0/32"), "unspecified address"},
	{mustPrefix("0.0.0.0/8"), `"this network" address`},
	{mustPrefix("127.0.0.0/8"), "loopback address"},
	{mustPrefix("10.0.0.0/8"), "private address"},
	{mustPrefix("172.16.0.0/12"), "private address"},
	{mustPrefix("192.168.0.0/16"), "private address"},
	{mustPrefix("100.64.0.0/10"), "carrier-grade NAT address"},
	{mustPrefix("169.254.0.0/16"), "link-local address"},
	{mustPrefix("224.0.0.0/4"), "multicast address"},
	{mustPrefix("255.255.255.255/32"), "broadcast address"},
	// Benchmarking (RFC 2544): unroutable on the internet, and the "fake IP" range of local
	// DNS proxies, so an address there reaches something on the host's own network.
	{mustPrefix("198.18.0.0/15"), "benchmarking address"},
	// Class E is unroutable on the internet; anything answering there is local.
	{mustPrefix("240.0.0.0/4"), "reserved address"},
	{mustPrefix("::/128"), "unspecified address"},
	{mustPrefix("::1/128"), "loopback address"},
	{mustPrefix("fc00::/7"), "private address"}, // includes AWS's fd00:ec2::254 metadata
	{mustPrefix("fe80::/10"), "link-local address"},
	// Deprecated site-local: still routed internally by some networks.
	{mustPrefix("fec0::/10"), "site-local address"},
	{mustPrefix("ff00::/8"), "multicast address"},
}

// IPv6 prefixes that carry an IPv4 address which a translator or the kernel
// may end up contacting; the embedded address is classified instead.
var (
	v4Compat  = mustPrefix("::/96")        // deprecated IPv4-compatible ::a.b.c.d
	nat64     = mustPrefix("64:ff9b::/96") // NAT64 well-known prefix
	sixToFour = mustPrefix("2002::/16")    // 6to4: bytes 2..5 are the IPv4 address
)

// classify reports whether ip is in a range that is blocked by default and
// why. IPv6 forms that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d,
// IPv4-compatible, NAT64, 6to4) are judged by the embedded address, because
// that is where the packets can end up.
func classify(ip netip.Addr) (reason string, blocked bool) {
	if !ip.IsValid() {
		return "invalid address", true
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback():
			// handled by the table below, not as IPv4-compatible 0.0.0.x
		case v4Compat.Contains(ip), nat64.Contains(ip):
			return classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(ip):
			return classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(ip) {
			return r.reason, true
		}
	}
	return "", false
}
