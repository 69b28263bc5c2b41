package archive

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns about the upload itself is an *Error
// wrapping exactly one of them, so the import job can map it to a status with errors.Is and
// show the message to the author unchanged. Errors that are not the upload's fault (a failed
// read of the temporary file, a cancelled context, an error returned by the Extract callback)
// are passed through instead, so they are not mistaken for a bad package.
var (
	// ErrNotZip means the upload is not a zip archive at all (random bytes, a PDF, an empty
	// or truncated file).
	ErrNotZip = errors.New("not a zip archive")
	// ErrUnsafe means an entry could escape or confuse the package's folder once extracted:
	// a path outside the root, a symbolic link, a duplicate name, entries sharing data.
	ErrUnsafe = errors.New("unsafe zip archive")
	// ErrTooLarge means the archive exceeds a Limits value, by its headers or by what its
	// entries actually decompress to.
	ErrTooLarge = errors.New("zip archive too large")
	// ErrUnsupported means a well-formed archive uses a feature Lectern does not read:
	// encryption, or a compression method other than store and deflate.
	ErrUnsupported = errors.New("unsupported zip archive")
	// ErrCorrupt means an entry's data is damaged: a checksum mismatch, a truncated or
	// invalid deflate stream, or data running past the end of the upload.
	ErrCorrupt = errors.New("corrupt zip archive")
)

// Error describes one problem with an upload. Its message is meant for the course author
// and names the entry, as in `zip entry "../../etc/passwd" escapes the package root`.
type Error struct {
	// Kind is the sentinel (ErrNotZip, ErrUnsafe, ErrTooLarge, ErrUnsupported, ErrCorrupt).
	Kind error
	// Entry is the entry's name as stored in the archive, or "" for whole-archive problems.
	Entry string
	// Msg is the complete human-readable message.
	Msg string
	// Err is the underlying cause, if any (a flate error, for example).
	Err error
}

// Error returns the message alone: the sentinel's text would only repeat it less precisely.
func (e *Error) Error() string { return e.Msg }

// Unwrap exposes both the sentinel and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// entryErr builds an *Error about one entry; the message starts with `zip entry "name"`.
func entryErr(kind error, name, format string, args ...any) *Error {
	return &Error{Kind: kind, Entry: name, Msg: fmt.Sprintf("zip entry %q ", name) + fmt.Sprintf(format, args...)}
}

// archiveErr builds an *Error about the whole archive.
func archiveErr(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// errNotZip is the one message for every upload that does not parse as a zip: the author
// cannot act on more detail than that.
func errNotZip(cause error) *Error {
	return &Error{Kind: ErrNotZip, Msg: "the upload is not a zip archive", Err: cause}
}

// formatSize renders a byte count for messages: exact below 1 MiB, where authors compare
// against small limits, and in binary units with two decimals above ("1.50 GiB").
func formatSize(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	div, unit := float64(1<<20), "MiB"
	switch {
	case n >= 1<<50:
		div, unit = 1<<50, "PiB"
	case n >= 1<<40:
		div, unit = 1<<40, "TiB"
	case n >= 1<<30:
		div, unit = 1<<30, "GiB"
	}
	return fmt.Sprintf("%.2f %s", float64(n)/div, unit)
}
