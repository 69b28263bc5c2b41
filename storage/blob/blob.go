// Package blob is the port for Lectern's file storage: the unpacked files of course packages,
// uploaded archives and xAPI attachments. Backends live in subpackages (local, minio);
// blobtest holds the contract suite every backend must pass.
//
// A blob is addressed by a key: a slash-separated relative path such as
// "tenant/course/version/path/file.html". Keys come, in part, from archives that users
// upload, so every backend validates them with the one CleanKey function before it touches a
// disk or a server; a key CleanKey refuses is never looked up, written or deleted.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Sentinel errors every backend returns (possibly wrapped); callers test them with errors.Is.
// Backends translate their driver errors into these at the edge, so no caller needs to know
// which backend it talks to.
var (
	// ErrNotFound means no blob has the given key.
	ErrNotFound = errors.New("blob not found")
	// ErrInvalidKey means a key or prefix was refused by CleanKey or CleanPrefix (path
	// traversal, absolute path, empty segment, control character, ...) or cannot be stored
	// by the backend. The store is left unchanged.
	ErrInvalidKey = errors.New("invalid blob key")
	// ErrInvalidRange means GetRange was asked for a negative offset or length, or for an
	// offset beyond the end of the blob.
	ErrInvalidRange = errors.New("invalid blob range")
	// ErrSizeMismatch means the reader given to Put yielded more or fewer bytes than the size
	// the caller declared. The blob was not written (an older version stays in place).
	ErrSizeMismatch = errors.New("blob size does not match the declared size")
)

// Limits on keys. They are the strictest of the supported backends, so that a key accepted by
// one backend is accepted by all of them: S3 limits keys to 1024 bytes of UTF-8, and common
// file systems limit one path component to 255 bytes.
const (
	// MaxKeyLength is the longest key in bytes.
	MaxKeyLength = 1024
	// MaxSegmentLength is the longest segment (text between slashes) in bytes.
	MaxSegmentLength = 255
)

// ReservedSegmentPrefix starts the names backends use for their own bookkeeping, such as the
// local backend's temporary files. CleanKey refuses key segments that begin with it, so such
// files can never collide with a key, nor be read, listed or deleted through the port.
const ReservedSegmentPrefix = ".lectern-"

// Info describes one stored blob.
type Info struct {
	// Key is the blob's key, as given to Put.
	Key string
	// Size is the length of the blob in bytes.
	Size int64
	// ModTime is when the blob was last written, as the backend records it (S3 keeps whole
	// seconds; what S3's Put returns is the client's clock, as S3 does not report it). It is
	// meant for HTTP Last-Modified headers, not for ordering writes.
	ModTime time.Time
	// ETag is an opaque token that changes whenever the blob is rewritten; it is suitable
	// for HTTP ETag headers. It is not a content hash that can be compared across backends.
	ETag string
}

// Store is the port every blob backend implements. All methods are safe for concurrent use.
//
// Keys and prefixes are validated with CleanKey and CleanPrefix first; a refused key fails
// with ErrInvalidKey before anything else happens.
//
// A key that is also the "directory" of another key ("a/b" and "a/b/c") is not portable,
// and callers (archive importers above all) should refuse such sets of names: the local
// backend refuses the second Put with ErrInvalidKey, while MinIO stores both but hides
// "a/b/c" from List for as long as "a/b" exists. DeletePrefix still removes both everywhere.
type Store interface {
	// Put stores the bytes read from r under key, replacing any blob already there. size is
	// the number of bytes r will yield, or -1 if unknown; a known size lets backends upload
	// in one request, and a reader that yields a different amount fails with
	// ErrSizeMismatch. The new blob becomes visible atomically: readers see either the old
	// or the new content, never a part, and a failed Put leaves the old blob untouched.
	Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error)
	// Get opens the blob for reading. The caller must close the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// GetRange opens length bytes of the blob starting at offset, for HTTP range requests
	// and resumable downloads. length -1 reads to the end. A range that runs past the end is
	// cut at the end (as io.SectionReader does); offset equal to the size yields an empty
	// reader; offset beyond the size, a negative offset or a length below -1 fail with
	// ErrInvalidRange. The caller must close the reader.
	GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	// Stat returns the blob's Info without reading its content.
	Stat(ctx context.Context, key string) (Info, error)
	// List calls fn for every blob whose key starts with prefix, in lexicographic (byte)
	// order of keys, as S3 lists them. The prefix is a plain string prefix: "a/b/" matches
	// "a/b/c" but not "a/bc"; "" matches every key. If fn returns an error, List stops and
	// returns that error.
	List(ctx context.Context, prefix string, fn func(Info) error) error
	// Delete removes the blob. Deleting a missing blob is not an error, because deletions
	// are retried by at-least-once jobs and S3 cannot tell the two cases apart cheaply.
	Delete(ctx context.Context, key string) error
	// DeletePrefix removes every blob whose key starts with prefix (as List matches it) and
	// returns how many it removed, for removing a course version or a tenant. The empty
	// prefix is refused with ErrInvalidKey so that a missing argument cannot wipe the store.
	// It is not atomic: after an error some blobs may be gone, and calling it again finishes
	// the job.
	DeletePrefix(ctx context.Context, prefix string) (int, error)
}

