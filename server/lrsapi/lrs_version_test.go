package lrsapi_test

import (
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestXAPIDefaultVersion: a request without X-Experience-API-Version gets 400, and the
// response names the deployment's default version; a request naming one gets its own.
func TestXAPIDefaultVersion(t *testing.T) {
	for _, def := range []string{"1.0.3", "2.0.0"} {
		t.Run(def, func(t *testing.T) {
			cfg := servertest.Modes(t)["embedded"](t)
			cfg.XAPIDefaultVersion = def
			e := servertest.Start(t, cfg)
			r := e.Do("GET", "/lrs/TCAPI/statements", servertest.Root, nil)
			e.Expect(r, 400, "statements without a version header")
			if got := r.Header.Get("X-Experience-API-Version"); got != def {
				t.Fatalf("version header %q, want the default %q", got, def)
			}
			for _, sent := range []string{"1.0.3", "2.0.0"} {
				r = e.Do("GET", "/lrs/TCAPI/statements", servertest.Root, nil, "X-Experience-API-Version", sent)
				e.Expect(r, 200, "statements with version "+sent)
				if got := r.Header.Get("X-Experience-API-Version"); got != sent {
					t.Fatalf("request in %s answered in %q", sent, got)
				}
			}
		})
	}
}
