"""BM25 (bm25s) against a hand computation and against rank_bm25, and the BM25 runs it writes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from ingest.retrieval.bm25 import BM25Settings, bm25_stage, build_index, tokenize
from ingest.retrieval.retrieve import RetrieveError

TEXTS = [
    "solar panels on the roof",
    "wind turbines and solar farms",
    "tidal energy from the sea sea sea",
    "roof tiles",
    "a wind farm at sea",
]
QUERIES = ["solar roof", "sea wind", "wind wind", "nothing matches here"]
PLAIN = dict(stopwords="none", stemmer="none")


def hand_lucene(docs: list[list[str]], query: list[str], k1: float, b: float) -> np.ndarray:
    """Lucene BM25 written out: Σ_t idf(t) · tf / (tf + k1 (1 - b + b |d| / avgdl)), idf = ln(1 + (N - df + .5)/(df + .5))."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    out = np.zeros(n)
    for t in query:
        df = sum(t in d for d in docs)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, d in enumerate(docs):
            tf = d.count(t)
            out[i] += idf * tf / (tf + k1 * (1 - b + b * len(d) / avgdl))
    return out


@pytest.mark.parametrize("k1, b", [(0.9, 0.4), (1.2, 0.75), (1.5, 0.0)])
def test_lucene_scores_equal_a_hand_computation(k1, b):
    settings = BM25Settings(k1=k1, b=b, **PLAIN)
    docs = tokenize(TEXTS, settings)
    assert docs[2] == ["tidal", "energy", "from", "the", "sea", "sea", "sea"]  # single letters ('a') are not terms
    index = build_index(docs, settings)
    queries = tokenize(QUERIES, settings)
    scores = index.scores(queries)
    for q, row in zip(queries, scores):
        assert row == pytest.approx(hand_lucene(docs, q, k1, b), rel=1e-6, abs=1e-9)
    assert scores[3].max() == 0  # no shared term: no score


def test_robertson_variant_equals_rank_bm25_okapi():
    """rank_bm25's Okapi BM25 = (k1 + 1) x bm25s's robertson variant when no term is in half the texts or more
    (Okapi's negative-idf floor never applies)."""
    corpus = [
        t.split()
        for t in (
            "alpha beta gamma",
            "beta delta",
            "gamma epsilon zeta",
            "eta theta alpha",
            "iota kappa",
            "lambda mu nu xi",
        )
    ]
    settings = BM25Settings(k1=1.5, b=0.75, method="robertson", **PLAIN)
    index = build_index(corpus, settings)
    reference = BM25Okapi(corpus, k1=1.5, b=0.75)
    for query in (["alpha", "gamma"], ["beta"], ["zeta", "alpha", "alpha"], ["omega"]):
        assert index.scores([query])[0] * 2.5 == pytest.approx(reference.get_scores(query), rel=1e-6, abs=1e-12)


def test_stemming_and_stopwords():
    settings = BM25Settings()  # Porter stemmer, Lucene's English stopwords
    assert tokenize(["The runners were running to the farms"], settings) == [["runner", "were", "run", "farm"]]
    assert tokenize(["The runners"], BM25Settings(stemmer="english")) == [["runner"]]
    with pytest.raises(ValueError, match="stemmer 'klingon'"):
        BM25Settings(stemmer="klingon")
    with pytest.raises(ValueError, match="without spaces or '@'"):
        BM25Settings(name="bm25@x")


@pytest.fixture()
def small(con):
    """One corpus, a flat condition (A3) and a two-stage one (A4) over the same texts."""
    rows = [
        (cond, "c", f"ch|c/d{i // 2}|{i % 2}", f"c/d{i // 2}", text, f"h{i}")
        for cond in ("A3", "A4")
        for i, text in enumerate(TEXTS + ["roof tiles"])
    ]
    con.execute(
        "CREATE TABLE int_condition_texts (condition VARCHAR, corpus VARCHAR, chunk_id VARCHAR, doc_id VARCHAR, "
        "text VARCHAR, text_hash VARCHAR)"
    )
    con.executemany("INSERT INTO int_condition_texts VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.executemany(
        "INSERT INTO queries VALUES (?, NULL, 'c', ?, 'x')", [(f"c/q{i}", q) for i, q in enumerate(QUERIES)]
    )
    return con


def test_stage_writes_ranked_runs_with_ties_and_parameters(small):
    report = bm25_stage(small, BM25Settings(**PLAIN), k=3, show_progress=False)
    assert report["not_run"] == {"A4": report["not_run"]["A4"]} and "embedding vectors" in report["not_run"]["A4"]
    (line,) = report["conditions"]
    assert (line["status"], line["n_unmatched"]) == ("computed", 1)
    runs = small.execute(
        "SELECT query_id, rank, chunk_id, score FROM runs WHERE embedder = 'bm25' ORDER BY 1, 2"
    ).fetchall()
    by_query = {}
    for q, r, c, s in runs:
        by_query.setdefault(q, []).append((r, c, s))
    assert "c/q3" not in by_query  # no positive score: no ranking
    # 'roof tiles' is d1|1 and d2|1: equal scores; the cut at k = 3 keeps the first in tie order (document, then
    # chunk number), as every ranking does
    assert [c for _, c, _ in by_query["c/q0"]] == ["ch|c/d0|0", "ch|c/d0|1", "ch|c/d1|1"]
    assert [r for r, _, _ in by_query["c/q0"]] == [1, 2, 3]
    scores = [s for _, _, s in by_query["c/q0"]]
    assert scores == sorted(scores, reverse=True)
    everything = bm25_stage(small, BM25Settings(name="bm25-all", **PLAIN), k=10, show_progress=False)
    assert everything["conditions"][0]["rows"] == 4 + 3 + 2  # texts sharing a term: solar|roof, sea|wind, wind
    tied = small.execute(
        "SELECT chunk_id, score FROM runs WHERE embedder = 'bm25-all' AND query_id = 'c/q0' "
        "AND rank IN (3, 4) ORDER BY rank"
    ).fetchall()
    assert [c for c, _ in tied] == ["ch|c/d1|1", "ch|c/d2|1"] and tied[0][1] == tied[1][1]
    kind, params, n_queries = small.execute(
        "SELECT system_kind, system_params, n_queries FROM run_manifest WHERE embedder = 'bm25'"
    ).fetchone()
    params = json.loads(params)
    assert kind == "bm25" and n_queries == 3
    assert (params["k1"], params["b"], params["method"], params["stemmer"], params["stopwords"]) == (
        0.9,
        0.4,
        "lucene",
        "none",
        "none",
    )
    assert params["library"].startswith("bm25s ") and "regex" in params["tokenizer"]
    again = bm25_stage(small, BM25Settings(**PLAIN), k=3, show_progress=False)
    assert again["conditions"][0]["status"] == "unchanged"
    changed = bm25_stage(small, BM25Settings(k1=1.2, **PLAIN), k=3, show_progress=False)
    assert changed["conditions"][0]["status"] == "computed"


def test_a_dense_systems_name_is_refused(small):
    small.execute("INSERT INTO embeddings VALUES ('all-MiniLM-L6-v2', 'h0', [1.0])")
    with pytest.raises(RetrieveError, match="taken by a dense system"):
        bm25_stage(small, BM25Settings(name="all-MiniLM-L6-v2"), show_progress=False)
