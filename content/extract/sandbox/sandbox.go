// Package sandbox runs content extraction (content/extract) in a child process, where a
// parser that loops or allocates without bound can be stopped: the child gets a memory limit
// (RLIMIT_AS above what it holds at start, and the same figure as the Go runtime's soft
// limit) and is killed when its deadline passes or its caller's context ends. A Go
// goroutine cannot be interrupted mid-call, and the PDF library extraction relies on trusts
// its input; extract's own guards (page-tree walk, stream and per-item decompression limits)
// catch the known attacks, and this catches the rest.
//
// The child is the lectern binary itself (its hidden "extract" subcommand calls Serve), so no
// second program is installed. The parent passes the fetched file as the child's file
// descriptor 3 and a Request on stdin, and reads a Response from stdout.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/course/archive"
)

// DefaultMemory is the memory a child may add to what it holds at start when Runner
// MemoryBytes is zero: room for extract's default limits (a 32 MiB file, 8 MiB of text)
// with the parsers' overhead, and under the 256 MiB one import may cost the worker.
const DefaultMemory = 192 << 20

// DefaultTimeout is the time one extraction may take when Runner.Timeout is zero: a large
// real PDF (a few thousand pages) reads in well under a minute on one core.
const DefaultTimeout = 2 * time.Minute

// Request is what the parent sends the child on stdin.
type Request struct {
	Kind    extract.Kind    `json:"kind"`
	Name    string          `json:"name"`
	Size    int64           `json:"size"`
	Options extract.Options `json:"options"`
	Archive archive.Limits  `json:"archive"`
	// MemoryBytes is the memory the child may add to what it holds at start.
	MemoryBytes int64 `json:"memory_bytes"`
}

// Response is what the child writes on stdout: a result, or the error that ended it.
type Response struct {
	Result *extract.Result `json:"result,omitempty"`
	// Error is the message; ErrorKind says which extract sentinel it wraps.
	Error     string `json:"error,omitempty"`
	ErrorKind string `json:"error_kind,omitempty"`
}

// Error kinds of a Response.
const (
	kindInvalid     = "invalid"
	kindUnsupported = "unsupported"
	kindLimit       = "limit"
)

// remoteError is an error the child reported: its message, and the sentinel it wraps.
type remoteError struct {
	msg string
	is  error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.is }

// Runner starts one child per extraction. The zero value is not usable: Command is required.
type Runner struct {
	// Command is the child's argv: a program that calls Serve, normally
	// {os.Executable(), "extract"}.
	Command []string
	// Env is added to the child's environment (the parent's is inherited).
	Env []string
	// Timeout bounds one extraction; zero means DefaultTimeout.
	Timeout time.Duration
	// MemoryBytes is the memory one child may add to what it holds at start; zero means
	// DefaultMemory.
	MemoryBytes int64
	// Options and Archive are passed to extract.Extract and archive.Open in the child.
	Options extract.Options
	Archive archive.Limits
}

// maxResponse bounds what the parent reads from a child: the result's text is capped by
// extract's MaxTextBytes (8 MiB by default), and JSON escaping at most doubles it or so.
const maxResponse = 64 << 20

// Extract reads f (size bytes, uploaded as name) as kind in a child process. Errors wrap
// extract.ErrInvalid, extract.ErrUnsupported or extract.ErrLimit (deadline passed, memory
// limit reached) with a message for the user, or are ctx's error when the caller gave up.
func (r *Runner) Extract(ctx context.Context, kind extract.Kind, f *os.File, size int64, name string) (*extract.Result, error) {
	if len(r.Command) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	mem := r.MemoryBytes
	if mem <= 0 {
		mem = DefaultMemory
	}
	req, err := json.Marshal(Request{Kind: kind, Name: name, Size: size, Options: r.Options, Archive: r.Archive, MemoryBytes: mem})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, r.Command[0], r.Command[1:]...)
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.Stdin = bytes.NewReader(req)
	cmd.ExtraFiles = []*os.File{f}
	var stdout bytes.Buffer
	stderr := &headBuffer{max: 4 << 10}
	cmd.Stdout = &limitedWriter{w: &stdout, n: maxResponse}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	setProcAttr(cmd)
	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cctx.Err() != nil:
		return nil, fmt.Errorf("%w: reading %s took longer than %s (the time allowed for one item)", extract.ErrLimit, name, timeout)
	}
	var resp Response
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil || (resp.Result == nil && resp.Error == "") {
		return nil, childFailure(name, runErr, stderr.String(), mem)
	}
	if resp.Error != "" {
		is := extract.ErrInvalid
		switch resp.ErrorKind {
		case kindUnsupported:
			is = extract.ErrUnsupported
		case kindLimit:
			is = extract.ErrLimit
		}
		return nil, &remoteError{msg: resp.Error, is: is}
	}
	return resp.Result, nil
}

