package postbackjob_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/postbackjob"
)

// BenchmarkDeliver times one delivery of a FULL report to a loopback receiver that answers at
// once, on the embedded record store: the report built from storage, the request, and the
// second build that checks whether the registration changed on the way (docs/benchmarks.md).
func BenchmarkDeliver(b *testing.B) {
	w := newWorld(b, recordstores.All()[0], []string{"127.0.0.1/32"})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(200) }))
	b.Cleanup(srv.Close)
	w.register(b, "r1", &registration.PostBack{URL: srv.URL, AuthType: "HTTPBASIC", ResultsFormat: "FULL"})
	ctx := context.Background()
	p := postbackjob.Payload{Tenant: "acme", RegistrationID: "r1"}
	for b.Loop() {
		if err := w.h.Deliver(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
