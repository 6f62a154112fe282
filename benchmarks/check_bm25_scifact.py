"""SciFact (BEIR, test split): nDCG@10 of every first-stage system of condition DOC in a warehouse built by
``ragwh run --config experiments/scifact.yml`` (MiniLM and BM25), beside the published figures, and an
independent BM25 check: rank_bm25's Okapi BM25 over the same DOC texts and terms must rank exactly like
bm25s's ``robertson`` variant (their scores differ by the constant factor k1 + 1 while no term is in half
the texts or more: Okapi's negative-idf floor and bm25s's idf floor at 0 both apply past that point).

Published (nDCG@10, SciFact test):
  BEIR paper (Thakur et al. 2021, arXiv 2104.08663, Table 2): BM25 0.665 -- Elasticsearch's BM25 (Lucene;
      Elasticsearch defaults k1 1.2, b 0.75), the "english" analyzer (stopwords, Porter stemmer), title and
      text indexed as two fields and queried with multi_match best_fields, tie_breaker 0.5 (the BEIR code's
      beir/retrieval/search/lexical/elastic_search.py).
  Anserini BEIR (v1.0.0) regressions: BM25 "flat" 0.6789 (title + text in one field, k1 0.9, b 0.4, Lucene's
      English analyzer) and "multifield" 0.6647 (title and text as fields, the BEIR paper's setting).
  MTEB, all-MiniLM-L6-v2: 0.6451.

    PYTHONPATH=. .venv/bin/python benchmarks/check_bm25_scifact.py --warehouse /tmp/scifact.duckdb
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from ranx import Qrels, Run, evaluate

from warehouse.db import connect

PUBLISHED = {
    "BEIR paper BM25 (Elasticsearch, multifield)": 0.665,
    "Anserini BM25 flat": 0.6789,
    "Anserini BM25 multifield": 0.6647,
    "MTEB all-MiniLM-L6-v2": 0.6451,
}


def run_of(con, corpus: str, system: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for q, doc, score in con.execute(
        """SELECT r.query_id, ct.doc_id, r.score FROM runs r JOIN int_condition_texts ct
               ON ct.condition = r.condition AND ct.corpus = r.corpus AND ct.chunk_id = r.chunk_id
               WHERE r.corpus = ? AND r.condition = 'DOC' AND r.embedder = ? AND r.reranker = 'none'""",
        [corpus, system],
    ).fetchall():
        run.setdefault(q, {})[doc] = score
    return run


def qrels_of(con, corpus: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for q, d, rel in con.execute(
        "SELECT query_id, doc_id, relevance FROM qrels WHERE starts_with(query_id, ?)", [corpus + "/"]
    ).fetchall():
        qrels.setdefault(q, {})[d] = rel
    return qrels


def rank_bm25_agreement(con, corpus: str) -> dict:
    """bm25s robertson vs rank_bm25 Okapi over the DOC texts (same terms): identical top-10 lists?"""
    from rank_bm25 import BM25Okapi

    from ingest.retrieval.bm25 import BM25Settings, build_index, tokenize
    from ingest.retrieval.topk import topk_rows

    settings = BM25Settings(k1=1.2, b=0.75, method="robertson")
    texts = con.execute(
        "SELECT doc_id, text FROM int_condition_texts WHERE corpus = ? AND condition = 'DOC' ORDER BY doc_id", [corpus]
    ).fetchall()
    queries = con.execute("SELECT query_id, text FROM queries WHERE corpus = ? ORDER BY query_id", [corpus]).fetchall()
    docs = tokenize([t for _, t in texts], settings)
    qtok = tokenize([t for _, t in queries], settings)
    started = time.perf_counter()
    ours = build_index(docs, settings).scores(qtok) * (settings.k1 + 1)
    ours_s = time.perf_counter() - started
    started = time.perf_counter()
    reference = BM25Okapi(docs, k1=settings.k1, b=settings.b)
    theirs = np.array([reference.get_scores(q) for q in qtok])
    theirs_s = time.perf_counter() - started
    # rank_bm25 floors negative idf at epsilon x mean idf; compare only queries whose terms all have df < N/2
    df = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    clean = [i for i, q in enumerate(qtok) if all(df.get(t, 0) < len(docs) / 2 for t in q)]
    top_ours, _ = topk_rows(ours[clean], 10)
    top_theirs, _ = topk_rows(theirs[clean], 10)
    return {
        "queries": len(queries),
        "compared": len(clean),
        "identical_top10": float(np.mean([(a == b).all() for a, b in zip(top_ours, top_theirs)])),
        "max_abs_score_diff": float(np.abs(ours[clean] - theirs[clean]).max()),
        "bm25s_s": ours_s,
        "rank_bm25_s": theirs_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--corpus", default="scifact")
    args = parser.parse_args()
    con = connect(args.warehouse, read_only=True)
    qrels = qrels_of(con, args.corpus)
    systems = con.execute(
        "SELECT embedder, coalesce(system_kind, 'dense'), system_params FROM run_manifest "
        "WHERE corpus = ? AND condition = 'DOC' AND reranker = 'none' ORDER BY 1",
        [args.corpus],
    ).fetchall()
    print("| system | kind | nDCG@10 (ranx) | nDCG@10 (condition_means) | queries |")
    print("|---|---|---:|---:|---:|")
    for system, kind, _ in systems:
        run = {q: d for q, d in run_of(con, args.corpus, system).items() if q in qrels}
        score = float(evaluate(Qrels(qrels), Run(run), "ndcg@10"))
        mart = con.execute(
            "SELECT mean_value FROM condition_means WHERE corpus = ? AND embedder = ? AND condition = 'DOC' "
            "AND metric = 'nDCG@10' AND reranker = 'none'",
            [args.corpus, system],
        ).fetchone()
        print(
            f"| {system} | {kind} | {score:.4f} | {mart[0]:.4f} | {len(run)} |"
            if mart
            else f"| {system} | {kind} | {score:.4f} | - | {len(run)} |"
        )
    for name, value in PUBLISHED.items():
        print(f"| published: {name} | | {value:.4f} | | 300 |")
    for system, kind, params in systems:
        if kind == "bm25":
            print(f"{system} parameters: {params}")
    agreement = rank_bm25_agreement(con, args.corpus)
    print(f"independent check, rank_bm25 Okapi vs bm25s robertson (k1 1.2, b 0.75, same terms): {agreement}")
    con.close()


if __name__ == "__main__":
    main()
