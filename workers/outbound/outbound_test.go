package outbound

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Every test uses httptest servers on loopback and a fake resolver: nothing
// here may reach the internet or real DNS.

// counter is a handler that counts requests and answers "ok".
type counter struct{ hits atomic.Int64 }

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.hits.Add(1)
	io.WriteString(w, "ok")
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newServerOn starts a server listening on addr, skipping the test if the
// address is unavailable (no IPv6, or no 127.0.0.2 on this OS).
func newServerOn(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// newClient builds a Client whose resolver knows only hosts; a lookup of any
// other name fails the test. The name "slow.example" never resolves and
// waits for the context instead, to exercise the connect timeout.
func newClient(t *testing.T, cfg Config, hosts map[string][]string) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	c.dialer.lookup = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		if host == "slow.example" {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		addrs, ok := hosts[strings.ToLower(strings.TrimSuffix(host, "."))]
		if !ok {
			t.Errorf("unexpected DNS lookup of %q", host)
			return nil, &net.DNSError{Err: "no such host (test resolver)", Name: host, IsNotFound: true}
		}
		var out []netip.Addr
		for _, a := range addrs {
			ip := netip.MustParseAddr(a)
			if network == "ip4" && !ip.Unmap().Is4() || network == "ip6" && !ip.Is6() {
				continue
			}
			out = append(out, ip)
		}
		return out, nil
	}
	return c
}

func get(t *testing.T, c *Client, rawURL string) (string, error) {
	t.Helper()
	resp, err := c.Get(context.Background(), rawURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestBlockedByDefault(t *testing.T) {
	h := &counter{}
	srv := newServer(t, h)
	c := newClient(t, Config{}, nil)

	_, err := get(t, c, srv.URL+"/x")
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	want := `outbound request to "127.0.0.1" is blocked: loopback address (set LECTERN_OUTBOUND_ALLOW to allow it)`
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to contain %q", err, want)
	}
	var be *BlockedError
	if !errors.As(err, &be) || be.IP != netip.MustParseAddr("127.0.0.1") || be.Host != "127.0.0.1" {
		t.Errorf("BlockedError = %+v", be)
	}
	if h.hits.Load() != 0 {
		t.Errorf("server was reached %d times", h.hits.Load())
	}
}

func TestBlockedHostnameNamesResolvedIP(t *testing.T) {
	srv := newServer(t, &counter{})
	c := newClient(t, Config{}, map[string][]string{"localhost": {"127.0.0.1"}})

	_, err := get(t, c, "http://localhost:"+port(t, srv)+"/")
	want := `outbound request to "localhost" (resolved to 127.0.0.1) is blocked: loopback address`
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want ErrBlocked containing %q", err, want)
	}
}

func TestAllowed(t *testing.T) {
	srv := newServer(t, &counter{})
	p := port(t, srv)
	hosts := map[string][]string{"localhost": {"::1", "127.0.0.1"}, "files.internal": {"127.0.0.1"}}
	tests := []struct {
		name  string
		allow []string
		url   string
		ok    bool
	}{
		{"cidr /32", []string{"127.0.0.1/32"}, "http://127.0.0.1:" + p, true},
		{"cidr /8", []string{"127.0.0.0/8"}, "http://127.0.0.1:" + p, true},
		{"bare ip", []string{"127.0.0.1"}, "http://127.0.0.1:" + p, true},
		{"other cidr", []string{"10.0.0.0/8"}, "http://127.0.0.1:" + p, false},
		{"hostname", []string{"localhost"}, "http://localhost:" + p, true},
		{"hostname case and dot", []string{"LocalHost."}, "http://LOCALHOST.:" + p, true},
		{"hostname does not allow its ip", []string{"localhost"}, "http://127.0.0.1:" + p, false},
		{"other hostname", []string{"files.internal"}, "http://localhost:" + p, false},
		{"cidr matches resolved ip", []string{"127.0.0.1/32", "::1/128"}, "http://localhost:" + p, true},
		{"all resolved ips must pass", []string{"127.0.0.1/32"}, "http://localhost:" + p, false},
		{"hostname resolving to loopback", []string{"files.internal"}, "http://files.internal:" + p + "/a", true},
		{"mapped cidr entry", []string{"::ffff:127.0.0.1/128"}, "http://127.0.0.1:" + p, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Config{Allow: tt.allow}, hosts)
			body, err := get(t, c, tt.url)
			if tt.ok && (err != nil || body != "ok") {
				t.Fatalf("got %q, %v; want ok", body, err)
			}
			if !tt.ok && !errors.Is(err, ErrBlocked) {
				t.Fatalf("got %q, %v; want ErrBlocked", body, err)
			}
		})
	}
}

