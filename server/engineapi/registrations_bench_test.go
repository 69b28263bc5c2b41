package engineapi_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// Registration read benchmarks at scale (issue 11): a tenant with REG_BENCH_COUNT
// registrations (default 1,000,000) over 100 courses and 200,000 learners, seeded with one
// INSERT … SELECT in the database itself (going through the API would take hours), then
// queried through HTTP by 4 concurrent clients. Reported per case: p50-ms and p99-ms.

func benchCount() int {
	if v, err := strconv.Atoi(os.Getenv("REG_BENCH_COUNT")); err == nil && v > 0 {
		return v
	}
	return 1_000_000
}

func BenchmarkRegistrations(b *testing.B) {
	n := benchCount()
	backends := []struct {
		name string
		cfg  func(b *testing.B) (app.Config, string, string)
	}{
		{"sqlite", func(b *testing.B) (app.Config, string, string) {
			c := servertest.BenchConfig(b)
			return c, "sqlite", "file:" + filepath.Join(c.DataDir, "lectern.db") + "?_pragma=busy_timeout(10000)"
		}},
		{"postgres", func(b *testing.B) (app.Config, string, string) {
			c := servertest.BenchConfig(b)
			c.PostgresURL = testenv.FreshPostgres(b, testenv.External(b, "LECTERN_TEST_POSTGRES_URL"))
			return c, "pgx", c.PostgresURL
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			cfg, driver, dsn := be.cfg(b)
			url, stop := servertest.BenchServer(b, cfg)
			defer stop()
			seedRegistrations(b, url, driver, dsn, n)
			cases := []struct {
				name string
				path func(i int) string
			}{
				{"list_by_course", func(i int) string {
					return fmt.Sprintf("/registrations?courseId=course-%03d", i%servertest.BenchCourses)
				}},
				{"list_by_learner", func(i int) string {
					return fmt.Sprintf("/registrations?learnerId=learner-%06d", (i*7919)%servertest.BenchLearners)
				}},
				{"list_by_course_and_learner", func(i int) string {
					l := (i * 7919) % servertest.BenchLearners
					return fmt.Sprintf("/registrations?courseId=course-%03d&learnerId=learner-%06d", l%servertest.BenchCourses, l)
				}},
				{"list_since", func(i int) string {
					// A since near the end of the update order: the newest registrations.
					at := time.Unix(1_700_000_000, 0).Add(time.Duration(n-1-(i%1000)) * time.Millisecond).UTC()
					return "/registrations?since=" + at.Format("2006-01-02T15:04:05.000Z")
				}},
				{"progress_detail", func(i int) string {
					return fmt.Sprintf("/registrations/reg-%07d/progress/detail", (i*104729)%n)
				}},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					var lat []time.Duration
					for b.Loop() {
						lat = append(lat, measure(b, url, c.path)...)
					}
					slices.Sort(lat)
					b.ReportMetric(servertest.Ms(lat[len(lat)/2]), "p50-ms")
					b.ReportMetric(servertest.Ms(lat[len(lat)*99/100]), "p99-ms")
				})
			}
		})
	}
}

