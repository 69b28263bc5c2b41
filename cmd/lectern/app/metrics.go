package app

import (
	"context"
	"io/fs"
	"net/http"
	"path/filepath"

	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"

	ibleve "github.com/lectern-lms/lectern/indexer/bleve"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/server"
	"github.com/lectern-lms/lectern/workers/queue"
)

// handle registers h on q wrapped in the job metrics and the log of failed attempts:
// registration is the one place every handler of both queue backends passes.
func (a *App) handle(q queue.Queue, taskType string, h queue.Handler) {
	q.Handle(taskType, queue.Observe(queue.Logged(h, a.Config.Logger), a.Metrics.JobHook(taskType)))
}

// pendingCounter is what both queue backends offer beside the port for the depth gauge.
type pendingCounter interface {
	Pending(ctx context.Context) (int, error)
}

// measurePorts adds what the metrics read from the ports on each scrape: the queues' depth and
// the search indexes' statistics.
func (a *App) measurePorts(context.Context) error {
	a.queueMetrics()
	a.indexMetrics()
	return nil
}

// queueMetrics adds the depth of the two queues, read on scrape. The label is the logical
// name ("default", "index"), without the deployment's prefix.
func (a *App) queueMetrics() {
	for name, q := range map[string]queue.Queue{"default": a.Queue, IndexQueueName: a.IndexQueue} {
		if p, ok := q.(pendingCounter); ok {
			a.Metrics.QueueDepth(name, p.Pending)
		}
	}
}

// indexMetrics adds the search indexes' document counts and sizes, read on scrape: the Bleve
// content index's doc count and directory size, or Elasticsearch's _stats (primaries) of the
// content and statements aliases.
func (a *App) indexMetrics() {
	if a.Elastic != nil {
		for _, name := range []string{mappings.Content, "statements"} {
			alias := a.Elastic.Alias(name)
			a.Metrics.IndexStats(name, func(ctx context.Context) (int64, int64, error) {
				var out struct {
					All struct {
						Primaries struct {
							Docs  struct{ Count int64 }
							Store struct {
								SizeInBytes int64 `json:"size_in_bytes"`
							}
						}
					} `json:"_all"`
				}
				err := a.Elastic.Do(ctx, "stats "+alias, esapi.IndicesStatsRequest{Index: []string{alias}, Metric: []string{"docs", "store"}}, &out)
				return out.All.Primaries.Docs.Count, out.All.Primaries.Store.SizeInBytes, err
			})
		}
		return
	}
	bi, ok := a.Index.(*ibleve.Index)
	if !ok {
		return
	}
	dir := filepath.Join(a.Config.DataDir, "search")
	a.Metrics.IndexStats(mappings.Content, func(ctx context.Context) (int64, int64, error) {
		n, err := bi.DocCount()
		if err != nil {
			return 0, 0, err
		}
		size, err := dirSize(ctx, dir)
		return int64(n), size, err
	})
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(ctx context.Context, dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// queueConsole is asynqmon over this deployment's Redis queues in the distributed mode (nil in the embedded
// mode, whose queue lives in the record store), served to root at server.QueueConsolePath.
func (a *App) queueConsole() http.Handler {
	if a.Config.RedisURL == "" {
		return nil
	}
	opt, err := asynq.ParseRedisURI(a.Config.RedisURL)
	if err != nil {
		return nil // the queue itself has already rejected such a URL
	}
	h := asynqmon.New(asynqmon.Options{RootPath: server.QueueConsolePath, RedisConnOpt: opt})
	a.closers = append(a.closers, h.Close)
	p := a.Config.queuePrefix()
	return scopeQueues(h, server.QueueConsolePath, p+"default", p+IndexQueueName)
}
