package outbound

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// dialer enforces the policy where it cannot be dodged: at connect time, on
// the addresses actually dialled. Checking the URL alone is not enough,
// because a name can resolve to a private address (or resolve differently on
// a second lookup: DNS rebinding), and because redirects and keep-alive
// connections never go back through the caller's URL check.
type dialer struct {
	policy         *policy
	connectTimeout time.Duration
	// lookup resolves a host name; it is net.DefaultResolver.LookupNetIP
	// except in tests, which substitute a fake so no real DNS is used.
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
	net    net.Dialer
}

func newDialer(p *policy, connectTimeout time.Duration) *dialer {
	d := &dialer{policy: p, connectTimeout: connectTimeout, lookup: net.DefaultResolver.LookupNetIP}
	d.net = net.Dialer{
		Timeout:        connectTimeout,
		KeepAlive:      30 * time.Second,
		ControlContext: d.control,
	}
	return d
}

// dialStateKey carries the host being dialled from dialContext to control.
type dialStateKey struct{}

type dialState struct {
	host   string
	hostOK bool
}

// dialContext resolves the host once, checks every resolved address and
// then dials those exact addresses, so the address checked is the address
// connected to. If any address is blocked the whole host is refused rather
// than skipping to a public one: a name that mixes public and private
// records is either misconfigured or an attack.
func (d *dialer) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: bad dial address: %v", ErrBadURL, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: bad port %q", ErrBadURL, portStr)
	}
	// One budget for resolving and connecting to every candidate address;
	// the transport's own Dialer.Timeout would otherwise apply per address.
	ctx, cancel := context.WithTimeout(ctx, d.connectTimeout)
	defer cancel()

	hostOK := d.policy.hostAllowed(host)
	var ips []netip.Addr
	if ip, perr := netip.ParseAddr(host); perr == nil {
		ips = []netip.Addr{ip}
	} else {
		// Never hand an odd spelling (such as "0177.0.0.1") to the system
		// resolver, which might read it as an IP; Do already refuses these,
		// this guards any other route to the dialer.
		if _, ok := normalizeHostname(host); !ok {
			return nil, fmt.Errorf("%w: host %q is not a valid host name", ErrBadURL, host)
		}
		lookupNet := "ip"
		switch network {
		case "tcp4":
			lookupNet = "ip4"
		case "tcp6":
			lookupNet = "ip6"
		}
		ips, err = d.lookup(ctx, lookupNet, host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	for _, ip := range ips {
		if err := d.policy.check(host, hostOK, ip); err != nil {
			return nil, err
		}
	}

	ctx = context.WithValue(ctx, dialStateKey{}, dialState{host: host, hostOK: hostOK})
	var firstErr error
	for _, ip := range ips {
		// Dial the unmapped form: the check was done on it, and the kernel
		// treats ::ffff:a.b.c.d as the IPv4 address anyway.
		conn, err := d.net.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// control runs just before connect(2) with the literal address being
// connected to. It repeats the policy check as a last line of defence, so a
// future change to dialContext (or a dial that bypasses it) cannot reach a
// blocked address unnoticed. Without the state from dialContext the host is
// treated as not allow-listed.
func (d *dialer) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check dial address %q: %v", ErrBlocked, address, err)
	}
	st, _ := ctx.Value(dialStateKey{}).(dialState)
	if st.host == "" {
		st.host = ap.Addr().String()
	}
	return d.policy.check(st.host, st.hostOK, ap.Addr())
}
