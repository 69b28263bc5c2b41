package player_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/runtime"
)

// commitLearners is how many simulated learners commit at once (issue 11: 200).
const commitLearners = 200

type commitLearner struct {
	url string
	seq int64
}

// runCommitLoad sends b.N commits spread over the learners, commitLearners at a time, and reports
// the latency percentiles and the throughput. With pace > 0 each learner commits once per
// pace (staggered), as learners do (autocommit, page turns); with 0 they commit back to back,
// which measures the saturated throughput.
func runCommitLoad(b *testing.B, learners []*commitLearner, pace time.Duration) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: commitLearners, MaxConnsPerHost: commitLearners}}
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, l := range learners {
		wg.Add(1)
		l := l
		go func(l *commitLearner, offset time.Duration) {
			defer wg.Done()
			tick := start.Add(offset)
			for {
				if pace > 0 {
					time.Sleep(time.Until(tick))
					tick = tick.Add(pace)
				}
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				l.seq++
				body := fmt.Sprintf(`{"commitSequence":%d,"cmi.core.lesson_status":"incomplete","cmi.core.lesson_location":"page-%d","cmi.suspend_data":"state=%d","cmi.core.score.raw":"50","cmi.core.session_time":"00:00:05"}`, l.seq, l.seq, l.seq)
				t0 := time.Now()
				res, err := client.Post(l.url, "text/plain;charset=UTF-8", bytes.NewBufferString(body))
				if err != nil {
					b.Error(err)
					return
				}
				out, _ := io.ReadAll(res.Body)
				res.Body.Close()
				lat[i] = time.Since(t0)
				if res.StatusCode != 200 {
					b.Errorf("commit: %d %s", res.StatusCode, out)
					return
				}
			}
		}(l, pace*time.Duration(indexOf(learners, l))/time.Duration(len(learners)))
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	// The server's Shutdown waits for every open connection: close the keep-alive ones.
	client.CloseIdleConnections()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
}

func indexOf(ls []*commitLearner, l *commitLearner) int {
	for i, x := range ls {
		if x == l {
			return i
		}
	}
	return 0
}

// commitPace is how often each simulated learner commits in the paced runs: 200 learners every
// 500 ms make 400 commits/s, far above what 200 real learners send (autocommit every 30 s).
const commitPace = 500 * time.Millisecond

// commitLearners prepares n registrations of one SCORM 1.2 course, each launched, with the
// commit URL of its first SCO.
func setupCommitLearners(b *testing.B, base string, n int) []*commitLearner {
	servertest.BenchTenantCourse(b, base, map[string]string{"imsmanifest.xml": servertest.Scorm12Manifest, "one/index.html": "<html>one</html>", "two/index.html": "<html>two</html>"})
	learners := make([]*commitLearner, n)
	regs := base + "/engine/api/v1/bench/registrations"
	for i := range learners {
		id := fmt.Sprintf("r%d", i)
		servertest.CommitBenchCall(b, "POST", regs, "application/json", []byte(`{"courseId":"c","registrationId":"`+id+`","learner":{"id":"`+id+`"}}`), 204)
		var link struct{ LaunchLink string }
		servertest.CommitBenchJSON(b, servertest.CommitBenchCall(b, "GET", regs+"/"+id+"/launchLink", "", nil, 200), &link)
		path := link.LaunchLink[strings.Index(link.LaunchLink, "/player/launch/"):]
		session := strings.TrimPrefix(servertest.CommitBenchCall(b, "GET", base+path, "", nil, 303).Header.Get("Location"), "/player/session/")
		var st struct{ Attempt int64 }
		servertest.CommitBenchJSON(b, servertest.CommitBenchCall(b, "GET", base+"/player/runtime/"+session+"/activity?activity=i1", "", nil, 200), &st)
		learners[i] = &commitLearner{url: fmt.Sprintf("%s/player/runtime/%s/commit?activity=i1&attempt=%d", base, session, st.Attempt)}
	}
	return learners
}

// BenchmarkPlayerCommit measures the runtime endpoint with 200 learners committing at once, on
// both backends, beside a bare Fiber handler doing the same I/O-free work (parse and validate
// the commit, answer) over the same loopback HTTP.
func BenchmarkPlayerCommit(b *testing.B) {
	for _, mode := range []string{"embedded", "distributed"} {
		var learners []*commitLearner
		b.Run(mode+"/paced", func(b *testing.B) {
			learners = setupCommitLearners(b, servertest.CommitBenchServer(b, mode), commitLearners)
			runCommitLoad(b, learners, commitPace)
		})
		b.Run(mode+"/saturated", func(b *testing.B) {
			learners = setupCommitLearners(b, servertest.CommitBenchServer(b, mode), commitLearners)
			runCommitLoad(b, learners, 0)
		})
	}
	b.Run("bare-fiber", func(b *testing.B) {
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.Post("/commit", func(c *fiber.Ctx) error {
			if _, err := runtime.ParseCommit(runtime.SCORM12, c.Body()); err != nil {
				return c.Status(400).JSON(map[string]any{"result": "false", "errorCode": 201})
			}
			return c.JSON(map[string]any{"result": "true", "errorCode": 0})
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = app.Listener(ln) }()
		defer app.Shutdown()
		learners := make([]*commitLearner, commitLearners)
		for i := range learners {
			learners[i] = &commitLearner{url: "http://" + ln.Addr().String() + "/commit"}
		}
		b.Run("paced", func(b *testing.B) { runCommitLoad(b, learners, commitPace) })
		b.Run("saturated", func(b *testing.B) { runCommitLoad(b, learners, 0) })
	})
}
