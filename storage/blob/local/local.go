// Package local is the embedded blob.Store backend: one file per blob under a root
// directory, the key's segments becoming directories. It is the default backend and needs no
// server.
//
// All file access goes through an os.Root, so no key and no symbolic link planted in the
// directory can reach a file outside it. Writes go to a temporary file in the target
// directory, which is synced and renamed over the target, and the directory is synced too:
// a Put that returned survives a crash or kill -9, and a Put that did not return leaves the
// old blob (and at worst an orphaned temporary file, which the port never shows).
package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/lectern-lms/lectern/storage/blob"
)

// tempPrefix starts the names of files being written. It begins with
// blob.ReservedSegmentPrefix, so no valid key can name, list or delete one.
const tempPrefix = blob.ReservedSegmentPrefix + "tmp-"

// mkdirAttempts bounds how often Put recreates a directory that a concurrent Delete removed
// because it had become empty. Each retry needs another deletion to win the race again.
const mkdirAttempts = 10

// Store keeps blobs as files below one directory.
type Store struct {
	root *os.Root
}

var _ blob.Store = (*Store)(nil)

// New opens the store rooted at dir, creating the directory if needed. Call Close when done.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("local blob store: empty directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("local blob store: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("local blob store: %w", err)
	}
	return &Store{root: root}, nil
}

// Close releases the root directory handle. Readers returned earlier stay usable.
func (s *Store) Close() error { return s.root.Close() }

// Put implements blob.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Info, error) {
	key, err := blob.CleanKey(key)
	if err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	dir := path.Dir(key)
	f, tmp, err := s.createTemp(dir)
	if err != nil {
		return blob.Info{}, s.putErr(key, err)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			_ = s.root.Remove(tmp)
		}
	}()

	src := &ctxReader{ctx: ctx, r: r}
	var n int64
	if size >= 0 {
		// One byte more than declared tells a long reader from an exact one.
		n, err = io.Copy(f, io.LimitReader(src, size+1))
		if err == nil && n != size {
			err = fmt.Errorf("%w: %s: read %s bytes, declared %d", blob.ErrSizeMismatch, key, countDesc(n, size), size)
		}
	} else {
		n, err = io.Copy(f, src)
	}
	if err != nil {
		return blob.Info{}, fmt.Errorf("local blob store: put %s: %w", key, err)
	}
	// The data must be on disk before the rename makes it visible, or a crash could leave
	// the new name pointing at an empty file.
	if err := f.Sync(); err != nil {
		return blob.Info{}, fmt.Errorf("local blob store: put %s: %w", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return blob.Info{}, fmt.Errorf("local blob store: put %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		return blob.Info{}, fmt.Errorf("local blob store: put %s: %w", key, err)
	}
	if err := s.root.Rename(tmp, filepath.FromSlash(key)); err != nil {
		// Renaming a file over a directory fails with EISDIR or, depending on the
		// system, EEXIST or ENOTEMPTY.
		if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
			err = &fs.PathError{Op: "rename", Path: key, Err: syscall.EISDIR}
		}
		return blob.Info{}, s.putErr(key, err)
	}
	committed = true
	// The rename lives in the directory; syncing it makes the new name durable.
	if err := s.syncDir(dir); err != nil {
		return blob.Info{}, fmt.Errorf("local blob store: put %s: %w", key, err)
	}
	return info(key, fi), nil
}

// countDesc describes how many bytes a size-limited copy saw.
func countDesc(n, size int64) string {
	if n > size {
		return "more than " + strconv.FormatInt(size, 10)
	}
	return strconv.FormatInt(n, 10)
}

// putErr turns the errors of a key that collides with a directory, or of a key below a
// file, into ErrInvalidKey: a file system cannot hold both "a/b" and "a/b/c".
func (s *Store) putErr(key string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
		return fmt.Errorf("%w: %s: conflicts with an existing blob or directory: %v", blob.ErrInvalidKey, key, err)
	}
	return fmt.Errorf("local blob store: put %s: %w", key, err)
}

