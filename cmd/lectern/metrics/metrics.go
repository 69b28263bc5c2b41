// Package metrics is Lectern's Prometheus instrumentation: one Metrics value over one
// prometheus.Registry that cmd/lectern/app creates and hands to the pieces it wires. It sits
// above everything it measures and imports none of it, so that only cmd/ imports Prometheus
// (internal/layering keeps it so): the HTTP layer takes the server.Metrics interface (and
// hands lrs/ingest's OnStored hook to it), and the packages below expose what they count as
// func hooks declared in their own package (queue.Observe, embed.Observe, the delivering
// handlers' Outcome fields), which the app binds to the methods here.
//
// Every metric name is exported as a constant: the Grafana dashboard in compose/grafana reads
// exactly these names, and a test checks that it names nothing else.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The exported metric names.
const (
	HTTPRequestDuration = "lectern_http_request_duration_seconds"
	JobDuration         = "lectern_job_duration_seconds"
	QueueDepth          = "lectern_queue_depth"
	IndexDocuments      = "lectern_index_documents"
	IndexSizeBytes      = "lectern_index_size_bytes"
	StatementsStored    = "lectern_statements_stored_total"
	EmbeddingChunks     = "lectern_embedding_chunks_total"
	EmbeddingDuration   = "lectern_embedding_duration_seconds"
	OutboundDeliveries  = "lectern_outbound_deliveries_total"
	ScrapeSourceErrors  = "lectern_scrape_source_errors_total"
)

// Names lists every metric this package exports (the Go and process collectors' go_* and
// process_* series come beside them).
func Names() []string {
	return []string{HTTPRequestDuration, JobDuration, QueueDepth, IndexDocuments, IndexSizeBytes,
		StatementsStored, EmbeddingChunks, EmbeddingDuration, OutboundDeliveries, ScrapeSourceErrors}
}

// Job outcomes (the outcome label of lectern_job_duration_seconds): the values
// workers/queue.Observe reports (queue.OutcomeCompleted, …), which a test pins.
const (
	// JobCompleted: the handler returned nil.
	JobCompleted = "completed"
	// JobRetried: the handler failed and the queue will try the task again (also an outage).
	JobRetried = "retried"
	// JobFailed: the handler failed for good (SkipRetry or its last attempt).
	JobFailed = "failed"
)

// Outbound delivery outcomes (the outcome label of lectern_outbound_deliveries_total).
const (
	// OutboundDelivered: the receiver answered 2xx.
	OutboundDelivered = "delivered"
	// OutboundRejected: the receiver answered another status.
	OutboundRejected = "rejected"
	// OutboundFailed: no answer (connection refused, timeout, TLS).
	OutboundFailed = "failed"
	// OutboundRefused: the outbound policy refused the destination; nothing was sent.
	OutboundRefused = "refused"
)

// SourceTimeout bounds the scrape-time reads (queue depth, index statistics) together, so a
// slow backend makes a scrape incomplete, never slow.
const SourceTimeout = 2 * time.Second

// Metrics holds Lectern's collectors. Its methods are safe for concurrent use; a nil
// *Metrics measures nothing, so pieces built without one (tests, tools) need no checks.
type Metrics struct {
	reg      *prometheus.Registry
	log      *slog.Logger
	http     *prometheus.HistogramVec
	jobs     *prometheus.HistogramVec
	stmts    prometheus.Counter
	chunks   prometheus.Counter
	embedDur prometheus.Histogram
	outbound *prometheus.CounterVec
	sources  *sources
}

// New registers Lectern's collectors (and the Go runtime and process collectors) on reg.
func New(reg *prometheus.Registry, log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.Default()
	}
	m := &Metrics{
		reg: reg,
		log: log,
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: HTTPRequestDuration,
			Help: "HTTP request latency by method, route pattern (not the raw path) and status code."},
			[]string{"method", "route", "status"}),
		jobs: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: JobDuration,
			Help:    "Queue job handler run time by task type and outcome (completed, retried, failed).",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}},
			[]string{"type", "outcome"}),
		stmts: prometheus.NewCounter(prometheus.CounterOpts{Name: StatementsStored,
			Help: "xAPI statements stored by the statement-write use case (client writes and converted runtime data)."}),
		chunks: prometheus.NewCounter(prometheus.CounterOpts{Name: EmbeddingChunks,
			Help: "Content chunks embedded by the model (vector cache hits are not counted)."}),
		embedDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: EmbeddingDuration,
			Help:    "Time of one embedding call of the content pipeline (a batch of chunks).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}),
		outbound: prometheus.NewCounterVec(prometheus.CounterOpts{Name: OutboundDeliveries,
			Help: "Outbound deliveries by kind (postback, forward, webhook) and outcome (delivered, rejected, failed, refused)."},
			[]string{"kind", "outcome"}),
	}
	m.sources = &sources{log: log, errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: ScrapeSourceErrors,
		Help: "Failed reads of a scrape-time source (queue depth, index statistics), by source."}, []string{"source"})}
	// The error counter is sent by the sources' own Collect, after this scrape's reads: as a
	// collector of its own the registry could gather it before the reads that count.
	reg.MustRegister(m.http, m.jobs, m.stmts, m.chunks, m.embedDur, m.outbound, m.sources,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError, Timeout: 2 * SourceTimeout})
}

// ObserveRequest records one HTTP request; route is the matched route pattern.
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.http.WithLabelValues(method, route, strconv.Itoa(status)).Observe(d.Seconds())
}

// StatementsStored counts n statements stored.
func (m *Metrics) StatementsStored(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.stmts.Add(float64(n))
}

