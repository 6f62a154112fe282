"""Flat and two-stage retrieval: exactness against SQL brute force, tie order, edge cases, routing."""

from __future__ import annotations

import numpy as np
import pytest

import ingest.retrieval.retrieve as retrieve
from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.retrieve import RetrieveError, retrieve_stage
from ingest.retrieval.topk import topk_inner_product
from tests.ingest.retrieval.fixtures import create_condition_texts, query_hash, sha, store_vectors

HAND = EmbedderSpec(name="hand", source="/unused")


def _unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _chunks(condition, corpus, chunkset, ids_docs, texts):
    return [
        {"condition": condition, "corpus": corpus, "chunk_id": cid, "doc_id": doc, "chunkset": chunkset, "text": t}
        for (cid, doc), t in zip(ids_docs, texts)
    ]


def _queries(con, corpus, texts):
    for i, t in enumerate(texts):
        con.execute("INSERT INTO queries VALUES (?, NULL, ?, ?, 'x')", [f"{corpus}/q{i:02d}", corpus, t])


def _runs(con, condition, reranker="none"):
    return con.execute(
        "SELECT query_id, rank, chunk_id, score FROM runs WHERE condition = ? AND reranker = ? ORDER BY query_id, rank",
        [condition, reranker],
    ).fetchall()


# --- the kernel -----------------------------------------------------------------------------------


def test_kernel_matches_full_sort_with_many_ties_across_tiles():
    rng = np.random.default_rng(1)
    queries = np.round(rng.standard_normal((23, 6)), 0).astype(np.float32)
    index = np.round(rng.standard_normal((700, 6)), 0).astype(np.float32)  # heavy ties
    pos, scores = topk_inner_product(queries, index, 50, query_batch=7, index_block=64)
    full = queries @ index.T
    for i in range(len(queries)):
        expected = np.lexsort((np.arange(700), -full[i]))[:50]
        np.testing.assert_array_equal(pos[i], expected)
        np.testing.assert_array_equal(scores[i], full[i, expected])


@pytest.mark.parametrize(
    ("k", "query_batch", "index_block"), [(1, 5, 16), (50, 7, 64), (130, 9, 64), (700, 23, 100), (3, 23, 700)]
)
def test_kernel_equals_a_full_sort_whatever_the_tiles(k, query_batch, index_block):
    """Rows fill up over several tiles (k above the block), then later tiles offer only scores above the
    k-th: the same positions and scores as one full (score desc, position asc) sort, under heavy ties."""
    rng = np.random.default_rng(k)
    queries = np.round(rng.standard_normal((23, 5)), 0).astype(np.float32)
    index = np.round(rng.standard_normal((700, 5)), 0).astype(np.float32)
    pos, scores = topk_inner_product(queries, index, k, query_batch=query_batch, index_block=index_block)
    full = queries @ index.T
    expected = np.lexsort((np.broadcast_to(np.arange(700), full.shape), -full), axis=1)[:, :k]
    np.testing.assert_array_equal(pos, expected)
    np.testing.assert_array_equal(scores, np.take_along_axis(full, expected, 1))


