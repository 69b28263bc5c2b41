package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module's path; package names below are relative to it ("course/rollup").
const module = "github.com/lectern-lms/lectern"

// floor is one storey of the house: its rooms are folder prefixes relative to the module.
type floor struct {
	name  string
	rooms []string
}

// floors is the drawing, top to bottom (doc.go shows the same list; a test compares them).
var floors = []floor{
	{"commands", []string{"cmd", "scripts"}},
	{"HTTP", []string{"server"}},
	{"jobs", []string{"workers"}},
	{"search", []string{"indexer"}},
	{"learner", []string{"learner"}},
	{"domain", []string{"course", "lrs", "content", "tenant"}},
	{"storage", []string{"storage"}},
	{"base", []string{"mappings", "internal"}},
}

// domainRooms and httpRooms are the folders rules 3 and 4 of doc.go hold to.
var (
	domainRooms = []string{"learner", "course", "lrs", "content", "tenant"}
	httpRooms   = []string{"server"}
)

// banned is a kind of third-party dependency, named by package-path prefixes.
type banned struct {
	what     string
	prefixes []string
}

var (
	fiber   = banned{"Fiber", []string{"github.com/gofiber", "github.com/valyala/fasthttp"}}
	drivers = []banned{
		{"a SQL driver", []string{"github.com/jackc/pgx", "github.com/lib/pq", "modernc.org/sqlite",
			"github.com/mattn/go-sqlite3", "github.com/go-sql-driver/mysql"}},
		{"Elasticsearch's client", []string{"github.com/elastic/go-elasticsearch"}},
		// Bleve and its store; not github.com/blevesearch/segment, the Unicode word splitter
		// that mappings/analysis uses for the one text-analysis chain.
		{"Bleve", []string{"github.com/blevesearch/bleve", "github.com/blevesearch/bleve_index_api", "go.etcd.io/bbolt"}},
		{"Asynq or Redis", []string{"github.com/hibiken/asynq", "github.com/hibiken/asynqmon", "github.com/redis/go-redis"}},
		{"MinIO's client", []string{"github.com/minio/minio-go"}},
		{"ONNX Runtime", []string{"github.com/yalue/onnxruntime_go"}},
		prometheus,
	}
	prometheus = banned{"Prometheus", []string{"github.com/prometheus"}}
)

// debt is a dependency that breaks a rule and is known: the import of dep by the module
// package via is not followed. Each names why it is still there.
type debt struct {
	via, dep, why string
}

// debts is empty when the house is in order.
var debts []debt

// pkg is one package of `go list -json`.
type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// graph is every package the module's non-test code builds, by import path.
type graph map[string]*pkg

// load lists the module's packages and everything they import, test files left out.
func load(t *testing.T) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Standard", module+"/...")
	// The listing is the full program whatever the caller's settings: cgo on (indexer/embed/onnx,
	// the ONNX backend, needs it). The module graph may name modules no build compiles
	// (bleve's go-faiss), whose go.mod a fresh module cache has not fetched yet, so the
	// caller's GOPROXY stays in force, as for `go test` itself.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		g[p.ImportPath] = &p
	}
	return g
}

// rel is the path of a module package relative to the module; ok is false for others.
func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// name is how reports print a package: relative when it is the module's.
func name(path string) string {
	if r, ok := rel(path); ok {
		return r
	}
	return path
}

// under reports whether path is prefix or a package below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// place finds the floor (its index, top = 0) and room of a module package: the longest room
// prefix it matches. ok is false when it is on no floor.
func place(fs []floor, relPath string) (level int, room string, ok bool) {
	for i, f := range fs {
		for _, r := range f.rooms {
			if under(relPath, r) && len(r) > len(room) {
				level, room, ok = i, r, true
			}
		}
	}
	return level, room, ok
}

