"""The rewriting stage end to end on a hand-made corpus: tiny random-weight models and a scripted LLM
(test stand-ins, never results) through the real code paths, lineage checked in SQL, rerun free."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.chunking.sentence_windows import sentence_chunk_stage
from ingest.llm import LLMCache
from ingest.llm.scripted import ScriptedBackend
from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.rerank import RerankerSpec
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.stage import rewrite_stage
from ingest.rewriting.strategies import load_strategies
from tests.ingest.retrieval.fixtures import build_tiny_cross_encoder, build_tiny_sentence_transformer
from tests.ingest.rewriting.fixtures import load_corpus, respond

SETTINGS = RewriteSettings(chunk_tokens=64, chunk_overlap=16, n_variants=(("S2", 3), ("S3", 3), ("S4", 1)))
TABLES = ("rewrites", "rewrite_text_runs", "rewrite_runs")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from sentence_transformers import CrossEncoder, SentenceTransformer

    root = tmp_path_factory.mktemp("rewriting-models")
    st = build_tiny_sentence_transformer(root / "embedder")
    ce = build_tiny_cross_encoder(root / "reranker")
    return (
        EmbedderSpec("tiny-embedder", str(st)),
        SentenceTransformer(str(st), device="cpu"),
        RerankerSpec("tiny-reranker", str(ce)),
        CrossEncoder(str(ce), device="cpu"),
    )


def _run(con, models, backend, reranker=True, settings=SETTINGS):
    spec, st, rr, ce = models
    llm = LLMCache(con, backend, progress=False)
    report = rewrite_stage(
        con,
        "towns",
        settings,
        embedder=spec,
        embed_model=st,
        reranker=rr if reranker else None,
        rerank_model=ce,
        llm=llm,
        show_progress=False,
    )
    return report, llm


def _snapshot(con):
    return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}


@pytest.fixture()
def ran(con, models):
    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    # a judged document without chunks can never be retrieved: the stage counts it
    con.execute("DELETE FROM chunks WHERE chunkset = 'sentence:64/16' AND doc_id = 'towns/Dalby-river'")
    backend = ScriptedBackend(respond)
    report, llm = _run(con, models, backend)
    return con, backend, report, llm


def test_texts_reasons_and_funnel(ran):
    con, backend, report, llm = ran
    strategies = load_strategies()
    llm_strategies = [s for s in SETTINGS.strategies if strategies[s].uses_llm]
    assert llm.calls == len(backend.requests) == 4 * 3 * len(llm_strategies)  # 4 queries x 3 seeds x 5 strategies
    assert {r.sampling.seed for r in backend.requests} == {42, 123, 2024}
    assert {r.sampling.temperature for r in backend.requests} == {0.7}
    reasons = {
        (q, s, seed, v): (reason, kept)
        for q, s, seed, v, reason, kept in con.execute(
            "SELECT query_id, strategy, seed, variant_idx, reason, kept FROM rewrites"
        ).fetchall()
    }
    # S2 for q2 at seed 42: empty answer -> the original alone, as fallback
    assert [k for k in reasons if k[:3] == ("towns/q2", "S2", 42)] == [("towns/q2", "S2", 42, 0)]
    assert reasons[("towns/q2", "S2", 42, 0)] == ("fallback", True)
    # S2 elsewhere: variant 2 repeats the query, variant 3 repeats variant 1, line 4 is beyond n = 3
    assert reasons[("towns/q1", "S2", 123, 2)] == ("identical", False)
    assert reasons[("towns/q1", "S2", 123, 3)] == ("duplicate", False)
    assert ("towns/q1", "S2", 123, 4) not in reasons
    # LLM-free S1 under every seed; Query2Doc with an empty passage falls back to the query
    assert all(reasons[("towns/q1", "S1", seed, 0)] == ("original", True) for seed in (42, 123, 2024))
    assert reasons[("towns/q4", "Q2D", 42, 0)] == ("fallback", True)
    funnel = report["funnel"]
    s2 = funnel["rewrite:tiny-embedder:S2:42"]
    assert (s2["queries"], s2["llm_answers"], s2["empty_answer"], s2["no_usable_line"]) == (4, 4, 1, 1)
    assert (s2["identical"], s2["duplicate"], s2["beyond_n"], s2["fallback"] >= 2) == (2, 2, 2, True)
    assert funnel["rewrite_qrels:tiny-embedder"] == {"input": 5, "doc_not_indexed": 1, "kept": 4}
    # every cosine verdict agrees with the stored vectors and the band
    for cos, reason, strategy in con.execute(
        "SELECT cosine, reason, strategy FROM rewrites WHERE reason IN ('kept', 'cosine_low', 'cosine_high')"
    ).fetchall():
        if strategy in SETTINGS.cosine_filter:
            lo, hi = SETTINGS.cosine_band
            assert reason == ("kept" if lo <= cos <= hi else "cosine_low" if cos < lo else "cosine_high")
    assert (
        con.execute(
            "SELECT count(*) FROM rewrites WHERE reason IN ('identical', 'duplicate') AND cosine IS NOT NULL"
        ).fetchone()[0]
        == 0
    )
    keys = {r[0] for r in con.execute("SELECT cache_key FROM llm_calls").fetchall()}
    assert {r[0] for r in con.execute("SELECT llm_call_key FROM rewrites WHERE variant_idx > 0").fetchall()} <= keys


def test_per_text_lists_and_per_strategy_k(ran):
    con, _, _, _ = ran
    n_chunks, n_docs = con.execute(
        "SELECT count(*), count(DISTINCT doc_id) FROM chunks WHERE chunkset = 'sentence:64/16'"
    ).fetchone()
    assert 20 < n_chunks < 100 and n_docs == 29  # 30 documents, one without chunks (the ran fixture)
    depth = {s.name: s.depth_k for s in load_strategies().values()}
    # pool_fill fixed (the paper's, the default): each text's pool is the configured one (20; S1-pool100:
    # 100); its list holds its K documents (K: depth_k of the seed for a text among several, max_merged = 20
    # for a strategy's only text), or fewer when the pool's chunks come from fewer documents
    rows = con.execute("""
        WITH texts AS (SELECT strategy, seed, query_id, variant_idx, ann_seed, any_value(pool) AS pool,
                              count(*) FILTER (WHERE stage = 'dense') AS n_dense,
                              count(*) FILTER (WHERE stage = 'rerank') AS n_rerank,
                              count(DISTINCT doc_id) FILTER (WHERE stage = 'dense') AS dense_docs,
                              count(*) FILTER (WHERE stage = 'mmr') AS n_mmr
                       FROM rewrite_text_runs GROUP BY ALL)
        SELECT *, count(*) OVER (PARTITION BY strategy, seed, query_id) AS n_texts FROM texts""").fetchall()
    short = 0
    for strategy, seed, query_id, variant, graph, pool, n_dense, n_rerank, dense_docs, n_mmr, n_texts in rows:
        k = 20 if n_texts == 1 else depth[strategy]
        base = 100 if strategy == "S1-pool100" else 20
        assert pool == base and n_dense == n_rerank == min(pool, n_chunks), (strategy, query_id, variant)
        assert n_mmr == min(k, dense_docs), (strategy, query_id, variant)
        short += n_mmr < k
    assert short > 0  # long documents fill the 20-chunk pools of this corpus: some lists are short
    assert {r[0] for r in rows if r[-1] == 1} >= {"S1", "HyDE", "S1-pool100"}
    # mmr documents are distinct, each with its best chunk of the rerank list and that chunk's score
    assert (
        con.execute("""SELECT count(*) FROM (SELECT strategy, seed, query_id, variant_idx, ann_seed, doc_id, count(*) AS n
                          FROM rewrite_text_runs WHERE stage = 'mmr' GROUP BY ALL) WHERE n > 1""").fetchone()[0]
        == 0
    )
    assert (
        con.execute("""
        WITH best AS (SELECT strategy, seed, query_id, variant_idx, ann_seed, doc_id, arg_min(chunk_id, rank) AS chunk_id,
                             max(score) AS score
                      FROM rewrite_text_runs WHERE stage = 'rerank' GROUP BY ALL)
        SELECT count(*) FROM rewrite_text_runs m
        JOIN best b ON (b.strategy, b.seed, b.query_id, b.variant_idx, b.doc_id) = (m.strategy, m.seed, m.query_id,
             m.variant_idx, m.doc_id) AND b.ann_seed IS NOT DISTINCT FROM m.ann_seed
        WHERE m.stage = 'mmr' AND (m.chunk_id <> b.chunk_id OR m.score <> b.score)""").fetchone()[0]
        == 0
    )


def test_pool_fill_widen_fills_every_list(con, models):
    """pool_fill widen (the project's variant): a pool doubles while it holds fewer than its text's K distinct
    documents, so every list holds its K documents (the corpus has 29)."""
    import dataclasses

    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    _run(con, models, ScriptedBackend(respond), settings=dataclasses.replace(SETTINGS, pool_fill="widen"))
    n_chunks = con.execute("SELECT count(*) FROM chunks WHERE chunkset = 'sentence:64/16'").fetchone()[0]
    depth = {s.name: s.depth_k for s in load_strategies().values()}
    rows = con.execute("""
        WITH texts AS (SELECT strategy, seed, query_id, variant_idx, ann_seed, any_value(pool) AS pool,
                              count(*) FILTER (WHERE stage = 'dense') AS n_dense,
                              count(DISTINCT doc_id) FILTER (WHERE stage = 'dense') AS dense_docs,
                              count(*) FILTER (WHERE stage = 'mmr') AS n_mmr
                       FROM rewrite_text_runs GROUP BY ALL)
        SELECT *, count(*) OVER (PARTITION BY strategy, seed, query_id) AS n_texts FROM texts""").fetchall()
    widened = 0
    for strategy, seed, query_id, variant, graph, pool, n_dense, dense_docs, n_mmr, n_texts in rows:
        k = 20 if n_texts == 1 else depth[strategy]
        base = 100 if strategy == "S1-pool100" else 20
        assert n_mmr == k and dense_docs >= k and n_dense == min(pool, n_chunks), (strategy, query_id, variant)
        assert pool == base or (pool in (2 * base, 4 * base) or pool == n_chunks) and base < pool <= n_chunks
        widened += pool > base
    assert widened > 0


def test_ann_control_searches_each_seeded_graph(ran, models):
    """dense: hnsw (the default): every strategy at run seed s searches the graph of index seed s; S1-ann4
    the query in each of its four graphs (index seeds s and three drawn above every run seed), pools scored exactly
    (the cosine of the stored vectors, sorted), every graph's list reranked, and the merged list the
    max-score union of the four."""
    con, _, _, _ = ran
    from ingest.rewriting.ann import graph_seeds
    from ingest.rewriting.index import chunk_texts
    from ingest.rewriting.vectors import fetch_vectors, text_key

    seeds = con.execute(
        "SELECT strategy, seed, list(DISTINCT ann_seed ORDER BY ann_seed) FROM rewrite_text_runs GROUP BY 1, 2"
    ).fetchall()
    assert {(s, seed): g for s, seed, g in seeds} == {
        (s, seed): (sorted(graph_seeds(seed, 4)) if s == "S1-ann4" else [seed])
        for s in SETTINGS.strategies
        for seed in SETTINGS.seeds
    }
    ids, _, texts = chunk_texts(con, "towns", "sentence:64/16")
    vec = dict(zip(ids, fetch_vectors(con, models[0].name, [text_key(t, False) for t in texts])))
    for query_id, query in con.execute("SELECT query_id, text FROM queries ORDER BY 1").fetchall():
        q = fetch_vectors(con, models[0].name, [text_key(query, True)])[0].astype(np.float64)
        for seed in (42, 1435181059, 2052046708, 1945459689):  # graph_seeds(42, 4)
            pool = con.execute(
                "SELECT chunk_id, score FROM rewrite_text_runs WHERE strategy = 'S1-ann4' AND seed = 42 "
                "AND query_id = ? AND ann_seed = ? AND stage = 'dense' ORDER BY rank",
                [query_id, seed],
            ).fetchall()
            assert len(pool) >= 20
            assert np.allclose([s for _, s in pool], [vec[c].astype(np.float64) @ q for c, _ in pool], atol=1e-9)
            assert [s for _, s in pool] == sorted((s for _, s in pool), reverse=True)
    # the merged S1-ann4 list: each document at its best score over the four graphs' mmr lists
    assert (
        con.execute("""
        WITH texts AS (SELECT seed, query_id, doc_id, max(score) AS score FROM rewrite_text_runs
                       WHERE strategy = 'S1-ann4' AND stage = 'mmr' GROUP BY ALL)
        SELECT count(*) FROM (SELECT * FROM rewrite_runs WHERE strategy = 'S1-ann4') r
        FULL JOIN texts t USING (seed, query_id, doc_id) WHERE r.score IS DISTINCT FROM t.score""").fetchone()[0]
        == 0
    )


def test_rerank_scores_are_the_cross_encoders(ran, models):
    con, _, _, _ = ran
    from ingest.rewriting.index import chunk_texts

    ids, _, texts = chunk_texts(con, "towns", "sentence:64/16")
    text_of = dict(zip(ids, texts))
    sample = con.execute("""SELECT w.text, t.chunk_id, t.score FROM rewrite_text_runs t
                            JOIN rewrites w USING (corpus, embedder, query_id, strategy, seed, variant_idx)
                            WHERE t.stage = 'rerank' AND t.strategy = 'S3' AND t.seed = 123 ORDER BY ALL LIMIT 25""").fetchall()
    scores = models[3].predict([(q, text_of[c]) for q, c, _ in sample], show_progress_bar=False)
    assert np.allclose(scores, [s for _, _, s in sample], atol=1e-6)
    assert all(0.0 <= s <= 1.0 for *_, s in sample)  # sigmoid of a one-logit cross-encoder


def test_merged_runs_are_the_max_over_texts(ran):
    con, _, _, _ = ran
    assert (
        con.execute("""SELECT count(*) FROM (SELECT strategy, seed, query_id, max(rank) AS m, count(*) AS n
                          FROM rewrite_runs GROUP BY ALL) WHERE m <> n OR n > 20""").fetchone()[0]
        == 0
    )
    # score = max over the strategy's texts' mmr scores; variant_idx is a kept text attaining it
    assert (
        con.execute("""
        WITH texts AS (SELECT strategy, seed, query_id, doc_id, max(score) AS score
                       FROM rewrite_text_runs WHERE stage = 'mmr' GROUP BY ALL)
        SELECT count(*) FROM rewrite_runs r FULL JOIN texts t USING (strategy, seed, query_id, doc_id)
        WHERE r.score IS DISTINCT FROM t.score""").fetchone()[0]
        == 0
    )  # <= 20 docs per query here: all kept
    assert (
        con.execute("""
        SELECT count(*) FROM rewrite_runs r
        LEFT JOIN rewrite_text_runs t ON t.stage = 'mmr' AND t.strategy = r.strategy AND t.seed = r.seed
             AND t.query_id = r.query_id AND t.variant_idx = r.variant_idx AND t.doc_id = r.doc_id AND t.score = r.score
        LEFT JOIN rewrites w ON w.strategy = r.strategy AND w.seed = r.seed AND w.query_id = r.query_id
             AND w.variant_idx = r.variant_idx AND w.kept
        WHERE t.doc_id IS NULL OR w.query_id IS NULL""").fetchone()[0]
        == 0
    )
    # several texts: ranked by merged score; one text: its MMR order (merge.py), so scores may rise down the list
    ranked = con.execute("""SELECT r.strategy, r.seed, r.query_id, list(r.score ORDER BY r.rank), any_value(t.n) AS n_texts
                            FROM rewrite_runs r JOIN (SELECT strategy, seed, query_id,
                                 count(DISTINCT (variant_idx, ann_seed)) AS n FROM rewrite_text_runs GROUP BY ALL) t
                            USING (strategy, seed, query_id) GROUP BY ALL""").fetchall()
    assert all(s == sorted(s, reverse=True) for *_, s, n in ranked if n > 1)
    one = con.execute("""SELECT count(*) FROM rewrite_runs r JOIN rewrite_text_runs t USING (strategy, seed, query_id, rank)
                         WHERE t.stage = 'mmr' AND r.strategy IN ('S1', 'HyDE', 'Q2D', 'S1-pool100')
                         AND (r.doc_id <> t.doc_id OR r.score <> t.score OR r.variant_idx <> t.variant_idx)""").fetchone()[
        0
    ]
    assert one == 0  # single-text strategies: the merged list IS the text's MMR list
    # S1's list per query: its 20 documents, or (the paper's fixed 20-chunk pool) the documents that pool holds
    n_s1 = con.execute("SELECT count(*) FROM rewrite_runs WHERE strategy = 'S1' AND seed = 42").fetchone()[0]
    pooled = con.execute("""SELECT sum(least(n, 20)) FROM (SELECT query_id, count(DISTINCT doc_id) AS n FROM rewrite_text_runs
                            WHERE strategy = 'S1' AND seed = 42 AND stage = 'dense' GROUP BY ALL)""").fetchone()[0]
    assert n_s1 == pooled < 4 * 20


def test_rerun_makes_no_call_and_embeds_nothing(ran, models):
    con, backend, first, _ = ran
    before = _snapshot(con)
    n_embeddings = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    calls = len(backend.requests)
    failed = con.execute("SELECT count(*) FROM llm_failures").fetchone()[0]
    report, llm = _run(con, models, backend)
    # only the failed calls (empty or unusable answers, never cached) are asked again; the same answers
    # fail again, so every text is the one of the first run
    assert failed == 5 and len(backend.requests) == calls + failed and llm.calls == failed
    assert llm.hits == first["llm_calls"] - failed
    assert (
        report["texts_embedded"] == 0 and con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == n_embeddings
    )
    assert _snapshot(con) == before  # identical tables
    assert con.execute("SELECT count(*) FROM llm_failures").fetchone()[0] == 2 * failed


def test_replay_only_reproduces_a_run_with_failed_answers(ran, models):
    """Replay-only (no backend) over a run whose LLM had failed answers: each failed request is replayed as
    the failed answer it was (llm_failures), so the stage falls back as the live run did and every table is
    the same; the failures count as failed and nothing is stored."""
    con, _, _, _ = ran
    spec, st, rr, ce = models
    before = _snapshot(con)
    failures = con.execute("SELECT count(*) FROM llm_failures").fetchall()
    replay = LLMCache(con, None, model="scripted-test-model", replay_only=True, progress=False)
    rewrite_stage(
        con,
        "towns",
        SETTINGS,
        embedder=spec,
        embed_model=st,
        reranker=rr,
        rerank_model=ce,
        llm=replay,
        show_progress=False,
    )
    assert (replay.calls, replay.failed) == (0, 5) and _snapshot(con) == before
    assert con.execute("SELECT count(*) FROM llm_failures").fetchall() == failures


def test_without_reranker_scores_are_cosines(con, models):
    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    settings = RewriteSettings(strategies=("S1", "S1-pool100"), chunk_tokens=64, chunk_overlap=16)
    report, _ = _run(con, models, ScriptedBackend(respond), reranker=False, settings=settings)
    assert report["reranker"] == "none" and report["llm_calls"] == 0
    same = con.execute("""SELECT count(*) FROM rewrite_text_runs d JOIN rewrite_text_runs r
                          USING (strategy, seed, query_id, variant_idx, rank)
                          WHERE d.stage = 'dense' AND r.stage = 'rerank' AND (d.chunk_id <> r.chunk_id OR d.score <> r.score)
                       """).fetchone()[0]
    assert same == 0  # no reranker: the rerank stage is the dense order with the cosines
    top = con.execute(
        "SELECT query_id, score FROM rewrite_runs WHERE strategy = 'S1' AND seed = 42 AND rank = 1"
    ).fetchall()
    assert len(top) == 4 and all(-1.0 <= s <= 1.0 for _, s in top)


def test_depth_k_is_read_from_the_seed(con, models, tmp_path, monkeypatch):
    from ingest.rewriting import strategies

    seed = tmp_path / "rewrite_strategies.csv"
    text = strategies.SEED_FILE.read_text().replace("S1-ann4,control,false,10,", "S1-ann4,control,false,3,")
    seed.write_text(text)
    monkeypatch.setattr(strategies, "SEED_FILE", seed)
    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    _run(
        con,
        models,
        ScriptedBackend(respond),
        settings=RewriteSettings(strategies=("S1-ann4",), seeds=(42,), chunk_tokens=64, chunk_overlap=16),
    )
    # S1-ann4 searches four graphs: each text keeps its seed depth (3), the merge at most 4 x 3
    assert con.execute("SELECT DISTINCT rank FROM rewrite_text_runs WHERE stage = 'mmr' ORDER BY 1").fetchall() == [
        (1,),
        (2,),
        (3,),
    ]
    assert 3 <= con.execute("SELECT max(rank) FROM rewrite_runs").fetchone()[0] <= 12


def test_hyde_average_searches_the_normalized_mean(con, models):
    from ingest.rewriting.index import chunk_texts
    from ingest.rewriting.vectors import fetch_vectors, text_key

    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    settings = RewriteSettings(
        strategies=("HyDE",),
        seeds=(42,),
        hyde_passages=2,
        hyde_combine="average",
        chunk_tokens=64,
        chunk_overlap=16,
        dense="exact",
    )
    backend = ScriptedBackend(respond)
    _run(con, models, backend, settings=settings)
    assert sorted(r.sampling.seed for r in backend.requests)[:2] == [42, 42] and {
        r.sampling.seed for r in backend.requests
    } == {42, 42001}
    texts = con.execute(
        "SELECT variant_idx, text, kept, reason FROM rewrites WHERE query_id = 'towns/q1' ORDER BY 1"
    ).fetchall()
    assert [(v, k, r) for v, _, k, r in texts] == [(0, True, "original"), (1, True, "kept"), (2, True, "kept")]
    spec = models[0]
    keys = [
        text_key(texts[0][1], True),
        text_key(texts[1][1], False),
        text_key(texts[2][1], False),
    ]  # passages as passages
    mean = fetch_vectors(con, spec.name, keys).astype(np.float64).mean(axis=0)
    mean /= np.linalg.norm(mean)
    _, _, chunk_text = chunk_texts(con, "towns", "sentence:64/16")
    chunk_vectors = fetch_vectors(con, spec.name, [text_key(t, False) for t in chunk_text])
    dense = con.execute(
        "SELECT variant_idx, score FROM rewrite_text_runs WHERE query_id = 'towns/q1' AND stage = 'dense' ORDER BY rank"
    ).fetchall()
    expected = np.sort(chunk_vectors @ mean)[::-1][: len(dense)]  # the pool
    assert {v for v, _ in dense} == {0}  # one search, recorded under the original
    assert np.allclose([s for _, s in dense], expected, atol=1e-5)


def test_mmr_over_chunks(con, models):
    from ingest.rewriting.index import chunk_texts
    from ingest.rewriting.mmr import mmr_order
    from ingest.rewriting.vectors import fetch_vectors, text_key

    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    settings = RewriteSettings(strategies=("S1",), seeds=(42,), mmr_unit="chunks", chunk_tokens=64, chunk_overlap=16)
    _run(con, models, ScriptedBackend(respond), reranker=False, settings=settings)
    ids, docs, texts = chunk_texts(con, "towns", "sentence:64/16")
    vec = dict(zip(ids, fetch_vectors(con, models[0].name, [text_key(t, False) for t in texts])))
    doc_of = dict(zip(ids, docs))
    for query_id in ("towns/q1", "towns/q3"):
        pool = con.execute(
            "SELECT chunk_id, score FROM rewrite_text_runs WHERE query_id = ? AND stage = 'rerank' ORDER BY rank",
            [query_id],
        ).fetchall()
        order = mmr_order(np.array([s for _, s in pool]), np.stack([vec[c] for c, _ in pool]), len(pool), 0.85)
        expected, best = [], {}
        for c, s in pool:
            best.setdefault(doc_of[c], (c, s))
        for i in order.tolist():
            d = doc_of[pool[i][0]]
            if d not in expected:
                expected.append(d)
        got = con.execute(
            "SELECT doc_id, chunk_id, score FROM rewrite_text_runs WHERE query_id = ? AND stage = 'mmr' ORDER BY rank",
            [query_id],
        ).fetchall()
        assert [d for d, _, _ in got] == expected[:20]  # S1, one text: max_merged documents in MMR order
        assert all((c, s) == best[d] for d, c, s in got)  # a document carries its best chunk and its score


def test_rerank_with_the_original_query(con, models):
    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    settings = RewriteSettings(
        strategies=("S3",),
        seeds=(42,),
        rerank_with="original",
        cosine_band=(-1.0, 1.0),
        chunk_tokens=64,
        chunk_overlap=16,
    )
    _run(con, models, ScriptedBackend(respond), settings=settings)
    searched = con.execute(
        "SELECT count(DISTINCT variant_idx) FROM rewrite_text_runs WHERE query_id = 'towns/q1'"
    ).fetchone()[0]
    assert searched == 4  # the original and its three restatements (the band admits every cosine)
    # every text's pool is scored against the same (original) query: one score per (query, chunk)
    assert (
        con.execute("""SELECT count(*) FROM (SELECT query_id, chunk_id, count(DISTINCT score) AS n
                          FROM rewrite_text_runs WHERE stage = 'rerank' GROUP BY ALL) WHERE n > 1""").fetchone()[0]
        == 0
    )


def _independent_mmr(scores: list[float], vectors: list[np.ndarray], k: int, lam: float) -> list[int]:
    """MMR written out plainly (not ingest/rewriting/mmr.py): min-max relevance, penalty = max cosine to
    every pick so far, ties to the earlier candidate."""
    lo, hi = min(scores), max(scores)
    rel = [(s - lo) / (hi - lo) if hi > lo else 1.0 for s in scores]
    picks: list[int] = []
    while len(picks) < min(k, len(scores)):
        best, best_value = None, None
        for j in range(len(scores)):
            if j in picks:
                continue
            penalty = max((float(np.dot(vectors[j], vectors[p])) for p in picks), default=0.0)
            value = lam * rel[j] - (1 - lam) * penalty
            if best_value is None or value > best_value:
                best, best_value = j, value
        picks.append(best)
    return picks


def test_single_text_lists_are_in_mmr_order_and_a_fallback_is_s1(con, models):
    """S1's stored list is MMR's ranking of its reranked pool (an independent MMR over the documents' best
    chunks), its first max_merged documents, not a re-sort by score; S2's fallback (an empty answer for
    q2 at seed 42) searches the original as S1 does, so its list is S1's."""
    from ingest.rewriting.index import chunk_texts
    from ingest.rewriting.vectors import fetch_vectors, text_key

    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    # pool_fill widen: every list holds its 20 documents, so MMR has room to reorder them
    settings = RewriteSettings(
        strategies=("S1", "S2"),
        seeds=(42,),
        mmr_lambda=0.5,
        chunk_tokens=64,
        chunk_overlap=16,
        n_variants=(("S2", 3), ("S3", 3), ("S4", 1)),
        pool_fill="widen",
    )
    _run(con, models, ScriptedBackend(respond), settings=settings)
    ids, _, texts = chunk_texts(con, "towns", "sentence:64/16")
    vec = dict(zip(ids, fetch_vectors(con, models[0].name, [text_key(t, False) for t in texts]).astype(np.float64)))
    reordered = 0
    for query_id in ("towns/q1", "towns/q2", "towns/q3", "towns/q4"):
        pool = con.execute(
            "SELECT doc_id, chunk_id, score FROM rewrite_text_runs WHERE strategy = 'S1' AND query_id = ? "
            "AND stage = 'rerank' ORDER BY rank",
            [query_id],
        ).fetchall()
        best: dict[str, tuple[str, float]] = {}
        for d, c, s in pool:
            best.setdefault(d, (c, s))
        docs = list(best)
        picks = _independent_mmr([best[d][1] for d in docs], [vec[best[d][0]] for d in docs], 20, 0.5)
        stored = con.execute(
            "SELECT doc_id, score FROM rewrite_runs WHERE strategy = 'S1' AND query_id = ? ORDER BY rank", [query_id]
        ).fetchall()
        assert [d for d, _ in stored] == [docs[p] for p in picks] and len(stored) == 20
        assert [s for _, s in stored] == [best[docs[p]][1] for p in picks]
        reordered += [s for _, s in stored] != sorted((s for _, s in stored), reverse=True)
        if query_id == "towns/q2":  # S2's fallback at seed 42 is S1
            assert (
                con.execute(
                    "SELECT doc_id, score FROM rewrite_runs WHERE strategy = 'S2' AND query_id = ? ORDER BY rank",
                    [query_id],
                ).fetchall()
                == stored
            )
    assert reordered > 0  # MMR changed the order somewhere: a re-sort by score would fail above


