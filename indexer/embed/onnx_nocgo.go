//go:build !cgo

package embed

import (
	"context"
	"errors"
)

// ONNX is unavailable without cgo: ONNX Runtime is a C library loaded with
// dlopen. This stub keeps CGO_ENABLED=0 builds of the rest of the program
// compiling; they can still use the OpenAI-compatible backend.
type ONNX struct{}

// ONNXOption configures [New].
type ONNXOption func(*struct{})

// WithBatchSize is a no-op without cgo.
func WithBatchSize(int) ONNXOption { return func(*struct{}) {} }

// WithBatchTokens is a no-op without cgo.
func WithBatchTokens(int) ONNXOption { return func(*struct{}) {} }

// WithParallelRuns is a no-op without cgo.
func WithParallelRuns(int) ONNXOption { return func(*struct{}) {} }

// WithSpinning is a no-op without cgo.
func WithSpinning(bool) ONNXOption { return func(*struct{}) {} }

// WithThreads is a no-op without cgo.
func WithThreads(int) ONNXOption { return func(*struct{}) {} }

// WithRuntimeLibrary is a no-op without cgo.
func WithRuntimeLibrary(string) ONNXOption { return func(*struct{}) {} }

// WithIntegerModel is a no-op without cgo.
func WithIntegerModel(bool) ONNXOption { return func(*struct{}) {} }

// WithIntegerMinTokens is a no-op without cgo.
func WithIntegerMinTokens(int) ONNXOption { return func(*struct{}) {} }

var errNoCgo = errors.New("embed: the local ONNX embedder needs cgo (build with CGO_ENABLED=1); use an OpenAI-compatible endpoint instead")

// New always fails without cgo.
func New(dir string, _ ...ONNXOption) (*ONNX, error) {
	if _, err := readManifest(dir); err != nil {
		return nil, err
	}
	return nil, errNoCgo
}

// Model returns the zero Info.
func (*ONNX) Model() Info { return Info{} }

// Embed always fails without cgo.
func (*ONNX) Embed(context.Context, []string) ([][]float32, error) { return nil, errNoCgo }

// Close does nothing.
func (*ONNX) Close() error { return nil }
