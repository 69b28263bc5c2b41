// Package recordbench holds throughput benchmarks that run the record store backends
// (SQLite and PostgreSQL) side by side through the record.Store port, so their figures come
// from the same run on the same machine. It has no non-test code; run it with
// scripts/bench-report.sh, which loads the services environment and prints a comparison table.
//
// Every sub-benchmark is named BenchmarkRecordStore/<operation>/<backend> and reports
// "records/s". Operations:
//
//   - put: Create of a new ~1 KB JSON record, one caller at a time.
//   - put_parallel: the same Create from many goroutines at once (b.RunParallel).
//   - get: Get of a random record among 10,000 of one kind.
//   - list: paging through 10,000 records of one kind, 100 per page; one op is a full pass.
//
// Each sub-benchmark starts from an empty store (a new SQLite file in WAL mode with
// synchronous=FULL, or a new PostgreSQL database), so table size does not leak between them.
// get and list fill the store through the port and then run ANALYZE, as autovacuum would have
// on a long-running PostgreSQL (without statistics its planner skips the primary key).
// The PostgreSQL part needs LECTERN_TEST_POSTGRES_URL (see internal/testenv): it is skipped
// locally without it and fails when CI is set.
package recordbench
