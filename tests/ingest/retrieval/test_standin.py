"""The labelled stand-in embedder: refused outside benchmarks and tests, the sum of its words' rows."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from ingest.retrieval.embedders import EmbedderError, resolve_embedder
from ingest.retrieval.standin import BUCKETS, STANDIN_ENV, STANDIN_NAME, HashStandinEncoder


def test_refused_unless_the_benchmark_allows_it(monkeypatch):
    monkeypatch.delenv(STANDIN_ENV, raising=False)
    with pytest.raises(EmbedderError, match="stand-in for scale benchmarks"):
        resolve_embedder(STANDIN_NAME)
    monkeypatch.setenv(STANDIN_ENV, "1")
    spec = resolve_embedder(STANDIN_NAME)
    assert spec.name == STANDIN_NAME and isinstance(spec.load(), HashStandinEncoder)


def test_a_vector_is_the_sum_of_its_words_rows():
    model = HashStandinEncoder()
    row = {w: model.table[zlib.crc32(w.encode()) % BUCKETS] for w in ("river", "castle")}
    out = model.encode(["River castle, river!", "", "castle"])
    assert out.shape == (3, 384) and out.dtype == np.float32
    np.testing.assert_allclose(out[0], 2 * row["river"] + row["castle"], rtol=1e-6)
    np.testing.assert_allclose(out[1], model.table[0])  # no word: bucket 0, never a zero vector
    np.testing.assert_allclose(out[2], row["castle"])
    np.testing.assert_array_equal(HashStandinEncoder().encode(["castle"]), out[2:])  # deterministic
