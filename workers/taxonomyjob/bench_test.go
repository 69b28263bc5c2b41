package taxonomyjob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/taxonomyjob"
)

// generatedTaxonomy is a CSV of n distinct skill names built from word lists ("Advanced
// pastry decorating", "Applied network auditing", ...), like an occupational taxonomy's.
func generatedTaxonomy(n int) []byte {
	level := []string{"Basic", "Advanced", "Applied", "Clinical", "Industrial", "Digital", "Strategic", "Field", "Remote", "Team"}
	topic := []string{"pastry", "network", "welding", "payroll", "patient", "forklift", "contract", "cloud", "soil", "retail",
		"bridge", "vaccine", "database", "marketing", "turbine", "legal", "kitchen", "safety", "budget", "language",
		"tax", "fleet", "laboratory", "customer", "warehouse", "energy", "software", "textile", "marine", "aviation"}
	act := []string{"decorating", "auditing", "inspection", "planning", "reporting", "maintenance", "design", "negotiation",
		"analysis", "training", "scheduling", "testing", "compliance", "operation", "troubleshooting", "assessment",
		"documentation", "forecasting", "procurement", "coordination"}
	var b bytes.Buffer
	b.WriteString("id,skill,category\n")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s %s %s", level[i%len(level)], topic[(i/len(level))%len(topic)], act[(i/(len(level)*len(topic)))%len(act)])
		if i >= len(level)*len(topic)*len(act) {
			name += fmt.Sprintf(" level %d", i/(len(level)*len(topic)*len(act))+1)
		}
		fmt.Fprintf(&b, "%d,%s,cat%d\n", i, name, i%17)
	}
	return b.Bytes()
}

// BenchmarkTaxonomyImport imports a generated 20,000-skill taxonomy as the worker does
// (parse the CSV, embed every skill once with the search model in batches, store the
// vectors blob and the record, then load it back as generation does), on each record
// store, and reports skills per second of the whole import. It needs the model
// (LECTERN_TEST_MODEL_DIR or the default install); docs/benchmarks.md has the numbers.
func BenchmarkTaxonomyImport(b *testing.B) {
	dir := os.Getenv("LECTERN_TEST_MODEL_DIR")
	if dir == "" {
		b.Skip("LECTERN_TEST_MODEL_DIR is not set (scripts/install-model.sh)")
	}
	const n = 20000
	csv := generatedTaxonomy(n)
	// before: the embedder's configuration before issue 13's embedding work (batches of 8,
	// float model only); after: onnx.New's defaults. Skill names are short, so both run the
	// float model and get the same vectors.
	for _, cfg := range []struct {
		name string
		opts []onnx.Option
	}{
		{"before", []onnx.Option{onnx.WithBatchSize(8), onnx.WithIntegerModel(false)}},
		{"after", nil},
	} {
		model, err := onnx.New(dir, cfg.opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer model.Close()
		for _, be := range recordstores.All() {
			b.Run(be.Name+"/"+cfg.name, func(b *testing.B) {
				rs := be.Open(b)
				blobs, err := local.New(filepath.Join(b.TempDir(), "blobs"))
				if err != nil {
					b.Fatal(err)
				}
				defer blobs.Close()
				ctx := context.Background()
				js := jobs.NewStore(rs)
				h := &taxonomyjob.Handler{Taxonomies: taxonomy.NewStore(rs, blobs), Jobs: js, Blobs: blobs, Embedder: model}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start, cpu0 := time.Now(), processCPU()
					skills, err := taxonomy.Parse(csv, "skill")
					if err != nil || len(skills) != n {
						b.Fatalf("parse: %d skills, %v", len(skills), err)
					}
					parsed := time.Since(start)
					p := taxonomyjob.Payload{Tenant: "bench", JobID: jobs.NewID(), TaxonomyID: "generated"}
					p.SkillsKey = taxonomyjob.SkillsKey(p.Tenant, p.JobID)
					body, _ := json.Marshal(skills)
					if _, err := blobs.Put(ctx, p.SkillsKey, bytes.NewReader(body), int64(len(body))); err != nil {
						b.Fatal(err)
					}
					if _, err := js.Create(ctx, p.JobID, taxonomyjob.JobType, p.Tenant, true); err != nil {
						b.Fatal(err)
					}
					task, _ := taxonomyjob.NewTask(p)
					if err := h.ProcessTask(ctx, task); err != nil {
						b.Fatal(err)
					}
					if j, _ := js.Get(ctx, p.JobID); j.Status != jobs.StatusCompleted {
						b.Fatalf("job %s: %+v", j.Status, j.Error)
					}
					t, err := taxonomy.NewStore(rs, blobs).Get(ctx, p.Tenant, "generated")
					if err != nil || len(t.Vectors) != n {
						b.Fatalf("load: %v", err)
					}
					total := time.Since(start)
					b.ReportMetric(float64(n)/total.Seconds(), "skills/s")
					b.ReportMetric(parsed.Seconds()*1000, "parse-ms")
					b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/n, "CPU-ms/skill")
					b.Logf("taxonomy import: %d skills in %v (parse %v)", n, total.Round(time.Millisecond), parsed.Round(time.Millisecond))
				}
			})
		}
	}
}

// processCPU is the CPU time (user + system) this process has used so far: the other
// programs on a shared machine disturb it less than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