func benchDo(b *testing.B, method, url string, body io.Reader, ct string) *http.Response {
	req, _ := http.NewRequest(method, url, body)
	req.SetBasicAuth(servertest.RootUser, servertest.RootPass)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// seedRegistrations creates the tenant and course-000 through the API, copies the course
// to course-001…course-099 and inserts n registrations, all in the database itself.
func seedRegistrations(b *testing.B, base, driver, dsn string, n int) {
	b.Helper()
	start := time.Now()
	r := benchDo(b, "POST", base+"/api/v1/app_management/tenants", strings.NewReader(`{"tenant_id":"`+servertest.BenchTenant+`"}`), "application/json")
	r.Body.Close()
	form, ct := servertest.MultipartFile("course.zip", servertest.ZipOf(b, map[string]string{"imsmanifest.xml": servertest.Scorm12Manifest,
		"one/index.html": "<html>one</html>", "two/index.html": "<html>two</html>"}))
	eng := base + "/engine/api/v1/" + servertest.BenchTenant
	r = benchDo(b, "POST", eng+"/courses/importJobs?course=course-000", bytes.NewReader(form), ct)
	msg, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 {
		b.Fatalf("import course-000: %d %s", r.StatusCode, msg)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r = benchDo(b, "GET", eng+"/courses/course-000/title", nil, "")
		if r.StatusCode == 200 {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			msg, _ := io.ReadAll(r.Body)
			b.Fatalf("course-000 was not imported in time: %d %s", r.StatusCode, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, q := range seedSQL(driver, n) {
		if _, err := db.Exec(q); err != nil {
			b.Fatalf("seed: %v\n%s", err, q)
		}
	}
	b.Logf("seeded %d registrations in %s", n, time.Since(start).Round(time.Millisecond))
}

// seedSQL returns the statements that copy course-000 and insert n registrations: ids
// reg-0000000…, course i%100, learner i%200000, updated one millisecond apart.
func seedSQL(driver string, n int) []string {
	// The registration's JSON as the registration package writes it.
	data := `'{"id":"' || rid || '","courseId":"' || cid || '","learner":{"id":"' || lid || '"},"forCredit":true,` +
		`"xapiRegistrationId":"00000000-0000-4000-8000-' || substr('000000000000' || i, -12, 12) || '",` +
		`"instances":[{"instance":0,"key":"k' || i || '","courseVersion":0,"course":{"title":"Intro to Testing","standard":"SCORM_12","updated":"2023-11-14T22:13:20Z"},` +
		`"created":"2023-11-14T22:13:20Z","progress":{"completion":"UNKNOWN","success":"UNKNOWN","totalSecondsTracked":0}}]}'`
	if driver == "pgx" {
		data = `'{"id":"' || rid || '","courseId":"' || cid || '","learner":{"id":"' || lid || '"},"forCredit":true,` +
			`"xapiRegistrationId":"00000000-0000-4000-8000-' || lpad(i::text, 12, '0') || '",` +
			`"instances":[{"instance":0,"key":"k' || i || '","courseVersion":0,"course":{"title":"Intro to Testing","standard":"SCORM_12","updated":"2023-11-14T22:13:20Z"},` +
			`"created":"2023-11-14T22:13:20Z","progress":{"completion":"UNKNOWN","success":"UNKNOWN","totalSecondsTracked":0}}]}'`
		return []string{
			`INSERT INTO records (tenant, kind, id, parent_kind, parent_id, rkey, data, rev, created, updated)
			 SELECT tenant, kind, replace(id, 'course-000', c), parent_kind, replace(parent_id, 'course-000', c), rkey,
			        convert_to(replace(convert_from(data, 'UTF8'), '"course-000"', '"' || c || '"'), 'UTF8'), rev, created, updated
			 FROM records, (SELECT 'course-' || lpad(g::text, 3, '0') AS c FROM generate_series(1, 99) g) cs
			 WHERE tenant = 'bench' AND ((kind = 'course' AND id = 'course-000') OR (kind = 'course_version' AND parent_id = 'course-000'))`,
			fmt.Sprintf(`INSERT INTO records (tenant, kind, id, parent_kind, parent_id, rkey, data, rev, created, updated)
			 SELECT 'bench', 'registration', rid, 'course', cid, lid, convert_to(%s, 'UTF8'), 1, 1700000000000000 + i*1000, 1700000000000000 + i*1000
			 FROM (SELECT i, 'reg-' || lpad(i::text, 7, '0') AS rid, 'course-' || lpad((i %% 100)::text, 3, '0') AS cid,
			              'learner-' || lpad((i %% 200000)::text, 6, '0') AS lid FROM generate_series(0, %d) i) s`, data, n-1),
			`ANALYZE records`,
		}
	}
	return []string{
		`INSERT INTO records (tenant, kind, id, parent_kind, parent_id, rkey, data, rev, created, updated)
		 WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 99)
		 SELECT tenant, kind, replace(id, 'course-000', printf('course-%03d', x)), parent_kind, replace(parent_id, 'course-000', printf('course-%03d', x)), rkey,
		        CAST(replace(CAST(data AS TEXT), '"course-000"', printf('"course-%03d"', x)) AS BLOB), rev, created, updated
		 FROM records, g
		 WHERE tenant = 'bench' AND ((kind = 'course' AND id = 'course-000') OR (kind = 'course_version' AND parent_id = 'course-000'))`,
		fmt.Sprintf(`INSERT INTO records (tenant, kind, id, parent_kind, parent_id, rkey, data, rev, created, updated)
		 WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < %d)
		 SELECT 'bench', 'registration', rid, 'course', cid, lid, CAST(%s AS BLOB), 1, 1700000000000000 + i*1000, 1700000000000000 + i*1000
		 FROM (SELECT i, printf('reg-%%07d', i) AS rid, printf('course-%%03d', i %% 100) AS cid, printf('learner-%%06d', i %% 200000) AS lid FROM seq)`, n-1, data),
		`ANALYZE`,
	}
}

// measure runs benchQueries GETs of path(i) from benchClients goroutines and returns each
// request's latency; any status but 200 fails the benchmark.
func measure(b *testing.B, base string, path func(i int) string) []time.Duration {
	eng := base + "/engine/api/v1/" + servertest.BenchTenant
	out := make([]time.Duration, servertest.BenchQueries)
	var wg sync.WaitGroup
	var failed sync.Once
	for c := 0; c < servertest.BenchClients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := c; i < servertest.BenchQueries; i += servertest.BenchClients {
				req, _ := http.NewRequest("GET", eng+path(i), nil)
				req.SetBasicAuth(servertest.RootUser, servertest.RootPass)
				t0 := time.Now()
				r, err := http.DefaultClient.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				out[i] = time.Since(t0)
				if err != nil || r.StatusCode != 200 {
					failed.Do(func() { b.Errorf("GET %s: %v %v", path(i), err, r) })
				}
			}
		}(c)
	}
	wg.Wait()
	return out
}
