package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoModel reports that no local embedding model is installed. It is
// returned (wrapped, with the directory that was searched) by [New] when the
// model directory or one of its files is missing, so callers can tell "not
// installed" apart from a broken installation and show the fix.
var ErrNoModel = errors.New("embed: no local embedding model installed; run `make model` " +
	"(scripts/install-model.sh) to install all-MiniLM-L6-v2 and ONNX Runtime into " +
	"$HOME/.cache/lectern/model, or configure an OpenAI-compatible embeddings endpoint")

// DefaultModelName is the model scripts/install-model.sh installs.
const DefaultModelName = "all-MiniLM-L6-v2-onnx-int8"

// DefaultInstallDir is the directory under cacheDir/model that scripts/install-model.sh
// installs the default model into. It is not the model's name: the installation that added
// the integer model (model-qint8.onnx) got a directory of its own, so that checkouts with the
// earlier script keep theirs; the vectors are the same model's, so the name stays.
const DefaultInstallDir = "all-MiniLM-L6-v2-qint8"

// ManifestFile is the file in a model directory that describes the model. The
// install script writes it; [New] reads it so that the model's identity (the
// name and dims an index records) comes from the installation, not from code.
const ManifestFile = "lectern-model.json"

// DefaultModelDir returns where scripts/install-model.sh puts the default
// model under the cache directory cacheDir: cacheDir/model/[DefaultInstallDir]. The cache
// directory is configuration (LECTERN_CACHE_DIR, default $HOME/.cache/lectern),
// so cmd/ resolves it and passes it in; caches live under the user's home,
// never in the repo.
func DefaultModelDir(cacheDir string) string {
	return filepath.Join(cacheDir, "model", DefaultInstallDir)
}

// manifest mirrors lectern-model.json.
type manifest struct {
	Name        string `json:"name"`
	Dims        int    `json:"dims"`
	MaxTokens   int    `json:"max_tokens"`
	DoLowerCase bool   `json:"do_lower_case"`
	Pooling     string `json:"pooling"`
	Normalize   bool   `json:"normalize"`
	ModelFile   string `json:"model_file"`
	// IntegerModelFile, when set, is ModelFile with integer MatMuls (scripts/quantize-model.py),
	// run for texts longer than [IntegerMinTokens].
	IntegerModelFile string `json:"integer_model_file"`
	VocabFile        string `json:"vocab_file"`
	RuntimeLibrary   string `json:"runtime_library"`
	ORTVersion       string `json:"onnxruntime_version"`
}

// readManifest loads and checks dir's manifest and that the files it names
// exist. Missing pieces wrap ErrNoModel: a partial install is "not installed".
func readManifest(dir string) (manifest, error) {
	var m manifest
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("%w (no %s in %s)", ErrNoModel, ManifestFile, dir)
	}
	if err != nil {
		return m, fmt.Errorf("embed: %w", err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("embed: parse %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.ModelFile == "" {
		m.ModelFile = "model.onnx"
	}
	if m.VocabFile == "" {
		m.VocabFile = "vocab.txt"
	}
	if m.RuntimeLibrary == "" {
		m.RuntimeLibrary = "libonnxruntime.so"
	}
	if m.MaxTokens == 0 {
		m.MaxTokens = 256
	}
	if m.Pooling == "" {
		m.Pooling = "mean"
	}
	switch {
	case m.Name == "":
		return m, fmt.Errorf("embed: %s: missing \"name\"", ManifestFile)
	case m.Dims <= 0:
		return m, fmt.Errorf("embed: %s: \"dims\" must be positive", ManifestFile)
	case m.Pooling != "mean":
		// Only mean pooling is implemented; all-MiniLM-class models use it.
		return m, fmt.Errorf("embed: %s: unsupported pooling %q", ManifestFile, m.Pooling)
	}
	for _, f := range []string{m.ModelFile, m.VocabFile, m.RuntimeLibrary} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return m, fmt.Errorf("%w (%s missing in %s)", ErrNoModel, f, dir)
		}
	}
	return m, nil
}
