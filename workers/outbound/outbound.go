// Package outbound is the one HTTP client for requests Lectern makes to URLs
// it does not control: import from URL, webhooks, LTI/grade postbacks and
// forwarding. Such URLs come from users, so every request goes through a
// policy against server-side request forgery (SSRF): loopback, private,
// link-local (including the cloud metadata endpoint 169.254.169.254), CGNAT,
// multicast and other non-public addresses are refused unless the operator
// allow-lists them (LECTERN_OUTBOUND_ALLOW, parsed in cmd/ with ParseAllow).
// The client also bounds time (whole request and connect) and response size,
// so one slow or huge remote cannot tie up a worker or fill a disk.
//
// The policy is enforced when connecting, on the resolved addresses, and on
// every redirect; see dialer. The client never uses an HTTP proxy.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTimeout          = 60 * time.Second
	DefaultConnectTimeout   = 10 * time.Second
	DefaultMaxResponseBytes = 1 << 30 // 1 GiB
	DefaultMaxRedirects     = 5
	DefaultUserAgent        = "Lectern"
)

// Config configures a Client. The zero value is usable: everything private is
// blocked and the defaults above apply. cmd/ fills it from the environment;
// this package never reads configuration itself.
type Config struct {
	// Allow lists destinations that may be reached even though they are
	// private, loopback etc.: CIDRs ("10.1.0.0/16"), single IPs ("127.0.0.1")
	// matched against every resolved address, and host names ("minio")
	// matched exactly against the URL's host, in which case whatever the
	// name resolves to is trusted. See ParseAllow.
	Allow []string
	// Timeout bounds the whole request, including redirects and reading the
	// body (default 60s).
	Timeout time.Duration
	// ConnectTimeout bounds resolving and connecting, and separately the TLS
	// handshake (default 10s).
	ConnectTimeout time.Duration
	// MaxResponseBytes bounds the (decompressed) response body (default 1 GiB).
	MaxResponseBytes int64
	// MaxRedirects is how many redirects are followed (default 5 when zero;
	// a negative value follows none).
	MaxRedirects int
	// UserAgent is sent when the request sets none (default "Lectern").
	UserAgent string
}

// Client makes outbound HTTP requests under the policy. It is safe for
// concurrent use and should be shared, since it pools connections.
type Client struct {
	cfg    Config
	dialer *dialer
	hc     *http.Client
}

// New returns a Client for cfg, filling in defaults. It fails only if an
// Allow entry is invalid.
func New(cfg Config) (*Client, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	cfg.Allow = append([]string(nil), cfg.Allow...)
	pol, err := newPolicy(cfg.Allow)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, dialer: newDialer(pol, cfg.ConnectTimeout)}
	tr := &http.Transport{
		// Proxy is deliberately nil, so HTTP_PROXY/HTTPS_PROXY are ignored.
		// Through a proxy we would dial the proxy, not the destination, and
		// the proxy (often inside the private network) would reach the
		// blocked address for us: the dial-time check could not see it.
		Proxy:                  nil,
		DialContext:            c.dialer.dialContext,
		ForceAttemptHTTP2:      true, // a custom DialContext turns HTTP/2 off otherwise
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		MaxIdleConns:           100,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20, // headers are not covered by MaxResponseBytes
	}
	c.hc = &http.Client{
		Transport:     tr,
		Timeout:       cfg.Timeout,
		CheckRedirect: c.checkRedirect,
	}
	return c, nil
}

// Do sends req under the policy. The URL must be http or https; userinfo in
// it is sent as basic auth and kept out of returned errors. On success the
// response body is limited to MaxResponseBytes: reading past the limit fails
// with ErrTooLarge, and a Content-Length over the limit fails Do itself.
// Errors wrap ErrBadURL, ErrBlocked, ErrTooLarge or ErrTimeout where they apply.
// The caller must close the body, as with http.Client.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if req == nil || req.URL == nil {
		return nil, badURL("request has no URL")
	}
	if err := c.precheck(req.URL); err != nil {
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		// Clone rather than mutate: the caller may reuse its request.
		req = req.Clone(req.Context())
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, classifyErr(redactErr(err))
	}
	host := resp.Request.URL.Hostname() // after redirects
	if max := c.cfg.MaxResponseBytes; resp.ContentLength > max {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %q announced %d bytes, the limit is %d", ErrTooLarge, host, resp.ContentLength, max)
	}
	resp.Body = &limitedBody{rc: resp.Body, remaining: c.cfg.MaxResponseBytes, max: c.cfg.MaxResponseBytes, host: host}
	return resp, nil
}

// Get fetches rawURL with GET; see Do.
func (c *Client) Get(ctx context.Context, rawURL string) (*http.Response, error) {
	if _, err := url.Parse(rawURL); err != nil {
		// Report only the inner cause: url.Error repeats the whole URL,
		// credentials included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, badURL("cannot parse URL: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err // the URL parsed above, so this is a nil ctx
	}
	return c.Do(req)
}