func TestMixedRecordsBlockWholeHost(t *testing.T) {
	// A name with one public and one private record is refused outright,
	// before anything is dialled (so the public address, which would be the
	// internet, is never contacted either).
	c := newClient(t, Config{}, map[string][]string{"mixed.example": {"93.184.216.34", "127.0.0.1"}})
	_, err := get(t, c, "http://mixed.example/")
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), `"mixed.example" (resolved to 127.0.0.1)`) {
		t.Fatalf("err = %v, want ErrBlocked naming 127.0.0.1", err)
	}
}

func TestCloudMetadataBlocked(t *testing.T) {
	c := newClient(t, Config{}, map[string][]string{"metadata.google.internal": {"169.254.169.254"}})
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/computeMetadata/v1/", "http://[fd00:ec2::254]/"} {
		_, err := get(t, c, u)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: err = %v, want ErrBlocked", u, err)
		}
	}
}

func TestRedirects(t *testing.T) {
	target := &counter{}
	// 127.0.0.2 is loopback too, but outside the allowed 127.0.0.1/32.
	blocked := newServerOn(t, "127.0.0.2:0", target)
	allowedTarget := newServer(t, &counter{})
	var redirectTo atomic.Value
	origin := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, redirectTo.Load().(string), http.StatusFound)
	}))
	loop := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	}))
	hosts := map[string][]string{"evil.example": {"127.0.0.1"}, "localhost": {"127.0.0.1"}}

	t.Run("to blocked ip literal", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"127.0.0.1/32"}}, hosts)
		redirectTo.Store(blocked.URL + "/secret")
		_, err := get(t, c, origin.URL)
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), `"127.0.0.2"`) {
			t.Fatalf("err = %v, want ErrBlocked for 127.0.0.2", err)
		}
	})
	t.Run("to host name resolving to blocked ip", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"localhost"}}, hosts)
		redirectTo.Store("http://evil.example:" + port(t, allowedTarget) + "/")
		_, err := get(t, c, "http://localhost:"+port(t, origin)+"/")
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), `"evil.example" (resolved to 127.0.0.1)`) {
			t.Fatalf("err = %v, want ErrBlocked for evil.example", err)
		}
	})
	t.Run("from allowed name to same ip by literal", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"localhost"}}, hosts)
		redirectTo.Store(allowedTarget.URL)
		_, err := get(t, c, "http://localhost:"+port(t, origin)+"/")
		if !errors.Is(err, ErrBlocked) {
			t.Fatalf("err = %v, want ErrBlocked", err)
		}
	})
	t.Run("to file scheme", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"127.0.0.1"}}, hosts)
		redirectTo.Store("file:///etc/passwd")
		_, err := get(t, c, origin.URL)
		if !errors.Is(err, ErrBadURL) {
			t.Fatalf("err = %v, want ErrBadURL", err)
		}
	})
	t.Run("credentials in redirect target are not in the error", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"127.0.0.1"}}, hosts)
		redirectTo.Store("http://bob:hunter2@127.0.0.2:" + port(t, blocked) + "/")
		_, err := get(t, c, origin.URL)
		if !errors.Is(err, ErrBlocked) {
			t.Fatalf("err = %v, want ErrBlocked", err)
		}
		if s := err.Error(); strings.Contains(s, "hunter2") || strings.Contains(s, "bob") {
			t.Errorf("error leaks credentials: %q", s)
		}
	})
	t.Run("within allowed", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"127.0.0.1"}}, hosts)
		redirectTo.Store(allowedTarget.URL)
		if body, err := get(t, c, origin.URL); err != nil || body != "ok" {
			t.Fatalf("got %q, %v", body, err)
		}
	})
	t.Run("too many", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"127.0.0.1"}, MaxRedirects: 3}, hosts)
		_, err := get(t, c, loop.URL)
		if err == nil || !strings.Contains(err.Error(), "too many redirects (limit 3)") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		c := newClient(t, Config{Allow: []string{"127.0.0.1"}, MaxRedirects: -1}, hosts)
		redirectTo.Store(allowedTarget.URL)
		if _, err := get(t, c, origin.URL); err == nil {
			t.Fatal("redirect followed with MaxRedirects -1")
		}
	})
	if n := target.hits.Load(); n != 0 {
		t.Errorf("blocked redirect target was reached %d times", n)
	}
}

