package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// served holds, per running server (its base URL), the router over the OpenAPI document
// that server serves at /openapi.json.
var served sync.Map // url → routers.Router

// openAPIRouter loads /openapi.json from the running server once, checks that it is a
// valid OpenAPI 3 document, and returns a router over it.
func (e *env) openAPIRouter() routers.Router {
	if r, ok := served.Load(e.url); ok {
		return r.(routers.Router)
	}
	res, err := http.Get(e.url + "/openapi.json")
	if err != nil {
		e.t.Fatalf("GET /openapi.json: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		e.t.Fatalf("GET /openapi.json: %d %s", res.StatusCode, raw)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		e.t.Fatalf("/openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		e.t.Fatalf("/openapi.json is not a valid OpenAPI document: %v", err)
	}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		e.t.Fatalf("/openapi.json: %v", err)
	}
	served.Store(e.url, r)
	return r
}

// checkResponse fails the test when a response of a documented operation does not match
// /openapi.json: an undocumented status, a content type the operation does not declare,
// or a body its schema rejects. Requests to paths the document does not describe (a
// deliberately unknown route, the player) have nothing to be checked against.
func (e *env) checkResponse(req *http.Request, status int, header http.Header, body []byte) {
	e.t.Helper()
	if e.serverFault && status >= 500 {
		return
	}
	route, params, err := e.openAPIRouter().FindRoute(req)
	if err != nil {
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
			// A HEAD response has the GET's headers and no body.
			ExcludeResponseBody: req.Method == http.MethodHead},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		msg := err.Error()
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		e.t.Errorf("%s %s → %d does not match /openapi.json (operation %s): %s\nbody: %s", req.Method, req.URL.RequestURI(), status,
			route.Operation.OperationID, msg, truncate(body, 600))
	}
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// TestOpenAPIDocument checks the served document itself: it is valid OpenAPI 3, every
// operation documents the answers the server gives to any request (400 with a message for
// non-public operations, 413 and 431 for everyone), and every schema that forbids
// additional properties can be satisfied (an allOf of two closed objects cannot).
func TestOpenAPIDocument(t *testing.T) {
	e := start(t, modes(t)["embedded"](t))
	e.openAPIRouter()
	r := e.do("GET", "/openapi.json", noAuth, nil)
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	r.json(t, &doc)
	for p, ops := range doc.Paths {
		for m, raw := range ops {
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				continue
			}
			for _, code := range []string{"413", "431"} {
				if op.Responses[code] == nil {
					t.Errorf("%s %s does not document %s", strings.ToUpper(m), p, code)
				}
			}
		}
	}
	for name, s := range doc.Components.Schemas {
		all, _ := s["allOf"].([]any)
		closed := 0
		for _, part := range all {
			if ref, ok := part.(map[string]any)["$ref"].(string); ok {
				part = doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
			}
			if ap, ok := part.(map[string]any)["additionalProperties"].(bool); ok && !ap {
				closed++
			}
		}
		if len(all) > 1 && closed > 0 {
			t.Errorf("schema %s is an allOf with a closed part (additionalProperties: false): no object satisfies it", name)
		}
	}
}

// TestOversizedHeadersAnswerMessage sends header fields larger than the server reads: the
// answer is the documented 431 with a message, on public and authenticated routes alike.
func TestOversizedHeadersAnswerMessage(t *testing.T) {
	e := start(t, modes(t)["embedded"](t))
	// The header fills the server's 4 KiB read buffer exactly and never ends. A longer one
	// would leave bytes the server never reads, and closing a socket with unread bytes resets
	// the connection (RFC 1122 4.2.2.13), which can destroy the 431 before the client reads it.
	const readBuffer = 4096
	for _, p := range []string{"/healthz", "/engine/api/v1/acme/configuration", lrs + "/about"} {
		head := "GET " + p + " HTTP/1.1\r\nHost: lectern\r\nX-Padding: "
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, head+strings.Repeat("x", readBuffer-len(head))); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("GET %s with a header over 4 KiB: %v", p, err)
		}
		body, _ := io.ReadAll(res.Body)
		conn.Close()
		if res.StatusCode != 431 || !strings.Contains(string(body), `"message"`) {
			t.Errorf("GET %s with a header over 4 KiB: %d %s", p, res.StatusCode, body)
		}
	}
}
