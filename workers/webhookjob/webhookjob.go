// Package webhookjob delivers the content service's webhook messages (spec/001 "Webhook
// message", topic JOB_PROCESSED) to subscribed receivers through the job queue: at least once,
// one task per attempt, with exponential backoff and jitter between attempts, each attempt
// written to the subscription's delivery log. Every attempt of a message carries the same
// message_id and the same bytes, signed in X-Lectern-Signature (HMAC-SHA256 with the
// subscription's secret, the post-back format). Receivers, and OAuth token endpoints, are
// reached only through the outbound client (the SSRF guard).
package webhookjob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/content/subscription"
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/postback"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// TypeDeliver is the task type of one delivery attempt.
const TypeDeliver = "webhook:deliver"

// TypeFanout is the task type that turns one concluded job into one delivery per
// subscription of its tenant (ProcessFanout).
const TypeFanout = "webhook:job"

// Kinds of JobRef: which store holds the job.
const (
	KindJob          = "job"
	KindCourseImport = "course_import"
)

// JobRef names a concluding job for its fan-out task.
type JobRef struct {
	Kind   string `json:"kind"`
	Tenant string `json:"tenant"`
	ID     string `json:"id"`
}

// ErrNotConcluded fails a fan-out that read its job before the conclusion was written (the
// hook runs first): the queue retries it.
var ErrNotConcluded = errors.New("the job's conclusion is not written yet")

// fanoutDelay leaves the conclusion's write time to land before the fan-out reads it back.
const fanoutDelay = 300 * time.Millisecond

// Versions of the message and body formats the messages carry.
const (
	MessageVersion = "1.0"
	BodyVersion    = "1.0"
)

// Delivery defaults: MaxAttempts tries in all, the n-th retry after DefaultBaseDelay·2^(n-1)
// plus up to 25% jitter (10 s, 20 s, 40 s, ... about 21 minutes before the last).
const (
	DefaultMaxAttempts = 8
	DefaultBaseDelay   = 10 * time.Second
)

// Header names of a delivery request besides postback.SignatureHeader.
const (
	MessageIDHeader = "X-Lectern-Message-Id"
	AttemptHeader   = "X-Lectern-Attempt"
)

// Message is the webhook message (spec/001 "Webhook message").
type Message struct {
	TenantID       string          `json:"tenant_id,omitempty"`
	SubscriptionID string          `json:"subscription_id"`
	Topic          string          `json:"topic"`
	Body           json.RawMessage `json:"body"`
	MessageID      string          `json:"message_id"`
	Timestamp      time.Time       `json:"timestamp"`
	BodyVersion    string          `json:"body_version"`
	MessageVersion string          `json:"message_version"`
}

// Payload is one attempt's task: the message as the bytes every attempt sends.
type Payload struct {
	Tenant         string          `json:"tenant"`
	SubscriptionID string          `json:"subscription_id"`
	MessageID      string          `json:"message_id"`
	Attempt        int             `json:"attempt"`
	Message        json.RawMessage `json:"message"`
}

// Handler fans concluded jobs out to subscriptions (Concluding, ProcessFanout) and delivers the
// messages (ProcessTask).
type Handler struct {
	Subscriptions *subscription.Store
	// Jobs and Courses are where the fan-out reads concluded jobs back.
	Jobs     *jobs.Store
	Courses  *course.Store
	Queue    queue.Queue
	Outbound *outbound.Client
	Logger   *slog.Logger
	// MaxAttempts and BaseDelay override the defaults when positive.
	MaxAttempts int
	BaseDelay   time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Outcome, when set, hears each attempt's outcome: "delivered", "refused" (the outbound
	// guard), "rejected" (a non-2xx answer) or "failed" (no answer); it feeds the metrics.
	Outcome func(string)

	mu     sync.Mutex
	tokens map[string]token
}

type token struct {
	value   string
	expires time.Time
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) log() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func (h *Handler) maxAttempts() int {
	if h.MaxAttempts > 0 {
		return h.MaxAttempts
	}
	return DefaultMaxAttempts
}

// JobConcluding is the jobs.Store OnConcluding hook (see Concluding).
func (h *Handler) JobConcluding(ctx context.Context, j *jobs.Job) error {
	return h.Concluding(ctx, JobRef{Kind: KindJob, Tenant: j.Tenant, ID: j.ID})
}

