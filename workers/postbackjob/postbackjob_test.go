package postbackjob_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/postback"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/rollup/rolluptest"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/postbackjob"
	"github.com/lectern-lms/lectern/workers/queue"
	"github.com/lectern-lms/lectern/workers/queue/inproc"
)

// received is one request a receiver got.
type received struct {
	contentType, auth, signature string
	form                         url.Values
	body                         []byte
}

// receiver is a post-back target on loopback that answers fail times with 500 first.
type receiver struct {
	mu   sync.Mutex
	got  []received
	fail int
	srv  *httptest.Server
}

func newReceiver(t *testing.T, fail int) *receiver {
	rc := &receiver{fail: fail}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		g := received{contentType: r.Header.Get("Content-Type"), auth: r.Header.Get("Authorization"),
			signature: r.Header.Get(postback.SignatureHeader), body: body}
		if strings.HasPrefix(g.contentType, "application/x-www-form-urlencoded") {
			g.form, _ = url.ParseQuery(string(body))
		}
		rc.got = append(rc.got, g)
		if rc.fail > 0 {
			rc.fail--
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// fixedDetails computes the activity tree of the rolluptest course under one run-time state
// for every registration, as the learner's path would from stored run-time data: the
// delivery is what these tests check; learner's own tests and server's check the rollup.
type fixedDetails struct {
	pkg   *course.Package
	state rollup.State
	set   *settings.Store
}

func (f fixedDetails) Detail(_ context.Context, _ string, reg *registration.Registration, _ registration.Instance) (*registration.ActivityResult, error) {
	rs, err := rollup.SettingsFrom(func(id string) (string, error) { return f.set.Catalogue().Resolve(id) })
	if err != nil {
		return nil, err
	}
	res := rollup.Compute(rollup.Input{Package: f.pkg, State: f.state, Settings: rs, ForCredit: reg.ForCredit})
	return res.Details(f.pkg, f.state, reg.ForCredit), nil
}

// GlobalObjectives: the rolluptest course shares none.
func (f fixedDetails) GlobalObjectives(context.Context, string, *registration.Registration, registration.Instance) ([]registration.ObjectiveResult, error) {
	return nil, nil
}

type world struct {
	h    *postbackjob.Handler
	regs *registration.Store
	set  *settings.Store
}

func newWorld(t testing.TB, be recordstores.Backend, allow []string) *world {
	records := be.Open(t)
	ctx := context.Background()
	sealer, err := settings.NewSealer("test-secret")
	if err != nil {
		t.Fatal(err)
	}
	courses := course.NewStore(records)
	pkg, state := rolluptest.SCORM2004()
	if _, err := courses.AddVersion(ctx, "acme", &course.Version{CourseID: "safety", Title: pkg.Title, Standard: pkg.Standard, Package: pkg, JobID: "job-1"}, false); err != nil {
		t.Fatal(err)
	}
	ob, err := outbound.New(outbound.Config{Allow: allow, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{regs: registration.NewStore(records, sealer), set: settings.NewStore(records, settings.Default(), sealer)}
	w.h = &postbackjob.Handler{Registrations: w.regs, Settings: w.set, Outbound: ob, Details: fixedDetails{pkg: pkg, state: state, set: w.set}}
	return w
}

func (w *world) register(t testing.TB, id string, pb *registration.PostBack) {
	q := registration.CreateRequest{ID: id, CourseID: "safety", Learner: registration.Learner{ID: "ann", FirstName: "Ann", LastName: "Lee"}, ForCredit: true, PostBack: pb}
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.regs.Create(context.Background(), "acme", q, 0, registration.CourseRef{Title: "Workplace Safety", Standard: "SCORM_2004_4TH_EDITION"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.regs.UpdateProgress(context.Background(), "acme", id, -1, func(p *registration.Progress) error {
		p.Completion, p.Success = registration.Completed, registration.Passed
		s := 90.0
		p.ScoreScaled, p.TotalSecondsTracked = &s, 754
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func task(p postbackjob.Payload) *queue.Task {
	b, _ := json.Marshal(p)
	return queue.NewTask(postbackjob.TypePostback, b)
}

func TestDelivery(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, be, []string{"127.0.0.1/32"})

			// A registration's own postBack: FORM with the report in field data, COURSE format,
			// signed with the password.
			rc := newReceiver(t, 0)
			w.register(t, "form-course", &registration.PostBack{URL: rc.srv.URL + "/pb", UserName: "lms", Password: "s3cret"})
			if err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "form-course"})); err != nil {
				t.Fatal(err)
			}
			got := rc.requests()
			if len(got) != 1 {
				t.Fatalf("%d requests", len(got))
			}
			g := got[0]
			data := g.form.Get("data")
			if g.form.Get("username") != "lms" || g.form.Get("password") != "s3cret" || !strings.Contains(data, "<registrationreport") ||
				!strings.Contains(data, `regid="form-course"`) || strings.Contains(data, "<activity ") {
				t.Errorf("FORM COURSE post-back: %+v", g)
			}
			if !postback.Verify([]byte("s3cret"), g.body, g.signature) {
				t.Errorf("signature %q does not verify over the body", g.signature)
			}

			// HTTPBASIC with the ACTIVITY report as the body.
			rc = newReceiver(t, 0)
			w.register(t, "basic-activity", &registration.PostBack{URL: rc.srv.URL, AuthType: "HTTPBASIC", UserName: "lms", Password: "pw", ResultsFormat: "ACTIVITY"})
			if err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "basic-activity"})); err != nil {
				t.Fatal(err)
			}
			g = rc.requests()[0]
			if g.auth != "Basic "+base64.StdEncoding.EncodeToString([]byte("lms:pw")) || !strings.HasPrefix(g.contentType, "text/xml") ||
				!strings.Contains(string(g.body), "<activity ") || strings.Contains(string(g.body), "<runtime>") {
				t.Errorf("HTTPBASIC ACTIVITY post-back: %s %s %s", g.auth, g.contentType, g.body)
			}

			// No postBack: the ApiRollupRegistration* settings decide (FULL at tenant level,
			// the URL, user and password at course level), and JSON on request.
			rc = newReceiver(t, 0)
			for _, s := range []struct {
				scope  settings.Scope
				id, to string
			}{
				{settings.TenantScope, "ApiRollupRegistrationFormat", "full"},
				{settings.TenantScope, "ApiRollupRegistrationAuthType", "httpbasic"},
				{settings.CourseScope("safety"), "ApiRollupRegistrationPostBackUrl", rc.srv.URL + "/full"},
				{settings.CourseScope("safety"), "ApiRollupRegistrationAuthUser", "course-user"},
				{settings.CourseScope("safety"), "ApiRollupRegistrationAuthPassword", "course-pw"},
			} {
				if err := w.set.Set(ctx, "acme", s.scope, s.id, s.to); err != nil {
					t.Fatal(err)
				}
			}
			w.register(t, "by-settings", nil)
			if err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "by-settings"})); err != nil {
				t.Fatal(err)
			}
			g = rc.requests()[0]
			if g.auth != "Basic "+base64.StdEncoding.EncodeToString([]byte("course-user:course-pw")) || !strings.Contains(string(g.body), "<runtime>") {
				t.Errorf("FULL post-back from settings: %s %s", g.auth, g.body)
			}
			if err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "by-settings", JSON: true})); err != nil {
				t.Fatal(err)
			}
			g = rc.requests()[1]
			var js map[string]any
			if g.contentType != "application/json" || json.Unmarshal(g.body, &js) != nil {
				t.Errorf("JSON post-back: %s %s", g.contentType, g.body)
			}
			// The same id in another tenant is another (missing) registration: nothing is sent.
			if err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "other", RegistrationID: "by-settings"})); err != nil || len(rc.requests()) != 2 {
				t.Errorf("registration of another tenant: %v, %d requests", err, len(rc.requests()))
			}

			// A failing receiver makes the task fail (the queue retries it), and it is not
			// marked permanent.
			rc = newReceiver(t, 1)
			w.register(t, "flaky", &registration.PostBack{URL: rc.srv.URL})
			err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "flaky"}))
			if err == nil || errors.Is(err, queue.SkipRetry) {
				t.Errorf("500 from the receiver: %v", err)
			}
			if err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "flaky"})); err != nil {
				t.Errorf("retry: %v", err)
			}

			// Refused by the SSRF guard: permanent, and nothing reaches the receiver.
			guarded := newWorld(t, be, nil)
			rc = newReceiver(t, 0)
			guarded.register(t, "private", &registration.PostBack{URL: rc.srv.URL})
			if err := guarded.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "private"})); !errors.Is(err, queue.SkipRetry) {
				t.Errorf("loopback destination without allowance: %v", err)
			}
			if n := len(rc.requests()); n != 0 {
				t.Errorf("a refused destination got %d requests", n)
			}

			// Bad payloads are not retried; a deleted registration has nothing to send.
			if err := w.h.ProcessTask(ctx, queue.NewTask(postbackjob.TypePostback, []byte("{"))); !errors.Is(err, queue.SkipRetry) {
				t.Errorf("bad payload: %v", err)
			}
			if err := w.h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "gone"})); err != nil {
				t.Errorf("deleted registration: %v", err)
			}
		})
	}
}