@pytest.mark.parametrize(("k", "partitioned"), [(10, 11 + 11), (100, 2 + 2)])
def test_kernel_when_every_later_tile_beats_the_rows(k, partitioned, monkeypatch):
    """Scores rising with position (in threes: ties): a later tile offers more than k per row (10: it is
    partitioned as a first one, so memory stays bounded) or up to k per row (100: merged), and either
    way the full sort's answer."""
    import ingest.retrieval.topk as topk

    calls = []
    real = topk._tile_topk
    monkeypatch.setattr(topk, "_tile_topk", lambda tile, kk: calls.append(kk) or real(tile, kk))
    queries = np.array([[1.0], [2.0], [-1.0], [3.0]], np.float32)
    index = (np.arange(700) // 3).astype(np.float32)[:, None]
    pos, scores = topk_inner_product(queries, index, k, query_batch=2, index_block=64)
    assert len(calls) == partitioned  # 11 tiles per batch of 2 queries, or the 2 that fill a row
    full = queries @ index.T
    expected = np.lexsort((np.broadcast_to(np.arange(700), full.shape), -full), axis=1)[:, :k]
    np.testing.assert_array_equal(pos, expected)
    np.testing.assert_array_equal(scores, np.take_along_axis(full, expected, 1))


def test_kernel_edge_shapes():
    pos, scores = topk_inner_product(np.ones((3, 4)), np.ones((2, 4)), 50)
    assert pos.tolist() == [[0, 1]] * 3 and scores.tolist() == [[4.0, 4.0]] * 3
    assert topk_inner_product(np.zeros((0, 4)), np.ones((5, 4)), 5)[0].shape == (0, 5)
    assert topk_inner_product(np.ones((2, 4)), np.zeros((0, 4)), 5)[0].shape == (2, 0)


# --- flat runs ------------------------------------------------------------------------------------


def _random_corpus(con, rng, n_docs=6, per_doc=(3, 30), n_queries=9, dim=8):
    ids_docs, texts = [], []
    for d in range(n_docs):
        for c in range(rng.integers(*per_doc)):
            ids_docs.append((f"fixed|demo/{d}|{c}", f"demo/{d}"))
            texts.append(f"doc {d} chunk {c}")
    create_condition_texts(con, _chunks("G2", "demo", "fixed", ids_docs, texts))
    qtexts = [f"query {i}" for i in range(n_queries)]
    _queries(con, "demo", qtexts)
    store_vectors(con, "hand", [sha(t) for t in texts], _unit(rng.standard_normal((len(texts), dim))))
    store_vectors(con, "hand", [query_hash(t) for t in qtexts], _unit(rng.standard_normal((n_queries, dim))))
    return len(texts)


def test_flat_top_k_equals_sql_brute_force(con):
    n = _random_corpus(con, np.random.default_rng(7))
    assert n > 50
    report = retrieve_stage(con, HAND, k=50, show_progress=False)
    assert report["conditions"] == [
        {
            "corpus": "demo",
            "condition": "G2",
            "retrieval": "flat",
            "n_chunks": n,
            "n_queries": 9,
            "status": "computed",
            "rows": 9 * 50,
        }
    ]
    brute = con.execute("""
        WITH q AS (SELECT query_id, e.vector FROM queries JOIN embeddings e
                   ON e.embedder = 'hand' AND e.text_hash = sha256('[query] ' || text)),
             c AS (SELECT chunk_id, e.vector FROM int_condition_texts ct JOIN embeddings e
                   ON e.embedder = 'hand' AND e.text_hash = ct.text_hash WHERE condition = 'G2'),
             s AS (SELECT q.query_id, c.chunk_id, list_dot_product(q.vector, c.vector) AS score FROM q, c),
             r AS (SELECT *, row_number() OVER (PARTITION BY query_id ORDER BY score DESC, chunk_id) AS rank FROM s)
        SELECT query_id, rank, chunk_id, score FROM r WHERE rank <= 50 ORDER BY query_id, rank""").fetchall()
    got = _runs(con, "G2")
    assert [r[:3] for r in got] == [r[:3] for r in brute]
    np.testing.assert_allclose([r[3] for r in got], [r[3] for r in brute], atol=1e-5)


def test_ties_break_by_document_then_chunk_number_and_small_index_returns_all(con):
    # the tie rule: document then chunk order as numbers, not the chunk_id string
    # (which sorts '...|10' before '...|2' and 'demo/10' before 'demo/9')
    ids = [
        ("fixed|demo/10|0", "demo/10"),
        ("fixed|demo/9|10", "demo/9"),
        ("fixed|demo/9|2", "demo/9"),
        ("fixed|demo/9|3", "demo/9"),
    ]
    texts = ["t0", "t1", "t2", "t3"]
    create_condition_texts(con, _chunks("G2", "demo", "fixed", ids, texts))
    _queries(con, "demo", ["q"])
    store_vectors(con, "hand", [sha(t) for t in texts], _unit([[1, 0], [1, 0], [0, 1], [-1, 0]]))
    store_vectors(con, "hand", [query_hash("q")], _unit([[1, 1]]))
    retrieve_stage(con, HAND, k=50, show_progress=False)
    got = _runs(con, "G2")
    # three score 1/sqrt(2): demo/9 before demo/10, chunk 2 before chunk 10; fewer than k chunks -> all
    assert [r[2] for r in got] == ["fixed|demo/9|2", "fixed|demo/9|10", "fixed|demo/10|0", "fixed|demo/9|3"]
    assert [r[1] for r in got] == [1, 2, 3, 4]


def test_incremental_empty_and_missing_vectors(con):
    _random_corpus(con, np.random.default_rng(3))
    first = retrieve_stage(con, HAND, k=50, show_progress=False)
    before = _runs(con, "G2")
    again = retrieve_stage(con, HAND, k=50, show_progress=False)
    assert again["conditions"][0]["status"] == "unchanged" and _runs(con, "G2") == before
    changed = retrieve_stage(con, HAND, k=60, show_progress=False)
    assert changed["conditions"][0]["status"] == "computed" and first["conditions"][0]["status"] == "computed"
    assert (
        con.execute(
            "SELECT max(rank), count(*) FROM run_manifest JOIN runs USING (corpus, condition) WHERE run_manifest.k = 60"
        ).fetchall()[0][0]
        == 60
    )
    empty = retrieve_stage(con, HAND, k=50, conditions=["G3"], show_progress=False)
    assert empty["conditions"] == [] and empty["empty"] == ["G3"]
    with pytest.raises(RetrieveError, match="unknown conditions"):
        retrieve_stage(con, HAND, conditions=["NOPE"], show_progress=False)
    _queries(con, "demo", ["an unembedded query"])
    with pytest.raises(RetrieveError, match="1 query texts have no 'hand' embedding: run `ragwh embed"):
        retrieve_stage(con, HAND, show_progress=False)


def test_condition_without_queries_writes_manifest_only(con):
    create_condition_texts(con, _chunks("G2", "demo", "fixed", [("fixed|demo/a|0", "demo/a")], ["t"]))
    store_vectors(con, "hand", [sha("t")], _unit([[1, 0]]))
    report = retrieve_stage(con, HAND, show_progress=False)
    assert report["conditions"][0]["n_queries"] == 0 and report["conditions"][0]["rows"] == 0
    assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0


# --- two-stage ------------------------------------------------------------------------------------


def _two_stage_fixture(con):
    """demo/a: level-1 sections 0 ('Intro', para 0) and 1 ('Methods', paras 1-2, with level-2 child 2);
    demo/b: level-1 section 0 (paras 0-1). Chunk vectors in 2-D (see the test for the scores)."""
    con.execute("""INSERT INTO sections VALUES
        ('gold', 'demo/a', 0, NULL, 1, 'Intro',   0, 0,  7, 20),
        ('gold', 'demo/a', 1, NULL, 1, 'Methods', 1, 2, 22, 60),
        ('gold', 'demo/a', 2, 1,    2, 'Detail',  2, 2, 40, 60),
        ('gold', 'demo/b', 0, NULL, 1, 'Body',    0, 1,  7, 50)""")
    chunks = [
        ("structural:gold|demo/a|0", "demo/a", 0, 0),
        ("structural:gold|demo/a|1", "demo/a", 1, 1),
        ("structural:gold|demo/a|2", "demo/a", 2, 2),
        ("structural:gold|demo/b|0", "demo/b", 0, 0),
        ("structural:gold|demo/b|1", "demo/b", 1, 0),
    ]
    for cid, doc, idx, sec in chunks:
        con.execute("INSERT INTO chunks VALUES ('structural:gold', ?, ?, ?, 0, 1, 1, ?)", [cid, doc, idx, sec])
    texts = ["a0", "a1", "a2", "b0", "b1"]
    create_condition_texts(con, _chunks("G4", "demo", "structural:gold", [c[:2] for c in chunks], texts))
    store_vectors(
        con,
        "hand",
        [sha(t) for t in texts],
        np.array([[0, 1], [0.6, 0.8], [0.8, 0.6], [1, 0], [-0.6, -0.8]], dtype=np.float32),
    )
    _queries(con, "demo", ["east", "north", "west"])  # q00=(1,0), q01=(0,1), q02=(-1,0)
    store_vectors(
        con,
        "hand",
        [query_hash(t) for t in ["east", "north", "west"]],
        np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32),
    )
    con.execute("""INSERT INTO evidence VALUES
        ('demo/q00', 0, 'demo/a', 45, 50, 'exact'),   -- inside a#1 (via its child) -> routed a#1: TRUE
        ('demo/q01', 0, 'demo/b', 10, 12, 'exact')    -- q01 routes a#0 only -> FALSE; q02: no evidence -> NULL
        """)


