// Package postbackjob delivers registration reports (post-backs) to the URL a registration or
// its configuration names, through the job queue: at least once, retried with the queue's
// exponential backoff until the receiver answers 2xx, and only to destinations the outbound
// policy allows (the SSRF guard). Each delivery sends the registration's state at the time
// of sending, so a redelivered or late task never reports something older than the last
// one did.
package postbackjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/postback"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// TypePostback is the task type of one delivery.
const TypePostback = "registration:postback"

// The settings that name a registration's post-back when its postBack override does not
// (the learner's path reads those that say when one is due).
const (
	SettingURL      = learner.SettingPostBackURL
	SettingAuthType = "ApiRollupRegistrationAuthType"
	SettingUser     = "ApiRollupRegistrationAuthUser"
	SettingPassword = "ApiRollupRegistrationAuthPassword"
	SettingFormat   = "ApiRollupRegistrationFormat"
	// SettingTimeout bounds one delivery request, in seconds.
	SettingTimeout = "ApiPostbackTimeoutSeconds"
	// SettingDataModel is v1 (the registrationreport XML) or v2 (the JSON report).
	SettingDataModel = "ApiPostbackDataModelVersion"
)

// DataModelJSON is the ApiPostbackDataModelVersion value that posts the JSON report.
const DataModelJSON = "v2"

// Payload names the registration whose report is due.
type Payload struct {
	Tenant         string `json:"tenant"`
	RegistrationID string `json:"registrationId"`
	// JSON asks for the JSON report whatever ApiPostbackDataModelVersion says.
	JSON bool `json:"json,omitempty"`
}

// Options are the queue options of a post-back that has tries attempts left: its retry budget.
func Options(tries int) []queue.Option {
	return []queue.Option{queue.MaxRetry(tries - 1)}
}

// DetailSource computes the activity tree of a registration instance for the ACTIVITY and
// FULL reports, and its global objectives: learner.Service's Detail and GlobalObjectives,
// the one rollup progress/detail shows too.
type DetailSource interface {
	Detail(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*registration.ActivityResult, error)
	GlobalObjectives(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) ([]registration.ObjectiveResult, error)
}

// Handler delivers post-backs.
type Handler struct {
	Registrations *registration.Store
	Settings      *settings.Store
	Outbound      *outbound.Client
	// Details computes the reports' activity trees; nil reports none.
	Details DetailSource
	Logger  *slog.Logger
	// Outcome, when set, is told the outcome of every delivery attempt: "delivered" (2xx),
	// "rejected" (another status), "failed" (no answer), "refused" (the outbound policy).
	Outcome func(outcome string)
}

// Sender sends the reports the learner's path finds due (learner.PostBacks): the first
// attempt inline when asked and a Handler is at hand, the remaining ones through the queue
// with its backoff.
type Sender struct {
	// Handler makes inline attempts; nil queues every attempt.
	Handler *Handler
	Queue   queue.Queue
	Logger  *slog.Logger
}

// Send implements learner.PostBacks. Failures are logged: the change that caused the report
// is stored already.
func (s *Sender) Send(ctx context.Context, tenant, registrationID string, inline bool, tries int) {
	p := Payload{Tenant: tenant, RegistrationID: registrationID}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	if inline && s.Handler != nil {
		err := s.Handler.Deliver(ctx, p)
		if err == nil {
			return
		}
		if errors.Is(err, queue.SkipRetry) || tries <= 1 {
			s.Handler.GiveUp(p, err)
			return
		}
		log.Info("post-back: the inline attempt failed; the retries are queued", "tenant", tenant, "registration", registrationID, "error", err)
		tries--
	}
	if err := Enqueue(ctx, s.Queue, p, Options(tries)...); err != nil {
		log.Warn("post-back not queued", "tenant", tenant, "registration", registrationID, "error", err)
	}
}

// Enqueue schedules a delivery of the registration's report; opts are usually Options(tries).
func Enqueue(ctx context.Context, q queue.Queue, p Payload, opts ...queue.Option) error {
	b, _ := json.Marshal(p)
	_, err := q.Enqueue(ctx, queue.NewTask(TypePostback, b), opts...)
	return err
}

