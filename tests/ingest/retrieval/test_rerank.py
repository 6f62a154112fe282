"""Reranking drives the real CrossEncoder code path with a tiny random-weight model built here
(its scores mean nothing; they only have to be reproduced exactly)."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.rerank import RerankError, rerank_stage, resolve_reranker
from ingest.retrieval.retrieve import retrieve_stage
from tests.ingest.retrieval.fixtures import (
    build_tiny_cross_encoder,
    create_condition_texts,
    query_hash,
    sha,
    store_vectors,
)

HAND = EmbedderSpec(name="hand", source="/unused")


@pytest.fixture(scope="module")
def tiny_ce(tmp_path_factory):
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny_ce"))


def _load(con, rng, n_chunks=60, n_queries=3):
    texts = [f"passage number {i} about topic {i % 7}" for i in range(n_chunks)]
    rows = []
    for condition, chunkset in (("G2", "gold"), ("G3", "gold3")):  # same texts in two conditions
        rows += [
            {
                "condition": condition,
                "corpus": "demo",
                "chunk_id": f"{chunkset}|demo/d{i % 4}|{i:03d}",
                "doc_id": f"demo/d{i % 4}",
                "chunkset": chunkset,
                "text": t,
            }
            for i, t in enumerate(texts)
        ]
    create_condition_texts(con, rows)
    qtexts = [f"question {i} on topic {i}" for i in range(n_queries)]
    for i, t in enumerate(qtexts):
        con.execute("INSERT INTO queries VALUES (?, NULL, 'demo', ?, 'x')", [f"demo/q{i}", t])
    v = rng.standard_normal((n_chunks + n_queries, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    store_vectors(con, "hand", [sha(t) for t in texts] + [query_hash(t) for t in qtexts], v)
    return dict(zip(qtexts, range(n_queries))), texts


def test_rerank_rescores_top_50_and_is_incremental(con, tiny_ce):
    from sentence_transformers import CrossEncoder

    qtexts, texts = _load(con, np.random.default_rng(0))
    retrieve_stage(con, HAND, k=55, show_progress=False)
    report = rerank_stage(con, str(tiny_ce), HAND, device="cpu", precision="fp32", show_progress=False)
    name = str(tiny_ce.resolve())
    assert report["reranker"] == name and report["depth"] == 50
    # G2 and G3 hold the same texts: 3 queries x 50 pairs are scored once for both
    assert [c["pairs_scored"] for c in report["conditions"]] == [150, 0] and report["pairs_scored"] == 150
    model = CrossEncoder(str(tiny_ce), device="cpu")
    for condition in ("G2", "G3"):
        first = con.execute(
            "SELECT query_id, chunk_id FROM runs WHERE reranker = 'none' AND condition = ? "
            "AND rank <= 50 ORDER BY query_id, chunk_id",
            [condition],
        ).fetchall()
        got = con.execute(
            """SELECT r.query_id, r.rank, r.chunk_id, r.score, q.text, ct.text FROM runs r
                             JOIN queries q USING (query_id)
                             JOIN int_condition_texts ct ON ct.condition = r.condition AND ct.chunk_id = r.chunk_id
                             WHERE r.reranker = ? AND r.condition = ? ORDER BY r.query_id, r.rank""",
            [name, condition],
        ).fetchall()
        assert sorted((g[0], g[2]) for g in got) == first  # exactly the first-stage top 50
        expected = model.predict([(g[4], g[5]) for g in got])
        np.testing.assert_allclose([g[3] for g in got], expected, rtol=1e-4, atol=1e-5)
        for q in {g[0] for g in got}:
            rows = [g for g in got if g[0] == q]
            assert [g[1] for g in rows] == list(range(1, 51))
            assert rows == sorted(rows, key=lambda g: (-g[3], g[2]))
    again = rerank_stage(con, str(tiny_ce), HAND, precision="fp32", show_progress=False)
    assert [c["status"] for c in again["conditions"]] == ["unchanged", "unchanged"] and again["pairs_scored"] == 0
    manifest = con.execute("SELECT reranker, k, n_queries FROM run_manifest WHERE reranker <> 'none'").fetchall()
    assert manifest == [(name, 50, 3), (name, 50, 3)]


def test_rerank_errors(con, tmp_path, tiny_ce):
    _load(con, np.random.default_rng(1))
    with pytest.raises(RerankError, match="no first-stage runs for embedder 'hand'"):
        rerank_stage(con, str(tiny_ce), HAND, show_progress=False)
    with pytest.raises(RerankError, match="neither an existing local directory"):
        resolve_reranker(str(tmp_path / "missing" / "ce"))
    retrieve_stage(con, HAND, k=50, show_progress=False)
    empty_dir = tmp_path / "not-a-model"
    empty_dir.mkdir()
    with pytest.raises(RerankError, match="cannot load reranker"):
        rerank_stage(con, str(empty_dir), HAND, show_progress=False)
    assert con.execute("SELECT count(*) FROM runs WHERE reranker <> 'none'").fetchall()[0][0] == 0


class _Constant:
    """A cross-encoder stand-in scoring every pair 0.5: the whole ranking is one tie."""

    def predict(self, pairs, **kw):
        return np.full(len(pairs), 0.5)


def test_rerank_ties_break_by_document_then_chunk_number(con):
    ids = [("g|demo/10|0", "demo/10"), ("g|demo/9|10", "demo/9"), ("g|demo/9|2", "demo/9")]
    create_condition_texts(
        con,
        [
            {"condition": "G2", "corpus": "demo", "chunk_id": c, "doc_id": d, "chunkset": "g", "text": f"text {c}"}
            for c, d in ids
        ],
    )
    con.execute("INSERT INTO queries VALUES ('demo/q', NULL, 'demo', 'q', 'x')")
    store_vectors(
        con,
        "hand",
        [sha(f"text {c}") for c, _ in ids] + [query_hash("q")],
        np.array([[1, 0], [0.6, 0.8], [0, 1], [1, 0]], dtype=np.float32),
    )
    retrieve_stage(con, HAND, k=3, show_progress=False)
    rerank_stage(con, "owner/constant", HAND, model=_Constant(), precision="fp32", show_progress=False)
    got = [
        r[0]
        for r in con.execute("SELECT chunk_id FROM runs WHERE reranker = 'owner/constant' ORDER BY rank").fetchall()
    ]
    assert got == ["g|demo/9|2", "g|demo/9|10", "g|demo/10|0"]  # not the chunk_id strings' order
