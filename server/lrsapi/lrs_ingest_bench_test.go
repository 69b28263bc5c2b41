package lrsapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// Ingest benchmark (issue 12): INGEST_BENCH_COUNT statements (default 10,000) POSTed to
// /lrs/TCAPI/statements in batches of 100 by 4 concurrent clients, realistic statements
// with context, result and extensions (ingestStatement). Reported: statements/s. The same
// workload drives Learning Locker in scripts/bench-ingest.sh.

func ingestCount() int {
	if v, err := strconv.Atoi(os.Getenv("INGEST_BENCH_COUNT")); err == nil && v > 0 {
		return v
	}
	return 10_000
}

// ingestStatement is statement i of the workload: 1,000 learners, 50 activities in 10
// courses, 5 verbs, a registration per learner and course.
func ingestStatement(i int) string {
	verbs := []string{"attempted", "experienced", "answered", "completed", "passed"}
	l, a := i%1000, (i*7)%50
	return fmt.Sprintf(`{"id":"%08x-0000-4000-8000-%012x","actor":{"objectType":"Agent","name":"Learner %d","mbox":"mailto:learner%d@example.com"},`+
		`"verb":{"id":"http://adlnet.gov/expapi/verbs/%s","display":{"en-US":"%s"}},`+
		`"object":{"objectType":"Activity","id":"https://example.com/courses/%d/activities/%d","definition":{"name":{"en-US":"Activity %d"},"description":{"en-US":"Question %d of the course"},"type":"http://adlnet.gov/expapi/activities/question","interactionType":"choice","correctResponsesPattern":["golf"],"choices":[{"id":"golf","description":{"en-US":"Golf"}},{"id":"tennis","description":{"en-US":"Tennis"}}]}},`+
		`"result":{"score":{"scaled":0.%02d,"raw":%d,"min":0,"max":100},"success":%t,"completion":true,"duration":"PT%dM%dS","response":"golf","extensions":{"https://example.com/ext/attempt":%d,"https://example.com/ext/device":{"os":"linux","browser":"chromium"}}},`+
		`"context":{"registration":"%08x-0000-4000-9000-%012x","platform":"Lectern bench","language":"en-US",`+
		`"instructor":{"objectType":"Agent","name":"Instructor","mbox":"mailto:instructor%d@example.com"},`+
		`"contextActivities":{"parent":[{"id":"https://example.com/courses/%d","objectType":"Activity"}],"grouping":[{"id":"https://example.com/programs/1","objectType":"Activity"}],"category":[{"id":"https://w3id.org/xapi/scorm","definition":{"type":"http://adlnet.gov/expapi/activities/profile"}}]},`+
		`"extensions":{"https://example.com/ext/session":"s-%d","https://example.com/ext/cohort":%d}},`+
		`"timestamp":"2026-01-%02dT%02d:%02d:%02d.%03dZ"}`,
		i, i, l, l, verbs[i%5], verbs[i%5], a/5, a, a, a, i%100, i%100, i%2 == 0, i%60, i%60, i%3+1,
		l, a/5, a%3, a/5, i%17, i%12, i%28+1, i%24, i%60, i%60, i%1000)
}

// ingestBatches renders the workload as JSON arrays of 100 statements.
func ingestBatches(n int) [][]byte {
	var out [][]byte
	for s := 0; s < n; s += 100 {
		var buf bytes.Buffer
		buf.WriteByte('[')
		for i := s; i < s+100 && i < n; i++ {
			if i > s {
				buf.WriteByte(',')
			}
			buf.WriteString(ingestStatement(i))
		}
		buf.WriteByte(']')
		out = append(out, buf.Bytes())
	}
	return out
}

// postBatches POSTs the batches from 4 clients and returns statements per second.
func postBatches(b *testing.B, t lrsTarget, batches [][]byte, n int) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed sync.Once
	t0 := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batches) {
					return
				}
				req, _ := http.NewRequest("POST", t.url, bytes.NewReader(batches[i]))
				req.SetBasicAuth(t.user, t.pass)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Experience-API-Version", "1.0.3")
				r, err := lrsBenchClient.Do(req)
				if err != nil {
					failed.Do(func() { b.Errorf("POST: %v", err) })
					return
				}
				msg, _ := io.ReadAll(r.Body)
				r.Body.Close()
				if r.StatusCode != 200 {
					failed.Do(func() { b.Errorf("POST batch %d: %d %s", i, r.StatusCode, msg) })
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(t0).Seconds()
}