// ProcessTask implements queue.Handler. A delivery that fails for good (refused, or its last
// try) is logged as "post-back given up" at error level, and the queue keeps the task archived.
func (h *Handler) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.Tenant == "" || p.RegistrationID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypePostback, t.Payload, queue.SkipRetry)
	}
	err := h.Deliver(ctx, p)
	// An outage does not use up the task's tries (the queue retries it whatever the count).
	if err != nil && (errors.Is(err, queue.SkipRetry) || queue.LastAttempt(ctx) && !errors.Is(err, storage.ErrUnavailable)) {
		h.GiveUp(p, err)
	}
	return err
}

// GiveUp records that the post-back of p will not be tried again: the log is where an
// operator finds it (the queue also keeps the failed task as archived).
func (h *Handler) GiveUp(p Payload, err error) {
	h.log().Error("post-back given up", "tenant", p.Tenant, "registration", p.RegistrationID, "error", err)
}

// maxResends bounds how many times one delivery sends a newer report (Deliver): a
// registration that keeps changing has a delivery of its own for each change.
const maxResends = 3

// Deliver sends the registration's report, now: nil when it was delivered or there is nothing
// to send; an error wrapping queue.SkipRetry when no retry can help.
//
// Deliveries of one registration run concurrently (a commit's and the page's exit heartbeat's,
// or two nodes'), so they can reach the receiver in another order than the one their reports
// were built in, and the receiver's last report could be older than the registration. So once
// the receiver has answered, Deliver reads the registration again and, when it changed
// meanwhile and so did its report, sends the new one: the last report a receiver gets is never
// older than the registration was when that delivery ended. Every change a report shows is
// written to the registration (its progress, with the report's fingerprint and the measured
// time), so reading the registration alone tells the usual delivery, whose registration did
// not change, that it is done.
func (h *Handler) Deliver(ctx context.Context, p Payload) error {
	req, timeout, reg, err := h.request(ctx, p)
	for resends := 0; err == nil && req != nil; resends++ {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		err = h.send(sctx, p.RegistrationID, req)
		cancel()
		if err != nil || resends == maxResends {
			return err
		}
		now, gerr := h.Registrations.Get(ctx, p.Tenant, p.RegistrationID)
		if gerr != nil || reflect.DeepEqual(now, reg) {
			// Unchanged, or deleted since, or unreadable: this report was delivered, and
			// whatever stops the next one stops the delivery the next change makes too.
			return nil
		}
		sent := req
		if req, timeout, err = h.requestFor(ctx, p, now); err != nil {
			h.log().Warn("post-back: delivered, but the report could not be read again", "registration", p.RegistrationID, "error", err)
			return nil
		}
		if req != nil && bytes.Equal(req.Body, sent.Body) {
			return nil
		}
		reg = now
	}
	return err
}

// request reads the registration and builds its post-back request (requestFor), returning
// the registration it was built from too; a nil request when there is nothing to send.
func (h *Handler) request(ctx context.Context, p Payload) (*postback.Request, time.Duration, *registration.Registration, error) {
	reg, err := h.Registrations.Get(ctx, p.Tenant, p.RegistrationID)
	if errors.Is(err, registration.ErrNotFound) {
		// Deleted since: nothing to report, and nothing will ever be.
		return nil, 0, nil, nil
	}
	if err != nil {
		return nil, 0, nil, err
	}
	req, timeout, err := h.requestFor(ctx, p, reg)
	return req, timeout, reg, err
}

// requestFor builds the post-back request of reg as read, with the receiver's timeout; a nil
// request when it has no post-back target.
func (h *Handler) requestFor(ctx context.Context, p Payload, reg *registration.Registration) (*postback.Request, time.Duration, error) {
	layers, err := h.Settings.Layers(ctx, p.Tenant, settings.RegistrationScopes(reg.CourseID, reg.ID)...)
	if err != nil {
		return nil, 0, err
	}
	target, err := h.target(reg, layers)
	if err != nil || target.URL == "" {
		return nil, 0, err
	}
	cat := h.Settings.Catalogue()
	model, err := cat.Resolve(SettingDataModel, layers...)
	if err != nil {
		return nil, 0, err
	}
	target.JSON = p.JSON || model == DataModelJSON
	timeout, err := cat.Resolve(SettingTimeout, layers...)
	if err != nil {
		return nil, 0, err
	}
	secs, err := strconv.Atoi(timeout)
	if err != nil {
		return nil, 0, err
	}
	rep, err := h.report(ctx, p.Tenant, reg, target.Format, target.JSON)
	if err != nil {
		return nil, 0, err
	}
	req, err := postback.Build(target, rep)
	if errors.Is(err, postback.ErrInvalid) {
		return nil, 0, fmt.Errorf("registration '%s' post-back: %v: %w", reg.ID, err, queue.SkipRetry)
	}
	return req, time.Duration(secs) * time.Second, err
}

