package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// rawResponse is what came back on a raw connection: the first response, and whether the
// server then closed the connection without answering anything else.
type rawResponse struct {
	status  int
	message string
	closed  bool
	extra   string
}

// rawExchange writes the bytes as they are on a new TCP connection to the real listener,
// half-closes it when closeWrite is set, and reads the first response and whatever follows.
func rawExchange(e *servertest.Env, raw string, closeWrite bool) rawResponse {
	e.T.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	// The server may answer (and close) before it has read all of the request, as a client
	// like Go's or curl would see: the request is written while the answer is read.
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(conn, raw)
		if err == nil && closeWrite {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
		written <- err
	}()
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		e.T.Fatalf("no response to %q: %v (write: %v)", firstLine(raw), err, <-written)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &m)
	out := rawResponse{status: res.StatusCode, message: m.Message}
	// Anything after the response: a second response means a smuggled request was served.
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	rest, err := io.ReadAll(br)
	out.extra = string(rest)
	var ne net.Error
	out.closed = err == nil || errors.Is(err, io.EOF) || !(errors.As(err, &ne) && ne.Timeout())
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}

// withHost adds a Host header after the request line.
func withHost(head string) string { return strings.Replace(head, "\r\n", "\r\nHost: x\r\n", 1) }

func basicHeader() string {
	return "Authorization: " + servertest.Root.Header + "\r\n"
}