// createTemp creates a new temporary file in dir, creating dir first if needed.
func (s *Store) createTemp(dir string) (*os.File, string, error) {
	var lastErr error
	for range mkdirAttempts {
		var rnd [12]byte
		_, _ = rand.Read(rnd[:])
		name := filepath.FromSlash(path.Join(dir, tempPrefix+hex.EncodeToString(rnd[:])))
		f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
		lastErr = err
		if err := s.mkdirAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
	}
	return nil, "", lastErr
}

// mkdirAll creates dir and its missing parents, syncing the parent of every directory it
// creates so that the path to a synced file survives a crash as well.
func (s *Store) mkdirAll(dir string) error {
	if dir == "." {
		return nil
	}
	if err := s.mkdirAll(path.Dir(dir)); err != nil {
		return err
	}
	err := s.root.Mkdir(filepath.FromSlash(dir), 0o755)
	if errors.Is(err, fs.ErrExist) {
		fi, serr := s.root.Stat(filepath.FromSlash(dir))
		if serr != nil {
			return serr
		}
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if err != nil {
		return err
	}
	return s.syncDir(path.Dir(dir))
}

// syncDir fsyncs a directory so that entries created, renamed or removed in it persist.
func (s *Store) syncDir(dir string) error {
	d, err := s.root.Open(filepath.FromSlash(dir))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get implements blob.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	f, fi, err := s.open(ctx, key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	return f, info(key, fi), nil
}

// GetRange implements blob.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	f, fi, err := s.open(ctx, key)
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if offset < 0 || length < -1 || offset > size {
		f.Close()
		return nil, fmt.Errorf("%w: offset %d, length %d of %s (%d bytes)", blob.ErrInvalidRange, offset, length, key, size)
	}
	if length == -1 || length > size-offset {
		length = size - offset
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, offset, length), f}, nil
}

// open validates key and opens the regular file that holds it.
func (s *Store) open(ctx context.Context, key string) (*os.File, fs.FileInfo, error) {
	key, err := blob.CleanKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	f, err := s.root.Open(filepath.FromSlash(key))
	if err != nil {
		return nil, nil, s.readErr(key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("local blob store: %s: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s", blob.ErrNotFound, key)
	}
	return f, fi, nil
}

// readErr translates file-system errors of a lookup into the port's sentinels.
func (s *Store) readErr(key string, err error) error {
	// ENOTDIR: a parent segment is a file ("a/b/c" when "a/b" is a blob).
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: %s", blob.ErrNotFound, key)
	}
	return fmt.Errorf("local blob store: %s: %w", key, err)
}

// Stat implements blob.Store.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	key, err := blob.CleanKey(key)
	if err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	fi, err := s.root.Stat(filepath.FromSlash(key))
	if err != nil {
		return blob.Info{}, s.readErr(key, err)
	}
	if !fi.Mode().IsRegular() {
		return blob.Info{}, fmt.Errorf("%w: %s", blob.ErrNotFound, key)
	}
	return info(key, fi), nil
}

// List implements blob.Store.
func (s *Store) List(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	prefix, err := blob.CleanPrefix(prefix)
	if err != nil {
		return err
	}
	return s.walk(ctx, prefix, fn)
}

// walk calls fn for the regular files whose keys start with prefix, in key order. Only the
// directory named by the prefix up to its last "/" is read, not the whole tree.
func (s *Store) walk(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	dir := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	return s.walkDir(ctx, dir, prefix, fn)
}

