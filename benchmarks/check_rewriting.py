"""Real-data check of a rewriting warehouse: every figure the paper-protocol rerun is judged by, in one print.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/check_rewriting.py --warehouse FILE [--corpus hotpotqa] [--metric HIT@10]

Prints, for one corpus of a warehouse built by ``ragwh run`` (arXiv 2609.05637's protocol, docs/rewriting.md):

1. the label: which LLM wrote the rewrites (``corpus_meta``; tiny-model output is pipeline exercise, not results)
   and how S1's dense stage searched (``rewrite_text_runs.ann_seed`` set on S1's texts: HNSW, else exact);
2. S1 HIT@10 (and R@10, nDCG@10, MRR@10) per seed, scored independently with ranx from ``rewrite_runs`` over
   every query with a relevant judgment (a query with no retrieved relevant document scores 0; the run is fed
   as ``1 / rank`` scores, so ranx sees the stored order), every strategy at ``--seed`` likewise;
3. the HNSW pool recall against exact search (mart ``rewrite_ann_recall``);
4. list lengths (min / mean documents per ranking) per strategy: the merged lists of ``rewrite_runs`` and
   each text's MMR list (``rewrite_text_runs``), and ``rewrite_query_metrics.list_length`` where it exists;
5. the seed-42 ensemble rows of the pre-declared subsets (``rewrite_ensembles``, scope 'seed', rule max) and
   the oracle union of the same subsets;
6. the budget controls' share of the reference ensemble's gain (``rewrite_budget_baselines``, both scopes);
7. each strategy's merged-score quantiles (mart ``rewrite_score_distribution``).

A mart that is not in the warehouse (built by another part of the pipeline, or not built yet) is named as
absent, never an error: run ``dbt build --select +tag:rewriting`` (``ragwh run`` does) to build it.
"""

from __future__ import annotations

import argparse

from ranx import Qrels, Run, evaluate

from warehouse.db import connect

METRICS = {"HIT@10": "hit_rate@10", "R@10": "recall@10", "nDCG@10": "ndcg@10", "MRR@10": "mrr@10"}


def strategy_metrics(
    con, corpus: str, seed: int, strategies: tuple[str, ...] | None = None
) -> dict[tuple[str, str, str], dict[str, float]]:
    """(embedder, reranker, strategy) -> ranx metrics of the strategy's lists at ``seed``, plus 'queries'."""
    qrels: dict[str, dict[str, int]] = {}
    for q, d in con.execute(
        "SELECT r.query_id, r.doc_id FROM qrels r JOIN queries q USING (query_id) "
        "WHERE q.corpus = ? AND r.relevance > 0",
        [corpus],
    ).fetchall():
        qrels.setdefault(q, {})[d] = 1
    out = {}
    for embedder, reranker, strategy in con.execute(
        "SELECT DISTINCT embedder, reranker, strategy FROM rewrite_runs WHERE corpus = ? AND seed = ? ORDER BY ALL",
        [corpus, seed],
    ).fetchall():
        if strategies is not None and strategy not in strategies:
            continue
        run: dict[str, dict[str, float]] = {q: {} for q in qrels}
        for q, d, rank in con.execute(
            "SELECT query_id, doc_id, rank FROM rewrite_runs WHERE corpus = ? AND seed = ? "
            "AND embedder = ? AND reranker = ? AND strategy = ?",
            [corpus, seed, embedder, reranker, strategy],
        ).fetchall():
            run.setdefault(q, {})[d] = 1.0 / rank
        run = {q: docs for q, docs in run.items() if q in qrels}
        for q in [q for q, docs in run.items() if not docs]:  # ranx needs a document per query: score them 0
            run[q] = {"__none__": 1.0}
        scores = evaluate(Qrels(qrels), Run(run), list(METRICS.values()))
        out[(embedder, reranker, strategy)] = {name: float(scores[m]) for name, m in METRICS.items()} | {
            "queries": len(run)
        }
    return out


def _exists(con, name: str) -> bool:
    return con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchone()[0] > 0


def _columns(con, name: str) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [name]
        ).fetchall()
    ]


def _absent(name: str) -> str:
    return (
        f"  (mart {name} is not in this warehouse: built by the rewriting marts of the pipeline side, or not built yet)"
    )


def _table(con, sql: str, params: list) -> list[str]:
    rel = con.execute(sql, params)
    names = [d[0] for d in rel.description]
    rows = rel.fetchall()
    fmt = lambda v: f"{v:.4f}" if isinstance(v, float) else str(v)
    return (
        ["  " + " | ".join(names)] + ["  " + " | ".join(fmt(v) for v in r) for r in rows] if rows else ["  (no rows)"]
    )


