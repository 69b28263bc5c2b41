package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/lectern-lms/lectern/workers/queue"
)

// series is one gathered sample: its labels and its value (a histogram's sample count). The
// registry sorts samples by their label values, name by name.
type series struct {
	labels map[string]string
	value  float64
}

func gather(t *testing.T, reg *prometheus.Registry) map[string][]series {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]series{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			s := series{labels: map[string]string{}}
			for _, l := range m.Label {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				s.value = m.Counter.GetValue()
			case dto.MetricType_GAUGE:
				s.value = m.Gauge.GetValue()
			case dto.MetricType_HISTOGRAM:
				s.value = float64(m.Histogram.GetSampleCount())
			}
			out[mf.GetName()] = append(out[mf.GetName()], s)
		}
	}
	return out
}

// TestEveryMetric feeds each method once and pins what the registry then exports: every name
// in Names, with its label names and values, as the dashboard and the alerts read them.
func TestEveryMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.ObserveRequest("GET", "/engine/api/v1/:tenant/configuration", 200, time.Millisecond)
	m.StatementsStored(2)
	m.StatementsStored(0)
	m.OutboundHook("postback")(OutboundDelivered)
	m.Outbound("webhook", OutboundRefused)
	m.JobHook("course:import")(JobCompleted, time.Second)
	m.JobRun("content:index", JobRetried, time.Second)
	m.Embedded(3, time.Millisecond)
	m.Embedded(0, time.Millisecond)
	m.QueueDepth("default", func(context.Context) (int, error) { return 5, nil })
	m.IndexStats("content", func(context.Context) (int64, int64, error) { return 7, 1024, nil })
	m.IndexStats("statements", func(context.Context) (int64, int64, error) { return 0, 0, errors.New("down") })

	got := gather(t, reg)
	want := map[string][]series{
		HTTPRequestDuration: {{map[string]string{"method": "GET", "route": "/engine/api/v1/:tenant/configuration", "status": "200"}, 1}},
		StatementsStored:    {{map[string]string{}, 2}},
		OutboundDeliveries: {{map[string]string{"kind": "postback", "outcome": "delivered"}, 1},
			{map[string]string{"kind": "webhook", "outcome": "refused"}, 1}},
		JobDuration: {{map[string]string{"type": "course:import", "outcome": "completed"}, 1},
			{map[string]string{"type": "content:index", "outcome": "retried"}, 1}},
		EmbeddingChunks:    {{map[string]string{}, 3}},
		EmbeddingDuration:  {{map[string]string{}, 2}},
		QueueDepth:         {{map[string]string{"queue": "default"}, 5}},
		IndexDocuments:     {{map[string]string{"index": "content"}, 7}},
		IndexSizeBytes:     {{map[string]string{"index": "content"}, 1024}},
		ScrapeSourceErrors: {{map[string]string{"source": "index:statements"}, 1}},
	}
	if names := slices.Sorted(maps.Keys(want)); !slices.Equal(names, slices.Sorted(slices.Values(Names()))) {
		t.Fatalf("this test covers %v, Names() is %v", names, Names())
	}
	for name, w := range want {
		if g := got[name]; !slices.EqualFunc(g, w, func(a, b series) bool { return a.value == b.value && maps.Equal(a.labels, b.labels) }) {
			t.Errorf("%s: got %v, want %v", name, g, w)
		}
	}
	for name := range got {
		if !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") && !slices.Contains(Names(), name) {
			t.Errorf("%s is exported but not in Names()", name)
		}
	}
}

// TestJobOutcomesAreTheQueues: the outcome label takes the values queue.Observe reports.
func TestJobOutcomesAreTheQueues(t *testing.T) {
	for label, outcome := range map[string]string{JobCompleted: queue.OutcomeCompleted, JobRetried: queue.OutcomeRetried,
		JobFailed: queue.OutcomeFailed} {
		if label != outcome {
			t.Errorf("label %q, queue outcome %q", label, outcome)
		}
	}
}

// TestNilMeasuresNothing: pieces built without metrics call a nil *Metrics freely.
func TestNilMeasuresNothing(t *testing.T) {
	var m *Metrics
	m.ObserveRequest("GET", "/", 200, time.Second)
	m.StatementsStored(1)
	m.Outbound("forward", OutboundFailed)
	m.JobRun("t", JobFailed, time.Second)
	m.Embedded(1, time.Second)
	m.QueueDepth("default", nil)
	m.IndexStats("content", nil)
	if m.OutboundHook("forward") != nil || m.JobHook("t") != nil {
		t.Fatal("a nil *Metrics returned a hook")
	}
}

// TestGrafanaDashboardNamesExportedMetrics reads the dashboard in compose/grafana: every
// expression must name metrics this build exports, and every exported metric must be shown.
func TestGrafanaDashboardNamesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "compose", "grafana", "lectern-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	// A histogram is exported as <name>_bucket, _sum and _count.
	nameRE := regexp.MustCompile(`\blectern_[a-z_]+`)
	shown := map[string]bool{}
	exprs := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs++
			names := nameRE.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: expression %q names no lectern metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				if !slices.Contains(Names(), base) {
					t.Errorf("panel %q: %s is not an exported metric", p.Title, n)
				}
				shown[base] = true
			}
		}
	}
	if exprs == 0 {
		t.Fatal("the dashboard has no expressions")
	}
	for _, n := range Names() {
		if !shown[n] {
			t.Errorf("exported metric %s has no panel", n)
		}
	}
}
