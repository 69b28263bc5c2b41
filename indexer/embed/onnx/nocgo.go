//go:build !cgo

package onnx

import (
	"context"
	"errors"

	"github.com/lectern-lms/lectern/indexer/embed"
)

// Embedder is unavailable without cgo: ONNX Runtime is a C library loaded with
// dlopen. This stub keeps CGO_ENABLED=0 builds of the rest of the program
// compiling; they can still use the OpenAI-compatible backend.
type Embedder struct{}

var errNoCgo = errors.New("embed: the local ONNX embedder needs cgo (build with CGO_ENABLED=1); use an OpenAI-compatible endpoint instead")

// New always fails without cgo, after the same installation check as with it, so that a
// missing model still reads as [ErrNoModel]. The options have no effect.
func New(dir string, _ ...Option) (*Embedder, error) {
	if _, err := readManifest(dir); err != nil {
		return nil, err
	}
	return nil, errNoCgo
}

// Model returns the zero Info.
func (*Embedder) Model() embed.Info { return embed.Info{} }

// Embed always fails without cgo.
func (*Embedder) Embed(context.Context, []string) ([][]float32, error) { return nil, errNoCgo }

// Close does nothing.
func (*Embedder) Close() error { return nil }
