package main

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkScaleOutImport measures content import throughput (docs/s) of the roles run apart
// on PostgreSQL, Redis, MinIO and Elasticsearch with 1, 2 and 3 indexer processes: one serve,
// two workers (extraction) and N indexers (chunking, embedding with the local model, index
// writes), the binary of this tree. Per case SCALE_BENCH_DOCS (default 300) short text
// documents of benchDocuments are posted by 4 clients to POST /api/v1/content on fresh
// backends, and the clock stops when every job is COMPLETED. Also reported: the CPU time of
// all lectern processes per document (extraction children included), which shows whether a
// case was short of CPU or of work. Needs the model (LECTERN_TEST_MODEL_DIR, as
// BenchmarkContentImport); scripts/bench-report.sh runs it.
func BenchmarkScaleOutImport(b *testing.B) {
	modelDir := benchModelDir(b)
	n := benchCount(b, "SCALE_BENCH_DOCS", 300)
	bin := buildBinary(b)
	docs := benchDocuments(n)
	for indexers := 1; indexers <= 3; indexers++ {
		b.Run(fmt.Sprintf("indexers=%d", indexers), func(b *testing.B) {
			var total, cpu time.Duration
			for range b.N {
				took, used := scaleImportOnce(b, bin, modelDir, indexers, docs)
				total, cpu = total+took, cpu+used
			}
			b.ReportMetric(float64(b.N*len(docs))/total.Seconds(), "docs/s")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*len(docs)), "CPU-ms/doc")
		})
	}
}

// scaleImportOnce starts serve, two workers and indexers indexer processes on fresh backends,
// imports docs and returns the time from the first POST to the last job's completion and the
// CPU time the processes used meanwhile.
func scaleImportOnce(b *testing.B, bin, modelDir string, indexers int, docs [][]byte) (time.Duration, time.Duration) {
	b.StopTimer()
	env := append(distributedEnv(b), "LECTERN_MODEL_DIR="+modelDir, "LECTERN_LOG_LEVEL=warn",
		"LECTERN_ROOT_PASSWORD=bench-password")
	addr := freeAddr(b)
	env = append(env, "LECTERN_ADDR="+addr)
	roles := []string{"serve", "worker", "worker"}
	for range indexers {
		roles = append(roles, "indexer")
	}
	var procs []*roleProc
	for _, role := range roles {
		procs = append(procs, startRole(b, bin, role, env))
	}
	// At warn, "listening"/"running" are not logged: wait for readiness over HTTP, and for
	// the other processes to be alive and past their model load (their CPU settles).
	base := "http://" + addr
	waitReady(b, base+"/readyz")
	cpuAll := func() time.Duration {
		var sum time.Duration
		for _, p := range procs {
			sum += procCPU(b, p.cmd.Process.Pid)
		}
		return sum
	}
	for prev, deadline := cpuAll(), time.Now().Add(2*time.Minute); ; {
		time.Sleep(time.Second)
		now := cpuAll()
		if now-prev < 100*time.Millisecond || time.Now().After(deadline) {
			break
		}
		prev = now
	}
	for _, p := range procs {
		select {
		case <-p.exited:
			b.Fatalf("the %s process exited (%v):\n%s", p.role, p.err, p.output())
		default:
		}
	}
	took, cpu := importDocs(b, base, docs, cpuAll)
	for _, p := range procs {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return took, cpu
}