// target is the registration's postBack override when it names a URL, else the
// ApiRollupRegistration* settings of its cascade.
func (h *Handler) target(reg *registration.Registration, layers []settings.Layer) (postback.Target, error) {
	if pb := reg.PostBack; pb != nil && pb.URL != "" {
		pw, err := h.Registrations.PostBackPassword(reg)
		if err != nil {
			return postback.Target{}, err
		}
		return postback.Target{URL: pb.URL, AuthType: pb.AuthType, UserName: pb.UserName, Password: pw,
			Format: postback.Format(pb.ResultsFormat), SigningKey: signingKey(pw)}, nil
	}
	cat := h.Settings.Catalogue()
	var t postback.Target
	var format string
	for id, dst := range map[string]*string{SettingURL: &t.URL, SettingAuthType: &t.AuthType, SettingUser: &t.UserName,
		SettingPassword: &t.Password, SettingFormat: &format} {
		v, err := cat.Resolve(id, layers...)
		if err != nil {
			return postback.Target{}, err
		}
		*dst = v
	}
	t.Format = postback.Format(strings.ToUpper(format))
	t.SigningKey = signingKey(t.Password)
	return t, nil
}

// signingKey is the HMAC key of the signature header: the post-back password, which the
// receiver already knows; without a password there is no signature.
func signingKey(password string) []byte {
	if password == "" {
		return nil
	}
	return []byte(password)
}

// report gathers what format f shows: the global objectives for every JSON report and the
// FULL XML one, the activity tree for ACTIVITY and FULL.
func (h *Handler) report(ctx context.Context, tenant string, reg *registration.Registration, f postback.Format, asJSON bool) (postback.Report, error) {
	in := reg.Current()
	rep := postback.Report{Registration: reg, Instance: in.Number, Progress: in.Progress, Updated: reg.Updated}
	if h.Details == nil {
		return rep, nil
	}
	if asJSON || f == postback.Full {
		g, err := h.Details.GlobalObjectives(ctx, tenant, reg, in)
		if err != nil {
			return rep, err
		}
		rep.GlobalObjectives = g
	}
	if f == "" || f == postback.Course {
		return rep, nil
	}
	details, err := h.Details.Detail(ctx, tenant, reg, in)
	if errors.Is(err, course.ErrCourseNotFound) {
		return rep, fmt.Errorf("registration '%s': %v: %w", reg.ID, err, queue.SkipRetry)
	}
	rep.Details = details
	return rep, err
}

func (h *Handler) send(ctx context.Context, regID string, r *postback.Request) error {
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return fmt.Errorf("post-back of '%s': %v: %w", regID, err, queue.SkipRetry)
	}
	req.Header = r.Header.Clone()
	start := time.Now()
	resp, err := h.Outbound.Do(req)
	h.outcome(resp, err)
	if errors.Is(err, outbound.ErrBlocked) || errors.Is(err, outbound.ErrBadURL) {
		// A destination the policy refuses stays refused: retrying cannot help.
		h.log().Warn("post-back refused by the outbound policy", "registration", regID, "error", err)
		return fmt.Errorf("post-back of '%s': %v: %w", regID, err, queue.SkipRetry)
	}
	if err != nil {
		return fmt.Errorf("post-back of '%s': %w", regID, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("post-back of '%s': the receiver answered %d", regID, resp.StatusCode)
	}
	h.log().Info("post-back delivered", "registration", regID, "status", resp.StatusCode, "duration_ms", time.Since(start).Milliseconds())
	return nil
}

// outcome reports a delivery attempt to the Outcome hook.
func (h *Handler) outcome(resp *http.Response, err error) {
	if h.Outcome == nil {
		return
	}
	switch {
	case errors.Is(err, outbound.ErrBlocked) || errors.Is(err, outbound.ErrBadURL):
		h.Outcome("refused")
	case err != nil:
		h.Outcome("failed")
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		h.Outcome("rejected")
	default:
		h.Outcome("delivered")
	}
}

func (h *Handler) log() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}
