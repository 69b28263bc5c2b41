// Package minio is the blob.Store backend for MinIO and other S3-compatible object stores,
// built on minio-go. Keys map one to one to object names in a single bucket.
//
// Driver errors are translated at this edge (as Gitea's convertMinioErr does): a missing
// object becomes blob.ErrNotFound and an unsatisfiable range blob.ErrInvalidRange, so only
// the port's sentinels cross the port.
package minio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"path"
	"strings"
	"time"

	miniogo "github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/storage/blob"
)

// DefaultPartSize is the multipart part size for uploads of unknown size. minio-go would
// otherwise size parts for a 5 TiB object and buffer about 537 MiB per upload; 16 MiB parts
// cap such an upload at 160 GiB (10,000 parts), far above any course package.
const DefaultPartSize = 16 << 20

// Config says where the bucket is and how to reach it.
type Config struct {
	// Endpoint is host[:port] of the S3 API, without a scheme, e.g. "127.0.0.1:9000".
	Endpoint string
	// AccessKey and SecretKey are the static credentials (MinIO's root user or a service
	// account with read, write, list and delete rights on the bucket).
	AccessKey string
	SecretKey string
	// Bucket is created on first use if it does not exist.
	Bucket string
	// UseSSL selects https.
	UseSSL bool
	// Region is used when the bucket is created; empty means the server's default.
	Region string
	// PartSize overrides DefaultPartSize for uploads of unknown size.
	PartSize uint64
}

// Store keeps blobs as objects in one bucket.
type Store struct {
	client   *miniogo.Client
	core     miniogo.Core
	bucket   string
	partSize uint64
}

var _ blob.Store = (*Store)(nil)

// New connects to the server and creates the bucket if it is missing, so that a
// misconfigured endpoint or credentials fail at start-up rather than on the first upload.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("minio blob store: Endpoint and Bucket are required")
	}
	client, err := miniogo.New(cfg.Endpoint, &miniogo.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.UseSSL,
		Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("minio blob store: %w", err)
	}
	s := &Store{client: client, core: miniogo.Core{Client: client}, bucket: cfg.Bucket, partSize: cfg.PartSize}
	if s.partSize == 0 {
		s.partSize = DefaultPartSize
	}
	exists, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("minio blob store: checking bucket %s: %w", cfg.Bucket, err)
	}
	if !exists {
		err := client.MakeBucket(ctx, cfg.Bucket, miniogo.MakeBucketOptions{Region: cfg.Region})
		// Another instance starting at the same time may have won the race; whatever the
		// server answered then (BucketAlreadyOwnedByYou, or an operation-in-progress error
		// while the winner's request runs), the bucket being there is all that counts.
		if err != nil && miniogo.ToErrorResponse(err).Code != miniogo.BucketAlreadyOwnedByYou {
			if !s.waitBucket(ctx, cfg.Bucket) {
				return nil, fmt.Errorf("minio blob store: creating bucket %s: %w", cfg.Bucket, err)
			}
		}
	}
	return s, nil
}

