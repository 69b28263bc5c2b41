package servertest

import (
	"context"
	"log/slog"
	"sync"
)

// LogCapture keeps the records an app logs, so a test can wait for an event the API does
// not show (such as a post-back given up).
type LogCapture struct {
	mu      sync.Mutex
	records []CapturedRecord
}

// CapturedRecord is one log record: its message and its attributes as text.
type CapturedRecord struct {
	msg   string
	attrs map[string]string
}

// Attr is the record's attribute k as text ("" when it has none).
func (r CapturedRecord) Attr(k string) string { return r.attrs[k] }

// tee returns a handler that keeps every record and passes it on to next.
func (l *LogCapture) tee(next slog.Handler) slog.Handler { return &CaptureHandler{l: l, next: next} }

// Find returns the records with message msg whose attributes include every key/value of kv.
func (l *LogCapture) Find(msg string, kv ...string) []CapturedRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []CapturedRecord
	for _, r := range l.records {
		ok := r.msg == msg
		for i := 0; ok && i+1 < len(kv); i += 2 {
			ok = r.attrs[kv[i]] == kv[i+1]
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// CaptureHandler is the slog.Handler of LogCapture.tee.
type CaptureHandler struct {
	l     *LogCapture
	next  slog.Handler
	attrs []slog.Attr
}

// Enabled keeps every level.
func (h *CaptureHandler) Enabled(ctx context.Context, lv slog.Level) bool { return true }

// Handle keeps r and passes it on.
func (h *CaptureHandler) Handle(ctx context.Context, r slog.Record) error {
	c := CapturedRecord{msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		c.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		c.attrs[a.Key] = a.Value.String()
		return true
	})
	h.l.mu.Lock()
	h.l.records = append(h.l.records, c)
	h.l.mu.Unlock()
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *CaptureHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &CaptureHandler{l: h.l, next: h.next.WithAttrs(attrs), attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

// WithGroup passes the group on; kept records are not grouped.
func (h *CaptureHandler) WithGroup(name string) slog.Handler {
	return &CaptureHandler{l: h.l, next: h.next.WithGroup(name), attrs: h.attrs}
}