def test_exact_dense_is_seed_free_and_a_run_owns_its_cell(con, models):
    """dense: exact: S1's pools are brute force, identical under every seed (ann_seed NULL, every chunk
    in the exact top P). A rerun with fewer seeds and strategies leaves only what it lists in rewrites,
    rewrite_text_runs, rewrite_runs and the funnel."""
    from ingest.rewriting.index import chunk_texts
    from ingest.rewriting.vectors import fetch_vectors, text_key

    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    kw = dict(chunk_tokens=64, chunk_overlap=16, dense="exact")
    _run(
        con,
        models,
        ScriptedBackend(respond),
        reranker=False,
        settings=RewriteSettings(strategies=("S1", "S1-pool100"), seeds=(42, 43), **kw),
    )
    ids, _, texts = chunk_texts(con, "towns", "sentence:64/16")
    chunks = fetch_vectors(con, models[0].name, [text_key(t, False) for t in texts])
    for query_id, text in con.execute("SELECT query_id, text FROM queries").fetchall():
        q = fetch_vectors(con, models[0].name, [text_key(text, True)])[0]
        brute = [ids[i] for i in np.lexsort((np.arange(len(ids)), -(chunks @ q)))]
        pools = {
            seed: con.execute(
                "SELECT chunk_id, ann_seed, in_exact FROM rewrite_text_runs WHERE strategy = 'S1' "
                "AND seed = ? AND query_id = ? AND stage = 'dense' ORDER BY rank",
                [seed, query_id],
            ).fetchall()
            for seed in (42, 43)
        }
        assert pools[42] == pools[43] and [c for c, _, _ in pools[42]] == brute[: len(pools[42])]
        assert {(g, e) for _, g, e in pools[42]} == {(None, True)}
    # the same cell again with one seed and one strategy: nothing else is left
    _run(
        con,
        models,
        ScriptedBackend(respond),
        reranker=False,
        settings=RewriteSettings(strategies=("S1",), seeds=(42,), **kw),
    )
    for table in TABLES:
        assert con.execute(f"SELECT DISTINCT strategy, seed FROM {table}").fetchall() == [("S1", 42)], table
    stages = {
        s for (s,) in con.execute("SELECT DISTINCT stage FROM funnel WHERE starts_with(stage, 'rewrite')").fetchall()
    }
    assert stages == {"rewrite:tiny-embedder:S1:42", "rewrite_qrels:tiny-embedder"}
    # under hnsw without the recall check: the pools' in_exact is NULL (not checked), every pool graph-searched
    _run(
        con,
        models,
        ScriptedBackend(respond),
        reranker=False,
        settings=RewriteSettings(
            strategies=("S1",), seeds=(42,), chunk_tokens=64, chunk_overlap=16, ann_recall_check=False
        ),
    )
    assert con.execute(
        "SELECT DISTINCT ann_seed, in_exact FROM rewrite_text_runs WHERE stage = 'dense'"
    ).fetchall() == [(42, None)]