// waitBucket reports whether the bucket exists, asking for up to ten seconds while a
// concurrent creator finishes.
func (s *Store) waitBucket(ctx context.Context, bucket string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ok, err := s.client.BucketExists(ctx, bucket); err == nil && ok {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Put implements blob.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Info, error) {
	key, err := blob.CleanKey(key)
	if err != nil {
		return blob.Info{}, err
	}
	opts := miniogo.PutObjectOptions{
		// Stored with the object, so that presigned or proxied downloads get the right type.
		ContentType: contentType(key),
	}
	var exact *exactReader
	if size >= 0 {
		// minio-go reads exactly size bytes and would store a truncated or silently cut
		// body; exactReader turns both into ErrSizeMismatch before the upload completes.
		exact = &exactReader{r: r, left: size, size: size}
		r = exact
		// With nothing to read, the uploader never calls Read, so check for extra bytes here.
		if size == 0 && exact.hasMore() {
			return blob.Info{}, fmt.Errorf("%w: put %s: reader holds more than the declared 0 bytes", blob.ErrSizeMismatch, key)
		}
	} else {
		size = -1
		opts.PartSize = s.partSize
	}
	up, err := s.client.PutObject(ctx, s.bucket, key, r, size, opts)
	if err != nil {
		if exact != nil && exact.err != nil {
			return blob.Info{}, fmt.Errorf("minio blob store: put %s: %w", key, exact.err)
		}
		return blob.Info{}, convertErr("put", key, err)
	}
	// S3 does not return the modification time of a PUT; the local clock is close enough
	// for Last-Modified, and Stat reports the server's value.
	mod := up.LastModified
	if mod.IsZero() {
		mod = time.Now().UTC().Truncate(time.Second)
	}
	return blob.Info{Key: key, Size: up.Size, ModTime: mod, ETag: up.ETag}, nil
}

// contentType guesses a MIME type from the key's extension.
func contentType(key string) string {
	if t := mime.TypeByExtension(path.Ext(key)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Get implements blob.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	key, err := blob.CleanKey(key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	// Core.GetObject sends the GET at once and returns its headers, so a missing object
	// fails here and not on the first Read (Client.GetObject is lazy and costs a HEAD).
	body, oi, _, err := s.core.GetObject(ctx, s.bucket, key, miniogo.GetObjectOptions{})
	if err != nil {
		return nil, blob.Info{}, convertErr("get", key, err)
	}
	return body, info(key, oi), nil
}

// GetRange implements blob.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	key, err := blob.CleanKey(key)
	if err != nil {
		return nil, err
	}
	if offset < 0 || length < -1 {
		return nil, fmt.Errorf("%w: offset %d, length %d", blob.ErrInvalidRange, offset, length)
	}
	if length > math.MaxInt64-offset {
		length = -1 // reads to the end either way, and offset+length must not overflow
	}
	if length == 0 {
		// HTTP cannot express an empty range; check the object and the offset instead.
		return s.emptyRange(ctx, key, offset)
	}
	var opts miniogo.GetObjectOptions
	switch {
	case length == -1 && offset == 0:
		// The whole object: no Range header, which also works for empty objects.
	case length == -1:
		err = opts.SetRange(offset, 0)
	default:
		err = opts.SetRange(offset, offset+length-1)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", blob.ErrInvalidRange, err)
	}
	body, _, _, err := s.core.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		if miniogo.ToErrorResponse(asResponse(err)).Code == miniogo.InvalidRange {
			// S3 refuses a range that starts at the end, which the port allows.
			return s.emptyRange(ctx, key, offset)
		}
		return nil, convertErr("get", key, err)
	}
	return body, nil
}

// emptyRange returns an empty reader when offset is exactly the size of the object and
// ErrInvalidRange when it lies beyond.
func (s *Store) emptyRange(ctx context.Context, key string, offset int64) (io.ReadCloser, error) {
	oi, err := s.client.StatObject(ctx, s.bucket, key, miniogo.StatObjectOptions{})
	if err != nil {
		return nil, convertErr("stat", key, err)
	}
	if offset > oi.Size {
		return nil, fmt.Errorf("%w: offset %d of %s (%d bytes)", blob.ErrInvalidRange, offset, key, oi.Size)
	}
	return io.NopCloser(strings.NewReader("")), nil
}

// Stat implements blob.Store.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	key, err := blob.CleanKey(key)
	if err != nil {
		return blob.Info{}, err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, key, miniogo.StatObjectOptions{})
	if err != nil {
		return blob.Info{}, convertErr("stat", key, err)
	}
	return info(key, oi), nil
}

// List implements blob.Store. S3 lists keys in byte order, which is the port's order.
func (s *Store) List(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	prefix, err := blob.CleanPrefix(prefix)
	if err != nil {
		return err
	}
	return s.list(ctx, prefix, func(oi miniogo.ObjectInfo) error { return fn(info(oi.Key, oi)) })
}

// list calls fn for every object below prefix whose name is a valid key. Objects that other
// tools put into the bucket under names CleanKey refuses are skipped: the port could not
// read or delete them anyway.
func (s *Store) list(ctx context.Context, prefix string, fn func(miniogo.ObjectInfo) error) error {
	ctx, cancel := context.WithCancel(ctx)
	objects := s.client.ListObjects(ctx, s.bucket, miniogo.ListObjectsOptions{Prefix: prefix, Recursive: true})
	// minio-go's listing goroutine ends only once its channel is drained after cancellation.
	defer func() {
		cancel()
		for range objects {
		}
	}()
	for oi := range objects {
		if oi.Err != nil {
			return convertErr("list", prefix, oi.Err)
		}
		if _, err := blob.CleanKey(oi.Key); err != nil {
			continue
		}
		if err := fn(oi); err != nil {
			return err
		}
	}
	return nil
}

// Delete implements blob.Store. S3 reports success for missing objects too.
func (s *Store) Delete(ctx context.Context, key string) error {
	key, err := blob.CleanKey(key)
	if err != nil {
		return err
	}
	err = convertErr("delete", key, s.client.RemoveObject(ctx, s.bucket, key, miniogo.RemoveObjectOptions{}))
	if errors.Is(err, blob.ErrNotFound) {
		return nil
	}
	return err
}

// maxDeletePasses bounds DeletePrefix's passes over the listing (see there).
const maxDeletePasses = 10