def report(con, corpus: str, metric: str = "HIT@10", seed: int = 42) -> list[str]:
    """The lines :func:`main` prints (module doc)."""
    out = [f"== {corpus}"]
    meta = dict(
        con.execute(
            "SELECT key, value FROM corpus_meta WHERE corpus = ? AND starts_with(key, 'rewriting')", [corpus]
        ).fetchall()
    )
    out.append(
        f"rewrites by {meta.get('rewriting_llm', '(not recorded)')}"
        + ("  -- TINY-MODEL OUTPUT, NOT RESULTS" if meta.get("rewriting_tiny_model") == "true" else "")
    )
    if "ann_seed" in _columns(con, "rewrite_text_runs"):
        for s, hnsw, total in con.execute(
            "SELECT seed, count(*) FILTER (WHERE ann_seed IS NOT NULL), count(*) FROM rewrite_text_runs "
            "WHERE corpus = ? AND strategy = 'S1' AND stage = 'mmr' GROUP BY seed ORDER BY seed",
            [corpus],
        ).fetchall():
            out.append(
                f"S1 dense search, seed {s}: {'hnsw' if hnsw else 'exact'} ({hnsw} of {total} MMR rows from an HNSW graph)"
            )
    out.append("-- S1 per seed (ranx over rewrite_runs)")
    seeds = [
        s
        for (s,) in con.execute(
            "SELECT DISTINCT seed FROM rewrite_runs WHERE corpus = ? AND strategy = 'S1' ORDER BY 1", [corpus]
        ).fetchall()
    ]
    for s in seeds:
        for (embedder, reranker, _), m in strategy_metrics(con, corpus, s, ("S1",)).items():
            out.append(
                f"  S1 seed {s} ({embedder}, reranker {reranker}, {m['queries']} queries): "
                + ", ".join(f"{k} {m[k]:.4f}" for k in METRICS)
            )
    out.append(f"-- every strategy at seed {seed} (ranx)")
    for (embedder, reranker, strategy), m in strategy_metrics(con, corpus, seed).items():
        out.append(f"  {strategy:<11} " + ", ".join(f"{k} {m[k]:.4f}" for k in METRICS))
    out.append("-- HNSW pool recall against exact search")
    out += (
        _table(con, "SELECT * FROM rewrite_ann_recall WHERE corpus = ?", [corpus])
        if _exists(con, "rewrite_ann_recall")
        else [_absent("rewrite_ann_recall")]
    )
    out.append("-- list lengths (documents per ranking): merged lists, each text's MMR list")
    out += _table(
        con,
        """
        SELECT strategy, min(n) AS merged_min, avg(n) AS merged_mean, count(*) AS rankings
        FROM (SELECT strategy, seed, query_id, count(*) AS n FROM rewrite_runs WHERE corpus = ? GROUP BY ALL)
        GROUP BY strategy ORDER BY strategy""",
        [corpus],
    )
    out += _table(
        con,
        """
        SELECT strategy, min(n) AS mmr_min, avg(n) AS mmr_mean, count(*) AS texts
        FROM (SELECT strategy, seed, query_id, variant_idx, ann_seed, count(*) AS n FROM rewrite_text_runs
              WHERE corpus = ? AND stage = 'mmr' GROUP BY ALL)
        GROUP BY strategy ORDER BY strategy""",
        [corpus],
    )
    if _exists(con, "rewrite_query_metrics") and "list_length" in _columns(con, "rewrite_query_metrics"):
        out += _table(
            con,
            f"""SELECT strategy, min(list_length) AS list_length_min, avg(list_length) AS list_length_mean,
                                   count(*) FILTER (WHERE list_length < 10) AS short_10,
                                   count(*) FILTER (WHERE list_length < 20) AS short_20
                               FROM rewrite_query_metrics WHERE corpus = ? AND metric = '{metric}'
                               GROUP BY strategy ORDER BY strategy""",
            [corpus],
        )
    else:
        out.append("  (rewrite_query_metrics.list_length is not in this warehouse: the pipeline side adds it)")
    out.append(f"-- seed-{seed} ensembles of the pre-declared subsets (rule max: the union merged by score, cut at 10)")
    if _exists(con, "rewrite_ensembles") and "family" in _columns(con, "rewrite_ensembles"):
        out += _table(
            con,
            """
            SELECT e.subset, e.metric, e.mean_value, e.best_solo, e.best_solo_value, e.delta, e.ci_low, e.ci_high,
                e.p_value, e.p_holm, o.oracle_hit
            FROM rewrite_ensembles AS e
            LEFT JOIN rewrite_oracle AS o
                ON o.corpus = e.corpus AND o.embedder = e.embedder AND o.reranker = e.reranker AND o.scope = e.scope
                AND o.subset_mask = e.subset_mask
            WHERE e.corpus = ? AND e.scope = 'seed' AND e.seed = ? AND e.family = 'predeclared'
            ORDER BY e.metric, e.n_members, e.subset""",
            [corpus, seed],
        )
    else:
        out.append(_absent("rewrite_ensembles (with its family column)"))
    out.append(f"-- budget controls: share of the reference ensemble's gain over S1 ({metric})")
    if _exists(con, "rewrite_budget_baselines") and "gain_reference" in _columns(con, "rewrite_budget_baselines"):
        paper = ", share_paper" if "share_paper" in _columns(con, "rewrite_budget_baselines") else ""
        out += _table(
            con,
            f"""
            SELECT scope, control, status, n_queries, baseline_value, control_value, reference_subset, reference_value,
                gain_control, gain_reference{paper}, share_captured, reason
            FROM rewrite_budget_baselines WHERE corpus = ? AND metric = ? ORDER BY scope DESC, control""",
            [corpus, metric],
        )
    else:
        out.append(_absent("rewrite_budget_baselines (with its reference columns)"))
    out.append("-- merged-score distribution per strategy")
    out += (
        _table(con, "SELECT * FROM rewrite_score_distribution WHERE corpus = ?", [corpus])
        if _exists(con, "rewrite_score_distribution")
        else [_absent("rewrite_score_distribution")]
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--corpus", default="hotpotqa")
    parser.add_argument("--seed", type=int, default=42, help="the post-hoc seed (ensembles, every strategy)")
    parser.add_argument("--metric", default="HIT@10", choices=list(METRICS))
    args = parser.parse_args()
    con = connect(args.warehouse, read_only=True)
    try:
        print("\n".join(report(con, args.corpus, args.metric, args.seed)))
    finally:
        con.close()


if __name__ == "__main__":
    main()
