"""Chunk texts sliced once per document (any block size gives the same texts) and vectors read in blocks."""
from __future__ import annotations

import numpy as np

from ingest.retrieval.embed import store_embeddings
from ingest.rewriting import index as index_module
from ingest.rewriting.index import chunk_texts
from ingest.rewriting.vectors import fetch_vectors
from warehouse.db import connect

DOCS = {"c/a": "Alpha.\n\n One two. Three", "c/b": "Beta.\n\nFour five six. ", "c/c": "Gamma.\n\nSeven."}
# (doc, chunk_idx, start, end) -> expected content text[start:end].strip()
CHUNKS = [("c/a", 0, 8, 17, "One two."), ("c/a", 1, 17, 23, "Three"), ("c/b", 0, 7, 23, "Four five six."),
          ("c/c", 0, 8, 14, "Seven.")]


def _warehouse(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    con.executemany("INSERT INTO documents VALUES (?, 'c', 'T', ?, NULL, NULL, 'f')", list(DOCS.items()))
    con.execute("INSERT INTO documents VALUES ('other/x', 'other', 'T', 'not this corpus', NULL, NULL, 'f')")
    con.executemany("INSERT INTO chunks VALUES ('s', ?, ?, ?, ?, ?, 1, NULL)",
                    [(f"{d}#{k}", d, k, s, e) for d, k, s, e, _ in reversed(CHUNKS)])
    con.execute("INSERT INTO chunk_prefixes VALUES ('s', 'c/b#0', 'title', 0, 'Beta ', 1)")
    return con


def test_chunk_texts_in_index_order_with_prefixes_for_any_block(monkeypatch, tmp_path):
    con = _warehouse(tmp_path)
    want = ([f"{d}#{k}" for d, k, *_ in CHUNKS], [d for d, *_ in CHUNKS],
            ["One two.", "Three", "Beta Four five six.", "Seven."])
    for block in (1, 2, 20_000):
        monkeypatch.setattr(index_module, "DOC_BLOCK", block)
        assert chunk_texts(con, "c", "s") == want, block


def test_fetch_vectors_in_blocks_keeps_the_order(tmp_path):
    con = _warehouse(tmp_path)
    vectors = np.arange(15, dtype=np.float32).reshape(5, 3)
    store_embeddings(con, "e", [f"k{i}" for i in range(5)], vectors)
    keys = ["k3", "k0", "k4", "k3", "k1"]
    for block in (1, 2, 50_000):
        np.testing.assert_array_equal(fetch_vectors(con, "e", keys, block=block), vectors[[3, 0, 4, 3, 1]])