// childFailure explains a child that ended without a response: the memory limit (the Go
// runtime reports "out of memory" when the kernel refuses it more address space), or a
// crash, named by its last line of output.
func childFailure(name string, runErr error, stderr string, mem int64) error {
	low := strings.ToLower(stderr)
	if strings.Contains(low, "out of memory") || strings.Contains(low, "cannot allocate memory") {
		return fmt.Errorf("%w: reading %s needed more than %d MiB of memory (the memory allowed for one item)", extract.ErrLimit, name, mem>>20)
	}
	if strings.Contains(low, "stack exceeds") {
		return fmt.Errorf("%w: %s is nested too deeply to read", extract.ErrLimit, name)
	}
	last := ""
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l = strings.TrimSpace(l); l != "" && last == "" {
			last = l
		}
	}
	if last == "" && runErr != nil {
		last = runErr.Error()
	}
	return fmt.Errorf("%w: the reader of %s stopped: %s", extract.ErrInvalid, name, last)
}

// Serve is the child's side: it reads a Request from in, applies the memory limit, reads the
// content from file, and writes a Response to out. It returns an error only when it could
// not answer at all.
func Serve(ctx context.Context, in io.Reader, out io.Writer, file *os.File) error {
	var req Request
	if err := json.NewDecoder(io.LimitReader(in, 1<<20)).Decode(&req); err != nil {
		return fmt.Errorf("sandbox: bad request: %w", err)
	}
	if file == nil {
		return errors.New("sandbox: no content file (descriptor 3)")
	}
	if err := limitMemory(req.MemoryBytes); err != nil {
		return fmt.Errorf("sandbox: memory limit: %w", err)
	}
	res, err := extractFile(ctx, req, file)
	resp := Response{Result: res}
	if err != nil {
		resp.Result, resp.Error, resp.ErrorKind = nil, err.Error(), kindInvalid
		switch {
		case errors.Is(err, extract.ErrUnsupported):
			resp.ErrorKind = kindUnsupported
		case errors.Is(err, extract.ErrLimit):
			resp.ErrorKind = kindLimit
		}
	}
	return json.NewEncoder(out).Encode(resp)
}

func extractFile(ctx context.Context, req Request, f *os.File) (*extract.Result, error) {
	if req.Kind != extract.KindPackage {
		return extract.Extract(ctx, req.Kind, extract.Source{ReaderAt: f, Size: req.Size, Name: req.Name}, req.Options)
	}
	a, err := archive.Open(f, req.Size, req.Archive)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrInvalid, err)
	}
	res, err := extract.Extract(ctx, req.Kind, extract.Source{FS: a.FS(), Name: req.Name}, req.Options)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(a.Warnings(), res.Warnings...)
	return res, nil
}

// headBuffer keeps the first max bytes written to it: a Go runtime crash names its cause
// on the first line, before pages of goroutine traces.
type headBuffer struct {
	max int
	b   []byte
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return string(h.b) }

// limitedWriter drops what passes n bytes, so a child cannot make the parent buffer without
// bound; the truncated response then fails to decode.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	q := p
	if int64(len(q)) > l.n {
		q = q[:l.n]
	}
	n, err := l.w.Write(q)
	l.n -= int64(n)
	if err != nil {
		return n, err
	}
	return len(p), nil
}
