//go:build cgo

package onnx

import (
	"errors"
	"fmt"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// runtimeRef counts users of the process-wide ONNX Runtime environment.
type runtimeRef struct{}

// ortRuntime is the package's only mutable package-level state, and it exists
// because ONNX Runtime's environment (and the dlopen'ed library behind it) is
// itself one per process: several ONNX embedders must share it, and it may
// be torn down only when the last one closes.
var ortRuntime struct {
	mu   sync.Mutex
	refs int
	lib  string
}

func acquireRuntime(lib string) (*runtimeRef, error) {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	if ortRuntime.refs > 0 {
		if ortRuntime.lib != lib {
			return nil, fmt.Errorf("embed: ONNX Runtime already loaded from %s; cannot also load %s in one process", ortRuntime.lib, lib)
		}
		ortRuntime.refs++
		return &runtimeRef{}, nil
	}
	if ort.IsInitialized() {
		return nil, errors.New("embed: ONNX Runtime was initialised outside this package")
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return nil, fmt.Errorf("embed: load ONNX Runtime from %s: %w", lib, err)
	}
	ortRuntime.refs, ortRuntime.lib = 1, lib
	return &runtimeRef{}, nil
}

func (*runtimeRef) release() {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	ortRuntime.refs--
	if ortRuntime.refs == 0 {
		_ = ort.DestroyEnvironment()
		ortRuntime.lib = ""
	}
}
