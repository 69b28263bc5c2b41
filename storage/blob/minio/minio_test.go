package minio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	miniogo "github.com/minio/minio-go/v7"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/storage/blob/blobtest"
)

// open connects to the server named by LECTERN_TEST_S3_* and creates a bucket of its own,
// which is emptied and removed when the test ends.
func open(tb testing.TB) *Store {
	endpoint := testenv.External(tb, "LECTERN_TEST_S3_ENDPOINT")
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	bucket := "blobtest-" + hex.EncodeToString(rnd[:])
	s, err := New(tb.Context(), Config{
		Endpoint:  endpoint,
		AccessKey: os.Getenv("LECTERN_TEST_S3_ACCESS_KEY"),
		SecretKey: os.Getenv("LECTERN_TEST_S3_SECRET_KEY"),
		Bucket:    bucket,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := removeBucket(s); err != nil {
			tb.Errorf("removing bucket %s: %v", bucket, err)
		}
	})
	return s
}

// removeBucket deletes the bucket with every object in it, including any the port would
// not list. It repeats while objects remain, because MinIO hides "a/b/c" while "a/b" exists.
func removeBucket(s *Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 10 {
		objects := s.client.ListObjects(ctx, s.bucket, miniogo.ListObjectsOptions{Recursive: true})
		for res := range s.client.RemoveObjects(ctx, s.bucket, objects, miniogo.RemoveObjectsOptions{}) {
			return res.Err
		}
		err := s.client.RemoveBucket(ctx, s.bucket)
		if miniogo.ToErrorResponse(err).Code != "BucketNotEmpty" {
			return err
		}
	}
	return errors.New("bucket still not empty")
}

func TestContract(t *testing.T) {
	testenv.External(t, "LECTERN_TEST_S3_ENDPOINT") // skip (or fail in CI) once, not per case
	blobtest.Run(t, func(t *testing.T) blob.Store { return open(t) })
}

func BenchmarkPutGet(b *testing.B) { blobtest.BenchmarkPutGet(b, open(b)) }
