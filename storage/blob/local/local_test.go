package local_test

import (
	"testing"

	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/storage/blob/blobtest"
	"github.com/lectern-lms/lectern/storage/blob/local"
)

func open(tb testing.TB) *local.Store {
	s, err := local.New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return open(t) })
}

func BenchmarkPutGet(b *testing.B) { blobtest.BenchmarkPutGet(b, open(b)) }