// walkDir lists one directory. Directory walks sort names per directory, which is not key
// order: "a/b-x" sorts before "a/b/1" as a key ('-' < '/') but after "a/b" as a name, so
// directories are compared as name + "/".
func (s *Store) walkDir(ctx context.Context, dir, prefix string, fn func(blob.Info) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := s.root.Open(filepath.FromSlash(dir))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // no key has this prefix
	}
	if err != nil {
		return fmt.Errorf("local blob store: list %s: %w", dir, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("local blob store: list %s: %w", dir, err)
	}
	type item struct {
		sortKey string
		entry   fs.DirEntry
	}
	items := make([]item, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		// Skip temporary files and anything that is neither a file nor a directory. Symbolic
		// links are skipped too: the store never creates them, and following one could list
		// a subtree twice or loop.
		if strings.HasPrefix(name, blob.ReservedSegmentPrefix) || !(e.Type().IsRegular() || e.IsDir()) {
			continue
		}
		sortKey := name
		if e.IsDir() {
			sortKey += "/"
		}
		items = append(items, item{sortKey, e})
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.sortKey, b.sortKey) })
	for _, it := range items {
		key := it.entry.Name()
		if dir != "." {
			key = dir + "/" + key
		}
		if it.entry.IsDir() {
			// Descend only where keys can still match: below the prefix, or on its way.
			if p := key + "/"; strings.HasPrefix(p, prefix) || strings.HasPrefix(prefix, p) {
				if err := s.walkDir(ctx, key, prefix, fn); err != nil {
					return err
				}
			}
			continue
		}
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		fi, err := it.entry.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since ReadDir
		}
		if err != nil {
			return fmt.Errorf("local blob store: list %s: %w", key, err)
		}
		if err := fn(info(key, fi)); err != nil {
			return err
		}
	}
	return nil
}

// Delete implements blob.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	key, err := blob.CleanKey(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	removed, err := s.remove(key)
	if err != nil || !removed {
		return err
	}
	dir := path.Dir(key)
	if err := s.syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("local blob store: delete %s: %w", key, err)
	}
	s.prune(dir)
	return nil
}

// remove deletes the file holding key, if there is one. A directory is not a blob and is
// left alone.
func (s *Store) remove(key string) (bool, error) {
	name := filepath.FromSlash(key)
	fi, err := s.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("local blob store: delete %s: %w", key, err)
	}
	if fi.IsDir() {
		return false, nil
	}
	if err := s.root.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("local blob store: delete %s: %w", key, err)
	}
	return true, nil
}

// prune removes dir and its parents while they are empty, so deleted courses leave no
// skeleton of directories behind. Removing a non-empty directory fails, which ends the
// climb; a concurrent Put that loses its fresh directory this way creates it again.
func (s *Store) prune(dir string) {
	for ; dir != "."; dir = path.Dir(dir) {
		fi, err := s.root.Lstat(filepath.FromSlash(dir))
		if err != nil || !fi.IsDir() {
			return // never remove a symbolic link an operator placed
		}
		if s.root.Remove(filepath.FromSlash(dir)) != nil {
			return
		}
	}
}

// DeletePrefix implements blob.Store.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	prefix, err := blob.CleanPrefix(prefix)
	if err != nil {
		return 0, err
	}
	if prefix == "" {
		return 0, fmt.Errorf("%w: DeletePrefix needs a non-empty prefix", blob.ErrInvalidKey)
	}
	// Collect first: removing files while a directory is being read would be fine on most
	// systems, but pruning directories under the walk would not.
	var keys []string
	if err := s.walk(ctx, prefix, func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	}); err != nil {
		return 0, err
	}
	n := 0
	dirs := map[string]bool{}
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		removed, err := s.remove(key)
		if err != nil {
			return n, err
		}
		if removed {
			n++
			dirs[path.Dir(key)] = true
		}
	}
	// Deepest directories first, so parents are empty by the time they are tried. Deletions
	// are not synced one by one: a crash leaves some blobs behind, and the caller repeats
	// DeletePrefix, which is idempotent.
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	slices.SortFunc(sorted, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range sorted {
		s.prune(d)
	}
	return n, nil
}

// info builds the port's Info from a file's metadata. The ETag is the file's inode number,
// modification time and size: cheap to get, and it changes on every Put because Put writes a
// new file (the time alone would not do, file systems stamp times with a coarse clock).
func info(key string, fi fs.FileInfo) blob.Info {
	etag := strconv.FormatInt(fi.ModTime().UnixNano(), 16) + "-" + strconv.FormatInt(fi.Size(), 16)
	if ino, ok := inode(fi); ok {
		etag = strconv.FormatUint(ino, 16) + "-" + etag
	}
	return blob.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), ETag: etag}
}

// ctxReader stops a long copy when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
