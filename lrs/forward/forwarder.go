package forward

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// Config is the forwarding behaviour of one tenant (the TinCanStatementForward* settings).
type Config struct {
	// Sleep is how long a pair that had nothing (or less than a batch) to forward waits before
	// its source is polled again; it is also the first backoff after a failure.
	Sleep time.Duration
	// MaxBackoff caps the exponentially growing wait after consecutive failures.
	MaxBackoff time.Duration
	// Batch is the number of statements per POST.
	Batch int
	// Timeout bounds each request to the destination.
	Timeout time.Duration
}

// Doer sends HTTP requests: the outbound client, so destinations pass the SSRF policy.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Forwarder copies the statements of every enabled pair to its destination.
type Forwarder struct {
	Pairs      *Manager
	Statements statements.Store
	// Tenants lists the tenants whose pairs are forwarded.
	Tenants func(ctx context.Context) ([]string, error)
	// Config returns a tenant's forwarding settings.
	Config func(ctx context.Context, tenant string) (Config, error)
	Client Doer
	Logger *slog.Logger
	// Settle keeps the forwarder this far behind the store's clock, and behind its
	// ConsistentThrough: statements stored in the last Settle are left for a later poll. A
	// store whose writes become visible out of stored order (Elasticsearch: a Put stamps stored
	// before its documents are searchable) needs it, or a walk could pass a statement that
	// appears later below its position. Zero for a store that commits in stored order (SQLite).
	Settle time.Duration
	// ID names this forwarder in the pairs' leases: a random id per process when several
	// processes forward (distributed), a fixed one when only one can (embedded), so that a
	// restarted process takes its pairs back at once instead of waiting out its own lease.
	ID string
	// Now is the clock (time.Now when nil); tests move it to walk a backoff.
	Now func() time.Time
	// Tick is how often the pairs are scanned for due work (default 200ms).
	Tick time.Duration
	// Outcome, when set, is told the outcome of every POST to a destination: "delivered"
	// (2xx), "rejected" (another status, a 409 included), "failed" (no answer).
	Outcome func(outcome string)

	mu   sync.Mutex
	idle map[string]time.Time // pair key → not polled before
}