def test_changed_texts_remove_another_rerankers_rows_of_them(con, models):
    """The texts are shared by every reranker of (corpus, embedder): a run whose texts differ for a
    (strategy, seed) (here another sampling temperature, whose answers reword one S3 line) removes that
    pair's rows of every reranker;
    another reranker's rows of a pair whose texts are unchanged (S1, S3 at a seed this run does not change)
    stay, row for row."""
    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    kw = dict(strategies=("S1", "S3"), chunk_tokens=64, chunk_overlap=16)
    _run(con, models, ScriptedBackend(respond), reranker=True, settings=RewriteSettings(seeds=(42, 123), **kw))

    def cells():
        return con.execute(
            "SELECT reranker, strategy, seed, count(*) FROM rewrite_runs GROUP BY ALL ORDER BY ALL"
        ).fetchall()

    reranked = con.execute(
        "SELECT * FROM rewrite_runs WHERE reranker = 'tiny-reranker' AND strategy = 'S1' ORDER BY ALL"
    ).fetchall()
    assert [c[:3] for c in cells()] == [("tiny-reranker", s, seed) for s in ("S1", "S3") for seed in (42, 123)]
    # the same texts under no reranker: the reranked cell is untouched
    _run(con, models, ScriptedBackend(respond), reranker=False, settings=RewriteSettings(seeds=(42, 123), **kw))
    assert [c[:3] for c in cells()] == [
        (r, s, seed) for r in ("none", "tiny-reranker") for s in ("S1", "S3") for seed in (42, 123)
    ]
    # new requests (temperature 0.5) whose answers reword S3's third line at both seeds: the reranked S3 rows,
    # searched over the old texts, go; S1's texts (no LLM) are unchanged
    reworded = ScriptedBackend(lambda r: respond(r).replace("- Name ", "- Give "))
    _run(con, models, reworded, reranker=False, settings=RewriteSettings(seeds=(42, 123), temperature=0.5, **kw))
    assert con.execute(
        "SELECT count(*) FROM rewrites WHERE strategy = 'S3' AND starts_with(text, 'Give ')"
    ).fetchall() == [(8,)]
    assert [c[:3] for c in cells()] == [("none", s, seed) for s in ("S1", "S3") for seed in (42, 123)] + [
        ("tiny-reranker", "S1", 42),
        ("tiny-reranker", "S1", 123),
    ]
    assert (
        con.execute(
            "SELECT * FROM rewrite_runs WHERE reranker = 'tiny-reranker' AND strategy = 'S1' ORDER BY ALL"
        ).fetchall()
        == reranked
    )
    assert con.execute("SELECT DISTINCT reranker FROM rewrite_text_runs WHERE strategy = 'S3'").fetchall() == [
        ("none",)
    ]
    # S3 at seed 42 only: seed 123's rows of every reranker go (their texts are gone), S1 42 stays reranked
    _run(con, models, reworded, reranker=False, settings=RewriteSettings(seeds=(42,), temperature=0.5, **kw))
    assert [c[:3] for c in cells()] == [("none", "S1", 42), ("none", "S3", 42), ("tiny-reranker", "S1", 42)]
