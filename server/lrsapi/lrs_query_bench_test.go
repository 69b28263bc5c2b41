package lrsapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// Query benchmark beside Learning Locker (issue 12, item 2): QUERY_BENCH_COUNT statements
// (default 10,000) of the ingest workload (ingestStatement) are POSTed through each target's
// statement API, then 4 concurrent clients run QUERY_BENCH_QUERIES (default 1,000) GET
// /statements?limit=25 per filter shape against each target in turn. Reported per shape:
// p50 and p99 in ms per target and the ratio Learning Locker p99 / Lectern p99.
// scripts/bench-query.sh starts Learning Locker and prints the table.

// queryShape is one filter shape of the benchmark: params(v) are the query parameters for
// value v (0 ≤ v < values), match(i, v) whether statement i of the workload matches them, so
// the first page of each target can be checked against the workload itself.
type queryShape struct {
	name   string
	values int
	params func(v int) url.Values
	match  func(i, v int) bool
}

// The workload's structure (see ingestStatement): learner i%1000, activity (7i)%50 in course
// activity/5, verb i%5, registration per learner (a learner's statements all fall in one
// course). Values are drawn uniformly, so each shape's selectivity is the workload's own: an
// agent or a registration matches n/1000 statements, an activity n/50, a course n/10, a verb n/5.
var queryShapes = []queryShape{
	{"agent", 1000, func(v int) url.Values {
		return url.Values{"agent": {learnerAgent(v)}}
	}, func(i, v int) bool { return i%1000 == v }},
	{"activity", 50, func(v int) url.Values {
		return url.Values{"activity": {fmt.Sprintf("https://example.com/courses/%d/activities/%d", v/5, v)}}
	}, func(i, v int) bool { return (i*7)%50 == v }},
	{"verb", 5, func(v int) url.Values {
		verbs := []string{"attempted", "experienced", "answered", "completed", "passed"}
		return url.Values{"verb": {"http://adlnet.gov/expapi/verbs/" + verbs[v]}}
	}, func(i, v int) bool { return i%5 == v }},
	{"registration", 1000, func(v int) url.Values {
		return url.Values{"registration": {fmt.Sprintf("%08x-0000-4000-9000-%012x", v, ((v*7)%50)/5)}}
	}, func(i, v int) bool { return i%1000 == v }},
	{"activity+related_activities", 10, func(v int) url.Values {
		return url.Values{"activity": {fmt.Sprintf("https://example.com/courses/%d", v)}, "related_activities": {"true"}}
	}, func(i, v int) bool { return ((i*7)%50)/5 == v }},
	{"agent+related_agents", 1000, func(v int) url.Values {
		return url.Values{"agent": {learnerAgent(v)}, "related_agents": {"true"}}
	}, func(i, v int) bool { return i%1000 == v }},
}