func TestSizeLimit(t *testing.T) {
	const limit = 100
	mux := http.NewServeMux()
	mux.HandleFunc("/announced", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(limit+1))
		w.Write(bytes.Repeat([]byte("a"), limit+1))
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(limit))
		w.Write(bytes.Repeat([]byte("a"), limit))
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		// Flushing before the body is complete forces chunked encoding,
		// so there is no Content-Length to reject up front.
		for i := 0; i < 10; i++ {
			w.Write(bytes.Repeat([]byte("b"), 50))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(make([]byte, 100000))
		zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", fmt.Sprint(buf.Len()))
		w.Write(buf.Bytes())
	})
	srv := newServer(t, mux)
	c := newClient(t, Config{Allow: []string{"127.0.0.1"}, MaxResponseBytes: limit}, nil)
	ctx := context.Background()

	if _, err := c.Get(ctx, srv.URL+"/announced"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("announced: err = %v, want ErrTooLarge from Get", err)
	}
	var buf bytes.Buffer
	if n, _, err := c.Download(ctx, srv.URL+"/announced", &buf); !errors.Is(err, ErrTooLarge) || n != 0 {
		t.Errorf("announced: Download = %d, %v", n, err)
	}

	buf.Reset()
	if n, _, err := c.Download(ctx, srv.URL+"/exact", &buf); err != nil || n != limit {
		t.Errorf("exact: Download = %d, %v; want %d, nil", n, err, limit)
	}

	resp, err := c.Get(ctx, srv.URL+"/chunked")
	if err != nil {
		t.Fatalf("chunked: Get: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, ErrTooLarge) || len(b) != limit {
		t.Errorf("chunked: ReadAll = %d bytes, %v; want %d, ErrTooLarge", len(b), err, limit)
	}
	buf.Reset()
	n, _, err := c.Download(ctx, srv.URL+"/chunked", &buf)
	if !errors.Is(err, ErrTooLarge) || n != limit || buf.Len() != limit {
		t.Errorf("chunked: Download = %d (%d written), %v; want %d, ErrTooLarge", n, buf.Len(), err, limit)
	}

	buf.Reset()
	if n, _, err := c.Download(ctx, srv.URL+"/gzip", &buf); !errors.Is(err, ErrTooLarge) {
		t.Errorf("gzip: Download = %d, %v; want ErrTooLarge on the decompressed size", n, err)
	}
}