// DeletePrefix implements blob.Store. The listing streams into RemoveObjects, which sends
// DeleteObjects requests of up to 1,000 keys each, so a course of any size costs one request
// per thousand files rather than one per file.
//
// It lists again until a pass finds nothing: MinIO hides "a/b/c" from listings while an
// object "a/b" exists, so deleting "a/b" can uncover more objects below the prefix.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	prefix, err := blob.CleanPrefix(prefix)
	if err != nil {
		return 0, err
	}
	if prefix == "" {
		return 0, fmt.Errorf("%w: DeletePrefix needs a non-empty prefix", blob.ErrInvalidKey)
	}
	total := 0
	for range maxDeletePasses {
		n, err := s.deletePass(ctx, prefix)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

// deletePass lists the prefix once and removes what it lists.
func (s *Store) deletePass(ctx context.Context, prefix string) (int, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	objects := make(chan miniogo.ObjectInfo)
	listErr := make(chan error, 1)
	go func() {
		defer close(objects)
		listErr <- s.list(ctx, prefix, func(oi miniogo.ObjectInfo) error {
			select {
			case objects <- miniogo.ObjectInfo{Key: oi.Key}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	n := 0
	var errs []error
	for res := range s.client.RemoveObjectsWithResult(ctx, s.bucket, objects, miniogo.RemoveObjectsOptions{}) {
		if res.Err != nil {
			if len(errs) < 10 { // enough to diagnose; a broken server fails every key
				errs = append(errs, convertErr("delete", res.ObjectName, res.Err))
			}
			cancel() // stop listing; the caller retries after fixing the cause
			continue
		}
		n++
	}
	// RemoveObjects may stop early; unblock the lister before waiting for it.
	cancel()
	for range objects {
	}
	if err := <-listErr; err != nil && !errors.Is(err, context.Canceled) {
		errs = append(errs, err)
	}
	if err := parent.Err(); err != nil {
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// info converts minio-go's object metadata.
func info(key string, oi miniogo.ObjectInfo) blob.Info {
	return blob.Info{Key: key, Size: oi.Size, ModTime: oi.LastModified, ETag: oi.ETag}
}

// asResponse finds a minio-go ErrorResponse in err's chain; minio-go's own ToErrorResponse
// only looks at the outermost error.
func asResponse(err error) error {
	var resp miniogo.ErrorResponse
	if errors.As(err, &resp) {
		return resp
	}
	return err
}

// convertErr translates driver errors into the port's sentinels. Translated errors do not
// wrap the driver error, so callers cannot come to depend on minio-go types.
func convertErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	resp := miniogo.ToErrorResponse(asResponse(err))
	switch resp.Code {
	case miniogo.NoSuchKey:
		return fmt.Errorf("%w: %s", blob.ErrNotFound, key)
	case miniogo.InvalidRange:
		return fmt.Errorf("%w: %s", blob.ErrInvalidRange, key)
	}
	// An unreachable server, or one that says it cannot serve now, is an outage (after
	// minio-go's own retries): the caller answers 503 or retries the job.
	switch {
	case storage.IsConnectionError(err), resp.StatusCode == 502, resp.StatusCode == 503, resp.StatusCode == 504,
		resp.Code == "SlowDown", resp.Code == "XMinioServerNotInitialized":
		return fmt.Errorf("minio blob store: %s %s: %w", op, key, storage.Unavailable("minio", err))
	}
	return fmt.Errorf("minio blob store: %s %s: %w", op, key, err)
}

// exactReader yields exactly size bytes of r and fails with blob.ErrSizeMismatch if r holds
// fewer or more. The check for extra bytes happens as the last expected byte is read, because
// the uploader stops reading once it has size bytes and would never see them otherwise.
type exactReader struct {
	r          io.Reader
	left, size int64
	err        error
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case e.left == 0:
		if e.hasMore() {
			e.err = fmt.Errorf("%w: reader holds more than the declared %d bytes", blob.ErrSizeMismatch, e.size)
			return 0, e.err
		}
		if e.err != nil {
			return 0, e.err
		}
		return n, io.EOF
	case err == io.EOF:
		e.err = fmt.Errorf("%w: reader ended after %d of the declared %d bytes", blob.ErrSizeMismatch, e.size-e.left, e.size)
		return n, e.err
	case err != nil:
		e.err = err
	}
	return n, err
}

// hasMore reads ahead one byte. A read error other than EOF is kept in e.err.
func (e *exactReader) hasMore() bool {
	var b [1]byte
	for range 100 {
		n, err := e.r.Read(b[:])
		if n > 0 {
			return true
		}
		if err == io.EOF {
			return false
		}
		if err != nil {
			e.err = err
			return false
		}
	}
	e.err = io.ErrNoProgress
	return false
}
