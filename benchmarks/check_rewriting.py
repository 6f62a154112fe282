"""Real-data check: document metrics of the rewriting study's merged runs, scored independently with ranx.

Reads ``rewrite_runs`` (one seed; LLM-free strategies are identical under every seed) and the corpus's
binary qrels, and prints per strategy HIT@10 (ranx ``hit_rate@10``: share of queries with a relevant
document in the top 10), R@10, nDCG@10 and MRR@10, over every query of the corpus (a query without a
retrieved relevant document scores 0). Ties inside a run are broken by ranx itself, so the run is fed
as ``1 / rank`` scores (the order ``rewrite_runs.rank`` fixed), never the raw scores.

    .venv/bin/python benchmarks/check_rewriting.py --warehouse FILE --corpus hotpotqa [--seed 42]
"""
from __future__ import annotations

import argparse

from ranx import Qrels, Run, evaluate

from warehouse.db import connect

METRICS = {"HIT@10": "hit_rate@10", "R@10": "recall@10", "nDCG@10": "ndcg@10", "MRR@10": "mrr@10"}


def strategy_metrics(con, corpus: str, seed: int) -> dict[tuple[str, str, str], dict[str, float]]:
    qrels: dict[str, dict[str, int]] = {}
    for q, d in con.execute("SELECT r.query_id, r.doc_id FROM qrels r JOIN queries q USING (query_id) "
                            "WHERE q.corpus = ? AND r.relevance > 0", [corpus]).fetchall():
        qrels.setdefault(q, {})[d] = 1
    out = {}
    for embedder, reranker, strategy in con.execute(
            "SELECT DISTINCT embedder, reranker, strategy FROM rewrite_runs WHERE corpus = ? AND seed = ? ORDER BY ALL",
            [corpus, seed]).fetchall():
        run: dict[str, dict[str, float]] = {q: {} for q in qrels}
        for q, d, rank in con.execute("SELECT query_id, doc_id, rank FROM rewrite_runs WHERE corpus = ? AND seed = ? "
                                      "AND embedder = ? AND reranker = ? AND strategy = ?",
                                      [corpus, seed, embedder, reranker, strategy]).fetchall():
            run.setdefault(q, {})[d] = 1.0 / rank
        run = {q: docs for q, docs in run.items() if q in qrels}
        empty = [q for q, docs in run.items() if not docs]  # ranx needs a document per query: score them 0
        for q in empty:
            run[q] = {"__none__": 1.0}
        scores = evaluate(Qrels(qrels), Run(run), list(METRICS.values()))
        out[(embedder, reranker, strategy)] = {name: float(scores[m]) for name, m in METRICS.items()} | {
            "queries": len(run)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--corpus", default="hotpotqa")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    con = connect(args.warehouse, read_only=True)
    try:
        for (embedder, reranker, strategy), m in strategy_metrics(con, args.corpus, args.seed).items():
            print(f"{args.corpus} {strategy:<11} ({embedder}, reranker {reranker}, seed {args.seed}, {m['queries']} queries): "
                  + ", ".join(f"{k} {m[k]:.4f}" for k in METRICS))
    finally:
        con.close()


if __name__ == "__main__":
    main()
