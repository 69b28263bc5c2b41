package server_test

import (
	"context"
	"log/slog"
	"sync"
)

// logCapture keeps the records an app logs, so a test can wait for an event the API does
// not show (such as a post-back given up).
type logCapture struct {
	mu      sync.Mutex
	records []capturedRecord
}

// capturedRecord is one log record: its message and its attributes as text.
type capturedRecord struct {
	msg   string
	attrs map[string]string
}

// tee returns a handler that keeps every record and passes it on to next.
func (l *logCapture) tee(next slog.Handler) slog.Handler { return &captureHandler{l: l, next: next} }

// find returns the records with message msg whose attributes include every key/value of kv.
func (l *logCapture) find(msg string, kv ...string) []capturedRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []capturedRecord
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

type captureHandler struct {
	l     *logCapture
	next  slog.Handler
	attrs []slog.Attr
}

func (h *captureHandler) Enabled(ctx context.Context, lv slog.Level) bool { return true }

func (h *captureHandler) Handle(ctx context.Context, r slog.Record) error {
	c := capturedRecord{msg: r.Message, attrs: map[string]string{}}
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

func (h *captureHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &captureHandler{l: h.l, next: h.next.WithAttrs(attrs), attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *captureHandler) WithGroup(name string) slog.Handler {
	return &captureHandler{l: h.l, next: h.next.WithGroup(name), attrs: h.attrs}
}
