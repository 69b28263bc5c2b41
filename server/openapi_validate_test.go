package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// url → routers.Router

// TestOpenAPIDocument checks the served document itself: it is valid OpenAPI 3, every
// operation documents the answers the server gives to any request (400 with a message for
// non-public operations, 413 and 431 for everyone), and every schema that forbids
// additional properties can be satisfied (an allOf of two closed objects cannot).
func TestOpenAPIDocument(t *testing.T) {
	e := servertest.Start(t, servertest.Modes(t)["embedded"](t))
	servertest.OpenAPIRouter(e)
	r := e.Do("GET", "/openapi.json", servertest.NoAuth, nil)
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	r.JSON(t, &doc)
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
	e := servertest.Start(t, servertest.Modes(t)["embedded"](t))
	// The header fills the server's 4 KiB read buffer exactly and never ends. A longer one
	// would leave bytes the server never reads, and closing a socket with unread bytes resets
	// the connection (RFC 1122 4.2.2.13), which can destroy the 431 before the client reads it.
	const readBuffer = 4096
	for _, p := range []string{"/healthz", "/engine/api/v1/acme/configuration", servertest.LRS + "/about"} {
		head := "GET " + p + " HTTP/1.1\r\nHost: lectern\r\nX-Padding: "
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
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