def test_two_stage_routing_backfill_and_section_recall_by_hand(con, monkeypatch):
    _two_stage_fixture(con)
    monkeypatch.setattr(retrieve, "ROUTED_SECTIONS", 1)
    report = retrieve_stage(con, HAND, k=4, show_progress=False)
    assert report["conditions"][0]["retrieval"] == "two_stage"
    got = _runs(con, "G4")
    by_query = {}
    for q, rank, cid, score in got:
        by_query.setdefault(q, []).append((cid.rsplit("|", 2)[1][-1] + cid[-1], round(score, 4)))
    # centroids: a#0=(0,1); a#1=norm(0.7,0.7); b#0=norm(0.2,-0.4)
    # east: route a#1 -> a2 .8, a1 .6, then flat backfill b0 1.0, a0 0
    assert by_query["demo/q00"] == [("a2", 0.8), ("a1", 0.6), ("b0", 1.0), ("a0", 0.0)]
    # north: route a#0 -> a0 1; backfill a1 .8, a2 .6, b0 0
    assert by_query["demo/q01"] == [("a0", 1.0), ("a1", 0.8), ("a2", 0.6), ("b0", 0.0)]
    # west: a#0 scores 0 > b#0 -.447 > a#1 -.707 -> a0 0; backfill b1 .6, a1 -.6, a2 -.8
    assert by_query["demo/q02"] == [("a0", 0.0), ("b1", 0.6), ("a1", -0.6), ("a2", -0.8)]
    routing = con.execute("SELECT query_id, routed_sections, section_recall FROM routing ORDER BY query_id").fetchall()
    assert routing == [
        ("demo/q00", ["demo/a#1"], True),
        ("demo/q01", ["demo/a#0"], False),
        ("demo/q02", ["demo/a#0"], None),
    ]


