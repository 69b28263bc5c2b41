package lrsapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// statementBenchPost posts statements to the bench tenant's record store as root.
func statementBenchPost(b *testing.B, base string, sts []map[string]any) {
	body, _ := json.Marshal(sts)
	req, _ := http.NewRequest("POST", base+"/lrs/TCAPI/bench/statements", bytes.NewReader(body))
	req.SetBasicAuth(servertest.RootUser, servertest.RootPass)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Experience-API-Version", "1.0.3")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("statements: %d %s", res.StatusCode, out)
	}
}

// BenchmarkStatementRollup measures one stored batch of 10 statements of a cmi5 registration
// (progress durations that grow, so every batch changes what the rollup reads) after a
// session history of 0, 2,000 and 10,000 statements: the rollup folds each batch into the
// instance's fold, so the cost per batch should not grow with the history.
func BenchmarkStatementRollup(b *testing.B) {
	for _, mode := range []string{"embedded", "distributed"} {
		for _, history := range []int{0, 2000, 10000} {
			b.Run(fmt.Sprintf("%s/history=%d", mode, history), func(b *testing.B) {
				base := servertest.CommitBenchServer(b, mode)
				servertest.BenchTenantCourse(b, base, map[string]string{"cmi5.xml": cmi5Completed, "index.html": ""})
				const xreg = "3e1c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b6a"
				servertest.CommitBenchCall(b, "POST", base+"/engine/api/v1/bench/registrations", "application/json",
					[]byte(`{"courseId":"c","registrationId":"r","xapiRegistrationId":"`+xreg+`","learner":{"id":"ann"}}`), 204)
				seconds := 0
				batch := func(n int) []map[string]any {
					sts := make([]map[string]any, n)
					for i := range sts {
						seconds++
						sts[i] = servertest.XapiStatement(xreg, "progressed", "urn:example:au:done", map[string]any{"duration": fmt.Sprintf("PT%dS", seconds)})
					}
					return sts
				}
				for h := 0; h < history; h += 100 {
					statementBenchPost(b, base, batch(100))
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					statementBenchPost(b, base, batch(10))
				}
				b.StopTimer()
				var p struct{ RegistrationCompletion string }
				servertest.CommitBenchJSON(b, servertest.CommitBenchCall(b, "GET", base+"/engine/api/v1/bench/registrations/r/progress", "", nil, 200), &p)
				if p.RegistrationCompletion != "INCOMPLETE" {
					b.Fatalf("progress after the session: %+v", p)
				}
			})
		}
	}
}
