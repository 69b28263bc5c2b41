package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/workers/queue"
)

// lockedBuffer is a log sink safe for the concurrent writes of handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServeOnly runs the HTTP role of cfg without consuming any queue, as a `serve` process.
func startServeOnly(t *testing.T, cfg app.Config) *servertest.Env {
	t.Helper()
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	t.Cleanup(func() {
		_ = a.Server.App().Shutdown()
		_ = a.Elastic.DeleteIndices(context.Background(), cfg.Elastic.IndexPrefix)
		_, _ = a.Blobs.DeletePrefix(context.Background(), "")
		a.Close()
	})
	return &servertest.Env{T: t, App: a, URL: "http://" + ln.Addr().String()}
}

// TestQueueNamespaces: two deployments on one Redis database. With their own queue prefixes,
// given or taken from their index prefixes, neither takes the other's tasks; sharing a namespace, the foreign task is dropped by the
// deployment that does not know its job, and that is logged with the job's id.
func TestQueueNamespaces(t *testing.T) {
	testenv.External(t, "LECTERN_TEST_REDIS_URL")
	for _, tc := range []struct {
		name           string
		prefixA, prefB string
	}{{"separate", "deploya_", "deployb_"}, {"index prefixes", "", ""}, {"shared", "same_", "same_"}} {
		t.Run(tc.name, func(t *testing.T) {
			cfgA := servertest.Modes(t)["distributed"](t)
			cfgA.QueuePrefix = tc.prefixA
			cfgB := servertest.Modes(t)["distributed"](t)
			cfgB.RedisURL, cfgB.QueuePrefix = cfgA.RedisURL, tc.prefB
			logB := &lockedBuffer{}
			cfgB.Logger = slog.New(slog.NewJSONHandler(logB, nil))

			a := startServeOnly(t, cfgA)
			a.CreateTenant("acme", true)
			r := a.UploadContent(servertest.Root, "acme", "", []byte("# A\n\nDeployment alpha."), "a.md")
			a.Expect(r, 202, "import into A")
			var jA servertest.JobRead
			r.JSON(t, &jA)

			// B imports its own file after A's task was queued: asynq hands out a queue's tasks
			// in order, so a B sharing A's queue takes A's task first.
			b := servertest.Start(t, cfgB)
			b.CreateTenant("acme", true)
			if j := b.WaitContentJob("acme", b.UploadContent(servertest.Root, "acme", "", []byte("# B\n\nDeployment bravo."), "b.md")); j.Status != "COMPLETED" {
				t.Fatalf("import into B: %+v", j)
			}
			info, err := a.App.Queue.Inspect(context.Background(), "content-import-"+jA.ID)
			// Without LECTERN_QUEUE_PREFIX the queues take the (different) index prefixes.
			if tc.name != "shared" {
				if err != nil || info.State != queue.StatePending {
					t.Fatalf("A's task after B ran: %+v, %v; want it pending in A's own queue", info, err)
				}
				// A's worker starts and does its own work.
				if err := a.App.Queue.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := a.App.IndexQueue.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = a.App.Queue.Shutdown(ctx)
					_ = a.App.IndexQueue.Shutdown(ctx)
				})
				var j servertest.JobRead
				servertest.Eventually(t, 60*time.Second, "A's job", func() bool {
					rr := a.Do("GET", "/api/v1/jobs/"+jA.ID, servertest.Root, nil, "tenant_id", "acme")
					j = servertest.JobRead{}
					rr.JSON(t, &j)
					return j.Status == "COMPLETED" || j.Status == "FAILED"
				})
				if j.Status != "COMPLETED" {
					t.Fatalf("A's job: %+v", j)
				}
				if hits := a.SearchContent("acme", servertest.SQ("search_type", "LEXICAL", "term", "alpha")); len(hits) != 1 {
					t.Fatalf("A's content not found: %v", hits)
				}
				return
			}
			// One namespace: B took A's task, found no such job, and said so.
			servertest.Eventually(t, 30*time.Second, "B's log of A's task", func() bool {
				return strings.Contains(logB.String(), jA.ID)
			})
			if !strings.Contains(logB.String(), "task without its job") {
				t.Fatalf("B's log names A's job but not why:\n%s", logB.String())
			}
		})
	}
}