// Outbound counts one outbound delivery attempt of kind ("postback", "forward", "webhook")
// with its outcome (OutboundDelivered, OutboundRejected, OutboundFailed, OutboundRefused).
func (m *Metrics) Outbound(kind, outcome string) {
	if m == nil {
		return
	}
	m.outbound.WithLabelValues(kind, outcome).Inc()
}

// OutboundHook returns Outbound bound to one kind, the func hook the delivering packages
// (workers/postbackjob, lrs/forward) take; nil when m is nil.
func (m *Metrics) OutboundHook(kind string) func(outcome string) {
	if m == nil {
		return nil
	}
	return func(outcome string) { m.Outbound(kind, outcome) }
}

// JobRun records one run of a queue handler of taskType: how long it took and its outcome
// (JobCompleted, JobRetried, JobFailed).
func (m *Metrics) JobRun(taskType, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.jobs.WithLabelValues(taskType, outcome).Observe(d.Seconds())
}

// JobHook returns JobRun bound to one task type, the hook queue.Observe takes where the app
// registers a handler (the one place every handler of both queue backends passes); nil when
// m is nil.
func (m *Metrics) JobHook(taskType string) func(outcome string, d time.Duration) {
	if m == nil {
		return nil
	}
	return func(outcome string, d time.Duration) { m.JobRun(taskType, outcome, d) }
}

// Embedded records one embedding call of the content pipeline: its run time and the vectors
// it computed (none when it failed), as embed.Observe reports them. Observe the bare model,
// below any vector cache, so that cache hits are not counted.
func (m *Metrics) Embedded(vectors int, d time.Duration) {
	if m == nil {
		return
	}
	m.embedDur.Observe(d.Seconds())
	if vectors > 0 {
		m.chunks.Add(float64(vectors))
	}
}

// QueueDepth adds a scrape-time source of lectern_queue_depth{queue=name}: pending reports
// the queue's pending task count.
func (m *Metrics) QueueDepth(name string, pending func(ctx context.Context) (int, error)) {
	if m == nil {
		return
	}
	desc := prometheus.NewDesc(QueueDepth, "Tasks waiting in a queue for a worker (pending, not scheduled or retrying), read on scrape.",
		[]string{"queue"}, nil)
	m.sources.add("queue:"+name, desc, func(ctx context.Context, ch chan<- prometheus.Metric) error {
		n, err := pending(ctx)
		if err != nil {
			return err
		}
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), name)
		return nil
	})
}

// IndexStats adds a scrape-time source of lectern_index_documents and
// lectern_index_size_bytes for one index (index="content", "statements").
func (m *Metrics) IndexStats(name string, stats func(ctx context.Context) (docs, bytes int64, err error)) {
	if m == nil {
		return
	}
	docs := prometheus.NewDesc(IndexDocuments, "Documents in a search index (Bleve doc count; Elasticsearch _stats primaries docs.count), read on scrape.",
		[]string{"index"}, nil)
	size := prometheus.NewDesc(IndexSizeBytes, "Size of a search index (Bleve directory; Elasticsearch _stats primaries store.size_in_bytes), read on scrape.",
		[]string{"index"}, nil)
	m.sources.add("index:"+name, docs, func(ctx context.Context, ch chan<- prometheus.Metric) error {
		d, b, err := stats(ctx)
		if err != nil {
			return err
		}
		ch <- prometheus.MustNewConstMetric(docs, prometheus.GaugeValue, float64(d), name)
		ch <- prometheus.MustNewConstMetric(size, prometheus.GaugeValue, float64(b), name)
		return nil
	}, size)
}

// sources is a collector reading its sources concurrently on each scrape, all within
// SourceTimeout; a source that fails or is late is left out of that scrape and counted in
// lectern_scrape_source_errors_total.
type sources struct {
	log  *slog.Logger
	errs *prometheus.CounterVec
	mu   sync.Mutex
	list []source
}

type source struct {
	name  string
	descs []*prometheus.Desc
	read  func(ctx context.Context, ch chan<- prometheus.Metric) error
}

func (s *sources) add(name string, d *prometheus.Desc, read func(ctx context.Context, ch chan<- prometheus.Metric) error, more ...*prometheus.Desc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, source{name: name, descs: append([]*prometheus.Desc{d}, more...), read: read})
}

func (s *sources) snapshot() []source {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]source(nil), s.list...)
}

// Describe implements prometheus.Collector. Sources are added after registration, so the
// collector is unchecked: it describes nothing and the registry checks what it collects.
func (s *sources) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (s *sources) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), SourceTimeout)
	defer cancel()
	defer s.errs.Collect(ch)
	list := s.snapshot()
	type result struct {
		name string
		ms   []prometheus.Metric
		err  error
	}
	results := make(chan result, len(list))
	for _, src := range list {
		go func() {
			// Each source writes to its own buffer: a late source's metrics are dropped
			// whole, never half-sent after Collect returned.
			buf := make(chan prometheus.Metric, 8)
			var ms []prometheus.Metric
			done := make(chan error, 1)
			go func() { done <- src.read(ctx, buf); close(buf) }()
			for m := range buf {
				ms = append(ms, m)
			}
			results <- result{src.name, ms, <-done}
		}()
	}
	for range list {
		select {
		case r := <-results:
			if r.err != nil {
				s.errs.WithLabelValues(r.name).Inc()
				s.log.Warn("metrics: scrape source failed", "source", r.name, "error", r.err)
				continue
			}
			for _, m := range r.ms {
				ch <- m
			}
		case <-ctx.Done():
			s.log.Warn("metrics: scrape sources late", "timeout", SourceTimeout)
			return
		}
	}
}