// TestChangedOnTheWay: a registration that changes while its report is on the way (another
// delivery, of the newer state, reached the receiver first) is reported again, so the
// receiver's last report is the registration as it now is, not the older one that arrived last.
func TestChangedOnTheWay(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, be, []string{"127.0.0.1/32"})
			var mu sync.Mutex
			var bodies []string
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, string(body))
				first := len(bodies) == 1
				mu.Unlock()
				if first {
					// The learner's next commit lands while this report is on the way.
					if _, err := w.regs.UpdateProgress(r.Context(), "acme", "busy", -1, func(p *registration.Progress) error {
						p.TotalSecondsTracked = 812
						return nil
					}); err != nil {
						t.Error(err)
					}
				}
				rw.WriteHeader(200)
			}))
			t.Cleanup(srv.Close)
			w.register(t, "busy", &registration.PostBack{URL: srv.URL, AuthType: "HTTPBASIC", ResultsFormat: "COURSE"})
			if err := w.h.Deliver(ctx, postbackjob.Payload{Tenant: "acme", RegistrationID: "busy"}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != 2 || !strings.Contains(bodies[0], "<totaltime>754</totaltime>") || !strings.Contains(bodies[1], "<totaltime>812</totaltime>") {
				t.Errorf("reports sent: %q, want the one of 754 s, then the one of 812 s", bodies)
			}
			// An unchanged registration is reported once.
			bodies = nil
			mu.Unlock()
			err := w.h.Deliver(ctx, postbackjob.Payload{Tenant: "acme", RegistrationID: "busy"})
			mu.Lock()
			if err != nil || len(bodies) != 1 {
				t.Errorf("unchanged registration: %v, %d reports", err, len(bodies))
			}
		})
	}
}