func learnerAgent(l int) string {
	return fmt.Sprintf(`{"objectType":"Agent","mbox":"mailto:learner%d@example.com"}`, l)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkQueryLL loads the statements into every target (lrsBenchTargets; Learning Locker
// only through its HTTP API, like Lectern), checks each shape's first page on every target
// against the workload, then measures each shape on each target in turn (so every target sees
// the same machine load), one sub-benchmark per shape. QUERY_BENCH_EMBEDDED_ONLY=1 leaves out
// the distributed target.
func BenchmarkQueryLL(b *testing.B) {
	n := envInt("QUERY_BENCH_COUNT", 10_000)
	queries := envInt("QUERY_BENCH_QUERIES", 1000)
	targets, stop := lrsBenchTargets(b, "benchquery", os.Getenv("QUERY_BENCH_EMBEDDED_ONLY") != "")
	defer stop()
	batches := ingestBatches(n)
	for _, t := range targets {
		t0 := time.Now()
		rate := postBatches(b, t, batches, n)
		b.Logf("loaded %d statements into %s in %s (%.0f/s)", n, t.name, time.Since(t0).Round(time.Millisecond), rate)
	}
	if b.Failed() {
		return
	}
	// Elasticsearch merges the segments of the distributed load for a while after it ends, on
	// the same two CPUs: measuring then would time those merges in every target's tail.
	if slices.ContainsFunc(targets, func(t lrsTarget) bool { return t.name == "distributed" }) {
		if err := waitMergesDone(testenv.External(b, "LECTERN_TEST_ELASTICSEARCH_URL"), 5*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	// The load grew this process's heap to hundreds of MB; return it to the OS now, or the
	// runtime's scavenger does it (madvise) during the measurement.
	debug.FreeOSMemory()
	b.Logf("load average before the queries: %s", loadAverage())
	// The collector policy of the lectern binary.
	servertest.BinaryCollector(b)
	for _, sh := range queryShapes {
		// The first page of value 0 on every target: as many statements as the workload has
		// matches, up to the limit, so no target answers fast by answering wrong. Distributed
		// stores may take a moment to show the last writes.
		want := 0
		for i := 0; i < n && want < 25; i++ {
			if sh.match(i, 0) {
				want++
			}
		}
		for _, t := range targets {
			deadline := time.Now().Add(30 * time.Second)
			for {
				got, err := pageSize(t, sh.params(0))
				if err == nil && got == want {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("%s %s: first page has %d statements (err %v), the workload %d", t.name, sh.name, got, err, want)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	// One unmeasured round of every shape on every target first: the first shape measured
	// would otherwise also time what follows a bulk load (cold index pages, a collector
	// catching up in each process, Elasticsearch flushing) on every target.
	for _, sh := range queryShapes {
		for _, t := range targets {
			runQueries(b, t, sh, queryWarmup)
		}
	}
	defer profileQueries(b)()
	for _, sh := range queryShapes {
		b.Run(sh.name, func(b *testing.B) {
			p99 := map[string]float64{}
			for b.Loop() {
				for _, t := range targets {
					before, gcs := processCPU(), numGC()
					lat := runQueries(b, t, sh, queries)
					// Who else ran meanwhile: a tail that the query's work does not explain
					// comes from here (other processes on the two cores, collections).
					b.Logf("%s %s: %d collections; CPU of other processes meanwhile: %s",
						t.name, sh.name, numGC()-gcs, busiest(before, processCPU(), 4))
					slices.Sort(lat)
					b.ReportMetric(servertest.Ms(lat[len(lat)/2]), t.name+"-p50-ms")
					b.ReportMetric(servertest.Ms(lat[len(lat)*99/100]), t.name+"-p99-ms")
					p99[t.name] = servertest.Ms(lat[len(lat)*99/100])
				}
			}
			if ll := p99["ll"]; ll > 0 {
				for _, t := range targets {
					if t.name != "ll" && p99[t.name] > 0 {
						b.ReportMetric(ll/p99[t.name], "ll/"+t.name+"-p99")
					}
				}
			}
		})
	}
}

// waitMergesDone polls Elasticsearch's node statistics until no segment merge is running.
func waitMergesDone(esURL string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		r, err := http.Get(esURL + "/_nodes/stats/indices/merges")
		if err != nil {
			return err
		}
		var st struct {
			Nodes map[string]struct {
				Indices struct {
					Merges struct {
						Current int `json:"current"`
					} `json:"merges"`
				} `json:"indices"`
			} `json:"nodes"`
		}
		err = json.NewDecoder(r.Body).Decode(&st)
		r.Body.Close()
		if err != nil {
			return err
		}
		running := 0
		for _, n := range st.Nodes {
			running += n.Indices.Merges.Current
		}
		if running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("elasticsearch still merges %d segments after %v", running, limit)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// loadAverage is /proc/loadavg's first three fields (the machine's load, for the record).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// queryWarmup is how many queries of each shape each target answers before any is measured.
const queryWarmup = 100

// statementsGET is GET t.url?params&limit=25 as the benchmark's clients send it.
func statementsGET(t lrsTarget, params url.Values) (*http.Response, error) {
	q := url.Values{"limit": {"25"}}
	for k, v := range params {
		q[k] = v
	}
	req, _ := http.NewRequest("GET", t.url+"?"+q.Encode(), nil)
	req.SetBasicAuth(t.user, t.pass)
	req.Header.Set("X-Experience-API-Version", "1.0.3")
	return lrsBenchClient.Do(req)
}

// pageSize returns how many statements the first page of the query holds.
func pageSize(t lrsTarget, params url.Values) (int, error) {
	r, err := statementsGET(t, params)
	if err != nil {
		return 0, err
	}
	defer r.Body.Close()
	var page struct {
		Statements []json.RawMessage `json:"statements"`
	}
	if r.StatusCode != 200 {
		msg, _ := io.ReadAll(r.Body)
		return 0, fmt.Errorf("%d %s", r.StatusCode, msg)
	}
	if err := json.NewDecoder(r.Body).Decode(&page); err != nil {
		return 0, err
	}
	return len(page.Statements), nil
}

// runQueries sends 20 warm-up queries, then count queries of the shape from 4 clients, values
// drawn from the same seeded sequence for every target, and returns each measured latency
// (request sent to body read). Any status but 200 fails the benchmark.
func runQueries(b *testing.B, t lrsTarget, sh queryShape, count int) []time.Duration {
	r := rand.New(rand.NewPCG(12, uint64(len(sh.name))))
	vals := make([]int, count+20)
	for i := range vals {
		vals[i] = r.IntN(sh.values)
	}
	lat := make([]time.Duration, len(vals))
	var wg sync.WaitGroup
	var failed sync.Once
	do := func(i int) {
		t0 := time.Now()
		resp, err := statementsGET(t, sh.params(vals[i]))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		lat[i] = time.Since(t0)
		if err != nil || resp.StatusCode != 200 {
			failed.Do(func() { b.Errorf("%s GET %s: %v %v", t.name, sh.name, err, resp) })
		}
	}
	for i := range 20 {
		do(i)
	}
	for c := range servertest.BenchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 20 + c; i < len(vals); i += servertest.BenchClients {
				do(i)
			}
		}()
	}
	wg.Wait()
	return lat[20:]
}

// profileQueries profiles the query phase alone (the load would dominate a -cpuprofile of the
// whole benchmark): with QUERY_BENCH_PROFILE_DIR set it writes cpu.pprof, block.pprof,
// mutex.pprof and allocs.pprof there when the returned function runs, and allocs-base.pprof
// now (go tool pprof -diff_base allocs-base.pprof … allocs.pprof: the query phase's allocations),
// and an execution trace, trace.out.
func profileQueries(b *testing.B) func() {
	dir := os.Getenv("QUERY_BENCH_PROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	cpu, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		b.Fatal(err)
	}
	// An execution trace as well: go tool trace -pprof=sched shows where goroutines waited
	// for a CPU, which a CPU profile cannot.
	tr, err := os.Create(filepath.Join(dir, "trace.out"))
	if err != nil {
		b.Fatal(err)
	}
	if err := trace.Start(tr); err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		b.Fatal(err)
	}
	base, err := os.Create(filepath.Join(dir, "allocs-base.pprof"))
	if err != nil {
		b.Fatal(err)
	}
	_ = pprof.Lookup("allocs").WriteTo(base, 0)
	base.Close()
	runtime.SetBlockProfileRate(10_000) // one sample per 10 µs blocked
	runtime.SetMutexProfileFraction(10)
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		trace.Stop()
		tr.Close()
		for _, name := range []string{"block", "mutex", "allocs"} {
			f, err := os.Create(filepath.Join(dir, name+".pprof"))
			if err != nil {
				b.Fatal(err)
			}
			_ = pprof.Lookup(name).WriteTo(f, 0)
			f.Close()
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
	}
}

// numGC is how many collections this process has run.
func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// processCPU is the CPU time (user + system, clock ticks) of every other process on the
// machine, by pid, with its command name; empty where /proc is missing.
func processCPU() map[int]procCPU {
	out := map[int]procCPU{}
	dirs, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid … : comm may hold spaces, so split after its last ')'.
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = procCPU{s[open+1 : closing], u + st}
	}
	return out
}

type procCPU struct {
	comm  string
	ticks int64
}

// busiest names the n processes that used the most CPU between the two samples, as
// "comm ms", summed by command name (ticks are 10 ms on Linux).
func busiest(before, after map[int]procCPU, n int) string {
	by := map[string]int64{}
	for pid, a := range after {
		if d := a.ticks - before[pid].ticks; d > 0 {
			by[a.comm] += d
		}
	}
	names := make([]string, 0, len(by))
	for c := range by {
		names = append(names, c)
	}
	slices.SortFunc(names, func(x, y string) int { return int(by[y] - by[x]) })
	var parts []string
	for _, c := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %d ms", c, by[c]*10))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
