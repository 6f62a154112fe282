"""Real-data check: nDCG@10 of the DOC condition on BEIR SciFact (test split), scored with ranx.

Expects a warehouse where ``ragwh ingest beir ../shared/data/beir_scifact``, ``ragwh chunk``,
``dbt build --select +tag:conditions``, ``ragwh embed`` and ``ragwh retrieve --condition DOC`` ran.
Each DOC chunk is one document, embedded as BEIR does: ``title + " " + text`` (the ``title`` chunk
prefix), so a run's chunk maps to its ``doc_id``; qrels are the corpus's ``qrels``. nDCG@10 = mean over queries of DCG@10 / IDCG@10 with DCG = sum_i rel_i / log2(i + 1)
(ranx's definition; a query without a relevant document retrieved scores 0).

``--embedder`` may be repeated, e.g. once per precision (``all-MiniLM-L6-v2`` and
``all-MiniLM-L6-v2@bf16``: ``ragwh embed --precision fp32`` / ``--precision bf16`` and the matching
``ragwh retrieve``): each run is scored and the largest difference to the first is printed
(bf16 and fp32 must agree within 0.002).

    .venv/bin/python benchmarks/check_scifact.py --warehouse /tmp/x.duckdb
"""

from __future__ import annotations

import argparse

from ranx import Qrels, Run, evaluate

from ingest.retrieval.embedders import resolve_embedder
from warehouse.db import connect


def ndcg10(con, run: dict[str, dict[str, float]], corpus: str) -> float:
    qrels: dict[str, dict[str, int]] = {}
    for q, d, rel in con.execute(
        "SELECT query_id, doc_id, relevance FROM qrels WHERE starts_with(query_id, ?)", [corpus + "/"]
    ).fetchall():
        qrels.setdefault(q, {})[d] = rel
    run = {q: docs for q, docs in run.items() if q in qrels}
    return float(evaluate(Qrels(qrels), Run(run), "ndcg@10"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--corpus", default="scifact")
    parser.add_argument(
        "--embedder",
        action="append",
        default=None,
        help="stored embedder name (repeatable; default all-MiniLM-L6-v2 as fp32)",
    )
    parser.add_argument("--min", type=float, default=None, help="exit 1 when an nDCG@10 is below this (e.g. 0.645)")
    args = parser.parse_args()
    con = connect(args.warehouse, read_only=True)
    scores = []
    for embedder in args.embedder or [None]:
        name = resolve_embedder(embedder).name
        run: dict[str, dict[str, float]] = {}
        for q, doc, score in con.execute(
            """SELECT r.query_id, ct.doc_id, r.score FROM runs r JOIN int_condition_texts ct
                   ON ct.condition = r.condition AND ct.corpus = r.corpus AND ct.chunk_id = r.chunk_id
                   WHERE r.corpus = ? AND r.condition = 'DOC' AND r.embedder = ? AND r.reranker = 'none'""",
            [args.corpus, name],
        ).fetchall():
            run.setdefault(q, {})[doc] = score
        scores.append(ndcg10(con, run, args.corpus))
        print(f"DOC ({name}, title + ' ' + text as BEIR embeds it): nDCG@10 = {scores[-1]:.5f} over {len(run)} queries")
    if len(scores) > 1:
        print(f"max |nDCG@10 - first| = {max(abs(s - scores[0]) for s in scores[1:]):.4f}")
    con.close()
    if args.min is not None and min(scores) < args.min:
        raise SystemExit(f"nDCG@10 {min(scores):.5f} is below {args.min}")


if __name__ == "__main__":
    main()
