"""Chunk texts sliced once per document (any block size gives the same texts); vectors by a join or a streamed scan."""

from __future__ import annotations

import numpy as np

from ingest.retrieval.embed import store_embeddings
from ingest.rewriting import index as index_module
from ingest.rewriting import vectors as vectors_module
from ingest.rewriting.index import chunk_texts
from ingest.rewriting.vectors import fetch_vectors
from warehouse.db import connect

DOCS = {"c/a": "Alpha.\n\n One two. Three", "c/b": "Beta.\n\nFour five six. ", "c/c": "Gamma.\n\nSeven."}
# (doc, chunk_idx, start, end) -> expected content text[start:end].strip()
CHUNKS = [
    ("c/a", 0, 8, 17, "One two."),
    ("c/a", 1, 17, 23, "Three"),
    ("c/b", 0, 7, 23, "Four five six."),
    ("c/c", 0, 8, 14, "Seven."),
]


def _warehouse(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    con.executemany("INSERT INTO documents VALUES (?, 'c', 'T', ?, NULL, NULL, 'f')", list(DOCS.items()))
    con.execute("INSERT INTO documents VALUES ('other/x', 'other', 'T', 'not this corpus', NULL, NULL, 'f')")
    con.executemany(
        "INSERT INTO chunks VALUES ('s', ?, ?, ?, ?, ?, 1, NULL)",
        [(f"{d}#{k}", d, k, s, e) for d, k, s, e, _ in reversed(CHUNKS)],
    )
    con.execute("INSERT INTO chunk_prefixes VALUES ('s', 'c/b#0', 'title', 0, 'Beta ', 1)")
    return con


def test_chunk_texts_in_index_order_with_prefixes_for_any_block(monkeypatch, tmp_path):
    con = _warehouse(tmp_path)
    want = (
        [f"{d}#{k}" for d, k, *_ in CHUNKS],
        [d for d, *_ in CHUNKS],
        ["One two.", "Three", "Beta Four five six.", "Seven."],
    )
    for block in (1, 2, 20_000):
        monkeypatch.setattr(index_module, "DOC_BLOCK", block)
        assert chunk_texts(con, "c", "s") == want, block


def test_fetch_vectors_by_join_or_scan_keeps_the_order(monkeypatch, tmp_path):
    con = _warehouse(tmp_path)
    vectors = np.arange(15, dtype=np.float32).reshape(5, 3)
    store_embeddings(con, "e", [f"k{i}" for i in range(5)], vectors)
    keys = ["k3", "k0", "k4", "k3", "k1"]
    for block in (1, 2, 50_000):  # 1, 2: the scan; 50,000: the join
        np.testing.assert_array_equal(fetch_vectors(con, "e", keys, block=block), vectors[[3, 0, 4, 3, 1]])
    monkeypatch.setattr(vectors_module, "SCAN_ROWS", 1)  # one stored row per Arrow batch: a key over several batches
    np.testing.assert_array_equal(fetch_vectors(con, "e", keys, block=1), vectors[[3, 0, 4, 3, 1]])
    store_embeddings(con, "e", ["clé-ü", "k3"], np.array([[7, 7, 7], [9, 9, 9]], dtype=np.float32))  # k3 again
    np.testing.assert_array_equal(
        fetch_vectors(con, "e", ["clé-ü", "k3", "k3"], block=1), [[7, 7, 7], vectors[3], vectors[3]]
    )  # non-ASCII key; k3's first stored row


def test_an_index_without_texts_has_the_same_vectors_and_embeds_only_what_is_missing(monkeypatch, tmp_path):
    from ingest.retrieval.embedders import resolve_embedder
    from ingest.rewriting.index import load_index
    from ingest.rewriting.vectors import Embedder, text_key
    from tests.ingest.retrieval.fixtures import build_tiny_sentence_transformer

    con = _warehouse(tmp_path)
    spec = resolve_embedder(str(build_tiny_sentence_transformer(tmp_path / "st")))
    texts = ["One two.", "Three", "Beta Four five six.", "Seven."]
    full = Embedder(spec, load=lambda: spec.load("cpu"))
    store = load_index(con, "c", "s", full, show_progress=False)  # embeds and stores all four
    assert store.texts == texts and full.encoded == 4
    assert store.doc_ids.tolist() == [d for d, *_ in CHUNKS] and store.documents.tolist() == ["c/a", "c/b", "c/c"]
    con.execute("DELETE FROM embeddings WHERE text_hash = ?", [text_key("Three", False)])
    monkeypatch.setattr(index_module, "DOC_BLOCK", 1)
    lean = Embedder(spec, load=lambda: spec.load("cpu"))
    got = load_index(con, "c", "s", lean, show_progress=False, keep_texts=False)
    assert got.texts is None and lean.encoded == 1  # only the deleted one is embedded again
    assert got.chunk_ids.tolist() == store.chunk_ids.tolist() and got.doc_codes.tolist() == store.doc_codes.tolist()
    np.testing.assert_allclose(got.vectors, store.vectors, atol=1e-6)
    again = Embedder(spec, load=lambda: spec.load("cpu"))
    np.testing.assert_array_equal(
        load_index(con, "c", "s", again, show_progress=False, keep_texts=False).vectors, got.vectors
    )
    assert again.encoded == 0


def test_fetch_vectors_scan_and_join_refuse_a_missing_key_and_never_match_a_longer_hash(tmp_path):
    import pytest

    con = _warehouse(tmp_path)
    store_embeddings(con, "e", ["k1", "k10", "k2"], np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32))
    store_embeddings(con, "other", ["k3"], np.array([[5, 5]], dtype=np.float32))
    for block in (1, 50_000):  # 1: the streamed scan; 50,000: the join
        np.testing.assert_array_equal(
            fetch_vectors(con, "e", ["k2", "k1", "k1"], block=block), [[1, 1], [1, 0], [1, 0]]
        )
        with pytest.raises(ValueError, match="1 texts have no 'e' vector"):
            fetch_vectors(con, "e", ["k1", "k3"], block=block)  # k3 is stored for another embedder only


def test_fetch_vectors_scan_takes_the_first_stored_row_of_a_key_stored_twice(tmp_path):
    con = _warehouse(tmp_path)
    store_embeddings(con, "e", ["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
    store_embeddings(con, "e", ["a"], np.array([[9, 9]], dtype=np.float32))
    np.testing.assert_array_equal(fetch_vectors(con, "e", ["b", "a"], block=1), [[0, 1], [1, 0]])