// TestHTTPFraming sends requests whose framing a proxy and Lectern could read differently
// (request smuggling) over raw TCP: each is refused with 400 and the connection closed, so
// the bytes after the first request are never served as a second one.
func TestHTTPFraming(t *testing.T) {
	e := servertest.Start(t, servertest.Modes(t)["embedded"](t))
	const smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	post := "POST /api/v1/app_management/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + basicHeader()
	body := `{"tenant_id":"framing","enabled":true}`
	cases := []struct {
		name, raw string
		status    int
		want      string
	}{
		{"duplicate Content-Length", post + fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n\r\n", len(body), len(body)) + body, 400, "Content-Length"},
		{"conflicting Content-Length", post + fmt.Sprintf("Content-Length: %d\r\ncontent-length: %d\r\n\r\n", len(body), len(body)+len(smuggled)) + body + smuggled, 400, "Content-Length"},
		{"Content-Length list", post + fmt.Sprintf("Content-Length: %d, %d\r\n\r\n", len(body), len(body)) + body, 400, ""},
		{"Content-Length then chunked", post + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, 400, "Transfer-Encoding"},
		{"chunked then Content-Length", post + "Transfer-Encoding: chunked\r\nContent-Length: 60\r\n\r\n0\r\n\r\n" + smuggled, 400, "Transfer-Encoding"},
		{"chunked not last", post + "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n" + smuggled, 400, "chunked"},
		{"identity coding", post + "Transfer-Encoding: identity\r\n\r\n" + smuggled, 400, "chunked"},
		{"unknown coding before chunked", post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" + smuggled, 400, "gzip"},
		{"Transfer-Encoding in HTTP/1.0", strings.Replace(post, "HTTP/1.1", "HTTP/1.0", 1) + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "HTTP/1.0"},
		{"chunk size not hex", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + body + "\r\n0\r\n\r\n" + smuggled, 400, "chunked"},
		{"chunk longer than its size", post + "Transfer-Encoding: chunked\r\n\r\n4\r\n" + body + "\r\n0\r\n\r\n" + smuggled, 400, "chunked"},
		{"chunk without its CRLF", post + fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%sXX0\r\n\r\n", len(body), body) + smuggled, 400, "chunked"},
	}
	for _, c := range cases {
		r := rawExchange(e, c.raw, false)
		if r.status != c.status || r.message == "" || !strings.Contains(r.message, c.want) {
			t.Errorf("%s: %d %q, want %d with a message naming %q", c.name, r.status, r.message, c.status, c.want)
		}
		if !r.closed || r.extra != "" {
			t.Errorf("%s: connection not closed after the refusal (closed %v, then %q)", c.name, r.closed, r.extra)
		}
	}
	// A chunked body the client ends early (last-chunk missing).
	r := rawExchange(e, post+"Transfer-Encoding: chunked\r\n\r\n40\r\n"+body, true)
	if r.status != 400 || !strings.Contains(r.message, "chunked") {
		t.Errorf("truncated chunked body: %d %q", r.status, r.message)
	}
	// The same on an upload route, where the body streams to the blob store.
	form, ct := servertest.MultipartFile("c.zip", servertest.Scorm12Package(t))
	up := "POST /engine/api/v1/framing/courses/importJobs?course=c HTTP/1.1\r\nHost: x\r\n" + basicHeader() + "Content-Type: " + ct + "\r\n"
	r = rawExchange(e, up+"Transfer-Encoding: chunked\r\n\r\n100\r\n"+string(form[:200])+"\r\nnot-hex\r\n", true)
	if r.status != 404 { // the tenant does not exist yet: refused before the body is read
		t.Errorf("upload to an unknown tenant: %d %q", r.status, r.message)
	}

	// Well-framed requests still work, chunked included, and keep the connection: the second
	// request on it is answered.
	chunked := fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	r = rawExchange(e, post+chunked+smuggled, false)
	if r.status != 201 || r.closed && !strings.HasPrefix(r.extra, "HTTP/1.1 200") {
		t.Fatalf("chunked tenant creation then a second request: %d %q, then %q (closed %v)", r.status, r.message, r.extra, r.closed)
	}
	if !strings.HasPrefix(r.extra, "HTTP/1.1 200") {
		t.Fatalf("the second request on a keep-alive connection was not answered: %q", r.extra)
	}
	r = rawExchange(e, up+"\r\n", false)
	if r.status != 400 || !strings.Contains(r.message, "'file'") {
		t.Errorf("multipart upload without a body: %d %q", r.status, r.message)
	}
	r = rawExchange(e, up+"Transfer-Encoding: chunked\r\n\r\n100\r\n"+string(form[:200])+"\r\nnot-hex\r\n", true)
	if r.status != 400 || !strings.Contains(r.message, "chunked") {
		t.Errorf("malformed chunked upload: %d %q", r.status, r.message)
	}
	var chunks strings.Builder
	for rest := form; len(rest) > 0; {
		n := min(len(rest), 1000)
		fmt.Fprintf(&chunks, "%x\r\n%s\r\n", n, rest[:n])
		rest = rest[n:]
	}
	r = rawExchange(e, up+"Transfer-Encoding: chunked\r\n\r\n"+chunks.String()+"0\r\n\r\n", false)
	if r.status != 200 {
		t.Fatalf("chunked upload: %d %q", r.status, r.message)
	}
	servertest.Eventually(t, 60*time.Second, "the course of the chunked upload", func() bool {
		return e.Do("GET", "/engine/api/v1/framing/courses/c/title", servertest.Root, nil).Status == 200
	})
}

// TestBodyLimits checks the per-route limits: a declared length over the limit is refused
// with 413 naming the limit before any of the body is read; a chunked body is cut at the
// limit; an upload over the limit leaves nothing in the blob store.
func TestBodyLimits(t *testing.T) {
	cfg := servertest.Modes(t)["embedded"](t)
	cfg.BodyLimit, cfg.RecordBodyLimit = 3<<20, 2<<20
	e := servertest.Start(t, cfg)
	e.CreateTenant("limits", true)
	key, secret := e.Credential("limits")
	lrsAuth := "Authorization: " + servertest.Bearer(key, secret).Header + "\r\n"
	cases := []struct {
		name, head string
		limit      string
	}{
		{"JSON route", "POST /api/v1/app_management/tenants HTTP/1.1\r\nContent-Type: application/json\r\n" + basicHeader(), "1048576 bytes (1 MiB)"},
		{"JSON import request on an upload route", "POST /engine/api/v1/limits/courses/importJobs?course=c HTTP/1.1\r\nContent-Type: application/json\r\n" + basicHeader(), "1048576 bytes (1 MiB)"},
		{"course upload", "POST /engine/api/v1/limits/courses/importJobs?course=c HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=b\r\n" + basicHeader(), "3145728 bytes (3 MiB)"},
		{"content upload", "POST /api/v1/content HTTP/1.1\r\ntenant_id: limits\r\nContent-Type: multipart/form-data; boundary=b\r\n" + basicHeader(), "3145728 bytes (3 MiB)"},
		{"record store", "POST /lrs/TCAPI/statements HTTP/1.1\r\nX-Experience-API-Version: 1.0.3\r\nContent-Type: application/json\r\n" + lrsAuth, "2097152 bytes (2 MiB)"},
	}
	for _, c := range cases {
		// The header and the first 9000 bytes go out: the answer must not wait for the
		// 100 MiB announced.
		r := rawExchange(e, withHost(c.head)+"Content-Length: 104857600\r\n\r\n"+strings.Repeat("x", 9000), false)
		if r.status != 413 || !strings.Contains(r.message, c.limit) {
			t.Errorf("%s, declared 100 MiB: %d %q, want 413 naming %s", c.name, r.status, r.message, c.limit)
		}
		if !r.closed {
			t.Errorf("%s: connection kept after a refused body", c.name)
		}
	}

	// Chunked bodies have no declared length: they are cut where they pass the limit.
	big := bytes.Repeat([]byte("x"), 4<<20)
	chunkedBig := func(head string, body []byte) string {
		var b strings.Builder
		b.WriteString(withHost(head) + "Transfer-Encoding: chunked\r\n\r\n")
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 64<<10)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
		return b.String()
	}
	r := rawExchange(e, chunkedBig(cases[0].head, []byte(`{"tenant_id":"`+string(big[:2<<20])+`"}`)), false)
	if r.status != 413 || !strings.Contains(r.message, cases[0].limit) {
		t.Errorf("chunked JSON body of 2 MiB: %d %q", r.status, r.message)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.SetBoundary("b")
	part, _ := mw.CreateFormFile("file", "big.zip")
	part.Write(append([]byte("PK\x03\x04"), big...))
	mw.Close()
	for _, c := range cases[2:4] {
		r := rawExchange(e, chunkedBig(c.head, form.Bytes()), false)
		if r.status != 413 || !strings.Contains(r.message, c.limit) {
			t.Errorf("%s, chunked 4 MiB: %d %q, want 413 naming %s", c.name, r.status, r.message, c.limit)
		}
	}
	if n := e.BlobCount("limits/"); n != 0 {
		t.Fatalf("refused uploads left %d blobs", n)
	}
	// A compressed body is limited by its decoded size: 2 MiB of gzip-compressed spaces (a few
	// KiB on the wire) is refused; a compressed body under the limit works.
	gz := func(b []byte) string {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.String()
	}
	bomb := gz(bytes.Repeat([]byte(" "), 2<<20))
	r = rawExchange(e, withHost(cases[0].head)+fmt.Sprintf("Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(bomb), bomb), false)
	if r.status != 413 || !strings.Contains(r.message, "decoded") || !strings.Contains(r.message, cases[0].limit) {
		t.Errorf("gzip body decoding to 2 MiB: %d %q", r.status, r.message)
	}
	ok := gz([]byte(`{"tenant_id":"zipped","enabled":true}`))
	r = rawExchange(e, withHost(cases[0].head)+fmt.Sprintf("Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(ok), ok), false)
	if r.status != 201 {
		t.Errorf("gzip JSON body: %d %q", r.status, r.message)
	}
	r = rawExchange(e, withHost(cases[0].head)+"Content-Encoding: br\r\nContent-Length: 4\r\n\r\nabcd", false)
	if r.status != 415 || !strings.Contains(r.message, "br") {
		t.Errorf("brotli body: %d %q", r.status, r.message)
	}

	// /openapi.json documents each limit.
	var doc struct {
		Paths map[string]map[string]struct {
			Responses   map[string]struct{ Description string } `json:"responses"`
			RequestBody struct{ Content map[string]any }        `json:"requestBody"`
		} `json:"paths"`
	}
	or := e.Do("GET", "/openapi.json", servertest.NoAuth, nil)
	or.JSON(t, &doc)
	for path, limit := range map[string]string{"/engine/api/v1/{tenant}/courses/importJobs": "3145728", "/api/v1/content": "3145728",
		"/lrs/TCAPI/statements": "2097152", "/api/v1/app_management/tenants": "1048576"} {
		op := doc.Paths[path]["post"]
		if d := op.Responses["413"].Description; !strings.Contains(d, limit) {
			t.Errorf("/openapi.json: POST %s: 413 %q does not name the limit %s", path, d, limit)
		}
		if _, ok := op.RequestBody.Content["multipart/form-data"]; ok != (limit == "3145728") {
			t.Errorf("/openapi.json: POST %s: multipart/form-data body documented: %v", path, ok)
		}
	}
	// Under the limit, the same routes accept the body.
	small := append([]byte("PK\x03\x04"), big[:2<<20]...)
	e.Expect(e.Upload("limits", "course=c", small, "c.zip"), 200, "upload under the limit")
}

// TestUploadRemovedWhenJobCreationFails makes the record store refuse the import job (a
// trigger raising an error on its insert): the upload, already in the blob store by then,
// is removed.
func TestUploadRemovedWhenJobCreationFails(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("failing", true)
		db, ok := e.App.Records.(interface{ DB() *sql.DB })
		if !ok {
			t.Fatalf("record store %T has no DB", e.App.Records)
		}
		ctx := context.Background()
		stmts := []string{`CREATE TRIGGER fail_jobs BEFORE INSERT ON records WHEN NEW.kind IN ('import_job', 'job')
			BEGIN SELECT RAISE(ABORT, 'job creation forced to fail'); END`}
		if e.App.Config.PostgresURL != "" {
			stmts = []string{`CREATE FUNCTION fail_jobs() RETURNS trigger LANGUAGE plpgsql AS
				$$ BEGIN RAISE EXCEPTION 'job creation forced to fail'; END $$`,
				`CREATE TRIGGER fail_jobs BEFORE INSERT ON records FOR EACH ROW
				WHEN (NEW.kind IN ('import_job', 'job')) EXECUTE FUNCTION fail_jobs()`}
		}
		for _, s := range stmts {
			if _, err := db.DB().ExecContext(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		e.ServerFault = true
		r := e.Upload("failing", "course=c", servertest.Scorm12Package(t), "c.zip")
		if r.Status < 500 {
			t.Fatalf("course upload with failing job creation: %d %s", r.Status, r.Body)
		}
		r = e.UploadContent(servertest.Root, "failing", "", []byte("# Notes\n\nsome text"), "notes.md")
		if r.Status < 500 {
			t.Fatalf("content upload with failing job creation: %d %s", r.Status, r.Body)
		}
		if n := e.BlobCount("failing/"); n != 0 {
			t.Fatalf("%d uploads left in the blob store after the jobs failed to be created", n)
		}
	})
}
