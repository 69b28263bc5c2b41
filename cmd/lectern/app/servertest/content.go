package servertest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// KitchenHTML is a small HTML document about cooking.
const KitchenHTML = `<!DOCTYPE html>
<html><head><title>Kitchen Safety Basics</title></head><body>
<h1>Kitchen Safety</h1>
<h2>Knives</h2><p>Always cut away from your body. Keep knives sharp, because a dull knife slips.</p>
<h2>Baking</h2><p>Bake the carrot cake at 180 degrees. Let the cake cool before icing it.</p>
</body></html>`

// GardenMarkdown is a small Markdown document about gardening.
const GardenMarkdown = `# Gardening Guide

## Planting

Plant carrots in loose soil in early spring. The gardener waters the seedlings daily.

## Harvest

Harvest carrots when the roots are as thick as a finger.
`

// VolcanoVTT is a small WebVTT transcript about volcanoes.
const VolcanoVTT = `WEBVTT

00:00:01.000 --> 00:00:05.000
Welcome to this lecture about volcanoes.

00:00:40.000 --> 00:00:46.000
Molten lava flows down the mountain after an eruption and cools into basalt.
`

// TestModelDir returns the embedding model for semantic tests: LECTERN_TEST_MODEL_DIR (which
// scripts/test.sh exports), else the default install when present. In CI a missing model
// fails the test; locally the semantic checks are skipped.
func TestModelDir(t *testing.T) (string, bool) {
	if d := os.Getenv("LECTERN_TEST_MODEL_DIR"); d != "" {
		return d, true
	}
	if os.Getenv("CI") != "" {
		t.Fatal("LECTERN_TEST_MODEL_DIR is not set: CI needs the embedding model (scripts/install-model.sh)")
	}
	d := onnx.DefaultModelDir(testenv.CacheDir())
	if _, err := os.Stat(filepath.Join(d, onnx.ManifestFile)); err == nil {
		return d, true
	}
	return "", false
}

// ForEachModeWithModel is forEachMode with the embedding model configured.
func ForEachModeWithModel(t *testing.T, modelDir string, f func(t *testing.T, e *Env)) {
	for name, cfg := range Modes(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg(t)
			c.ModelDir = modelDir
			f(t, Start(t, c))
		})
	}
}

// UploadContent posts a file to POST /api/v1/content.
func (e *Env) UploadContent(a Auth, tenantID, query string, body []byte, filename string) Resp {
	e.T.Helper()
	form, ct := MultipartFile(filename, body)
	headers := []string{"Content-Type", ct}
	if tenantID != "" {
		headers = append(headers, "tenant_id", tenantID)
	}
	return e.Do("POST", "/api/v1/content?"+query, a, form, headers...)
}