// CourseImportConcluding is the course.Store OnImportConcluding hook: an engine course import
// is a job too, so it gets a JOB_PROCESSED message whose body is a JobRead of type
// COURSE_IMPORT (see CourseImportJob).
func (h *Handler) CourseImportConcluding(ctx context.Context, tenant string, j *course.ImportJob) error {
	return h.Concluding(ctx, JobRef{Kind: KindCourseImport, Tenant: tenant, ID: j.ID})
}

// Concluding queues the fan-out of a job about to conclude, before the conclusion is written,
// so a process that dies right after that write leaves the fan-out queued. The task id names
// the job, so a hook that runs twice queues one fan-out. Its error fails the job's update.
func (h *Handler) Concluding(ctx context.Context, ref JobRef) error {
	if ref.Tenant == "" {
		return nil
	}
	b, _ := json.Marshal(ref)
	_, err := h.Queue.Enqueue(ctx, queue.NewTask(TypeFanout, b), queue.TaskID("webhook:job:"+ref.Kind+":"+ref.Tenant+":"+ref.ID),
		queue.ProcessIn(fanoutDelay), queue.MaxRetry(10))
	if err != nil && !errors.Is(err, queue.ErrDuplicateTask) {
		return fmt.Errorf("queueing the JOB_PROCESSED fan-out: %w", err)
	}
	return nil
}

// lookup reads the job of ref as its JobRead; ok is false while it is not concluded.
func (h *Handler) lookup(ctx context.Context, ref JobRef) (*jobs.Job, bool, error) {
	if ref.Kind == KindCourseImport {
		j, err := h.Courses.ImportJob(ctx, ref.Tenant, ref.ID)
		if err != nil {
			return nil, false, err
		}
		return CourseImportJob(ref.Tenant, j), j.Status != course.ImportRunning, nil
	}
	j, err := h.Jobs.Get(ctx, ref.ID)
	if err != nil {
		return nil, false, err
	}
	return j, jobs.Concluded(j.Status), nil
}

// ProcessFanout is the fan-out task: it reads the job back and queues a JOB_PROCESSED
// message for each subscription the job's tenant had when the job concluded. The message id and the first
// attempt's task id are derived from the job, its final status and the subscription, so a
// fan-out that runs again (a retry, a restart) adds no message.
func (h *Handler) ProcessFanout(ctx context.Context, t *queue.Task) error {
	var ref JobRef
	if err := json.Unmarshal(t.Payload, &ref); err != nil || ref.Tenant == "" || ref.ID == "" {
		return fmt.Errorf("bad %s payload: %w", TypeFanout, queue.SkipRetry)
	}
	j, ok, err := h.lookup(ctx, ref)
	if errors.Is(err, jobs.ErrNotFound) || errors.Is(err, course.ErrImportJobNotFound) {
		return nil // removed since (with its tenant): nobody to tell
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("webhook fan-out of %s %s: %w", ref.Kind, ref.ID, ErrNotConcluded)
	}
	subs, err := h.Subscriptions.ListSubscriptions(ctx, ref.Tenant)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(j)
	for _, sub := range subs {
		// A subscription made after the conclusion was written (before the fan-out ran) did
		// not exist when the job concluded: it hears only of later conclusions.
		if sub.Topic != subscription.TopicJobProcessed || sub.Created.After(j.Updated) {
			continue
		}
		key := ref.Kind + "\x00" + ref.Tenant + "\x00" + j.ID + "\x00" + j.Status + "\x00" + sub.ID
		m := Message{TenantID: ref.Tenant, SubscriptionID: sub.ID, Topic: subscription.TopicJobProcessed, Body: body,
			MessageID: messageID(key), Timestamp: h.now().UTC(), BodyVersion: BodyVersion, MessageVersion: MessageVersion}
		mb, _ := json.Marshal(m)
		p := Payload{Tenant: ref.Tenant, SubscriptionID: sub.ID, MessageID: m.MessageID, Attempt: 1, Message: mb}
		err := h.enqueue(ctx, p, fmt.Sprintf("webhook:%s:%s:%s", j.ID, j.Status, sub.ID), 0)
		if err != nil && !errors.Is(err, queue.ErrDuplicateTask) {
			return err // the fan-out runs again; messages already queued are not repeated
		}
	}
	return nil
}

