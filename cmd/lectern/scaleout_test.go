package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/testenv"
)

// scaleContent is the content set of TestScaleOut: 50 small documents, text and HTML in
// turn. Document i holds the word scaleWord(i%5) 1+i/5 times and filler words unique to it,
// 30 words in all, so a one-word search for scaleWord(k) ranks its ten documents by term
// frequency alone at equal length: no ties, and an order that does not depend on the
// index's document statistics (which a re-delivered index write changes: the overwritten
// chunk stays in the segment as a deleted document until a merge).
func scaleContent() (names []string, docs [][]byte, titles []string) {
	for i := range 50 {
		words := make([]string, 0, 30)
		for range 1 + i/5 {
			words = append(words, scaleWord(i%5))
		}
		for j := 0; len(words) < 30; j++ {
			words = append(words, "fill"+letters(i)+letters(j))
		}
		title := "Scale document " + letters(i)
		body := strings.Join(words, " ")
		if i%2 == 0 {
			names = append(names, fmt.Sprintf("scale-%02d.txt", i))
			docs = append(docs, []byte(title+"\n\n"+body+".\n"))
		} else {
			names = append(names, fmt.Sprintf("scale-%02d.html", i))
			docs = append(docs, []byte("<html><head><title>"+title+"</title></head><body><p>"+body+".</p></body></html>"))
		}
		titles = append(titles, title)
	}
	return names, docs, titles
}

// scaleWord is the k-th search word of the set (made-up words: no stemming surprises).
func scaleWord(k int) string {
	return []string{"quorvax", "bellumine", "tessarok", "glimmerath", "vandoquil"}[k]
}

// letters spells n in base 26 with the letters a-z (a word the analyzers keep whole).
func letters(n int) string {
	s := string(rune('a' + n%26))
	for n /= 26; n > 0; n /= 26 {
		s = string(rune('a'+n%26)) + s
	}
	return s
}

