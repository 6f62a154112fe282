"""``hash-standin-384``: a labelled, deterministic, fast stand-in for an embedding model, for scale runs only.

It isolates everything that is not the model: a text's vector is the sum, over its lower-cased word
tokens (``\\w+``), of a fixed random Gaussian row per hash bucket (``crc32(word) mod 2**14`` rows of 384
float32, drawn from ``numpy.random.default_rng(0)``), computed as one sparse count matrix times the
table. Texts sharing words get similar vectors, so retrieval over a synthetic corpus behaves like
retrieval (a query made of a document's words finds it), but nothing it produces is a result: its name
is stored in every ``embeddings`` / run row (``embedder = 'hash-standin-384'``) and the scale benchmark
labels its output with it.

It is refused outside benchmarks and tests: :func:`standin_spec` raises unless the environment sets
``RAGWH_STANDIN_EMBEDDER=1`` (the scale benchmark and its test do), so an experiment config naming it fails
before anything is written.
"""

from __future__ import annotations

import dataclasses
import os
import re
import zlib

import numpy as np

STANDIN_NAME = "hash-standin-384"
STANDIN_ENV = "RAGWH_STANDIN_EMBEDDER"
DIM = 384
BUCKETS = 2**14
_WORD = re.compile(r"\w+")


class HashStandinEncoder:
    """The stand-in model: ``encode(texts) -> float32 (n, 384)`` (not normalized, as a model's raw output)."""

    def __init__(self) -> None:
        self.table = np.random.default_rng(0).standard_normal((BUCKETS, DIM)).astype(np.float32)
        self._bucket: dict[str, int] = {}

    def get_embedding_dimension(self) -> int:
        return DIM

    def _ids(self, text: str) -> list[int]:
        cache = self._bucket
        out = []
        for w in _WORD.findall(text.lower()):
            b = cache.get(w)
            if b is None:
                b = cache[w] = zlib.crc32(w.encode("utf-8")) % BUCKETS
            out.append(b)
        return out or [0]  # an empty text gets bucket 0's row, never a zero vector

    def encode(self, texts, **_) -> np.ndarray:
        from scipy.sparse import csr_matrix

        ids = [self._ids(t) for t in texts]
        indptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum([len(i) for i in ids], out=indptr[1:])
        cols = np.fromiter((b for row in ids for b in row), dtype=np.int64, count=int(indptr[-1]))
        counts = csr_matrix((np.ones(len(cols), np.float32), cols, indptr), shape=(len(ids), BUCKETS))
        return np.asarray(counts @ self.table, dtype=np.float32)


def standin_spec():
    """The :class:`~ingest.retrieval.embedders.EmbedderSpec` of the stand-in (refused unless allowed)."""
    from ingest.retrieval.embedders import EmbedderError, EmbedderSpec

    if os.environ.get(STANDIN_ENV) != "1":
        raise EmbedderError(
            f"embedder {STANDIN_NAME!r} is a hash stand-in for scale benchmarks and tests only (its "
            f"vectors mean nothing): name a real embedder, or set {STANDIN_ENV}=1 in a benchmark"
        )

    @dataclasses.dataclass(frozen=True)
    class StandinSpec(EmbedderSpec):
        def load(self, device: str | None = None):
            return HashStandinEncoder()

    return StandinSpec(name=STANDIN_NAME, source=STANDIN_NAME, encoder=True)
