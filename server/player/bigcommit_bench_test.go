package player_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// bigCommit12 is a legal SCORM 1.2 commit in the API's nested JSON form with n interactions,
// each with every element set, a correct response and an objective (about 250 bytes each;
// 10,000 of them make 2.5 MB, under the commit limit of 4 MiB).
func bigCommit12(n, seq int) []byte {
	type pattern struct {
		Pattern string `json:"pattern"`
	}
	type id struct {
		ID string `json:"id"`
	}
	type interaction struct {
		ID               string    `json:"id"`
		Time             string    `json:"time"`
		Type             string    `json:"type"`
		Weighting        string    `json:"weighting"`
		StudentResponse  string    `json:"student_response"`
		Result           string    `json:"result"`
		Latency          string    `json:"latency"`
		CorrectResponses []pattern `json:"correct_responses"`
		Objectives       []id      `json:"objectives"`
	}
	ins := make([]interaction, n)
	for i := range ins {
		ins[i] = interaction{ID: fmt.Sprintf("urn:lectern:question:%d", i), Time: "10:00:00", Type: "choice",
			Weighting: "1", StudentResponse: "a,b", Result: "correct", Latency: "0000:00:12.5",
			CorrectResponses: []pattern{{"a,b"}}, Objectives: []id{{"primes"}}}
	}
	b, _ := json.Marshal(map[string]any{"commitSequence": seq, "cmi": map[string]any{
		"core":         map[string]any{"lesson_status": "incomplete", "lesson_location": "page-12", "session_time": "0000:01:00"},
		"suspend_data": "resume here", "interactions": ins}})
	return b
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBigCommit measures what one learner's largest legal commit costs the server
// (issue 22: a commit's cost is linear in its size): a SCORM 1.2 commit of 10,000
// interactions, then progress/detail of that registration, on both backends. It reports the
// process's CPU time per commit and per progress/detail read (the server runs in this process;
// the client's share is sending 2.5 MB and reading the answer) beside the wall time.
func BenchmarkBigCommit(b *testing.B) {
	for _, mode := range []string{"embedded", "distributed"} {
		b.Run(mode, func(b *testing.B) {
			base := servertest.CommitBenchServer(b, mode)
			l := setupCommitLearners(b, base, 1)[0]
			detail := base + "/engine/api/v1/bench/registrations/r0/progress/detail"
			var commitCPU, commitWall, detailCPU, detailWall time.Duration
			size := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				body := bigCommit12(10000, i+1)
				size = len(body)
				c0, w0 := cpuTime(b), time.Now()
				res := servertest.CommitBenchCall(b, "POST", l.url, "application/json", body, 200)
				commitCPU, commitWall = commitCPU+cpuTime(b)-c0, commitWall+time.Since(w0)
				var ans struct{ Result string }
				servertest.CommitBenchJSON(b, res, &ans)
				if ans.Result != "true" {
					b.Fatalf("commit refused: %+v", ans)
				}
				c0, w0 = cpuTime(b), time.Now()
				res = servertest.CommitBenchCall(b, "GET", detail, "", nil, 200)
				detailCPU, detailWall = detailCPU+cpuTime(b)-c0, detailWall+time.Since(w0)
				var d struct{ ActivityDetails json.RawMessage }
				servertest.CommitBenchJSON(b, res, &d)
				if n := strings.Count(string(d.ActivityDetails), "urn:lectern:question:"); n != 10000 {
					b.Fatalf("progress/detail shows %d interactions, want 10000", n)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(size), "commit-bytes")
			b.ReportMetric(float64(commitCPU.Milliseconds())/n, "commit-cpu-ms")
			b.ReportMetric(float64(commitWall.Milliseconds())/n, "commit-wall-ms")
			b.ReportMetric(float64(detailCPU.Milliseconds())/n, "detail-cpu-ms")
			b.ReportMetric(float64(detailWall.Milliseconds())/n, "detail-wall-ms")
		})
	}
}
