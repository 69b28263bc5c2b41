package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/server/console"
	"github.com/lectern-lms/lectern/server/httpx"
)

// answerWithin is how long a refusal may take. The server answers these requests without
// waiting for anything more from the client; the bound only has to survive a busy machine,
// and is far below the read timeout (5 minutes) a server waiting for the body would take.
const answerWithin = 10 * time.Second

// held is one raw connection that sent a request's header (and maybe the start of its
// body), and no more.
type held struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// hold dials the server (the origin that serves raw's path) and writes raw without sending
// anything after it.
func hold(e *servertest.Env, raw string) *held {
	e.T.Helper()
	target := e.URL
	if f := strings.Fields(firstLine(raw)); len(f) > 1 {
		target = e.Origin(f[1])
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(target, "http://"))
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, raw); err != nil {
		e.T.Fatalf("write %q: %v", firstLine(raw), err)
	}
	return &held{t: e.T, conn: conn, br: bufio.NewReader(conn)}
}

// answer reads the response, which must come within answerWithin; informational (1xx)
// responses are reported, not skipped.
func (h *held) answer() (status int, message string) {
	h.t.Helper()
	_ = h.conn.SetReadDeadline(time.Now().Add(answerWithin))
	res, err := http.ReadResponse(h.br, nil)
	if err != nil {
		h.t.Fatalf("no answer within %v: %v", answerWithin, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &m)
	return res.StatusCode, m.Message
}

// closed reports whether the server closed the connection after its answer (within
// answerWithin), rather than waiting for the rest of the request.
func (h *held) closed() bool {
	_ = h.conn.SetReadDeadline(time.Now().Add(answerWithin))
	_, err := h.br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestFramingRefusedAtOnce sends requests whose framing is wrong in a way fasthttp alone
// only notices once more bytes arrive, and sends nothing more: each is answered at once
// and the connection closed.
func TestFramingRefusedAtOnce(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		post := withHost("POST /api/v1/app_management/tenants HTTP/1.1\r\nContent-Type: application/json\r\n")
		cases := []struct {
			name, raw string
			status    int
			want      string
		}{
			// A chunk size over the route's limit (1 MiB) is refused when its digits show it,
			// not after its data.
			{"chunk size over the limit", post + basicHeader() + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n", 413, "1048576 bytes (1 MiB)"},
			{"chunk size overflowing, line unfinished", post + basicHeader() + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffffffff", 413, "1048576 bytes (1 MiB)"},
			{"second chunk over the limit", post + basicHeader() + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n100000\r\n", 413, "1048576 bytes (1 MiB)"},
			// Two Content-Length fields: fasthttp would take the second and wait for 200 bytes.
			{"Content-Length 2 then 200", post + basicHeader() + "Content-Length: 2\r\nContent-Length: 200\r\n\r\n{}", 400, "Content-Length"},
			// Expect: 100-continue with a declared length over the limit: 413, no 100 Continue.
			{"100-continue over the limit", post + basicHeader() + "Expect: 100-continue\r\nContent-Length: 2097152\r\n\r\n", 413, "1048576 bytes (1 MiB)"},
			{"100-continue with bad framing", post + basicHeader() + "Expect: 100-continue\r\nContent-Length: 2\r\nContent-Length: 200\r\n\r\n", 400, "Content-Length"},
			// Without credentials nothing of the body is read, nor asked for.
			{"chunk size, no credentials", post + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n", 401, "credentials"},
			{"100-continue without credentials", post + "Expect: 100-continue\r\nContent-Length: 500000\r\n\r\n", 401, "credentials"},
			// A method Fiber does not route, with a body and a second request behind it: one
			// answer, and the body is never read as a request (schemathesis sends QUERY).
			{"unknown method with a body", withHost("QUERY /healthz HTTP/1.1\r\nContent-Type: application/json\r\n") +
				"Content-Length: 12\r\n\r\n[null, null]" + withHost("GET /healthz HTTP/1.1\r\n") + "\r\n", 400, "not supported"},
		}
		for _, c := range cases {
			h := hold(e, c.raw)
			status, msg := h.answer()
			if status != c.status || !strings.Contains(msg, c.want) {
				t.Errorf("%s: %d %q, want %d naming %q", c.name, status, msg, c.status, c.want)
			}
			if !h.closed() {
				t.Errorf("%s: the connection was kept open after the refusal", c.name)
			}
		}
		// Within the limit, 100-continue still gets its 100 Continue and then the answer.
		body := `{"tenant_id":"continued","enabled":true}`
		h := hold(e, post+basicHeader()+fmt.Sprintf("Expect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body)))
		if status, _ := h.answer(); status != 100 {
			t.Fatalf("100-continue within the limit: %d, want 100 Continue first", status)
		}
		_, _ = io.WriteString(h.conn, body)
		if status, msg := h.answer(); status != 201 {
			t.Errorf("100-continue within the limit: %d %q after the body", status, msg)
		}
	})
}

// TestBoundedBeforeAuthenticated: a request without credentials costs its header and no
// more, however large a body it declares; the routes read before credentials can be
// checked (sign-in, the OAuth token, the record store's alternate syntax) and the player's
// runtime routes have small limits of their own, refused with 413 naming the limit.
func TestBoundedBeforeAuthenticated(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		lrs := withHost("POST /lrs/TCAPI/statements HTTP/1.1\r\nX-Experience-API-Version: 1.0.3\r\nContent-Type: application/json\r\n")
		upload := withHost("POST /engine/api/v1/acme/courses/importJobs?course=c HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=b\r\n")
		// Many connections declare a body as large as their route allows (the record store's
		// 64 MiB, the upload limit) and trickle the first bytes; each is answered 401 at once while all of them are still open, and
		// together they cost less memory than one declared body.
		const conns = 64
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		hs := make([]*held, 0, conns)
		for i := range conns {
			raw := lrs + "Content-Length: 67108864\r\n\r\n"
			if i%2 == 1 {
				// The upload limit of the tests' configuration (8 MiB), not over it.
				raw = upload + "Content-Length: 8388608\r\n\r\n"
			}
			hs = append(hs, hold(e, raw+strings.Repeat("x", 1000)))
		}
		for i, h := range hs {
			if status, msg := h.answer(); status != 401 {
				t.Fatalf("connection %d without credentials: %d %q, want 401", i, status, msg)
			}
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
			t.Errorf("%d unauthenticated connections declaring 64 MiB each grew the heap by %d MiB", conns, grew>>20)
		}
		for i, h := range hs {
			if !h.closed() {
				t.Fatalf("connection %d: kept open after the 401", i)
			}
		}

		// A player session, for the runtime routes.
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		e.Register("acme", "r1", nil)
		session := e.Launch(e.LaunchPath("/engine/api/v1/acme/registrations/r1/launchLink"))
		form := "Content-Type: application/x-www-form-urlencoded\r\n"
		// reads: the route reads a body (a chunked one is refused when its chunk size shows it
		// is over the limit); a route that reads none answers first and closes the connection.
		cases := []struct {
			name, head string
			declared   int
			limit      string
			reads      bool
		}{
			{"console sign-in", "POST /console/signin HTTP/1.1\r\n" + form, 17 << 10, "16384 bytes (16 KiB)", console.Installed()},
			{"OAuth token", "POST /lrs/oauth/token HTTP/1.1\r\n" + form, 17 << 10, "16384 bytes (16 KiB)", true},
			{"alternate request syntax", "POST /lrs/TCAPI/statements?method=PUT HTTP/1.1\r\n" + form, 65 << 10, "65536 bytes (64 KiB)", true},
			{"HACP", "POST /player/hacp/" + session + " HTTP/1.1\r\n" + form, 2 << 20, "1048576 bytes (1 MiB)", true},
			// A commit's bound is the runtime's (the whole data model), not the JSON default.
			{"runtime commit", "POST /player/runtime/" + session + "/commit?activity=x&attempt=1 HTTP/1.1\r\nContent-Type: text/plain\r\n", 5 << 20, "4194304 bytes (4 MiB)", true},
			{"heartbeat", "POST /player/runtime/" + session + "/heartbeat HTTP/1.1\r\n", 17 << 10, "16384 bytes (16 KiB)", false},
			{"route without a body", "GET /api/v1/app_management/tenants HTTP/1.1\r\n" + basicHeader(), 17 << 10, "16384 bytes (16 KiB)", false},
		}
		for _, c := range cases {
			// expect: Expect: 100-continue over the route's limit, nothing of the body sent;
			// the 413 comes at once, not a 100 Continue that asks for the body.
			for _, framing := range []string{"declared", "chunked", "expect"} {
				raw := withHost(c.head) + fmt.Sprintf("Content-Length: %d\r\n\r\nx", c.declared)
				if framing == "expect" {
					raw = withHost(c.head) + fmt.Sprintf("Expect: 100-continue\r\nContent-Length: %d\r\n\r\n", c.declared)
				}
				if framing == "chunked" {
					if !c.reads {
						continue
					}
					raw = withHost(c.head) + fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\nx", c.declared)
				}
				h := hold(e, raw)
				status, msg := h.answer()
				if status != 413 || !strings.Contains(msg, c.limit) {
					t.Errorf("%s, %s %d bytes: %d %q, want 413 naming %s", c.name, framing, c.declared, status, msg, c.limit)
				}
				if !h.closed() {
					t.Errorf("%s, %s: the connection was kept open after the 413", c.name, framing)
				}
			}
		}
		// Within a player route's own limit 100-continue gets its 100 Continue: a commit of
		// 2 MiB, over the JSON default but within the runtime's bound, is legal.
		h := hold(e, withHost("POST /player/runtime/"+session+"/commit?activity=x&attempt=1 HTTP/1.1\r\nContent-Type: text/plain\r\n")+"Expect: 100-continue\r\nContent-Length: 2097152\r\n\r\n")
		if status, msg := h.answer(); status != 100 {
			t.Errorf("100-continue on a commit of 2 MiB: %d %q, want 100 Continue", status, msg)
		}
		// The console reads a form only once the session cookie is checked, and an import form
		// only with a declared length (it is read to temporary files, not through the limit).
		if console.Installed() {
			cc := &servertest.ConsoleClient{T: t, E: e}
			cc.SignIn(servertest.RootUser, servertest.RootPass)
			if cc.Cookie == "" {
				t.Fatal("console sign-in gave no session")
			}
			form := "Content-Type: application/x-www-form-urlencoded\r\n"
			h = hold(e, withHost("POST /console/tenants HTTP/1.1\r\n"+form)+"Content-Length: 500000\r\n\r\ntenant_id=x")
			if status, msg := h.answer(); status != 303 || !h.closed() {
				t.Errorf("console form without a session: %d %q, want the sign-in redirect, its body unread", status, msg)
			}
			for _, expect := range []string{"", "Expect: 100-continue\r\n"} {
				h = hold(e, withHost("POST /console/tenants HTTP/1.1\r\nCookie: "+cc.Cookie+"\r\n"+form)+expect+"Content-Length: 2000000\r\n\r\ntenant_id=x")
				if status, msg := h.answer(); status != 413 || !strings.Contains(msg, "1048576 bytes (1 MiB)") {
					t.Errorf("console form of 2 MB (%q): %d %q, want 413 naming 1 MiB", expect, status, msg)
				}
			}
			h = hold(e, withHost("POST /console/t/acme/courses/import HTTP/1.1\r\nCookie: "+cc.Cookie+"\r\nContent-Type: multipart/form-data; boundary=b\r\n")+"Transfer-Encoding: chunked\r\n\r\n10\r\n--b")
			if status, msg := h.answer(); status != 411 {
				t.Errorf("chunked console import: %d %q, want 411", status, msg)
			}
		}
		// A player post with a session this server did not sign is answered without its body.
		h = hold(e, withHost("POST /player/hacp/forged HTTP/1.1\r\n"+form)+"Content-Length: 1000\r\n\r\ncommand=GetParam")
		if status, _ := h.answer(); status != 200 || !h.closed() {
			t.Errorf("HACP with a forged session: %d, want the HACP error answer and the connection closed", status)
		}
	})
}

// TestEveryRouteLimitsItsBody declares a body larger than any limit on every route the
// application has, and sends none of it: every route answers at once (413, or a refusal
// that comes earlier) and closes the connection, so none reads or waits for a body it has
// no limit for.
func TestEveryRouteLimitsItsBody(t *testing.T) {
	e := servertest.Start(t, servertest.Modes(t)["embedded"](t))
	seen := map[string]bool{}
	for _, r := range e.App.Server.App().GetRoutes(true) {
		path := servertest.ParamRE.ReplaceAllString(strings.ReplaceAll(r.Path, "*", "x"), "x")
		key := r.Method + " " + path
		if seen[key] || r.Method == "CONNECT" || r.Method == "TRACE" {
			continue
		}
		seen[key] = true
		h := hold(e, fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n--b",
			r.Method, path, basicHeader(), 1<<30))
		status, msg := h.answer()
		if status == 413 && r.Method != "HEAD" && !strings.Contains(msg, "limit of") {
			t.Errorf("%s: 413 %q does not name the limit", key, msg)
		}
		if status < 400 {
			t.Errorf("%s with 1 GiB declared: %d %q, want a refusal", key, status, msg)
		}
		if !h.closed() {
			t.Errorf("%s: the connection was kept open for the body", key)
		}
	}
	if len(seen) < 100 {
		t.Fatalf("only %d routes checked", len(seen))
	}
}

// TestPreAuthBudget: the bodies read before their sender is known (the record store's
// alternate syntax, the OAuth token form, the console sign-in) share one budget, so however
// many connections trickle such bodies they hold no more than it. A read that does not fit
// is refused at once (503 naming the rule), and the budget comes back when a held body ends.
func TestPreAuthBudget(t *testing.T) {
	for mode, cfg := range servertest.Modes(t) {
		t.Run(mode, func(t *testing.T) {
			c := cfg(t)
			c.PreAuthBudget = 2 * httpx.MaxAlternateBody
			e := servertest.Start(t, c)
			form := "Content-Type: application/x-www-form-urlencoded\r\n"
			token := "grant_type=client_credentials"
			probe := func(path string) (int, string) {
				h := hold(e, withHost("POST "+path+" HTTP/1.1\r\n"+form)+fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(token), token))
				return h.answer()
			}
			// Two alternate-syntax bodies of 64 KiB each, of which one byte is sent: together
			// they hold the whole budget while the server waits for the rest.
			alt := withHost("POST /lrs/TCAPI/statements?method=PUT HTTP/1.1\r\n"+form) + fmt.Sprintf("Content-Length: %d\r\n\r\nx", httpx.MaxAlternateBody)
			first, _ := hold(e, alt), hold(e, alt)
			var status int
			var msg string
			// The two are read as the server gets to them: a token request is refused once both are.
			for deadline := time.Now().Add(answerWithin); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if status, msg = probe("/lrs/oauth/token"); status == 503 {
					break
				}
			}
			if status != 503 || !strings.Contains(msg, "senders it does not know yet") {
				t.Fatalf("OAuth token form with the budget spent: %d %q, want 503", status, msg)
			}
			if console.Installed() {
				if status, msg := probe("/console/signin"); status != 503 {
					t.Errorf("console sign-in with the budget spent: %d %q, want 503", status, msg)
				}
			}
			if status, msg := hold(e, alt).answer(); status != 503 {
				t.Errorf("a third alternate-syntax body: %d %q, want 503", status, msg)
			}
			// Requests whose sender is known are not held back by it.
			if r := e.Do("GET", "/api/v1/app_management/tenants", servertest.Root, nil); r.Status != 200 {
				t.Errorf("an authenticated read with the budget spent: %d", r.Status)
			}
			// One held body ends (its client goes away): its share comes back.
			first.conn.Close()
			for deadline := time.Now().Add(answerWithin); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if status, msg = probe("/lrs/oauth/token"); status != 503 {
					break
				}
			}
			if status == 503 {
				t.Errorf("OAuth token form after a held body ended: %d %q, want it read", status, msg)
			}
		})
	}
}