// messageID derives a UUID-shaped (version 8) message id from key, so a repeated fan-out
// names a message as the first one did.
func messageID(key string) string {
	b := sha256.Sum256([]byte(key))
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// TypeCourseImport is the JobRead type of an engine course import (the engine API's
// importJobs), which concludes in the course store rather than the jobs store.
const TypeCourseImport = "COURSE_IMPORT"

// CourseImportJob shows a concluded engine course import as a JobRead.
func CourseImportJob(tenant string, j *course.ImportJob) *jobs.Job {
	out := &jobs.Job{ID: j.ID, Type: TypeCourseImport, Status: jobs.StatusCompleted, Tenant: tenant,
		Results: map[string]any{"course_id": j.CourseID, "course_title": j.CourseTitle}, Warnings: j.ParserWarnings,
		Created: j.Created, Updated: j.Updated}
	if j.Version != nil {
		out.Results["version"] = *j.Version
	}
	if j.Status != course.ImportComplete {
		out.Status, out.Error = jobs.StatusFailed, &jobs.JobError{Code: "IMPORT_ERROR", Message: j.Message}
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	return out
}

func (h *Handler) enqueue(ctx context.Context, p Payload, taskID string, delay time.Duration) error {
	b, _ := json.Marshal(p)
	// Each attempt is its own task, so the backoff is ours; the queue retries a task only when
	// recording the attempt or queueing the next one failed (a store error), which resends.
	_, err := h.Queue.Enqueue(ctx, queue.NewTask(TypeDeliver, b), queue.TaskID(taskID), queue.ProcessIn(delay), queue.MaxRetry(5))
	return err
}

// ProcessTask implements queue.Handler: one attempt. A failed attempt that has attempts left
// queues the next one after the backoff and completes; the last failure is logged as given up.
func (h *Handler) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.Tenant == "" || p.SubscriptionID == "" || p.MessageID == "" {
		return fmt.Errorf("bad %s payload: %w", TypeDeliver, queue.SkipRetry)
	}
	sub, err := h.Subscriptions.GetSubscription(ctx, p.Tenant, p.SubscriptionID)
	if errors.Is(err, subscription.ErrNotFound) {
		return nil // unsubscribed since: nothing to deliver, and no log to write to
	}
	if err != nil {
		return err
	}
	at := h.now().UTC()
	status, sendErr := h.send(ctx, sub, p)
	d := subscription.Delivery{MessageID: p.MessageID, Attempt: p.Attempt, Time: at, Status: status}
	h.outcome(status, sendErr)
	if sendErr == nil {
		d.Final = true
		return h.Subscriptions.LogDelivery(ctx, p.Tenant, sub.ID, d)
	}
	d.Error = sendErr.Error()
	last := p.Attempt >= h.maxAttempts() || errors.Is(sendErr, queue.SkipRetry)
	d.Final = last
	if err := h.Subscriptions.LogDelivery(ctx, p.Tenant, sub.ID, d); err != nil {
		return err
	}
	if last {
		h.log().Error("webhook delivery given up", "tenant", p.Tenant, "subscription", sub.ID, "message_id", p.MessageID,
			"attempts", p.Attempt, "error", sendErr)
		return nil
	}
	next := p
	next.Attempt++
	err = h.enqueue(ctx, next, fmt.Sprintf("webhook:%s:%d", p.MessageID, next.Attempt), queue.RetryDelay(h.baseDelay(), p.Attempt-1))
	if err != nil && !errors.Is(err, queue.ErrDuplicateTask) {
		return err // this attempt runs again, which keeps the message at least once
	}
	return nil
}

// outcome reports an attempt to the Outcome hook.
func (h *Handler) outcome(status int, err error) {
	if h.Outcome == nil {
		return
	}
	switch {
	case err == nil:
		h.Outcome("delivered")
	case errors.Is(err, outbound.ErrBlocked) || errors.Is(err, outbound.ErrBadURL):
		h.Outcome("refused")
	case status != 0:
		h.Outcome("rejected")
	default:
		h.Outcome("failed")
	}
}

func (h *Handler) baseDelay() time.Duration {
	if h.BaseDelay > 0 {
		return h.BaseDelay
	}
	return DefaultBaseDelay
}

// send makes one request; the status is the receiver's (0 without an answer). An error
// wrapping queue.SkipRetry means no later attempt can succeed.
func (h *Handler) send(ctx context.Context, sub *subscription.Subscription, p Payload) (int, error) {
	auth, err := h.Subscriptions.GetAuth(ctx, sub.Tenant, sub.AuthConfigID)
	if errors.Is(err, subscription.ErrNotFound) {
		return 0, fmt.Errorf("%w: %w", err, queue.SkipRetry)
	}
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.URL, bytes.NewReader(p.Message))
	if err != nil {
		return 0, fmt.Errorf("subscription URL: %w: %w", err, queue.SkipRetry)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(postback.SignatureHeader, postback.Sign([]byte(sub.Secret), p.Message))
	req.Header.Set(MessageIDHeader, p.MessageID)
	req.Header.Set(AttemptHeader, fmt.Sprint(p.Attempt))
	switch auth.Type {
	case subscription.AuthBasic:
		req.SetBasicAuth(deref(auth.Key), deref(auth.Secret))
	case subscription.AuthOAuth2:
		tok, err := h.token(ctx, auth)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := h.Outbound.Do(req)
	if err != nil {
		if errors.Is(err, outbound.ErrBlocked) || errors.Is(err, outbound.ErrBadURL) {
			return 0, fmt.Errorf("%w: %w", err, queue.SkipRetry)
		}
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if res.StatusCode/100 == 2 {
		return res.StatusCode, nil
	}
	if res.StatusCode == http.StatusUnauthorized && auth.Type == subscription.AuthOAuth2 {
		h.forget(auth) // the token may have been revoked: the next attempt fetches a new one
	}
	return res.StatusCode, fmt.Errorf("the receiver answered %s", res.Status)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func tokenKey(a *subscription.Auth) string { return a.Tenant + "\x00" + a.ID }

func (h *Handler) forget(a *subscription.Auth) {
	h.mu.Lock()
	delete(h.tokens, tokenKey(a))
	h.mu.Unlock()
}

// token returns a cached access token of the client-credentials configuration, fetching a new
// one (through the outbound client) when there is none or it is about to expire.
func (h *Handler) token(ctx context.Context, a *subscription.Auth) (string, error) {
	k := tokenKey(a)
	h.mu.Lock()
	t, ok := h.tokens[k]
	h.mu.Unlock()
	if ok && h.now().Before(t.expires) {
		return t.value, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {deref(a.Scope)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, deref(a.TokenURL), strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("token_url: %v: %w", err, queue.SkipRetry)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 section 2.3.1: the client id and secret as HTTP Basic credentials, form-encoded.
	req.SetBasicAuth(url.QueryEscape(deref(a.Key)), url.QueryEscape(deref(a.Secret)))
	res, err := h.Outbound.Do(req)
	if err != nil {
		if errors.Is(err, outbound.ErrBlocked) || errors.Is(err, outbound.ErrBadURL) {
			return "", fmt.Errorf("token endpoint: %v: %w", err, queue.SkipRetry)
		}
		return "", fmt.Errorf("token endpoint: %w", err)
	}
	defer res.Body.Close()
	var body struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
	}
	if res.StatusCode/100 != 2 {
		return "", fmt.Errorf("token endpoint answered %s", res.Status)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&body); err != nil || body.AccessToken == "" {
		return "", fmt.Errorf("token endpoint: no access_token in the answer")
	}
	// Cached until shortly before it expires; without expires_in, for a minute.
	life := time.Minute
	if body.ExpiresIn > 0 {
		life = time.Duration(body.ExpiresIn*float64(time.Second)) - min(30*time.Second, time.Duration(body.ExpiresIn*float64(time.Second))/10)
	}
	h.mu.Lock()
	if h.tokens == nil {
		h.tokens = map[string]token{}
	}
	h.tokens[k] = token{value: body.AccessToken, expires: h.now().Add(life)}
	h.mu.Unlock()
	return body.AccessToken, nil
}