// CleanKey checks that key is a safe, portable blob key and returns it unchanged, so that
// callers can write `key, err := blob.CleanKey(key)`. Every backend calls it first.
//
// A key is one or more segments joined by "/". It is refused with ErrInvalidKey when it is
// empty or longer than MaxKeyLength bytes, is not valid UTF-8, contains a backslash or an
// ASCII control character (NUL included), starts or ends with "/", or has a segment that is
// empty ("a//b"), "." or "..", longer than MaxSegmentLength bytes, or starts with
// ReservedSegmentPrefix.
//
// It refuses rather than rewrites: cleaning "a/./b" into "a/b" would give one blob two
// names, and a caller that builds such a key has a bug worth reporting. Backslashes are
// refused because Windows and some archive tools treat them as separators.
func CleanKey(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > MaxKeyLength {
		return "", fmt.Errorf("%w: key longer than %d bytes", ErrInvalidKey, MaxKeyLength)
	}
	if err := checkChars(key); err != nil {
		return "", err
	}
	for seg := range strings.SplitSeq(key, "/") {
		if err := checkSegment(seg); err != nil {
			return "", fmt.Errorf("%w in %q", err, key)
		}
	}
	return key, nil
}

// CleanPrefix checks a prefix for List and DeletePrefix and returns it unchanged. The empty
// prefix is valid (it matches every key). Otherwise the part up to the last "/" must be a
// valid key and the part after it may be any beginning of a valid segment ("a/b/", "a/b",
// "a/.", "course-1/v"): a prefix only ever matches keys CleanKey accepts, but refusing "../"
// and friends keeps hostile input out of backends that map prefixes to directories.
func CleanPrefix(prefix string) (string, error) {
	if prefix == "" {
		return "", nil
	}
	if len(prefix) > MaxKeyLength {
		return "", fmt.Errorf("%w: prefix longer than %d bytes", ErrInvalidKey, MaxKeyLength)
	}
	if err := checkChars(prefix); err != nil {
		return "", err
	}
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if _, err := CleanKey(prefix[:i]); err != nil {
			return "", fmt.Errorf("%w (prefix %q)", err, prefix)
		}
	}
	return prefix, nil
}

// checkChars refuses characters no key may contain anywhere.
func checkChars(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidKey, s)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			return fmt.Errorf("%w: backslash in %q", ErrInvalidKey, s)
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("%w: control character %#x in %q", ErrInvalidKey, c, s)
		}
	}
	return nil
}

// checkSegment refuses one path segment that could escape, alias or collide.
func checkSegment(seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("%w: empty segment (leading, trailing or double slash)", ErrInvalidKey)
	case seg == "." || seg == "..":
		return fmt.Errorf("%w: %q segment", ErrInvalidKey, seg)
	case len(seg) > MaxSegmentLength:
		return fmt.Errorf("%w: segment longer than %d bytes", ErrInvalidKey, MaxSegmentLength)
	case strings.HasPrefix(seg, ReservedSegmentPrefix):
		return fmt.Errorf("%w: segment %q uses the reserved prefix %q", ErrInvalidKey, seg, ReservedSegmentPrefix)
	}
	return nil
}