def test_two_stage_with_all_sections_routed_equals_flat(con):
    _two_stage_fixture(con)
    retrieve_stage(con, HAND, k=5, show_progress=False)  # 3 sections < 5 routed: every chunk is a candidate
    two = _runs(con, "G4")
    flat_pos, flat_scores = topk_inner_product(
        np.array([[1, 0], [0, 1], [-1, 0]], np.float32),
        np.array([[0, 1], [0.6, 0.8], [0.8, 0.6], [1, 0], [-0.6, -0.8]], np.float32),
        5,
    )
    names = np.array(["a|0", "a|1", "a|2", "b|0", "b|1"])
    assert [r[2][-3:] for r in two] == names[flat_pos].ravel().tolist()
    assert con.execute("SELECT count(*) FROM routing WHERE len(routed_sections) = 3").fetchall()[0][0] == 3


def test_two_stage_routes_a_fallback_document_as_one_section(con, monkeypatch):
    """A document without the chunkset's structure is indexed with its fixed windows; two-stage
    routing treats it as one section (-1) spanning its body, and section recall reads that span."""
    _two_stage_fixture(con)
    con.execute("INSERT INTO paragraphs VALUES ('demo/c', 0, 5, 30), ('demo/c', 1, 32, 70)")
    for idx, (start, end) in enumerate([(5, 32), (32, 70)]):
        con.execute(
            "INSERT INTO chunks VALUES ('fixed', ?, 'demo/c', ?, ?, ?, 1, NULL)",
            [f"fixed|demo/c|{idx}", idx, start, end],
        )
    rows = con.sql("SELECT * FROM int_condition_texts").to_arrow_table().to_pylist()
    rows += [
        {
            "condition": "G4",
            "corpus": "demo",
            "chunk_id": f"fixed|demo/c|{i}",
            "doc_id": "demo/c",
            "chunkset": "fixed",
            "text": t,
            "is_fallback": True,
        }
        for i, t in enumerate(["c0", "c1"])
    ]
    create_condition_texts(
        con,
        [
            {k: r[k] for k in ("condition", "corpus", "chunk_id", "doc_id", "chunkset", "text", "is_fallback")}
            for r in rows
        ],
    )
    store_vectors(con, "hand", [sha("c0"), sha("c1")], np.array([[-1, 0], [-0.8, 0.6]], dtype=np.float32))
    con.execute("INSERT INTO evidence VALUES ('demo/q02', 0, 'demo/c', 50, 60, 'exact')")  # west: inside demo/c
    monkeypatch.setattr(retrieve, "ROUTED_SECTIONS", 1)
    retrieve_stage(con, HAND, k=2, show_progress=False)
    routing = dict(con.execute("SELECT query_id, routed_sections FROM routing").fetchall())
    recall = dict(con.execute("SELECT query_id, section_recall FROM routing").fetchall())
    # west (-1, 0): demo/c's centroid norm(-0.9, 0.3) scores .949, above every real section
    assert routing["demo/q02"] == ["demo/c#-1"] and recall["demo/q02"] is True
    assert [r[2] for r in _runs(con, "G4") if r[0] == "demo/q02"] == ["fixed|demo/c|0", "fixed|demo/c|1"]
    # the condition's own chunks keep their level-1 sections
    assert routing["demo/q00"] == ["demo/a#1"]