// scormZip is a one-SCO SCORM 1.2 package titled title.
func scormZip(t *testing.T, title string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"imsmanifest.xml": `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.scale" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>` + title + `</title>
    <item identifier="i1" identifierref="r1"><title>` + title + ` lesson</title></item></organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="index.html"><file href="index.html"/></resource></resources>
</manifest>`,
		"index.html": "<html><body>" + title + "</body></html>",
	} {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(f, body)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// holdProxy is a reverse proxy in front of a backend for one process. Once armed, the first
// request matching match is forwarded, its response read, and then held unanswered: the
// backend has done the work, the process waits for the acknowledgement. held is closed at
// that moment, so the test kills the process while its task is demonstrably in flight.
type holdProxy struct {
	srv     *httptest.Server
	match   func(*http.Request) bool
	mu      sync.Mutex
	armed   bool
	held    chan struct{}
	release chan struct{}
	what    string
}

func newHoldProxy(t *testing.T, backend string, match func(*http.Request) bool) *holdProxy {
	t.Helper()
	if !strings.Contains(backend, "://") {
		backend = "http://" + backend // LECTERN_S3_ENDPOINT is host:port
	}
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host // S3 signs the Host header the client saw
	}}
	p := &holdProxy{match: match, held: make(chan struct{}), release: make(chan struct{})}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		hold := p.armed && match(r)
		if hold {
			p.armed = false
			p.what = r.Method + " " + r.URL.Path
		}
		p.mu.Unlock()
		if !hold {
			rp.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		close(p.held)
		<-p.release
	}))
	t.Cleanup(func() {
		p.unblock()
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

func (p *holdProxy) arm() { p.mu.Lock(); p.armed = true; p.mu.Unlock() }

func (p *holdProxy) unblock() {
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

// scaleClient talks to one deployment as root in tenant "scale".
type scaleClient struct {
	t    *testing.T
	base string
}

func (c scaleClient) do(method, path, ct string, body []byte) (int, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	req.SetBasicAuth("root", "start-together")
	req.Header.Set("tenant_id", "scale")
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

func multipartBody(name string, data []byte) ([]byte, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	return body.Bytes(), mw.FormDataContentType()
}

// scaleImport is what one deployment was given: content job ids by document, course import
// job ids by course.
type scaleImport struct {
	contentJobs []string
	courseJobs  []string
}

// importAll creates tenant scale and posts the 50 documents and 10 courses, interleaved
// (a course after every fifth document).
func (c scaleClient) importAll(names []string, docs [][]byte) scaleImport {
	c.t.Helper()
	if st, raw := c.do("POST", "/api/v1/app_management/tenants", "application/json", []byte(`{"tenant_id":"scale"}`)); st != 201 {
		c.t.Fatalf("create tenant: %d %s", st, raw)
	}
	var imp scaleImport
	for i := range docs {
		body, ct := multipartBody(names[i], docs[i])
		st, raw := c.do("POST", "/api/v1/content", ct, body)
		var j struct{ ID string }
		if st != 202 || json.Unmarshal(raw, &j) != nil || j.ID == "" {
			c.t.Fatalf("post %s: %d %s", names[i], st, raw)
		}
		imp.contentJobs = append(imp.contentJobs, j.ID)
		if i%5 == 4 {
			k := len(imp.courseJobs)
			body, ct := multipartBody("course.zip", scormZip(c.t, "Scale course "+letters(k)))
			st, raw := c.do("POST", fmt.Sprintf("/engine/api/v1/scale/courses/importJobs?course=scale-course-%02d", k), ct, body)
			var r struct{ Result string }
			if st != 200 || json.Unmarshal(raw, &r) != nil || r.Result == "" {
				c.t.Fatalf("import course %d: %d %s", k, st, raw)
			}
			imp.courseJobs = append(imp.courseJobs, r.Result)
		}
	}
	return imp
}

// waitAll polls every job until it ended, within d; a FAILED or ERROR job fails the test. It
// returns the content id and version of each document.
func (c scaleClient) waitAll(imp scaleImport, d time.Duration, logs func() string) (ids []string, versions []int) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	ids, versions = make([]string, len(imp.contentJobs)), make([]int, len(imp.contentJobs))
	for i, id := range imp.contentJobs {
		for {
			st, raw := c.do("GET", "/api/v1/jobs/"+id, "", nil)
			var j struct {
				Status  string
				Results struct {
					ContentID string `json:"content_id"`
					Version   int    `json:"version"`
				}
			}
			if st != 200 || json.Unmarshal(raw, &j) != nil {
				c.t.Fatalf("job %s: %d %s", id, st, raw)
			}
			if j.Status == "COMPLETED" {
				ids[i], versions[i] = j.Results.ContentID, j.Results.Version
				break
			}
			if j.Status == "FAILED" {
				c.t.Fatalf("content job %d failed: %s", i, raw)
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("content job %d not COMPLETED within %v: %s\n%s", i, d, raw, logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for k, id := range imp.courseJobs {
		for {
			st, raw := c.do("GET", "/engine/api/v1/scale/courses/importJobs/"+id, "", nil)
			var r struct{ Status string }
			if st != 200 || json.Unmarshal(raw, &r) != nil {
				c.t.Fatalf("course import job %s: %d %s", id, st, raw)
			}
			if r.Status == "COMPLETE" {
				break
			}
			if r.Status == "ERROR" {
				c.t.Fatalf("course import %d failed: %s", k, raw)
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("course import %d not COMPLETE within %v: %s\n%s", k, d, raw, logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return ids, versions
}

// search runs one search and returns each result as "document index@version" (content ids
// differ between deployments; idx maps them back to the inputs).
func (c scaleClient) search(query string, idx map[string]int) []string {
	c.t.Helper()
	st, raw := c.do("GET", "/api/v1/content/search?"+query, "", nil)
	var res []struct {
		ContentID string `json:"content_id"`
		Version   int    `json:"version"`
	}
	if st != 200 || json.Unmarshal(raw, &res) != nil {
		c.t.Fatalf("search %s: %d %s", query, st, raw)
	}
	out := make([]string, 0, len(res))
	for _, r := range res {
		i, ok := idx[r.ContentID]
		if !ok {
			c.t.Fatalf("search %s: unknown content id %s", query, r.ContentID)
		}
		out = append(out, fmt.Sprintf("%d@%d", i, r.Version))
	}
	return out
}

// courseIDs returns the ids of the tenant's courses, sorted.
func (c scaleClient) courseIDs() []string {
	c.t.Helper()
	st, raw := c.do("GET", "/engine/api/v1/scale/courses", "", nil)
	var res struct {
		Courses []struct{ ID string }
	}
	if st != 200 || json.Unmarshal(raw, &res) != nil {
		c.t.Fatalf("list courses: %d %s", st, raw)
	}
	var ids []string
	for _, c := range res.Courses {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// scaleQueries are the searches compared between the scaled-out and the single-process run:
// the five one-word lexical searches (ten documents each, ordered by term frequency), a
// unique filler word, a phrase, and TITLE field searches.
func scaleQueries(titles []string) []string {
	var qs []string
	for k := range 5 {
		qs = append(qs, "search_type=LEXICAL&term="+scaleWord(k))
	}
	qs = append(qs, "search_type=LEXICAL&term=fill"+letters(7)+letters(3),
		"search_type=LEXICAL&term="+url.QueryEscape(`"`+scaleWord(2)+" "+scaleWord(2)+`"`))
	for _, i := range []int{1, 13, 49} { // HTML documents: their <title> is the TITLE field
		qs = append(qs, "search_type=FIELD&field=TITLE&term="+url.QueryEscape(titles[i]))
	}
	return qs
}

// esCount counts the chunk documents of one content version in the deployment's indices.
func esCount(t *testing.T, esURL, prefix, id string, version int) int {
	t.Helper()
	res, err := http.Post(strings.TrimRight(esURL, "/")+"/"+prefix+"*/_refresh", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	q := fmt.Sprintf(`{"query":{"bool":{"filter":[{"term":{"content_id":%q}},{"term":{"version":%d}},{"term":{"kind":"chunk"}}]}}}`, id, version)
	res, err = http.Post(strings.TrimRight(esURL, "/")+"/"+prefix+"*/_count", "application/json", strings.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c struct{ Count int }
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || json.Unmarshal(raw, &c) != nil {
		t.Fatalf("_count: %d %s", res.StatusCode, raw)
	}
	return c.Count
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func waitRoles(t testing.TB, d time.Duration, procs ...*roleProc) {
	t.Helper()
	for _, p := range procs {
		select {
		case <-p.ready:
		case <-p.exited:
			t.Fatalf("the %s process exited during start-up (%v):\n%s", p.role, p.err, p.output())
		case <-time.After(d):
			t.Fatalf("the %s process did not start within %v:\n%s", p.role, d, p.output())
		}
	}
}

// TestScaleOut runs the roles apart, scaled out, on loopback against one PostgreSQL, Redis,
// MinIO and Elasticsearch: one serve, two worker and three indexer processes. 50 documents and
// 10 courses are imported; one worker is killed (SIGKILL) while MinIO has stored a blob it
// wrote but before the worker saw the answer, and one indexer while Elasticsearch has taken
// its index write but before it saw the answer (per-process proxies in front of the backends
// hold that one response). Every job then ends COMPLETED (the dead processes' tasks are
// redelivered once their asynq lease expired), every content version is indexed exactly once
// (search API and Elasticsearch _count), nothing is missing, and the searches answer as a
// single `lectern all` process on fresh backends does over the same inputs: same documents in
// the same order. Ranks, not scores, are compared: the queries are built so that their order
// depends on term frequency only, while BM25 scores move with the index statistics, which
// the killed indexer's repeated write changes (a deleted copy counts until a merge).
//
// Without the embedding model (LECTERN_MODEL_DIR empty): semantic search is not compared,
// and loading the model in six processes on two cores would dominate the run.
func TestScaleOut(t *testing.T) {
	testenv.External(t, "LECTERN_TEST_POSTGRES_URL")
	bin := buildBinary(t)
	names, docs, titles := scaleContent()

	// The single-process run, on its own fresh backends, side by side with the scaled one
	// (which mostly waits for the lease expiry of its dead processes).
	singleEnv := distributedEnv(t)
	singleAddr := freeAddr(t)
	allProc := startRole(t, bin, "all", append(singleEnv, "LECTERN_ADDR="+singleAddr))

	env := distributedEnv(t)
	addr := freeAddr(t)
	env = append(env, "LECTERN_ADDR="+addr)
	s3Proxy := newHoldProxy(t, envValue(env, "LECTERN_S3_ENDPOINT"), func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/")
	})
	esProxy := newHoldProxy(t, envValue(env, "LECTERN_ELASTICSEARCH_URL"), func(r *http.Request) bool {
		return (r.Method == http.MethodPost || r.Method == http.MethodPut) && strings.Contains(r.URL.Path, "_bulk")
	})
	serve := startRole(t, bin, "serve", env)
	victimWorker := startRole(t, bin, "worker", append(slices.Clone(env), "LECTERN_S3_ENDPOINT="+strings.TrimPrefix(s3Proxy.srv.URL, "http://")))
	worker2 := startRole(t, bin, "worker", env)
	victimIndexer := startRole(t, bin, "indexer", append(slices.Clone(env), "LECTERN_ELASTICSEARCH_URL="+esProxy.srv.URL))
	indexer2 := startRole(t, bin, "indexer", env)
	indexer3 := startRole(t, bin, "indexer", env)
	procs := []*roleProc{serve, victimWorker, worker2, victimIndexer, indexer2, indexer3}
	logs := func() string {
		var sb strings.Builder
		for _, p := range procs {
			fmt.Fprintf(&sb, "--- %s (pid %d)\n%s", p.role, p.cmd.Process.Pid, tail(p.output(), 6000))
		}
		return sb.String()
	}
	waitRoles(t, 90*time.Second, append([]*roleProc{allProc}, procs...)...)
	waitHealthy(t, addr)
	waitHealthy(t, singleAddr)

	sc := scaleClient{t, "http://" + singleAddr}
	singleImp := sc.importAll(names, docs)

	c := scaleClient{t, "http://" + addr}
	s3Proxy.arm()
	esProxy.arm()
	imp := c.importAll(names, docs)
	for _, v := range []struct {
		p     *roleProc
		proxy *holdProxy
	}{{victimWorker, s3Proxy}, {victimIndexer, esProxy}} {
		select {
		case <-v.proxy.held:
		case <-time.After(60 * time.Second):
			t.Fatalf("the %s never wrote to its backend while jobs were in flight\n%s", v.p.role, logs())
		}
		_ = v.p.cmd.Process.Signal(syscall.SIGKILL)
		<-v.p.exited
		v.proxy.unblock()
		t.Logf("killed the %s (pid %d) with its answer to %s held", v.p.role, v.p.cmd.Process.Pid, v.proxy.what)
	}
	// asynq redelivers a dead process's task 60-120 s after the kill (asynqq package doc);
	// the margin is for a loaded machine.
	ids, versions := c.waitAll(imp, 170*time.Second, logs)

	idx := map[string]int{}
	for i, id := range ids {
		if _, dup := idx[id]; dup {
			t.Fatalf("two documents got content id %s", id)
		}
		idx[id] = i
	}
	esURL, prefix := envValue(env, "LECTERN_ELASTICSEARCH_URL"), envValue(env, "LECTERN_ELASTICSEARCH_INDEX_PREFIX")
	for i, id := range ids {
		// The unique filler word of document i finds it, once.
		got := c.search("search_type=LEXICAL&content_id="+id+fmt.Sprintf("&version=%d", versions[i])+"&term=fill"+letters(i)+letters(0), idx)
		if want := []string{fmt.Sprintf("%d@%d", i, versions[i])}; !slices.Equal(got, want) {
			t.Errorf("document %d (%s v%d): search finds %v, want %v", i, id, versions[i], got, want)
		}
		if n := esCount(t, esURL, prefix, id, versions[i]); n != 1 {
			t.Errorf("document %d (%s v%d): %d chunk documents in Elasticsearch, want 1", i, id, versions[i], n)
		}
	}
	courses := c.courseIDs()
	if len(courses) != 10 {
		t.Errorf("courses after the import: %v, want 10", courses)
	}

	singleIDs, _ := sc.waitAll(singleImp, time.Minute, allProc.output)
	singleIdx := map[string]int{}
	for i, id := range singleIDs {
		singleIdx[id] = i
	}
	if singleCourses := sc.courseIDs(); !slices.Equal(courses, singleCourses) {
		t.Errorf("courses: scaled %v, single process %v", courses, singleCourses)
	}
	for _, q := range scaleQueries(titles) {
		got, want := c.search(q, idx), sc.search(q, singleIdx)
		if len(want) == 0 {
			t.Errorf("%s: the single-process run finds nothing; the comparison would prove nothing", q)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\nscaled out     %v\nsingle process %v", q, got, want)
		}
	}
	for _, p := range procs {
		if p == victimWorker || p == victimIndexer {
			continue
		}
		select {
		case <-p.exited:
			t.Errorf("the %s process exited (%v)", p.role, p.err)
		default:
		}
	}
}