// Download GETs rawURL and copies the body to w, returning the bytes written
// and the response's Content-Type. A non-2xx status is a *StatusError and
// nothing is written. If the body exceeds MaxResponseBytes the error wraps
// ErrTooLarge and w has received at most MaxResponseBytes bytes, which the
// caller should discard.
func (c *Client) Download(ctx context.Context, rawURL string, w io.Writer) (n int64, contentType string, err error) {
	resp, err := c.Get(ctx, rawURL)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	contentType = resp.Header.Get("Content-Type")
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 0, contentType, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	n, err = io.Copy(w, resp.Body)
	return n, contentType, classifyErr(err)
}

// CloseIdleConnections closes pooled keep-alive connections, for shutdown.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// precheck validates u and applies the policy to IP literals up front, so
// the common mistakes fail fast with a clear error. It is not the security
// boundary for host names: those are checked when dialling, on the
// addresses they actually resolve to.
func (c *Client) precheck(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		// url.Parse lower-cases the scheme, so "HTTP://" passes.
		return badURL("scheme %q is not allowed (only http and https)", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return badURL("URL has no host")
	}
	host := u.Hostname()
	if host == "" {
		return badURL("URL has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return badURL("invalid port %q", p)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return c.dialer.policy.check(host, false, ip)
	}
	if _, ok := normalizeHostname(host); !ok {
		return badURL("host %q is not a valid host name or IP address", host)
	}
	return nil
}

func parsePort(p string) (int, error) {
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(p[i]-'0')
		if n > 65535 {
			return 0, errors.New("out of range")
		}
	}
	return n, nil
}

// checkRedirect applies the redirect limit and re-runs precheck on each
// target, so a redirect cannot switch to another scheme (file:, gopher:) or
// to a blocked IP literal; host-name targets are checked at dial time.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.cfg.MaxRedirects {
		return fmt.Errorf("outbound: too many redirects (limit %d)", max(c.cfg.MaxRedirects, 0))
	}
	return c.precheck(req.URL)
}

// redactErr removes userinfo from the URL that net/http puts in *url.Error
// (it masks only the password, and the user name can be a token too).
func redactErr(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return &url.Error{Op: ue.Op, URL: redactURL(ue.URL), Err: ue.Err}
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}

// limitedBody fails with ErrTooLarge once more than max bytes are read. It
// wraps the body after net/http's transparent gzip decoding, so a small
// compressed bomb is caught too.
type limitedBody struct {
	rc        io.ReadCloser
	remaining int64
	max       int64
	host      string
	err       error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// Ask for at most one byte beyond the limit: enough to tell "exactly at
	// the limit" from "over it" without buffering more.
	if int64(len(p)) > b.remaining+1 {
		p = p[:b.remaining+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.remaining {
		n = int(b.remaining)
		b.remaining = 0
		b.err = fmt.Errorf("%w: more than %d bytes from %q", ErrTooLarge, b.max, b.host)
		return n, b.err
	}
	b.remaining -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// Check validates rawURL the way Do would before connecting (scheme, host, and the policy for
// IP literals), so an API can refuse a destination when it is configured. Host names are
// checked again on every request, on the addresses they resolve to then.
func (c *Client) Check(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return badURL("cannot parse URL: %v", err)
	}
	return c.precheck(u)
}

// saveResolveTimeout bounds the name lookup of CheckSaved.
const saveResolveTimeout = 3 * time.Second

// CheckSaved is Check for a destination being saved (a post-back URL, a webhook, a
// forwarding endpoint, a token URL, an import URL): on top of Check, a host name that is not
// allow-listed is resolved now and refused, as the dialer would refuse it, when any address
// it resolves to is blocked, so the client learns at once what sending would refuse later.
// A name that does not resolve now is accepted: DNS may not know it yet, and every request
// checks the addresses it dials again.
func (c *Client) CheckSaved(ctx context.Context, rawURL string) error {
	if err := c.Check(rawURL); err != nil {
		return err
	}
	u, _ := url.Parse(rawURL)
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil || c.dialer.policy.hostAllowed(host) {
		return nil
	}
	var addrs []netip.Addr
	if name := strings.ToLower(strings.TrimSuffix(host, ".")); name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// localhost and every name under it are the loopback interface whatever DNS says
		// (RFC 6761), with or without the trailing dot: judged by the loopback addresses,
		// not by a resolver, which may not know "localhost." and would let it through as a
		// name that does not resolve yet.
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	} else {
		ctx, cancel := context.WithTimeout(ctx, saveResolveTimeout)
		defer cancel()
		var err error
		if addrs, err = c.dialer.lookup(ctx, "ip", host); err != nil {
			return nil
		}
	}
	for _, ip := range addrs {
		if err := c.dialer.policy.check(host, false, ip); err != nil {
			return err
		}
	}
	return nil
}
