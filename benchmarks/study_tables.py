"""The chunking study's figures from a finished warehouse, as Markdown for benchmarks/README.md.

Reads the marts of one cell (corpus, embedder, reranker; default: the corpus's only first-stage
embedder, reranker none) and prints: per-condition means of every metric (rows in the conditions
seed's order), every contrast of every metric with its document-clustered 95% CI and p (a p of 0 as
"< 1/B", :func:`ragwh.experiment.report.markup.p_text`), the truncation table, the evaluation
exclusions and fallback documents, and the paper's QASPER pattern (A0 < P < A2 < A3 on the primary
metric, C4 = A4 - A3 negative) with each comparison marked as holding or not in this run.

    .venv/bin/python benchmarks/study_tables.py --warehouse /tmp/full255.duckdb
"""

from __future__ import annotations

import argparse

from ragwh.experiment.report.data import condition_order, held_metrics
from ragwh.experiment.report.markup import p_text
from warehouse.db import connect

PATTERN = ("A0", "P", "A2", "A3")  # the paper's QASPER order of the primary metric, lowest first


def _table(headers: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join("–" if v is None else str(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--corpus", default="qasper")
    parser.add_argument(
        "--embedder", default=None, help="stored name (default: the corpus's only first-stage embedder)"
    )
    parser.add_argument("--reranker", default="none")
    parser.add_argument("--metric", default="cov-nDCG@10", help="the primary metric")
    args = parser.parse_args()
    con = connect(args.warehouse, read_only=True)
    embedders = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT embedder FROM condition_means WHERE corpus = ? ORDER BY 1", [args.corpus]
        ).fetchall()
    ]
    if args.embedder is None and len(embedders) != 1:
        raise SystemExit(f"{args.warehouse}: pass --embedder, one of {embedders}")
    cell = [args.corpus, args.embedder or embedders[0], args.reranker]
    order = {c: i for i, c in enumerate(condition_order())}

    means = con.execute(
        "SELECT condition, metric, mean_value, n_queries FROM condition_means "
        "WHERE corpus = ? AND embedder = ? AND reranker = ?",
        cell,
    ).fetchall()
    metrics = held_metrics(con, args.metric)
    value = {(c, m): v for c, m, v, _ in means}
    n = {c: q for c, _, _, q in means}
    conditions = sorted({c for c, *_ in means}, key=lambda c: order.get(c, 99))
    print(f"### Per-condition means ({' · '.join(cell)})\n")
    print(
        _table(
            ["condition", *metrics, "n queries"],
            [[c, *(f"{value[(c, m)]:.4f}" if (c, m) in value else None for m in metrics), n[c]] for c in conditions],
        )
    )

    contrasts = con.execute(
        """SELECT metric, contrast, n_queries, n_docs, mean_delta, ci_low, ci_high, p_value, p_holm, family_size,
                  n_boot, n_far_side FROM contrasts WHERE corpus = ? AND embedder = ? AND reranker = ?
           ORDER BY contrast""",
        cell,
    ).fetchall()
    contrasts.sort(key=lambda r: metrics.index(r[0]) if r[0] in metrics else len(metrics))
    print("\n### Contrasts (treatment − control, document-clustered bootstrap)\n")
    print(
        _table(
            ["metric", "contrast", "n q", "n docs", "mean Δ", "95% CI", "p", "far side / B", "Holm p"],
            [
                [m, c, nq, nd, f"{d:+.4f}", f"[{lo:+.4f}, {hi:+.4f}]", p_text(p, b), f"{far}/{b}", p_text(ph, b, fam)]
                for m, c, nq, nd, d, lo, hi, p, ph, fam, b, far in contrasts
            ],
        )
    )

    trunc = con.execute(
        "SELECT condition, max_tokens, n_texts, n_truncated, share_truncated, tokens_cut, "
        "content_share_cut, n_uncounted FROM embedding_truncation WHERE corpus = ? AND embedder = ?",
        cell[:2],
    ).fetchall()
    print("\n### Truncation by the embedder's window\n")
    print(
        _table(
            ["condition", "window", "texts", "truncated", "share", "tokens cut", "content cut", "not counted"],
            [
                [c, w, t, k, f"{s:.1%}", cut, "–" if share is None else f"{share:.1%}", u]
                for c, w, t, k, s, cut, share, u in sorted(trunc, key=lambda r: order.get(r[0], 99))
            ],
        )
    )

    excl = con.execute(
        "SELECT reason, min(n_queries), max(n_queries), max(n_docs) FROM evaluation_exclusions "
        "WHERE corpus = ? AND embedder = ? AND reranker = ? GROUP BY reason ORDER BY reason",
        cell,
    ).fetchall()
    fallback = con.execute(
        "SELECT max(n_fallback_docs) FROM condition_index WHERE corpus = ?", [args.corpus]
    ).fetchone()[0]
    print("\n### Evaluation funnel (queries per condition: min–max) and fallback documents\n")
    print(
        _table(["reason", "queries", "documents"], [[r, lo if lo == hi else f"{lo}–{hi}", d] for r, lo, hi, d in excl])
    )
    print(f"\nDocuments indexed with fixed windows (induced structure failed): {fallback or 0}")

    print(f"\n### The paper's QASPER pattern on {args.metric}\n")
    primary = {c: value.get((c, args.metric)) for c in PATTERN}
    for low, high in zip(PATTERN, PATTERN[1:]):
        a, b = primary[low], primary[high]
        verdict = "–" if a is None or b is None else ("holds" if a < b else "DIFFERS")
        print(f"- {low} < {high}: {verdict}" + ("" if a is None or b is None else f" ({a:.4f} vs {b:.4f})"))
    c4 = [r for r in contrasts if r[0] == args.metric and r[1] == "C4"]
    if c4:
        d, lo, hi = c4[0][4:7]
        print(
            f"- C4 (A4 − A3) negative: {'holds' if d < 0 else 'DIFFERS'} ({d:+.4f} [{lo:+.4f}, {hi:+.4f}]"
            f"{', CI excludes 0' if hi < 0 or lo > 0 else ', CI includes 0'})"
        )
    con.close()


if __name__ == "__main__":
    main()