// TestThroughTheQueue delivers through the in-process queue with its backoff: a receiver
// that fails twice gets the report on the third attempt.
func TestThroughTheQueue(t *testing.T) {
	be := recordstores.All()[0]
	w := newWorld(t, be, []string{"127.0.0.1/32"})
	rc := newReceiver(t, 2)
	w.register(t, "r1", &registration.PostBack{URL: rc.srv.URL})
	q := inproc.New(be.Open(t), inproc.Config{Concurrency: 1, BaseRetryDelay: 20 * time.Millisecond})
	q.Handle(postbackjob.TypePostback, w.h)
	ctx := context.Background()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Shutdown(ctx) })
	if err := postbackjob.Enqueue(ctx, q, postbackjob.Payload{Tenant: "acme", RegistrationID: "r1"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rc.requests()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts reached the receiver", len(rc.requests()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logged counts the records of one message.
type logged struct {
	mu  sync.Mutex
	msg string
	n   int
	slog.Handler
}

func (l *logged) Handle(ctx context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Message == l.msg {
		l.n++
	}
	return nil
}

func (l *logged) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// TestGivenUp: a post-back enqueued with Options(3) to a receiver that always fails is tried
// three times, then given up: logged once, and archived by the queue.
func TestGivenUp(t *testing.T) {
	be := recordstores.All()[0]
	w := newWorld(t, be, []string{"127.0.0.1/32"})
	lg := &logged{msg: "post-back given up", Handler: slog.NewTextHandler(io.Discard, nil)}
	w.h.Logger = slog.New(lg)
	rc := newReceiver(t, 1000)
	w.register(t, "r1", &registration.PostBack{URL: rc.srv.URL})
	q := inproc.New(be.Open(t), inproc.Config{Concurrency: 1, BaseRetryDelay: 5 * time.Millisecond})
	q.Handle(postbackjob.TypePostback, w.h)
	ctx := context.Background()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Shutdown(ctx) })
	if err := postbackjob.Enqueue(ctx, q, postbackjob.Payload{Tenant: "acme", RegistrationID: "r1"}, postbackjob.Options(3)...); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for lg.count() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not given up after %d attempts", len(rc.requests()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(rc.requests()); n != 3 || lg.count() != 1 {
		t.Errorf("%d attempts, %d give-ups; want 3, 1", n, lg.count())
	}
}