func TestDownload(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		io.WriteString(w, "PK-data")
	})
	srv := newServer(t, mux)
	c := newClient(t, Config{Allow: []string{"127.0.0.1"}}, nil)

	var buf bytes.Buffer
	n, ct, err := c.Download(context.Background(), srv.URL+"/file", &buf)
	if err != nil || n != 7 || ct != "application/zip" || buf.String() != "PK-data" {
		t.Fatalf("Download = %d, %q, %v (%q)", n, ct, err, buf.String())
	}
	buf.Reset()
	n, _, err = c.Download(context.Background(), srv.URL+"/missing", &buf)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || n != 0 || buf.Len() != 0 {
		t.Fatalf("missing: Download = %d, %v (%d bytes written)", n, err, buf.Len())
	}
}

func TestTimeouts(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := newServer(t, mux)
	cfg := Config{Allow: []string{"127.0.0.1", "slow.example"}, Timeout: 200 * time.Millisecond, ConnectTimeout: 100 * time.Millisecond}
	c := newClient(t, cfg, nil)

	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: err = %v, want ErrTimeout", name, err)
		}
	}
	start := time.Now()
	_, err := c.Get(context.Background(), srv.URL+"/hang")
	check("whole request", err)

	_, _, err = c.Download(context.Background(), srv.URL+"/stall", io.Discard)
	check("body read", err)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Get(ctx, srv.URL+"/hang")
	check("context deadline", err)

	_, err = c.Get(context.Background(), "http://slow.example/")
	check("connect (slow DNS)", err)

	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeouts took %v", d)
	}
}

func TestBadSchemes(t *testing.T) {
	c := newClient(t, Config{Allow: []string{"127.0.0.1"}}, nil)
	for _, u := range []string{
		"file:///etc/passwd",
		"gopher://127.0.0.1:70/_HELO",
		"ftp://127.0.0.1/pub",
		"dict://127.0.0.1:11211/stats",
		"javascript:alert(1)",
		"data:text/plain,hi",
		"ws://127.0.0.1/",
	} {
		if _, err := c.Get(context.Background(), u); !errors.Is(err, ErrBadURL) {
			t.Errorf("%s: err = %v, want ErrBadURL", u, err)
		}
	}
	// Scheme case does not matter: url.Parse lower-cases it.
	srv := newServer(t, &counter{})
	if body, err := get(t, c, "HTTP://127.0.0.1:"+port(t, srv)+"/"); err != nil || body != "ok" {
		t.Errorf("upper-case scheme: %q, %v", body, err)
	}
}

func TestMalformedURLs(t *testing.T) {
	c := newClient(t, Config{}, nil) // any DNS lookup fails the test
	for _, u := range []string{
		"",
		"example.com",
		"//example.com/",
		"http://",
		"http:///path",
		"http://:80/",
		"://example.com",
		"http//example.com",
		"http://[::1",
		"http://exa mple.com/",
		"http://example.com:99999/",
		"http://example.com:0/",
		"http://example.com:abc/",
		"http://exa$mple.com/",
		"http://-example.com/",
		"http://example..com/",
		"http:example.com",
		"http://user:s3cret@[::1/",
		"http://user:s3cret@exa mple.com/",
	} {
		_, err := c.Get(context.Background(), u)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("%q: err = %v, want ErrBadURL", u, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error leaks the password: %q", u, err)
		}
	}
	if _, err := c.Do(&http.Request{Method: "GET"}); !errors.Is(err, ErrBadURL) {
		t.Errorf("nil URL: err = %v", err)
	}
	if _, err := c.Do(nil); !errors.Is(err, ErrBadURL) {
		t.Errorf("nil request: err = %v", err)
	}
}

func TestUserinfo(t *testing.T) {
	var gotUser, gotPass string
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
	}))
	u := "http://alice:s3cret@127.0.0.1:" + port(t, srv) + "/"

	_, err := get(t, newClient(t, Config{}, nil), u)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	if s := err.Error(); strings.Contains(s, "s3cret") || strings.Contains(s, "alice") {
		t.Errorf("error leaks credentials: %q", s)
	}

	if _, err := get(t, newClient(t, Config{Allow: []string{"127.0.0.1"}}, nil), u); err != nil {
		t.Fatal(err)
	}
	if gotUser != "alice" || gotPass != "s3cret" {
		t.Errorf("basic auth = %q/%q", gotUser, gotPass)
	}
}