// JobRead is a content service job as the jobs API shows it.
type JobRead struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Status  string         `json:"status"`
	Results map[string]any `json:"results"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Warnings []string `json:"warnings"`
	Created  string   `json:"create_dt"`
	Updated  string   `json:"update_dt"`
}

// WaitContentJob checks the 202 JobRead and polls the job until it ends.
func (e *Env) WaitContentJob(tenantID string, r Resp) JobRead {
	e.T.Helper()
	return WaitServiceJob(e, tenantID, r, "CONTENT_IMPORT")
}

// WaitServiceJob checks that r is the 202 JobRead of a new content-service job of the type
// and polls it until it ends (COMPLETED or FAILED).
func WaitServiceJob(e *Env, tenantID string, r Resp, jobType string) JobRead {
	e.T.Helper()
	e.Expect(r, 202, "start "+jobType)
	var j JobRead
	r.JSON(e.T, &j)
	if j.ID == "" || j.Type != jobType || j.Status != "PENDING" {
		e.T.Fatalf("%s answer: %s", jobType, r.Body)
	}
	Eventually(e.T, 90*time.Second, jobType+" job "+j.ID, func() bool {
		rr := e.Do("GET", "/api/v1/jobs/"+j.ID, Root, nil, "tenant_id", tenantID)
		e.Expect(rr, 200, "job status")
		j = JobRead{}
		rr.JSON(e.T, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})
	return j
}

// ImportContent imports a content file, waits for its job and returns the content's id and version.
func (e *Env) ImportContent(tenantID, query string, body []byte, filename string) (string, int) {
	e.T.Helper()
	j := e.WaitContentJob(tenantID, e.UploadContent(Root, tenantID, query, body, filename))
	if j.Status != "COMPLETED" || j.Error != nil {
		e.T.Fatalf("import of %s: %+v", filename, j)
	}
	id, _ := j.Results["content_id"].(string)
	v, _ := j.Results["version"].(float64)
	if id == "" || v < 1 || j.Warnings == nil || j.Created == "" || j.Updated == "" {
		e.T.Fatalf("import of %s: incomplete JobRead %+v", filename, j)
	}
	return id, int(v)
}

// search runs a search and returns the raw entries.
func (e *Env) SearchContent(tenantID string, params url.Values) []map[string]any {
	e.T.Helper()
	r := e.Do("GET", "/api/v1/content/search?"+params.Encode(), Root, nil, "tenant_id", tenantID)
	e.Expect(r, 200, "search "+params.Encode())
	var out []map[string]any
	r.JSON(e.T, &out)
	if out == nil {
		e.T.Fatalf("search %s: not an array: %s", params.Encode(), r.Body)
	}
	for _, h := range out {
		if h["tenant_id"] != tenantID {
			e.T.Fatalf("search %s: entry of another tenant: %v", params.Encode(), h)
		}
	}
	return out
}

// SQ builds query values from key, value pairs.
func SQ(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// TaxonomyForm builds a taxonomy upload; an empty value leaves its part out.
func TaxonomyForm(fileName, csv, col, id string) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if col != "" {
		mw.WriteField("csv_col_name", col)
	}
	if fileName != "" {
		part, _ := mw.CreateFormFile("taxonomy_csv", fileName)
		part.Write([]byte(csv))
	}
	if id != "" {
		mw.WriteField("taxonomy_id", id)
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// PostTaxonomy starts a taxonomy import job for tenantID.
func PostTaxonomy(e *Env, tenantID, fileName, csv, col, id string) Resp {
	e.T.Helper()
	body, ct := TaxonomyForm(fileName, csv, col, id)
	return e.Do("POST", "/api/v1/jobs/taxonomy", Root, body, "Content-Type", ct, "tenant_id", tenantID)
}

// ImportTaxonomy imports a taxonomy and waits for its job to complete.
func ImportTaxonomy(e *Env, tenantID, csv, col, id string) JobRead {
	e.T.Helper()
	j := WaitServiceJob(e, tenantID, PostTaxonomy(e, tenantID, "skills.csv", csv, col, id), "TAXONOMY_IMPORT")
	if j.Status != "COMPLETED" {
		e.T.Fatalf("taxonomy job ended %s: %+v", j.Status, j.Error)
	}
	return j
}

// ContentSetting reads a configuration setting of tenantID.
func ContentSetting(e *Env, tenantID, id string) Resp {
	e.T.Helper()
	return e.Do("GET", "/api/v1/app_management/configuration/"+id, Root, nil, "tenant_id", tenantID)
}

// PutContentSetting sets a configuration setting of tenantID.
func PutContentSetting(e *Env, tenantID, id, value string) Resp {
	e.T.Helper()
	return e.Do("PUT", "/api/v1/app_management/configuration/"+id, Root, map[string]any{"value": value}, "tenant_id", tenantID)
}

// Regenerate runs a FIELD_GENERATION job and waits for it.
func Regenerate(e *Env, tenantID, id string, v int, fields ...string) {
	e.T.Helper()
	r := e.Do("POST", "/api/v1/jobs/field_generation", Root, map[string]any{"content_id": id, "version": v, "fields": fields}, "tenant_id", tenantID)
	e.Expect(r, 202, "field generation")
	var j JobRead
	r.JSON(e.T, &j)
	if j.Type != "FIELD_GENERATION" || j.Status != "PENDING" {
		e.T.Fatalf("field generation answer: %s", r.Body)
	}
	Eventually(e.T, 90*time.Second, "field job "+j.ID, func() bool {
		rr := e.Do("GET", "/api/v1/jobs/"+j.ID, Root, nil, "tenant_id", tenantID)
		e.Expect(rr, 200, "job status")
		j = JobRead{}
		rr.JSON(e.T, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})
	if j.Status != "COMPLETED" || j.Results["content_id"] != id {
		e.T.Fatalf("field generation ended %+v", j)
	}
}

// GoldenSkills records the responses of the skills endpoints (TestResponseGolden); the
// Content "garden" version 1 is imported.
func GoldenSkills(t *testing.T, e *Env, g *GoldenRecorder, ten string) {
	th := []string{"tenant_id", ten}
	r := PostTaxonomy(e, ten, "skills.csv", "skill\nGardening\nWelding\n", "skill", "golden")
	e.Expect(r, 202, "taxonomy import")
	g.Vary(RawID(t, r.Body, "id"), "taxonomy-job")
	g.Record("job-taxonomy-pending", r)
	ImportTaxonomy(e, ten, "skill\nGardening\nWelding\n", "skill", "golden")
	e.Expect(PutContentSetting(e, ten, "GENERATION__SKILL_TAXONOMY", "golden"), 204, "set taxonomy")
	g.Record("content-setting", ContentSetting(e, ten, "GENERATION__SKILL_TAXONOMY"))
	r = e.Do("POST", "/api/v1/jobs/field_generation", Root, map[string]any{"content_id": "garden", "version": 1, "fields": []string{"SKILLS"}}, th...)
	e.Expect(r, 202, "field generation")
	g.Vary(RawID(t, r.Body, "id"), "field-job")
	g.Record("job-field-generation-pending", r)
	Regenerate(e, ten, "garden", 1, "SKILLS")
	g.Record("generated-field", e.Do("GET", "/api/v1/content/garden/versions/1/fields/SKILLS", Root, nil, th...))
}

// HookReceiver is a loopback webhook receiver: it records every request and answers 500 to the
// first failFirst ones, and 401 to requests whose Authorization differs from wantAuth (when set).
type HookReceiver struct {
	Srv       *httptest.Server
	Mu        sync.Mutex
	requests  []HookRequest
	FailFirst int
	WantAuth  func() string
}

// HookRequest is one request a HookReceiver got.
type HookRequest struct {
	Body   []byte
	Header http.Header
	status int
}

// NewHookReceiver starts a HookReceiver that fails its first failFirst requests; the test's end stops it.
func NewHookReceiver(t *testing.T, failFirst int) *HookReceiver {
	h := &HookReceiver{FailFirst: failFirst}
	h.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.Mu.Lock()
		defer h.Mu.Unlock()
		status := http.StatusNoContent
		switch {
		case h.WantAuth != nil && r.Header.Get("Authorization") != h.WantAuth():
			status = http.StatusUnauthorized
		case len(h.requests) < h.FailFirst:
			status = http.StatusInternalServerError
		}
		h.requests = append(h.requests, HookRequest{Body: b, Header: r.Header.Clone(), status: status})
		w.WriteHeader(status)
	}))
	t.Cleanup(h.Srv.Close)
	return h
}

// Delivered returns the requests the receiver accepted.
func (h *HookReceiver) Delivered() []HookRequest {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	var out []HookRequest
	for _, r := range h.requests {
		if r.status/100 == 2 {
			out = append(out, r)
		}
	}
	return out
}

// All returns the requests received so far.
func (h *HookReceiver) All() []HookRequest {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	return append([]HookRequest(nil), h.requests...)
}

// HookMessage is the envelope of a subscription's webhook message.
type HookMessage struct {
	TenantID       string          `json:"tenant_id"`
	SubscriptionID string          `json:"subscription_id"`
	Topic          string          `json:"topic"`
	Body           json.RawMessage `json:"body"`
	MessageID      string          `json:"message_id"`
	Timestamp      time.Time       `json:"timestamp"`
	BodyVersion    string          `json:"body_version"`
	MessageVersion string          `json:"message_version"`
}

// Deliveries reads a subscription's delivery log.
func (e *Env) Deliveries(tenantID, subID string) []struct {
	MessageID string `json:"message_id"`
	Attempt   int    `json:"attempt"`
	Time      string `json:"attempt_dt"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Final     bool   `json:"final"`
} {
	e.T.Helper()
	r := e.Do("GET", "/api/v1/app_management/subscriptions/"+subID+"/deliveries", Root, nil, "tenant_id", tenantID)
	e.Expect(r, 200, "delivery log")
	var l struct {
		Deliveries []struct {
			MessageID string `json:"message_id"`
			Attempt   int    `json:"attempt"`
			Time      string `json:"attempt_dt"`
			Status    int    `json:"status"`
			Error     string `json:"error"`
			Final     bool   `json:"final"`
		} `json:"deliveries"`
	}
	r.JSON(e.T, &l)
	return l.Deliveries
}

// MessageID is the message_id of a webhook message body.
func MessageID(t *testing.T, body []byte) string {
	t.Helper()
	var m HookMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("message: %s", body)
	}
	return m.MessageID
}
