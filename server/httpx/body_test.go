package httpx

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// stalled yields its bytes, then blocks as a client that sends nothing more would (until
// the test ends).
type stalled struct {
	r    io.Reader
	stop chan struct{}
}

func (s *stalled) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		<-s.stop
		return 0, io.ErrUnexpectedEOF
	}
	return n, err
}

// readChunked decodes raw as a chunked body with limit, failing the test if the answer
// waits for bytes the client never sends. With closed, the connection ends after raw.
func readChunked(t *testing.T, raw string, limit int64, closed bool) (string, error) {
	t.Helper()
	stalling := &stalled{r: strings.NewReader(raw), stop: make(chan struct{})}
	defer close(stalling.stop)
	var src io.Reader = stalling
	if closed {
		src = strings.NewReader(raw)
	}
	b := &Body{src: src, limit: limit, declared: -1, chunked: true}
	type result struct {
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		out, err := io.ReadAll(b)
		done <- result{string(out), err}
	}()
	select {
	case r := <-done:
		return r.body, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("%q: the body waited for bytes the client never sent", raw)
		return "", nil
	}
}

// TestChunkedBody decodes chunked bodies; one that is malformed or over the limit fails as
// soon as the bytes show it (a size's digits, a line's end), never waiting for the data.
func TestChunkedBody(t *testing.T) {
	ok := []struct{ raw, want string }{
		{"5\r\nhello\r\n0\r\n\r\n", "hello"},
		{"3;name=value\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", "abcde"},
		{"A\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n", "0123456789"},
	}
	for _, c := range ok {
		got, err := readChunked(t, c.raw, 16, false)
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.raw, got, err, c.want)
		}
	}
	bad := []struct {
		name, raw string
		status    int
	}{
		{"size over the limit, data never sent", "11\r\n", 413},
		{"size over the limit, line unfinished", "ffffffffffffffffffffff", 413},
		{"second chunk over what is left", "a\r\n0123456789\r\n7\r\n", 413},
		{"size not hexadecimal", "zz\r\n", 400},
		{"bare LF after the size", "5\nhello\r\n0\r\n\r\n", 400},
		{"data without its CRLF", "5\r\nhelloXX", 400},
		{"extension too long", "1;" + strings.Repeat("x", maxChunkLine+10), 400},
	}
	for _, c := range bad {
		_, err := readChunked(t, c.raw, 16, false)
		var e *Error
		if !errors.As(err, &e) || e.Status != c.status {
			t.Errorf("%s: %v, want %d", c.name, err, c.status)
		}
	}
	// A connection that ends in the middle of a chunk.
	_, err := readChunked(t, "5\r\nhel", 16, true)
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 {
		t.Errorf("ends early: %v, want 400", err)
	}
}

// TestReadAllGrowsWithTheBody: a declared length is not reserved before its bytes arrive,
// and a body read whole takes one buffer of its size.
func TestReadAllGrowsWithTheBody(t *testing.T) {
	const declared = 64 << 20
	src := &stalled{r: strings.NewReader(strings.Repeat("x", 1000)), stop: make(chan struct{})}
	b := &Body{src: src, limit: declared, declared: declared}
	var buf []byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf, _ = readAll(b, declared, declared)
	}()
	close(src.stop) // the client goes away after 1,000 bytes
	<-done
	if cap(buf) > firstRead {
		t.Errorf("1,000 bytes of a declared 64 MiB took a buffer of %d bytes", cap(buf))
	}
	body := strings.Repeat("y", 3<<20)
	got, err := readAll(strings.NewReader(body), int64(len(body)), declared)
	if err != nil || string(got) != body {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if cap(got) > len(body)+len(body)/4 {
		t.Errorf("a %d-byte body took a buffer of %d bytes", len(body), cap(got))
	}
}
