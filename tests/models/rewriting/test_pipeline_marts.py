"""The pipeline side's marts on the hand-made cell (hand_case.py): the HNSW pool recall, the merged-score
distribution and each ranking's list length, recomputed by hand / with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.rewriting.hand_case import CELL, LISTS


def test_ann_recall_of_the_hand_case(db):
    rows = db.execute(
        "select strategy, seed, n_graphs, n_pools, n_chunks, recall_mean, recall_min, share_full_recall "
        "from rewrite_ann_recall where corpus = 'hand'"
    ).fetchall()
    assert len(rows) == 1  # S1 at seed 123 searched exactly: no HNSW pool, no row
    strategy, seed, graphs, pools, chunks, mean, low, full = rows[0]
    assert (strategy, seed, graphs, pools, chunks) == ("S1", 42, 1, 3, 8)
    assert mean == pytest.approx((3 / 4 + 1 + 1 / 2) / 3) and low == 0.5 and full == pytest.approx(1 / 3)


def test_score_distribution_of_the_hand_case(db):
    cols = (
        "n_rankings, n_docs, n_nan, score_min, score_p05, score_p25, score_p50, score_p75, score_p95, score_max, "
        "score_mean, top1_median"
    )
    for strategy in ("S1", "HyDE", "Q2D"):
        for seed in (42, 123, None):
            lists = [lst for (s, sd, _), lst in sorted(LISTS.items()) if s == strategy and seed in (None, sd)]
            scores = np.array([x for lst in lists for _, x in lst])
            want = (
                len(lists),
                len(scores),
                0,
                scores.min(),
                *np.percentile(scores, [5, 25, 50, 75, 95]),
                scores.max(),
                scores.mean(),
                np.median([lst[0][1] for lst in lists]),
            )
            got = db.execute(
                f"select {cols} from rewrite_score_distribution where (corpus, embedder, reranker) = "
                "(?, ?, ?) and strategy = ? and seed is not distinct from ? and source = 'all'",
                [*CELL, strategy, seed],
            ).fetchall()
            assert len(got) == 1 and np.allclose(got[0], want), (strategy, seed)
    # every hand list is its original text's: nothing from a variant
    assert (
        db.execute(
            "select count(*) from rewrite_score_distribution where corpus = 'hand' and source = 'variant'"
        ).fetchone()[0]
        == 0
    )
    assert db.execute("select distinct scope from rewrite_score_distribution where seed is null").fetchall() == [
        ("pooled",)
    ]


def test_list_length_is_each_rankings_length(db):
    got = dict(
        ((s, seed, q), n)
        for s, seed, q, n in db.execute(
            "select strategy, seed, query_id, any_value(list_length) from rewrite_query_metrics where corpus = 'hand' "
            "group by all"
        ).fetchall()
    )
    assert got == {(s, seed, f"hand/{q}"): len(lst) for (s, seed, q), lst in LISTS.items()}
    # and on the synthetic cells: the merged list's rows
    assert (
        db.execute("""select count(*) from rewrite_query_metrics m join (
                             select corpus, embedder, reranker, strategy, seed, query_id, count(*) as n
                             from rewrite_runs group by all) r using (corpus, embedder, reranker, strategy, seed, query_id)
                         where m.list_length <> r.n""").fetchone()[0]
        == 0
    )


def test_score_distribution_counts_against_a_direct_query(db):
    """Every cell, source and scope (the synthetic cells have variant rows): n_rankings is the number of
    rankings with a document of that source, top1_median the median rank-1 score and score_mean the mean
    (NaN scores left out), as a plain distinct count, median and sum over the rows compute them."""
    want = db.execute("""
        with docs as (
            select corpus, embedder, reranker, strategy, seed, query_id, rank, score,
                case when variant_idx = 0 then 'original' else 'variant' end as source
            from rewrite_runs),
        sourced as (select *, 'all' as which from docs union all select *, source from docs)
        select corpus, embedder, reranker, strategy, which, seed, count(distinct (seed, query_id)),
            median(score) filter (where rank = 1 and not isnan(score)),
            sum(score) filter (where not isnan(score)) / count(score) filter (where not isnan(score))
        from sourced group by grouping sets ((corpus, embedder, reranker, strategy, which, seed),
                                             (corpus, embedder, reranker, strategy, which))
        order by all""").fetchall()
    got = db.execute(
        "select corpus, embedder, reranker, strategy, source, seed, n_rankings, top1_median, score_mean "
        "from rewrite_score_distribution order by all"
    ).fetchall()
    assert len(got) == len(want) and {r[4] for r in got} == {"all", "original", "variant"}
    for g, w in zip(got, want):
        assert g[:7] == w[:7] and g[7] == pytest.approx(w[7]) and g[8] == pytest.approx(w[8], rel=1e-12), (g[6:], w[6:])
