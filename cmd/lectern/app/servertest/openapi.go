package servertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Served holds, per running server (its base URL), the router over the OpenAPI document
// that server serves at /openapi.json.
var Served sync.Map

// OpenAPIRouter loads /openapi.json from the running server once, checks that it is a
// valid OpenAPI 3 document, and returns a router over it.
func OpenAPIRouter(e *Env) routers.Router {
	if r, ok := Served.Load(e.URL); ok {
		return r.(routers.Router)
	}
	res, err := http.Get(e.URL + "/openapi.json")
	if err != nil {
		e.T.Fatalf("GET /openapi.json: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		e.T.Fatalf("GET /openapi.json: %d %s", res.StatusCode, raw)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		e.T.Fatalf("/openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		e.T.Fatalf("/openapi.json is not a valid OpenAPI document: %v", err)
	}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		e.T.Fatalf("/openapi.json: %v", err)
	}
	Served.Store(e.URL, r)
	return r
}

// CheckResponse fails the test when a response of a documented operation does not match
// /openapi.json: an undocumented status, a content type the operation does not declare,
// or a body its schema rejects. Requests to paths the document does not describe (a
// deliberately unknown route, the player) have nothing to be checked against.
func CheckResponse(e *Env, req *http.Request, status int, header http.Header, body []byte) {
	e.T.Helper()
	if e.ServerFault && status >= 500 {
		return
	}
	route, params, err := OpenAPIRouter(e).FindRoute(req)
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
		e.T.Errorf("%s %s → %d does not match /openapi.json (operation %s): %s\nbody: %s", req.Method, req.URL.RequestURI(), status,
			route.Operation.OperationID, msg, Truncate(body, 600))
	}
}

// Truncate is b as text, cut to n bytes.
func Truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