// modulePackages lists the module's packages, relative, sorted.
func (g graph) modulePackages() []string {
	var out []string
	for path := range g {
		if r, ok := rel(path); ok {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// imports lists the module packages a module package imports, relative.
func (g graph) imports(relPath string) []string {
	var out []string
	for _, imp := range g[module+"/"+relPath].Imports {
		if r, ok := rel(imp); ok {
			out = append(out, r)
		}
	}
	return out
}

// checkFloors applies rule 1: every module package is on a floor and imports nothing above it.
func checkFloors(g graph, fs []floor) []string {
	var bad []string
	for _, p := range g.modulePackages() {
		pl, _, ok := place(fs, p)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is on no floor: place its folder in floors (internal/layering)", p))
			continue
		}
		for _, q := range g.imports(p) {
			if ql, _, ok := place(fs, q); ok && ql < pl {
				bad = append(bad, fmt.Sprintf("%s (floor %s) imports %s (floor %s, above it)", p, fs[pl].name, q, fs[ql].name))
			}
		}
	}
	return bad
}

// checkRooms applies rule 2: on each floor, no two rooms reach each other through imports
// between rooms of that floor.
func checkRooms(g graph, fs []floor) []string {
	var bad []string
	for fi, f := range fs {
		// edge[a][b] is one import from room a to room b, as an example for the report.
		edge := map[string]map[string]string{}
		for _, p := range g.modulePackages() {
			pl, pr, _ := place(fs, p)
			if pl != fi {
				continue
			}
			for _, q := range g.imports(p) {
				if ql, qr, ok := place(fs, q); ok && ql == fi && qr != pr {
					if edge[pr] == nil {
						edge[pr] = map[string]string{}
					}
					if _, seen := edge[pr][qr]; !seen {
						edge[pr][qr] = p + " → " + q
					}
				}
			}
		}
		reach := func(from, to string) []string { // a path of example imports, nil if none
			prev := map[string]string{from: ""}
			queue := []string{from}
			for len(queue) > 0 {
				r := queue[0]
				queue = queue[1:]
				for _, next := range slices.Sorted(maps.Keys(edge[r])) {
					if _, seen := prev[next]; seen {
						continue
					}
					prev[next] = r
					if next == to {
						var path []string
						for at := to; at != from; at = prev[at] {
							path = append([]string{edge[prev[at]][at]}, path...)
						}
						return path
					}
					queue = append(queue, next)
				}
			}
			return nil
		}
		for i, a := range f.rooms {
			for _, b := range f.rooms[i+1:] {
				ab, ba := reach(a, b), reach(b, a)
				if ab != nil && ba != nil {
					bad = append(bad, fmt.Sprintf("rooms %s and %s of floor %s import each other: %s; and %s",
						a, b, f.name, strings.Join(ab, ", "), strings.Join(ba, ", ")))
				}
			}
		}
	}
	return bad
}

// checkBanned applies rules 3 to 5: no module package under one of rooms depends on a kind in
// kinds, directly or through packages outside the rooms. Each finding names the shortest
// chain of imports from the package that breaks the rule. The debts' imports are not followed.
func checkBanned(g graph, rooms []string, kinds []banned, ds []debt) []string {
	var bad []string
	skip := map[[2]string]bool{}
	for _, d := range ds {
		skip[[2]string{module + "/" + d.via, d.dep}] = true
	}
	kindOf := func(path string) (banned, bool) {
		for _, k := range kinds {
			for _, p := range k.prefixes {
				if under(path, p) {
					return k, true
				}
			}
		}
		return banned{}, false
	}
	inRooms := func(path string) bool {
		r, ok := rel(path)
		return ok && slices.ContainsFunc(rooms, func(room string) bool { return under(r, room) })
	}
	for _, p := range g.modulePackages() {
		if !slices.ContainsFunc(rooms, func(r string) bool { return under(p, r) }) {
			continue
		}
		start := module + "/" + p
		if p == "." {
			start = module
		}
		prev := map[string]string{start: ""}
		queue := []string{start}
		found := map[string]bool{}
		for len(queue) > 0 {
			at := queue[0]
			queue = queue[1:]
			if g[at] == nil {
				continue
			}
			for _, imp := range g[at].Imports {
				if _, seen := prev[imp]; seen || skip[[2]string{at, imp}] {
					continue
				}
				prev[imp] = at
				if k, ok := kindOf(imp); ok {
					if !found[k.what] {
						found[k.what] = true
						chain := []string{name(imp)}
						for x := at; x != ""; x = prev[x] {
							chain = append([]string{name(x)}, chain...)
						}
						bad = append(bad, fmt.Sprintf("%s depends on %s: %s", p, k.what, strings.Join(chain, " → ")))
					}
					continue // its own imports are the driver's business
				}
				// A package of the rooms is checked on its own: following it would report its
				// finding again under every package that imports it.
				if q := g[imp]; q != nil && !q.Standard && !inRooms(imp) {
					queue = append(queue, imp)
				}
			}
		}
	}
	return bad
}

// checkDebts fails for a debt that is paid: the import it excuses is gone.
func checkDebts(g graph, ds []debt) []string {
	var bad []string
	for _, d := range ds {
		p := g[module+"/"+d.via]
		if p == nil || !slices.ContainsFunc(p.Imports, func(imp string) bool { return under(imp, d.dep) }) {
			bad = append(bad, fmt.Sprintf("debt paid: %s no longer imports %s; remove it from debts", d.via, d.dep))
		}
	}
	return bad
}

// belowCmd is every room of every floor under the commands floor.
func belowCmd(fs []floor) []string {
	var out []string
	for _, f := range fs[1:] {
		out = append(out, f.rooms...)
	}
	return out
}

// TestLayering holds the module to the rules of doc.go.
func TestLayering(t *testing.T) {
	g := load(t)
	fs := floors
	if len(g.modulePackages()) < 20 {
		t.Fatalf("go list found only %v: not the module", g.modulePackages())
	}
	for _, d := range debts {
		t.Logf("known debt: %s imports %s: %s", d.via, d.dep, d.why)
	}
	for _, rule := range []struct {
		name string
		bad  []string
	}{
		{"floors: imports go down", checkFloors(g, fs)},
		{"rooms: no circles on a floor", checkRooms(g, fs)},
		{"domain: no Fiber, no drivers", checkBanned(g, domainRooms, append([]banned{fiber}, drivers...), debts)},
		{"HTTP: no drivers", checkBanned(g, httpRooms, drivers, debts)},
		{"Prometheus only in cmd", checkBanned(g, belowCmd(fs), []banned{prometheus}, debts)},
		{"debts are still owed", checkDebts(g, debts)},
	} {
		t.Run(rule.name, func(t *testing.T) {
			for _, b := range rule.bad {
				t.Error(b)
			}
		})
	}
}

// TestRulesCatch runs the rules over a made-up module that breaks each one, so that a rule
// which silently stopped matching anything fails here.
func TestRulesCatch(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	g := graph{}
	add := func(path string, std bool, imports ...string) {
		g[path] = &pkg{ImportPath: path, Imports: imports, Standard: std}
	}
	add(m("course/rollup"), false, m("server"), "github.com/gofiber/fiber/v2", m("lrs/xapi"), "fmt")
	add(m("lrs/xapi"), false, m("course/rollup"), m("storage/record/sqlite"))
	add(m("storage/record/sqlite"), false, "modernc.org/sqlite", "database/sql")
	add(m("server"), false, m("indexer/embed"), m("workers/queue/asynq"))
	add(m("indexer/embed"), false, "github.com/yalue/onnxruntime_go")
	add(m("workers/queue/asynq"), false, "github.com/hibiken/asynq")
	add(m("workers/metrics"), false, "github.com/prometheus/client_golang/prometheus")
	add(m("sequencing"), false)
	add("github.com/gofiber/fiber/v2", false, "github.com/valyala/fasthttp")
	add("github.com/valyala/fasthttp", false)
	add("modernc.org/sqlite", false, "database/sql")
	add("github.com/yalue/onnxruntime_go", false)
	add("github.com/hibiken/asynq", false, "github.com/redis/go-redis/v9")
	add("github.com/redis/go-redis/v9", false)
	add("github.com/prometheus/client_golang/prometheus", false)
	add("fmt", true)
	add("database/sql", true)
	// A debt of the made-up module, so that the checks of debts run whether or not the real
	// module owes any.
	owed := []debt{{via: "indexer/embed", dep: "github.com/yalue/onnxruntime_go", why: "made up"}}
	fs := floors
	for _, tc := range []struct {
		rule string
		bad  []string
		want []string
	}{
		{"floors", checkFloors(g, fs), []string{
			"course/rollup (floor domain) imports server (floor HTTP, above it)",
			"sequencing is on no floor"}},
		{"rooms", checkRooms(g, fs), []string{
			"rooms course and lrs of floor domain import each other: course/rollup → lrs/xapi; and lrs/xapi → course/rollup"}},
		{"domain", checkBanned(g, domainRooms, append([]banned{fiber}, drivers...), nil), []string{
			"course/rollup depends on Fiber: course/rollup → github.com/gofiber/fiber/v2",
			"course/rollup depends on Asynq or Redis: course/rollup → server → workers/queue/asynq → github.com/hibiken/asynq",
			"lrs/xapi depends on a SQL driver: lrs/xapi → storage/record/sqlite → modernc.org/sqlite"}},
		{"HTTP", checkBanned(g, httpRooms, drivers, nil), []string{
			"server depends on ONNX Runtime: server → indexer/embed → github.com/yalue/onnxruntime_go"}},
		{"HTTP with the debt", checkBanned(g, httpRooms, drivers, owed), []string{
			"server depends on Asynq or Redis: server → workers/queue/asynq → github.com/hibiken/asynq"}},
		{"Prometheus", checkBanned(g, belowCmd(fs), []banned{prometheus}, nil), []string{
			"workers/metrics depends on Prometheus: workers/metrics → github.com/prometheus/client_golang/prometheus"}},
		{"debts", checkDebts(graph{m("indexer/embed"): {ImportPath: m("indexer/embed")}}, owed), []string{
			"debt paid: indexer/embed no longer imports github.com/yalue/onnxruntime_go"}},
	} {
		for _, w := range tc.want {
			if !slices.ContainsFunc(tc.bad, func(b string) bool { return strings.HasPrefix(b, w) }) {
				t.Errorf("%s: no finding %q in\n%s", tc.rule, w, strings.Join(tc.bad, "\n"))
			}
		}
		if tc.rule == "HTTP with the debt" && slices.ContainsFunc(tc.bad, func(b string) bool { return strings.Contains(b, "ONNX") }) {
			t.Errorf("the debt did not excuse its import: %v", tc.bad)
		}
	}
}

// TestDocShowsTheFloors compares the drawing in doc.go with floors.
func TestDocShowsTheFloors(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var doc [][]string
	for line := range strings.Lines(string(b)) {
		drawn, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			continue
		}
		var rooms []string
		for _, f := range strings.Fields(drawn) {
			if r, ok := strings.CutSuffix(f, "/"); ok {
				rooms = append(rooms, r)
			}
		}
		doc = append(doc, rooms)
	}
	var code [][]string
	for _, f := range floors {
		code = append(code, f.rooms)
	}
	if !slices.EqualFunc(doc, code, slices.Equal) {
		t.Fatalf("doc.go draws %v, floors is %v", doc, code)
	}
}