// Backoff is the wait after the n-th consecutive failure: sleep doubled n-1 times, capped.
func Backoff(n int, sleep, ceiling time.Duration) time.Duration {
	d := max(sleep, time.Millisecond)
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// Run forwards until ctx ends.
func (f *Forwarder) Run(ctx context.Context) {
	tick := f.Tick
	if tick <= 0 {
		tick = 200 * time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if err := f.Pass(ctx); err != nil && ctx.Err() == nil {
			f.log().Warn("statement forwarding pass failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (f *Forwarder) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Forwarder) log() *slog.Logger {
	if f.Logger == nil {
		return slog.Default()
	}
	return f.Logger
}

// Pass runs every due pair of every tenant once (a pair with a full batch keeps going
// until it has caught up or fails).
func (f *Forwarder) Pass(ctx context.Context) error {
	tenants, err := f.Tenants(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, tenant := range tenants {
		pairs, err := f.Pairs.List(ctx, tenant)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(pairs) == 0 {
			continue
		}
		var cfg Config
		for _, p := range pairs {
			if !p.Enabled || ctx.Err() != nil {
				continue
			}
			key := tenant + "\x00" + p.ID
			now := f.now()
			f.mu.Lock()
			notBefore := f.idle[key]
			f.mu.Unlock()
			if now.Before(notBefore) || now.Before(p.Status.NextAttempt) {
				continue
			}
			if cfg.Batch == 0 {
				if cfg, err = f.Config(ctx, tenant); err != nil {
					errs = append(errs, err)
					break
				}
			}
			wait := cfg.Sleep
			for {
				out, err := f.Step(ctx, p, cfg)
				if err != nil {
					errs = append(errs, err)
				}
				if out == HeldBack {
					// Statements wait only for the settle window, not a whole sleep.
					wait = min(wait, f.Settle)
				}
				if out != More || ctx.Err() != nil {
					break
				}
			}
			f.mu.Lock()
			if f.idle == nil {
				f.idle = map[string]time.Time{}
			}
			f.idle[key] = f.now().Add(wait)
			f.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// Outcome is what one Step left behind.
type Outcome int

// Step outcomes.
const (
	// Done: the pair caught up, failed (and backs off) or is not due.
	Done Outcome = iota
	// More: the batch was full; more statements may be waiting.
	More
	// HeldBack: statements newer than the settle window wait for it to pass.
	HeldBack
)

// Step forwards one batch of p (its password in clear, as Manager returns it). A
// destination failure is recorded in the pair's status with its backoff and is not
// returned as an error.
func (f *Forwarder) Step(ctx context.Context, p *Pair, cfg Config) (Outcome, error) {
	st, rec, err := f.Pairs.cursor(ctx, p.Tenant, p.ID)
	if err != nil {
		return Done, err
	}
	now := f.now()
	if now.Before(st.NextAttempt) {
		return Done, nil
	}
	// The lease: a pair another live forwarder holds is left to it. It lasts a request's
	// timeout and then some, and is renewed with every position write.
	lease := cfg.Timeout + 5*time.Second
	if st.Owner != f.ID && now.Before(st.LeaseUntil) {
		return Done, nil
	}
	if st.Owner != f.ID || st.LeaseUntil.Sub(now) < lease/2 {
		st.Owner, st.LeaseUntil = f.ID, now.Add(lease)
		if rec, err = f.Pairs.saveCursor(ctx, p.Tenant, p.ID, rec, st); err != nil || rec == nil {
			return Done, err
		}
	}
	q, err := ParseSource(p.SourceQuery)
	if err != nil {
		return Done, err
	}
	// Voided statements too: the destination gets each statement and its voider, and voids it.
	q.Tenant, q.Since, q.Ascending, q.IncludeVoided, q.Limit = p.Tenant, st.Position, true, true, max(cfg.Batch, 1)
	if !st.Position.IsZero() {
		// Since is exclusive; stored is unique per process but several processes writing one
		// Elasticsearch index can stamp the same instant. Start at the position itself and
		// drop the statements already forwarded there.
		q.Since = st.Position.Add(-time.Microsecond)
		q.Limit = min(q.Limit+len(st.AtPosition), statements.MaxLimit)
	}
	held := false
	page := &statements.Page{}
	if f.Settle > 0 {
		q.Until = time.Now().Add(-f.Settle) // the store's clock, not the test's
		// Nor past the store's watermark: statements stored up to it are searchable, so
		// a refresh that fell behind cannot make the walk pass one (Elasticsearch).
		ct, err := f.Statements.ConsistentThrough(ctx)
		if err != nil {
			return Done, err
		}
		if ct.Before(q.Until) {
			q.Until = ct
		}
	}
	if q.Until.IsZero() || q.Until.After(q.Since) {
		if page, err = f.Statements.Query(ctx, q); err != nil {
			return Done, err
		}
	}
	if len(page.Statements) < q.Limit && !q.Until.IsZero() {
		// Is anything stored after the window's edge? Then come back when it has settled
		// rather than after a whole sleep.
		newer := q
		newer.Since, newer.Until, newer.Limit = maxTime(q.Until, q.Since), time.Time{}, 1
		if len(page.Statements) > 0 {
			newer.Since = maxTime(newer.Since, page.Statements[len(page.Statements)-1].Stored)
		}
		if np, err := f.Statements.Query(ctx, newer); err == nil && len(np.Statements) > 0 {
			held = true
		}
	}
	full := len(page.Statements) == q.Limit
	batch := page.Statements[:0:0]
	for _, x := range page.Statements {
		if !(x.Stored.Equal(st.Position) && slices.Contains(st.AtPosition, x.ID)) {
			batch = append(batch, x)
		}
	}
	if n := max(cfg.Batch, 1); len(batch) > n {
		batch, full = batch[:n], true
	}
	if len(batch) == 0 {
		if full {
			// A whole page of statements already sent at one instant cannot happen (a batch
			// holds them all); do not spin on it.
			return Done, fmt.Errorf("forwarding pair %s: a page of %d statements at one stored instant", p.ID, len(page.Statements))
		}
		return outcome(false, held), nil
	}
	st.LastAttempt = f.now()
	if derr := f.deliver(ctx, p, cfg, batch); derr != nil {
		if ctx.Err() != nil {
			return Done, nil
		}
		st.Failures++
		st.LastError = derr.Error()
		st.NextAttempt = st.LastAttempt.Add(Backoff(st.Failures, cfg.Sleep, cfg.MaxBackoff))
		f.log().Warn("statement forwarding failed", "tenant", p.Tenant, "pair", p.ID,
			"failures", st.Failures, "next_attempt", st.NextAttempt, "error", derr)
		_, err := f.Pairs.saveCursor(ctx, p.Tenant, p.ID, rec, st)
		return Done, err
	}
	last := batch[len(batch)-1].Stored
	if !last.Equal(st.Position) {
		st.AtPosition = nil
	}
	for _, x := range batch {
		if x.Stored.Equal(last) {
			st.AtPosition = append(st.AtPosition, x.ID)
		}
	}
	st.Position = last
	st.Forwarded += int64(len(batch))
	st.Failures, st.LastError, st.NextAttempt = 0, "", time.Time{}
	st.LeaseUntil = f.now().Add(lease)
	moved, err := f.Pairs.saveCursor(ctx, p.Tenant, p.ID, rec, st)
	if err != nil || moved == nil {
		return Done, err
	}
	return outcome(full, held), nil
}

func outcome(full, held bool) Outcome {
	switch {
	case full:
		return More
	case held:
		return HeldBack
	}
	return Done
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// deliver POSTs batch to the destination. A 409 for a batch (the destination holds one of
// the ids with other content, so it stored none of them) is retried statement by
// statement; a 409 for a single statement counts as delivered: the destination already
// holds a statement with that id and keeps it, which is all xAPI lets it do.
func (f *Forwarder) deliver(ctx context.Context, p *Pair, cfg Config, batch []*statements.Statement) error {
	status, answer, err := f.post(ctx, p, cfg, batch)
	if err != nil {
		return err
	}
	switch {
	case status/100 == 2:
		return nil
	case status == http.StatusConflict && len(batch) > 1:
		for _, st := range batch {
			if err := f.deliver(ctx, p, cfg, []*statements.Statement{st}); err != nil {
				return err
			}
		}
		return nil
	case status == http.StatusConflict:
		f.log().Warn("statement forwarding: the destination holds another statement with this id; kept as delivered",
			"tenant", p.Tenant, "pair", p.ID, "statement", batch[0].ID)
		return nil
	default:
		if answer != "" {
			return fmt.Errorf("destination answered %d: %s", status, answer)
		}
		return fmt.Errorf("destination answered %d", status)
	}
}

// post sends batch and returns the status and, for an error status, the start of the answer
// (the destination's reason, for the pair's last_error).
func (f *Forwarder) post(ctx context.Context, p *Pair, cfg Config, batch []*statements.Statement) (int, string, error) {
	var body bytes.Buffer
	body.WriteByte('[')
	for i, st := range batch {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(st.Raw)
	}
	body.WriteByte(']')
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(p.DestinationURL, "/")+"/statements", &body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Experience-API-Version", batchVersion(batch))
	if p.Username != "" || p.Password != "" {
		req.SetBasicAuth(p.Username, p.Password)
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		f.outcome("failed")
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		f.outcome("delivered")
	} else {
		f.outcome("rejected")
	}
	var answer string
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		answer = strings.ToValidUTF8(strings.TrimSpace(string(b)), "?")
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, nil
}

func (f *Forwarder) outcome(o string) {
	if f.Outcome != nil {
		f.Outcome(o)
	}
}

// batchVersion is the X-Experience-API-Version a batch is sent with: 2.0.0 when a statement
// was stored as 2.0 (a 1.0.3 request may not carry it), else 1.0.3, which every xAPI 1.0
// and 2.0 record store accepts.
func batchVersion(batch []*statements.Statement) string {
	for _, st := range batch {
		var v struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(st.Raw, &v) == nil && strings.HasPrefix(v.Version, "2.") {
			return "2.0.0"
		}
	}
	return "1.0.3"
}
