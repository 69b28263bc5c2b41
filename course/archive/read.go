package archive

import (
	"archive/zip"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"sync"
)

// flatePool recycles decompressors: each holds a 32 KiB window plus tables, and a package
// has thousands of small files.
var flatePool sync.Pool

// entryReader decompresses one file itself, from the raw stream, instead of using
// zip.File.Open, so that the limits do not depend on archive/zip's internals: it never
// yields more than the size Open checked, and it reports data beyond that size as
// ErrTooLarge (a lying header) and a short or damaged stream as ErrCorrupt. Errors are
// sticky.
type entryReader struct {
	e    *entry
	src  io.Reader     // decompressed bytes
	fr   io.ReadCloser // the pooled flate reader, if any
	crc  hash.Hash32
	n    int64 // bytes yielded so far
	err  error // sticky: io.EOF after a verified end, or the failure
	done bool  // released the decompressor
}

// openEntry starts reading e's data.
func openEntry(e *entry) (*entryReader, error) {
	raw, err := e.zf.OpenRaw()
	if err != nil {
		if isFormatErr(err) {
			return nil, &Error{Kind: ErrCorrupt, Entry: e.zf.Name, Msg: fmt.Sprintf("zip entry %q has a damaged local header", e.zf.Name), Err: err}
		}
		return nil, fmt.Errorf("reading zip entry %q: %w", e.zf.Name, err)
	}
	r := &entryReader{e: e, src: raw, crc: crc32.NewIEEE()}
	if e.zf.Method == zip.Deflate {
		if fr, ok := flatePool.Get().(io.ReadCloser); ok {
			if err := fr.(flate.Resetter).Reset(raw, nil); err != nil {
				return nil, fmt.Errorf("resetting decompressor: %w", err)
			}
			r.fr = fr
		} else {
			r.fr = flate.NewReader(raw)
		}
		r.src = r.fr
	}
	return r, nil
}

// Read yields at most the entry's declared size. The call that delivers the last byte also
// checks that the stream ends there and that the checksum matches, so a consumer reading
// exactly size bytes (as blob.Put does) sees a lying header in the same call.
func (r *entryReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if rem := r.e.size - r.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	var n int
	var err error
	if len(p) > 0 {
		n, err = r.src.Read(p)
		r.n += int64(n)
		r.crc.Write(p[:n])
	}
	switch {
	case err == io.EOF && r.n < r.e.size:
		r.fail(&Error{Kind: ErrCorrupt, Entry: r.e.zf.Name, Err: io.ErrUnexpectedEOF,
			Msg: fmt.Sprintf("zip entry %q ends after %d bytes, but its header says %d; the file is damaged", r.e.zf.Name, r.n, r.e.size)})
	case err != nil && err != io.EOF:
		r.fail(r.wrap(err))
	case r.n == r.e.size:
		r.finish()
	}
	if r.err == io.EOF {
		// Hold the EOF back to the next call: some consumers mishandle data returned together
		// with io.EOF.
		return n, nil
	}
	return n, r.err
}

// finish runs once the declared size has been yielded: the stream must end here and the
// checksum must match.
func (r *entryReader) finish() {
	var probe [1]byte
	for range 100 { // a Read may return 0, nil; do not spin forever on a broken source
		n, err := r.src.Read(probe[:])
		if n > 0 {
			r.fail(entryErr(ErrTooLarge, r.e.zf.Name, "decompresses to more than the %d bytes its header declares; the header is lying", r.e.size))
			return
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			r.fail(r.wrap(err))
			return
		}
	}
	// A zero CRC means "not recorded" for some writers; archive/zip skips the check too.
	if sum := r.crc.Sum32(); r.e.zf.CRC32 != 0 && sum != r.e.zf.CRC32 {
		r.fail(entryErr(ErrCorrupt, r.e.zf.Name, "fails its checksum; the file is damaged"))
		return
	}
	r.fail(io.EOF)
}

// wrap classifies an error from the decompressor or the underlying reader.
func (r *entryReader) wrap(err error) error {
	var corrupt flate.CorruptInputError
	if errors.As(err, &corrupt) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Kind: ErrCorrupt, Entry: r.e.zf.Name, Err: err,
			Msg: fmt.Sprintf("zip entry %q has damaged compressed data", r.e.zf.Name)}
	}
	return fmt.Errorf("reading zip entry %q: %w", r.e.zf.Name, err)
}

// fail records the sticky result and releases the decompressor early, so an Extract over
// thousands of files keeps only one window alive.
func (r *entryReader) fail(err error) {
	r.err = err
	r.release()
}

// release returns the decompressor to the pool.
func (r *entryReader) release() {
	if r.done {
		return
	}
	r.done = true
	if r.fr != nil {
		flatePool.Put(r.fr)
		r.fr = nil
	}
	r.src = nil
}

// Close releases the decompressor; reads afterwards fail.
func (r *entryReader) Close() error {
	if r.err == nil || r.err == io.EOF {
		r.err = fs.ErrClosed
	}
	r.release()
	return nil
}

// drain reads what the consumer left, so that Extract verifies the size and checksum of
// every entry even when the callback stops reading early. It returns nil after a verified
// end.
func (r *entryReader) drain(ctx context.Context) error {
	_, err := io.Copy(io.Discard, ctxReader{ctx, r})
	return err
}

// ctxReader fails reads once the context is done, so that cancelling an import stops a
// multi-gigabyte copy promptly even if the consumer does not watch the context.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Extract calls fn for every file, in the order Files lists them, with a reader yielding
// exactly size bytes of the file's decompressed content (fn is meant to call blob.Put). The
// reader fails with ErrTooLarge if the entry holds more data than its header declared, with
// ErrCorrupt if it holds less or fails its checksum, and with the context's error once ctx
// is done.
//
// After fn returns, Extract reads what fn left unread, so an entry is fully verified even if
// fn stopped at size bytes; an error found then is returned although fn succeeded, and the
// caller must discard what it stored (DeletePrefix on the version). Extract stops at the
// first error: fn's error is returned wrapped with the entry's name, unless it was caused by
// the reader, whose own error is returned instead.
func (a *Archive) Extract(ctx context.Context, fn func(ctx context.Context, name string, r io.Reader, size int64) error) error {
	for _, e := range a.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.extractOne(ctx, e, fn); err != nil {
			return err
		}
	}
	return nil
}

func (a *Archive) extractOne(ctx context.Context, e *entry, fn func(context.Context, string, io.Reader, int64) error) error {
	r, err := openEntry(e)
	if err != nil {
		return err
	}
	defer r.Close()
	ferr := fn(ctx, e.name, ctxReader{ctx, r}, e.size)
	if r.err != nil && r.err != io.EOF {
		// The reader's failure is the root cause of whatever fn made of it.
		return r.err
	}
	if ferr != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(ferr, cerr) {
			return cerr
		}
		return fmt.Errorf("storing zip entry %q: %w", e.name, ferr)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.drain(ctx)
}