func TestIPv6Loopback(t *testing.T) {
	c := newClient(t, Config{}, nil)
	for _, u := range []string{"http://[::1]:1/", "http://[0:0:0:0:0:0:0:1]/", "http://[::]/", "http://[fe80::1%25eth0]/"} {
		if _, err := get(t, c, u); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: err = %v, want ErrBlocked", u, err)
		}
	}
	srv := newServerOn(t, "[::1]:0", &counter{})
	if _, err := get(t, c, srv.URL); !errors.Is(err, ErrBlocked) {
		t.Errorf("default: err = %v, want ErrBlocked", err)
	}
	if body, err := get(t, newClient(t, Config{Allow: []string{"::1"}}, nil), srv.URL); err != nil || body != "ok" {
		t.Errorf("allowed ::1: %q, %v", body, err)
	}
}

func TestIPv4Mapped(t *testing.T) {
	h := &counter{}
	srv := newServer(t, h)
	p := port(t, srv)
	mapped := []string{
		"http://[::ffff:127.0.0.1]:" + p + "/",
		"http://[::ffff:7f00:1]:" + p + "/",
		"http://[0:0:0:0:0:ffff:127.0.0.1]:" + p + "/",
	}
	c := newClient(t, Config{}, nil)
	for _, u := range mapped {
		_, err := get(t, c, u)
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "loopback address") {
			t.Errorf("%s: err = %v, want ErrBlocked (loopback)", u, err)
		}
	}
	if h.hits.Load() != 0 {
		t.Fatalf("server reached %d times", h.hits.Load())
	}
	// Allowing the IPv4 address allows its mapped spelling too.
	allowed := newClient(t, Config{Allow: []string{"127.0.0.1/32"}}, nil)
	if body, err := get(t, allowed, mapped[0]); err != nil || body != "ok" {
		t.Errorf("allowed mapped: %q, %v", body, err)
	}
}

func TestNumericIPForms(t *testing.T) {
	// inet_aton spellings of 127.0.0.1. Go's URL parser accepts them as host
	// names; they must be refused before any resolver could read them as an
	// address, even when 127.0.0.1 itself is allowed.
	h := &counter{}
	srv := newServer(t, h)
	p := port(t, srv)
	forms := []string{"2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "017700000001", "127.1", "127.0.1", "0177.1", "127.000.000.001", "0x7F.1"}
	for _, cfg := range []Config{{}, {Allow: []string{"127.0.0.1/32"}}} {
		c := newClient(t, cfg, nil) // a DNS lookup fails the test
		for _, f := range forms {
			_, err := get(t, c, "http://"+f+":"+p+"/")
			if !errors.Is(err, ErrBadURL) {
				t.Errorf("allow=%v %s: err = %v, want ErrBadURL", cfg.Allow, f, err)
			}
		}
	}
	if h.hits.Load() != 0 {
		t.Fatalf("server reached %d times", h.hits.Load())
	}
}

func TestDialControlRechecks(t *testing.T) {
	c := newClient(t, Config{Allow: []string{"10.0.0.0/8"}}, nil)
	ctx := context.Background()
	for addr, wantBlocked := range map[string]bool{
		"127.0.0.1:80":          true,
		"[::1]:80":              true,
		"[::ffff:127.0.0.1]:80": true,
		"169.254.169.254:80":    true,
		"10.1.2.3:80":           false,
		"93.184.216.34:443":     false,
	} {
		err := c.dialer.control(ctx, "tcp", addr, nil)
		if got := errors.Is(err, ErrBlocked); got != wantBlocked {
			t.Errorf("control(%s) = %v, want blocked=%v", addr, err, wantBlocked)
		}
	}
	// An allow-listed host name carries its permission to the control check.
	ctx = context.WithValue(ctx, dialStateKey{}, dialState{host: "minio", hostOK: true})
	if err := c.dialer.control(ctx, "tcp", "127.0.0.1:9000", nil); err != nil {
		t.Errorf("control for allowed host: %v", err)
	}
}

func TestProxyIgnored(t *testing.T) {
	proxy := &counter{}
	proxySrv := newServer(t, proxy)
	t.Setenv("HTTP_PROXY", proxySrv.URL)
	t.Setenv("http_proxy", proxySrv.URL)
	srv := newServer(t, &counter{})
	c := newClient(t, Config{Allow: []string{"svc.internal"}}, map[string][]string{"svc.internal": {"127.0.0.1"}})
	if tr := c.hc.Transport.(*http.Transport); tr.Proxy != nil {
		t.Fatal("Transport.Proxy is set")
	}
	if body, err := get(t, c, "http://svc.internal:"+port(t, srv)+"/"); err != nil || body != "ok" {
		t.Fatalf("got %q, %v", body, err)
	}
	if proxy.hits.Load() != 0 {
		t.Errorf("request went through HTTP_PROXY")
	}
}

func TestUserAgent(t *testing.T) {
	var got atomic.Value
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.UserAgent())
	}))
	c := newClient(t, Config{Allow: []string{"127.0.0.1"}}, nil)
	if _, err := get(t, c, srv.URL); err != nil || got.Load() != DefaultUserAgent {
		t.Errorf("default UA = %v, %v", got.Load(), err)
	}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("User-Agent", "custom/1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Load() != "custom/1" {
		t.Errorf("custom UA = %v", got.Load())
	}
}

