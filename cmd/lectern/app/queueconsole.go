package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
)

// scopeQueues narrows asynqmon (h, mounted at root) to this deployment's queues. asynqmon
// shows every queue on its Redis, and several deployments may share one Redis, each with its
// own queue prefix (LECTERN_QUEUE_PREFIX): without this, root of one deployment could read,
// delete or run another's tasks. A request naming another queue is answered 404; the lists
// (queues, daily stats, servers) keep only what touches these queues; scheduler entries,
// which Lectern never creates, are not shown. Redis's own figures (redis_info) stay: they
// describe the server the operator runs.
func scopeQueues(h http.Handler, root string, queues ...string) http.Handler {
	ours := map[string]bool{}
	for _, q := range queues {
		ours[q] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api, ok := strings.CutPrefix(r.URL.Path, root+"/api/")
		if !ok {
			h.ServeHTTP(w, r) // the application's page and scripts
			return
		}
		switch {
		case strings.HasPrefix(api, "queues/"):
			q := api[len("queues/"):]
			if i := strings.IndexAny(q, "/:"); i >= 0 {
				q = q[:i]
			}
			if !ours[q] {
				notFound(w, "queue "+strconv.Quote(q)+" is not one of this deployment's")
				return
			}
			h.ServeHTTP(w, r)
		case api == "queues":
			filtered(w, r, h, func(body []byte) any {
				var v struct {
					Queues []map[string]any `json:"queues"`
				}
				if json.Unmarshal(body, &v) != nil {
					return nil
				}
				keep := []map[string]any{}
				for _, q := range v.Queues {
					if name, _ := q["queue"].(string); ours[name] {
						keep = append(keep, q)
					}
				}
				return map[string]any{"queues": keep}
			})
		case api == "queue_stats":
			filtered(w, r, h, func(body []byte) any {
				var v struct {
					Stats map[string]json.RawMessage `json:"stats"`
				}
				if json.Unmarshal(body, &v) != nil {
					return nil
				}
				keep := map[string]json.RawMessage{}
				for q, s := range v.Stats {
					if ours[q] {
						keep[q] = s
					}
				}
				return map[string]any{"stats": keep}
			})
		case api == "servers":
			filtered(w, r, h, func(body []byte) any {
				var v struct {
					Servers []map[string]json.RawMessage `json:"servers"`
				}
				if json.Unmarshal(body, &v) != nil {
					return nil
				}
				keep := []map[string]json.RawMessage{}
				for _, s := range v.Servers {
					var prio map[string]int
					_ = json.Unmarshal(s["queue_priorities"], &prio)
					for q := range prio {
						if ours[q] {
							keep = append(keep, s)
							break
						}
					}
				}
				return map[string]any{"servers": keep}
			})
		case api == "scheduler_entries":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"entries":[]}`))
		case strings.HasPrefix(api, "scheduler_entries/"):
			notFound(w, "Lectern schedules no periodic tasks")
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// filtered serves r with h and answers keep(body) in place of a successful JSON answer; an
// answer keep cannot read (nil) is refused rather than passed on unfiltered.
func filtered(w http.ResponseWriter, r *http.Request, h http.Handler, keep func([]byte) any) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	v := keep(bytes.TrimSpace(rec.Body.Bytes()))
	if v == nil {
		http.Error(w, `{"error":"the queue console's answer could not be read"}`, http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
