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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/course/archive"
)

// DefaultMemory is the memory a child may add to what it holds at start when Runner
// MemoryBytes is zero. A 10 MiB, 3,000-page text PDF (8 MiB of text kept) peaks at about
// 55 MiB resident in the child, a few dozen of them start-up; 160 MiB leaves room for
// bigger real documents while one import, worker and child together, stays under 256 MiB
// over the worker's baseline (docs/benchmarks.md).
const DefaultMemory = 160 << 20

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

// Response is the first JSON value the child writes on stdout: a result, or the error that
// ended it. The result's sections follow as Sections further JSON values, one per section,
// so neither side holds the whole answer as one JSON document (8 MiB of text would cost the
// worker several times that in buffers).
type Response struct {
	// Result is the result without its sections.
	Result   *extract.Result `json:"result,omitempty"`
	Sections int             `json:"sections,omitempty"`
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
	// Env is the child's whole environment. cmd/lectern passes RuntimeEnv of its own: the
	// worker's environment holds database URLs and keys a document reader has no use for.
	Env []string
	// Timeout bounds one extraction; zero means DefaultTimeout.
	Timeout time.Duration
	// MemoryBytes is the memory one child may add to what it holds at start; zero means
	// DefaultMemory.
	MemoryBytes int64
	// Options and Archive are passed to extract.Extract and archive.Open in the child.
	Options extract.Options
	Archive archive.Limits
	// OnDone, when set, is told what each child cost (for logs, metrics and benchmarks);
	// measuring the peak means reading the child's /proc status every few milliseconds.
	OnDone func(Usage)
}

// Usage is what one child cost.
type Usage struct {
	// MaxRSS is the child's peak resident set in bytes (0 where the platform does not say).
	MaxRSS  int64
	Elapsed time.Duration
}

// maxResponse bounds what the parent reads from a child: the result's text is capped by
// extract's MaxTextBytes (8 MiB by default), and JSON escaping at most doubles it or so;
// a longer answer is cut and fails to decode.
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
	cmd.Env = r.Env
	cmd.Stdin = bytes.NewReader(req)
	cmd.ExtraFiles = []*os.File{f}
	stderr := &headBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	setProcAttr(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// The child dies with the thread that started it (Pdeathsig): keep this goroutine on that
	// thread until the child is reaped, so a Go thread that exits cannot take it down early.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: start %s: %w", r.Command[0], err)
	}
	var peak func() int64
	if r.OnDone != nil {
		peak = watchRSS(cmd.Process.Pid)
	}
	// The response is decoded as it arrives, so the worker never holds the raw JSON as
	// well as the result; the limit stops a child that writes without end.
	resp, decErr := readResponse(io.LimitReader(stdout, maxResponse))
	_, _ = io.Copy(io.Discard, stdout)
	runErr := cmd.Wait()
	if r.OnDone != nil {
		r.OnDone(Usage{MaxRSS: peak(), Elapsed: time.Since(start)})
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cctx.Err() != nil:
		return nil, fmt.Errorf("%w: reading %s took longer than %s (the time allowed for one item)", extract.ErrLimit, name, timeout)
	}
	if decErr != nil || (resp.Result == nil && resp.Error == "") {
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

// RuntimeEnv keeps of environ (KEY=value entries) what a child needs: the Go runtime's own
// settings (GOMAXPROCS, GODEBUG, GOCOVERDIR) and TMPDIR.
func RuntimeEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	return env
}

// readResponse decodes a Response and the sections after it, one value at a time.
func readResponse(r io.Reader) (Response, error) {
	dec := json.NewDecoder(r)
	var resp Response
	if err := dec.Decode(&resp); err != nil {
		return resp, err
	}
	if resp.Result == nil {
		return resp, nil
	}
	resp.Result.Sections = make([]extract.Section, 0, min(resp.Sections, 1<<16))
	for range resp.Sections {
		var sec extract.Section
		if err := dec.Decode(&sec); err != nil {
			return resp, err
		}
		resp.Result.Sections = append(resp.Result.Sections, sec)
	}
	return resp, nil
}

// childFailure explains a child that ended without a response: the memory limit (the Go
// runtime reports "out of memory" when the kernel refuses it more address space), or a
// crash, named by the first line of its error output (where Go names a fatal error).
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
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	var sections []extract.Section
	if resp.Result != nil {
		sections, resp.Result.Sections, resp.Sections = resp.Result.Sections, nil, len(resp.Result.Sections)
	}
	if err := enc.Encode(resp); err != nil {
		return err
	}
	for _, sec := range sections {
		if err := enc.Encode(sec); err != nil {
			return err
		}
	}
	return w.Flush()
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
