// Package layering has no code of its own: its test keeps the shape of the house, so that a
// change which bends it fails `go test ./...` with the import that bent it.
//
// The module is a house of floors. A package is on the floor of the longest folder prefix it
// matches; floors, top to bottom, with their rooms:
//
//	cmd/                              the binary: configuration, wiring, Prometheus
//	server/                           HTTP (Fiber): routing, auth, handlers, per product
//	workers/                          the job queue port and backends, job handlers
//	indexer/                          content search port and backends, embeddings
//	learner/                          the learner's path: launch, sessions, commit, rollup
//	course/ lrs/ content/ tenant/     the domain
//	storage/                          record, statement and blob ports and backends
//	mappings/ internal/               index mappings, text analysis, shared helpers
//
// The rules, over non-test code only (tests may reach anywhere: server's tests start the
// whole app through cmd/lectern/app/servertest, which is on the commands floor for that
// reason):
//
//  1. An import goes to its own floor or below, never up. A folder on no floor fails too,
//     so that a new one is placed on purpose.
//  2. Rooms on one floor may import each other, but never in a circle: content/ and lrs/
//     use course/ (package parsing, the settings catalogue), lrs/ uses tenant/, and none of
//     them imports back. A circle would mean the rooms are really one, or one is a floor
//     below the other.
//  3. The domain (learner/, course/, lrs/, content/, tenant/) depends on neither Fiber nor
//     any driver (SQL, Elasticsearch, Bleve, Asynq, Redis, MinIO, ONNX Runtime, Prometheus),
//     not even through another package: it reaches storage through ports, never adapters.
//  4. The HTTP layer (server/) depends on no driver either, in the same sense.
//  5. Nothing below cmd/ depends on Prometheus: what a port counts it exposes as a func hook
//     or a small interface of its own, and cmd/lectern/metrics binds it.
//
// A dependency that breaks rule 3 or 4 but cannot be undone yet is listed as a debt in the
// test, with the reason; the test fails once the debt is paid, so the list cannot go stale.
package layering