func TestNewDefaultsAndErrors(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Timeout != DefaultTimeout || c.cfg.ConnectTimeout != DefaultConnectTimeout ||
		c.cfg.MaxResponseBytes != DefaultMaxResponseBytes || c.cfg.MaxRedirects != DefaultMaxRedirects {
		t.Errorf("defaults = %+v", c.cfg)
	}
	if _, err := New(Config{Allow: []string{"10.0.0.0/33"}}); err == nil {
		t.Error("bad CIDR accepted")
	}
}

func TestParseAllow(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "", want: nil},
		{in: " , ,", want: nil},
		{in: "127.0.0.1/32, ::1", want: []string{"127.0.0.1/32", "::1/128"}},
		{in: "127.0.0.1", want: []string{"127.0.0.1/32"}},
		{in: "10.1.2.3/8", want: []string{"10.0.0.0/8"}},
		{in: "[::1]", want: []string{"::1/128"}},
		{in: "::ffff:127.0.0.1", want: []string{"127.0.0.1/32"}},
		{in: "::ffff:10.0.0.0/104", want: []string{"10.0.0.0/8"}},
		{in: "MinIO,files.internal.example.,lectern_db", want: []string{"minio", "files.internal.example", "lectern_db"}},
		{in: "localhost,fd00::/8", want: []string{"localhost", "fd00::/8"}},
		{in: "10.0.0.0/33", err: true},
		{in: "10.0.0/8", err: true},
		{in: "http://minio", err: true},
		{in: "minio:9000", err: true},
		{in: "bad host", err: true},
		{in: "-minio", err: true},
		{in: "a..b", err: true},
		{in: "2130706433", err: true},
		{in: "0177.0.0.1", err: true},
		{in: "*.example.com", err: true},
		{in: "fe80::1%eth0", err: true},
	}
	for _, tt := range tests {
		got, err := ParseAllow(tt.in)
		if tt.err {
			if err == nil {
				t.Errorf("ParseAllow(%q) = %v, want error", tt.in, got)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("ParseAllow(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		ip     string
		reason string // "" means allowed
	}{
		{"127.0.0.1", "loopback address"},
		{"127.255.255.254", "loopback address"},
		{"10.0.0.1", "private address"},
		{"172.16.0.1", "private address"},
		{"172.31.255.255", "private address"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private address"},
		{"169.254.169.254", "cloud metadata address"},
		{"169.254.1.1", "link-local address"},
		{"100.64.0.1", "carrier-grade NAT address"},
		{"100.127.255.255", "carrier-grade NAT address"},
		{"100.128.0.1", ""},
		{"0.0.0.0", "unspecified address"},
		{"0.1.2.3", `"this network" address`},
		{"224.0.0.1", "multicast address"},
		{"239.255.255.250", "multicast address"},
		{"255.255.255.255", "broadcast address"},
		{"240.0.0.1", "reserved address"},
		{"198.18.0.1", "benchmarking address"},
		{"198.19.255.255", "benchmarking address"},
		{"198.20.0.1", ""},
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"::1", "loopback address"},
		{"::", "unspecified address"},
		{"fc00::1", "private address"},
		{"fd00:ec2::254", "private address"},
		{"fe80::1", "link-local address"},
		{"fe80::1%eth0", "link-local address"},
		{"fec0::1", "site-local address"},
		{"ff02::1", "multicast address"},
		{"2001:4860:4860::8888", ""},
		{"::ffff:127.0.0.1", "loopback address"},
		{"::ffff:10.0.0.1", "private address"},
		{"::ffff:169.254.169.254", "cloud metadata address"},
		{"::ffff:8.8.8.8", ""},
		{"::127.0.0.1", "loopback address"},     // IPv4-compatible
		{"64:ff9b::7f00:1", "loopback address"}, // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", "cloud metadata address"},
		{"64:ff9b::808:808", ""},
		{"2002:7f00:1::1", "loopback address"}, // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", "private address"},
		{"2002:808:808::1", ""},
	}
	for _, tt := range tests {
		reason, blocked := classify(netip.MustParseAddr(tt.ip))
		if blocked != (tt.reason != "") || reason != tt.reason {
			t.Errorf("classify(%s) = %q, %v; want %q", tt.ip, reason, blocked, tt.reason)
		}
	}
	if _, blocked := classify(netip.Addr{}); !blocked {
		t.Error("invalid address not blocked")
	}
}

func TestCheckSaved(t *testing.T) {
	hosts := map[string][]string{"localhost": {"127.0.0.1", "::1"}, "metadata.google.internal": {"169.254.169.254"},
		"public.example": {"93.184.216.34"}, "mixed.example": {"93.184.216.34", "10.0.0.7"}, "unknown.example": {}}
	tests := []struct {
		name, url string
		allow     []string
		blocked   string // the reason named, "" when accepted
	}{
		{"metadata literal", "http://169.254.169.254/latest/", nil, "cloud metadata address"},
		{"name for loopback", "http://localhost:8080/hook", nil, "loopback address"},
		{"loopback name with its trailing dot, which no resolver here knows", "http://localhost.:8080/hook", nil, "loopback address"},
		{"a name under localhost", "http://api.LOCALHOST/hook", nil, "loopback address"},
		{"name for metadata", "http://metadata.google.internal/", nil, "cloud metadata address"},
		{"one private record blocks the host", "https://mixed.example/x", nil, "private address"},
		{"public name", "https://public.example/hook", nil, ""},
		{"name without addresses now", "https://unknown.example/hook", nil, ""},
		{"allow-listed name", "http://localhost:8080/hook", []string{"localhost"}, ""},
		{"allow-listed addresses", "http://localhost:8080/hook", []string{"127.0.0.1/32", "::1/128"}, ""},
		{"half allow-listed", "http://localhost:8080/hook", []string{"127.0.0.1/32"}, "loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Config{Allow: tt.allow}, hosts)
			err := c.CheckSaved(context.Background(), tt.url)
			switch {
			case tt.blocked == "" && err != nil:
				t.Fatalf("CheckSaved(%s) = %v, want nil", tt.url, err)
			case tt.blocked != "" && (!errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), tt.blocked)):
				t.Fatalf("CheckSaved(%s) = %v, want ErrBlocked naming %q", tt.url, err, tt.blocked)
			}
		})
	}
}