// BenchmarkIngest runs the workload INGEST_BENCH_ROUNDS times (default 2) against each
// target in turn (Learning Locker when LECTERN_BENCH_LL_URL names its xAPI endpoint, Lectern
// embedded, Lectern distributed), so every target sees the same machine load, and reports
// each target's mean statements/s and Lectern's ratio to Learning Locker. Each round posts
// fresh statement ids: the same statement again would be a no-op.
func BenchmarkIngest(b *testing.B) {
	n := ingestCount()
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("INGEST_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	targets, stop := lrsBenchTargets(b, "benchingest", os.Getenv("INGEST_BENCH_EMBEDDED_ONLY") != "")
	defer stop()
	sum := map[string]float64{}
	for b.Loop() {
		for r := range rounds {
			batches := ingestBatchesFrom(r*n, n)
			for _, t := range targets {
				rate := postBatches(b, t, batches, n)
				b.Logf("round %d %s: %.0f statements/s", r+1, t.name, rate)
				sum[t.name] += rate
			}
		}
	}
	for _, t := range targets {
		b.ReportMetric(sum[t.name]/float64(rounds*b.N), t.name+"-stmts/s")
		if ll := sum["ll"]; ll > 0 && t.name != "ll" {
			b.ReportMetric(sum[t.name]/ll, t.name+"/ll")
		}
	}
}

// ingestBatchesFrom is ingestBatches for statements first…first+n-1.
func ingestBatchesFrom(first, n int) [][]byte {
	all := ingestBatches(first + n)
	return all[first/100:]
}

// lrsTarget is one statement resource a benchmark drives: Learning Locker's or Lectern's.
type lrsTarget struct{ name, url, user, pass string }

// lrsBenchClient keeps a connection per client alive: http.DefaultClient keeps only two idle
// connections per host, so with 4 clients every other request would open a new connection and
// the handshake would show up as latency of the server under test.
var lrsBenchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, MaxConnsPerHost: 16}}

// lrsBenchTargets returns the statement resources of the LRS benchmarks, in the order they run:
// Learning Locker when LECTERN_BENCH_LL_URL names its xAPI endpoint, Lectern embedded (SQLite),
// then, unless embeddedOnly, Lectern distributed (Elasticsearch statements, PostgreSQL records,
// Redis, MinIO; indices and bucket named after prefix). stop shuts the Lectern servers down.
func lrsBenchTargets(b *testing.B, prefix string, embeddedOnly bool) (targets []lrsTarget, stop func()) {
	var stops []func()
	stop = func() {
		for _, f := range stops {
			f()
		}
	}
	if ll := os.Getenv("LECTERN_BENCH_LL_URL"); ll != "" {
		targets = append(targets, lrsTarget{"ll", ll + "/statements", "bench", "bench"})
	}
	emb, stopEmb := servertest.BenchServer(b, servertest.BenchConfig(b))
	stops = append(stops, stopEmb)
	targets = append(targets, lrsTarget{"embedded", emb + "/lrs/TCAPI/statements", servertest.RootUser, servertest.RootPass})
	if !embeddedOnly {
		c := servertest.BenchConfig(b)
		c.PostgresURL = testenv.FreshPostgres(b, testenv.External(b, "LECTERN_TEST_POSTGRES_URL"))
		c.RedisURL = testenv.FreshRedis(b, testenv.External(b, "LECTERN_TEST_REDIS_URL"))
		c.S3 = app.S3Config{Endpoint: testenv.External(b, "LECTERN_TEST_S3_ENDPOINT"),
			AccessKey: testenv.External(b, "LECTERN_TEST_S3_ACCESS_KEY"), SecretKey: testenv.External(b, "LECTERN_TEST_S3_SECRET_KEY"),
			Bucket: servertest.RandomName(prefix + "-")}
		c.Elastic = app.ElasticConfig{URL: testenv.External(b, "LECTERN_TEST_ELASTICSEARCH_URL"), IndexPrefix: servertest.RandomName(prefix+"_") + "_"}
		dist, stopDist := servertest.BenchServer(b, c)
		stops = append(stops, stopDist)
		targets = append(targets, lrsTarget{"distributed", dist + "/lrs/TCAPI/statements", servertest.RootUser, servertest.RootPass})
	}
	return targets, stop
}
